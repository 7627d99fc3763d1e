"""``num_threads``: the same model on nnsim's CPU path with 1 and with 2 threads, interleaved in
one process (one round invokes each interpreter once, in turn, so machine noise hits both).

Both interpreters must produce identical outputs (checked once before timing). The medians and
the speed-up (1-thread median / 2-thread median) are printed per model and kept in each
benchmark's ``extra_info``, with the time of a cache-line round trip between CPUs 0 and 1
before and after (``benchmarks/_link.py``: on this project's VM the speed-up follows it). Run
on an otherwise idle machine (a fork-join runtime slows down sharply when its threads compete
with other processes for the cores):
``python -m pytest benchmarks/test_threads.py -s --benchmark-columns=median,rounds``
(``NUMBA_CPU_NAME=haswell`` measures nnsim's AVX2 code path on an AVX-512 machine, against
LiteRT's AVX-512 code; ``python -m benchmarks.avx2_only python -m pytest -p no:faulthandler
...`` hides AVX-512 from both, as on an AVX2-only machine).
"""
from __future__ import annotations

import numpy as np
import pytest

from benchmarks._interleave import interleaved_medians, ready
from benchmarks._link import core_round_trip_ns
from benchmarks._results import MODELS

THREAD_MODELS = ["mobilenet_v1_1.0_224_quant_reconstructed", "tf2_mobilenet_v2_1.0_224_ptq",
                 "mobilenet_v1_0.25_224_1_default_1", "deeplabv3_mnv2_pascal_quant"]
ROUNDS, WARMUP = 25, 3

pytestmark = pytest.mark.skipif(not MODELS.is_dir(), reason=f"no shared models at {MODELS}")


def _ready(path, threads):
    from nnsim.tflite import Interpreter
    # the second invoke runs the bound plan
    return ready(Interpreter(model_path=path, num_threads=threads), warm_invokes=2)


@pytest.mark.parametrize("model", THREAD_MODELS)
def test_threads_interleaved(model, benchmark, capsys):
    path = str(MODELS / f"{model}.tflite")
    runs = {n: _ready(path, n) for n in (1, 2)}
    for d in runs[1].get_output_details():
        assert np.array_equal(runs[1].get_tensor(d["index"]), runs[2].get_tensor(d["index"]))
    link = [core_round_trip_ns()]
    medians = interleaved_medians(benchmark, runs, "threads", ROUNDS, WARMUP)
    link.append(core_round_trip_ns())
    speedup = medians[1] / medians[2]
    benchmark.extra_info.update({"1_thread_ms": medians[1] * 1e3,
                                 "2_threads_ms": medians[2] * 1e3, "speedup": speedup,
                                 "core_round_trip_ns": link})
    shown = ("" if None in link else
             f"   CPU 0 <-> 1 round trip {link[0]:.0f} / {link[1]:.0f} ns (before / after)")
    with capsys.disabled():
        print(f"\n  {model:<42} 1 thread {medians[1] * 1e3:8.2f} ms   2 threads "
              f"{medians[2] * 1e3:8.2f} ms   speed-up {speedup:4.2f}x{shown}")
