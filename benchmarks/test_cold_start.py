"""Cold start: a first `nnsim run` on an empty numba cache (a fresh install), with the
compiling child of nnsim/tools/warmup.py and without it (``NNSIM_WARM_UP=0``), alternated
round by round; the warm run (filled cache) alongside for reference. Each round is a new
process on a new empty ``NUMBA_CACHE_DIR``, so a round takes the whole compile time (about
10 s). The whole shared model set: every model's first `nnsim run`, one after the other on one
empty cache (each run compiles what no earlier run compiled), each followed at once by the same
run on the cache it filled; the difference of the totals is the compile time of the set's
kernels (about 1 min a round). Each warm run comes right after its cold one because this
project's VMs change speed by up to 50% within minutes: with all cold runs first and all warm
ones a minute later, the difference of two 40 s totals moved by 5-10 s with the host alone.
Run: ``python -m pytest benchmarks/test_cold_start.py -s --benchmark-columns=median,rounds``
(``NUMBA_CPU_NAME=haswell`` compiles the AVX2 kernels instead).

A fresh install is a Python environment holding nnsim and what it installs: run this from one
(``python -m venv v && v/bin/pip install -e ".[test]"``, then ``v/bin/python -m pytest ...``).
numba uses optional packages it finds: at its first compilation in a process it imports
scipy's BLAS bindings when scipy is there (a trivial first compilation 0.43-0.52 s with this
project's VM's system Python against 0.23-0.24 s in such an environment), and it colours with
colorama, when that is there, the message of every typing attempt that fails (about 2% of the
shared models' compile time in a profile; benchmarks/README.md, "Twenty-second session").
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

import pytest

from benchmarks._results import MODELS

MODEL = "mobilenet_v1_1.0_224_quant_reconstructed"
ROUNDS = 3

pytestmark = pytest.mark.skipif(not MODELS.is_dir(), reason=f"no shared models at {MODELS}")


def _run(cache_dir: str, warm_up: str, model: str = MODEL) -> float:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, NNSIM_WARM_UP=warm_up)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "nnsim.cli", "run",
                          str(MODELS / f"{model}.tflite")], env=env, capture_output=True,
                         text=True, timeout=600, check=False)
    elapsed = time.perf_counter() - start
    assert out.returncode == 0, out.stderr
    return elapsed


def test_cold_start(benchmark):
    times: dict = {"child": [], "no child": [], "warm": []}

    def one_round():
        for key, warm_up in (("child", "1"), ("no child", "0")):
            with tempfile.TemporaryDirectory() as cache:
                times[key].append(_run(cache, warm_up))
                if key == "child":
                    times["warm"].append(_run(cache, "1"))   # the cache it filled
    benchmark.pedantic(one_round, rounds=ROUNDS, iterations=1)
    medians = {key: statistics.median(v) for key, v in times.items()}
    benchmark.extra_info.update({f"{k}_s": v for k, v in medians.items()})
    print(f"\ncold start of `nnsim run {MODEL}` (median of {ROUNDS}, wall): "
          + ", ".join(f"{k} {v:.2f} s" for k, v in medians.items())
          + f"; each: {times}")


def test_cold_start_whole_model_set(benchmark):
    models = sorted(p.stem for p in MODELS.glob("*.tflite"))
    compile_s: list = []
    per_model: dict = {}

    def one_round():
        cold, warm = [], []
        with tempfile.TemporaryDirectory() as cache:
            for m in models:   # each first run, then the same run warm right after it
                cold.append(_run(cache, "1", m))
                warm.append(_run(cache, "1", m))
        compile_s.append(sum(cold) - sum(warm))
        for m, c, w in zip(models, cold, warm):
            per_model.setdefault(m, []).append(c - w)
    benchmark.pedantic(one_round, rounds=2, iterations=1)
    benchmark.extra_info["compile_s"] = statistics.median(compile_s)
    slowest = sorted(per_model, key=lambda m: -statistics.median(per_model[m]))[:5]
    print(f"\nwhole model set ({len(models)} models), first runs in turn on one empty cache minus "
          f"the same runs warm: {statistics.median(compile_s):.2f} s (rounds: "
          + ", ".join(f"{c:.2f}" for c in compile_s) + "); most: "
          + ", ".join(f"{m} {statistics.median(per_model[m]):.2f} s" for m in slowest))
