"""The same audit on the local process pool and on a Dask LocalCluster of 2 workers gives the
same table (needs the dask extra; the shared models)."""
from __future__ import annotations

import json
import os

import pytest

from tests.audit.models import CORRUPT, MODELS
from tests.cli.cliutil import nnsim

pytest.importorskip("distributed", reason="Dask is an optional extra: pip install 'nnsim[dask]'")

# the smallest shared models: the comparison is about scheduling, not about big graphs
SHARED = ["hello_world_int8.tflite", "ad01_int8.tflite", "kws_ref_model_float32.tflite",
          "mobilenet_v1_0.25_128_quant.tflite"]


def test_local_and_dask_tables_are_identical(tmp_path):
    if not all((MODELS / m).is_file() for m in SHARED):
        pytest.skip(f"shared models not found at {MODELS}")
    zoo = tmp_path / "zoo"
    zoo.mkdir()
    for m in SHARED:
        os.symlink(MODELS / m, zoo / m)
    (zoo / "corrupt.tflite").write_bytes(CORRUPT)
    flags = ("--boards", "imx8mp,vs680", "--android_sdk", "31", "--jobs", "2",
             "--no-graphs", "--quiet")
    local = nnsim("audit", zoo, *flags, "--out", tmp_path / "local")
    assert local.returncode == 0, local.stderr
    dask = nnsim("audit", zoo, *flags, "--out", tmp_path / "dask", "--scheduler", "dask-local")
    assert dask.returncode == 0, dask.stderr
    table = (tmp_path / "local" / "audit.csv").read_text()
    assert table == (tmp_path / "dask" / "audit.csv").read_text()
    assert len(table.splitlines()) == 1 + 5 * 2 * 3
    a = json.loads((tmp_path / "local" / "summary.json").read_text())
    b = json.loads((tmp_path / "dask" / "summary.json").read_text())
    assert b["timing"]["scheduler"] == "dask-local" and a["timing"]["scheduler"] == "local"
    for key in ("totals", "coverage", "reasons", "failures", "records"):
        assert a[key] == b[key]
    assert a["totals"]["by_status"] == {"error": 6, "ok": 24}


def test_unreachable_scheduler_is_one_error_line(tmp_path):
    from tests.audit.models import float_add
    (tmp_path / "m.tflite").write_bytes(float_add())
    proc = nnsim("audit", tmp_path, "--scheduler", "tcp://127.0.0.1:9", "--quiet",
                 "--no-graphs", "--out", tmp_path / "out", timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.startswith("nnsim: error: --scheduler tcp://127.0.0.1:9:")
    assert len(proc.stderr.strip().splitlines()) == 1
