"""Shared by the interleaved benchmarks (test_paths.py, test_threads.py): interpreters fed one
seeded random input, and rounds that invoke each of them once, in turn, so that machine noise
hits all alike."""
from __future__ import annotations

import statistics
import time

import numpy as np


def ready(interp, warm_invokes: int = 1):
    """``interp`` allocated, fed seeded random inputs, and invoked ``warm_invokes`` times
    (numba compilation / cache loading and plans: outside the measurement)."""
    interp.allocate_tensors()
    rng = np.random.default_rng(0)
    for d in interp.get_input_details():
        dtype, shape = np.dtype(d["dtype"]), tuple(int(x) for x in d["shape"])
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            x = rng.integers(info.min, int(info.max) + 1, shape, dtype=dtype)
        else:
            x = rng.uniform(-1, 1, shape).astype(dtype)
        interp.set_tensor(d["index"], x)
    for _ in range(warm_invokes):
        interp.invoke()
    return interp


def interleaved_medians(benchmark, runs: dict, group: str, rounds: int, warmup: int) -> dict:
    """Benchmark one round of invoking every interpreter of ``runs`` in turn; returns the
    median seconds per interpreter (key of ``runs``), warm-up rounds left out."""
    times: dict = {key: [] for key in runs}

    def one_round():
        for key, interp in runs.items():
            start = time.perf_counter()
            interp.invoke()
            times[key].append(time.perf_counter() - start)

    benchmark.group = group
    benchmark.pedantic(one_round, rounds=rounds, iterations=1, warmup_rounds=warmup)
    return {key: statistics.median(t[warmup:]) for key, t in times.items()}
