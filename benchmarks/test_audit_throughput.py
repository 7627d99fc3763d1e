"""`nnsim audit` throughput: combinations per second on the shared models, 1 and 2 workers,
on the local process pool and on a Dask LocalCluster.

    python -m pytest benchmarks/test_audit_throughput.py -s --benchmark-columns=median

Each run audits every model of ../shared/models on imx8mp and vs680, Android SDK 29 and 31,
delegates nnapi, vx and cpu (240 combinations), without the result cache or graph pages.
"""
from __future__ import annotations

import json
import sys

import pytest

from benchmarks._results import MODELS

THROUGHPUT: dict = {}


@pytest.mark.parametrize("scheduler", ["local", "dask-local"])
@pytest.mark.parametrize("jobs", [1, 2])
def test_audit_throughput(benchmark, tmp_path, scheduler, jobs):
    if not MODELS.is_dir():
        pytest.skip(f"shared models not found at {MODELS}")
    if scheduler != "local":
        pytest.importorskip("distributed")
    from nnsim.cli import main
    out = tmp_path / "out"
    argv = ["audit", str(MODELS), "--boards", "imx8mp,vs680", "--android_sdk", "29,31",
            "--delegates", "nnapi,vx,cpu", "--jobs", str(jobs), "--no-graphs", "--fresh",
            "--quiet", "--out", str(out)]
    if scheduler != "local":
        argv += ["--scheduler", scheduler]
    code = benchmark.pedantic(main, args=(argv,), rounds=1, iterations=1)
    assert code == 0
    data = json.loads((out / "summary.json").read_text())
    n = data["totals"]["combinations"]
    rate = n / data["timing"]["wall_s"]
    benchmark.extra_info.update(combinations=n, combinations_per_s=round(rate, 3))
    THROUGHPUT[(scheduler, jobs)] = rate
    base = THROUGHPUT.get((scheduler, 1))
    scaling = f", x{rate / base:.2f} over 1 worker" if base and jobs > 1 else ""
    print(f"\naudit {scheduler} jobs={jobs}: {n} combinations in {data['timing']['wall_s']:.1f} "
          f"s = {rate:.2f} combinations/s{scaling}", file=sys.stderr)
