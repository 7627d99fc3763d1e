"""How fast the machine's first two CPUs exchange a cache line: printed by test_threads.py
beside each speed-up, because on this project's 2-core VM the speed-up of two threads follows
it (benchmarks/README.md, "The two-thread phases"): 50-70 ns a round trip with MobileNet v2
at 1.84-1.91x, 400-800 ns (the two vCPUs on cores with a slow link between them) at
1.38-1.51x, the change happening within seconds."""
from __future__ import annotations

import os
import threading
import time

import numpy as np

from nnsim.kernels._jit import JIT_ENABLED, njit
from nnsim.kernels._native import at_load, at_store

ROUNDS = 50_000


@njit(cache=False)
def _bounce(line, rounds, me):
    """Wait for the slot to hold ``2 * i + me``, then write the next value: with the other
    thread doing the same, each round is one round trip of the cache line."""
    for i in range(rounds):
        mine = 2 * i + me
        while at_load(line, 0) != mine:
            pass
        at_store(line, 0, mine + 1)


def core_round_trip_ns(rounds: int = ROUNDS, settle: float = 0.25):
    """Nanoseconds per round trip of a cache line between threads pinned to CPUs 0 and 1, or
    None where that cannot be measured (one CPU, no affinity control, no JIT). Waits
    ``settle`` seconds first: nnsim's team workers spin about 50 ms after a layer
    (``nnsim.kernels.team.SPINS``), and one sharing a CPU with a pinned thread would make
    the round trips those of two threads taking turns."""
    if not JIT_ENABLED or not hasattr(os, "sched_setaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None
    time.sleep(settle)
    line = np.zeros(16, np.int64)
    _bounce(np.zeros(16, np.int64), 1, 0)   # compiled before the clock starts (no wait)
    took = {}

    def side(me):
        os.sched_setaffinity(0, {cpus[me]})   # this thread only (Linux: 0 is the caller)
        start = time.perf_counter()
        _bounce(line, rounds, me)
        took[me] = time.perf_counter() - start

    workers = [threading.Thread(target=side, args=(me,)) for me in (0, 1)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return took[0] / rounds * 1e9
