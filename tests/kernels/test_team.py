"""The thread team (nnsim.kernels.team): every part of a layer runs exactly once per call, on
more than one thread, with its arguments rebuilt exactly; a sleeping worker is woken; a layer
launched while another thread's runs, or in a forked child, still runs every part.

Oracles: counts and values computed here (each part adds a known amount to its own slot), the
step called directly, in this thread."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from nnsim.kernels import team
from nnsim.kernels._jit import JIT_ENABLED, njit
from nnsim.kernels._native import at_add, at_load

pytestmark = pytest.mark.skipif(not JIT_ENABLED or team._cpus() < 2,
                                reason="the team needs the JIT and two CPUs")


@njit
def _count_step(counts, parts, t):
    counts[16 * t] += parts[t, 0]


@njit
def _meet_step(flags, spins, t):
    """Part 0 waits (a bounded spin) for part 1's mark: it sees it only if another thread runs
    part 1 while part 0 runs."""
    if t == 1:
        at_add(flags, 16, 1)
        return
    for _ in range(spins):
        if at_load(flags, 16) > at_load(flags, 32):
            flags[0] += 1   # met
            break
    at_add(flags, 32, 1)


@njit
def _kinds_step(a, b, c, scalar, flag, real, single, shape, out, t):
    out[t] = (a.sum() + b.sum() * 3 + c.sum() * 5.0 + scalar * 7 + flag * 11 + real * 13
              + single * 17 + shape[0] * 19 + shape[1] * 23 + a.shape[0] * 29 + c.shape[1] * 31
              + t)


def _counting_layer(parts, threads=2):
    counts = np.zeros(16 * parts, np.int64)
    table = np.array([[t + 1] for t in range(parts)], np.int64)
    return team.bound(_count_step, (counts, table), parts, threads), counts


def test_every_part_runs_once_per_call():
    for parts in (1, 2, 3, 7, 64):
        layer, counts = _counting_layer(parts)
        for _ in range(500):
            layer()
        assert np.array_equal(counts[::16], 500 * np.arange(1, parts + 1)), parts


def test_parts_run_on_two_threads_at_once():
    team.start(1)
    flags = np.zeros(48, np.int64)
    layer = team.bound(_meet_step, (flags, 2_000_000), 2, 2)
    for _ in range(50):
        layer()
    assert flags[16] == 50 and flags[32] == 50
    assert flags[0] > 0, "part 0 never saw part 1 running at the same time"


def test_arguments_rebuilt_exactly():
    rng = np.random.default_rng(5)
    args = (rng.integers(-99, 99, 37).astype(np.int8),
            rng.integers(0, 60000, (3, 5)).astype(np.uint16),
            rng.standard_normal((2, 9)).astype(np.float32),
            np.int32(-123456), True, 2.5e-3, np.float32(1.25), (4, -6))
    out = np.zeros(5)
    team.bound(_kinds_step, (*args, out), 5, 2)()
    expected = np.zeros(5)
    for t in range(5):
        _kinds_step(*args, expected, t)
    assert np.array_equal(out, expected)


def test_other_arguments_run_in_turn():
    """A list is no callback argument: the parts run in turn, in this thread."""
    seen = []
    layer = team.bound(lambda items, t: items.append(t), (seen,), 3, 2)
    layer()
    assert seen == [0, 1, 2]


def test_sleeping_worker_is_woken():
    """A worker idle for SPINS rounds sleeps; the next layer runs every part itself, wakes it,
    and the layers after it share the parts again."""
    team.start(1)
    layer, counts = _counting_layer(2)
    layer()
    started = time.monotonic()
    while team._TEAM.ctl[team._STATE] != team._ASLEEP:
        assert time.monotonic() < started + 10, "the worker never slept"
        time.sleep(0.002)
    slept = time.monotonic() - started
    assert 0.005 < slept < 2, f"asleep after {slept:.3f} s idle"
    layer()
    assert team._TEAM.ctl[team._STATE] == team._AWAKE
    assert np.array_equal(counts[::16], [2, 4])
    flags = np.zeros(48, np.int64)
    meet = team.bound(_meet_step, (flags, 2_000_000), 2, 2)
    for _ in range(20):
        meet()
    assert flags[0] > 0, "the woken worker took no part"


def test_concurrent_layers_from_two_threads():
    """Two Python threads launch at once: one gets the team, the other runs in turn; every
    part of both runs once per call."""
    layers = [_counting_layer(5) for _ in range(2)]

    def run(layer):
        for _ in range(2000):
            layer()
    workers = [threading.Thread(target=run, args=(layer,)) for layer, _ in layers]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for _, counts in layers:
        assert np.array_equal(counts[::16], 2000 * np.arange(1, 6))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_forked_child_runs_every_part():
    layer, counts = _counting_layer(4)
    layer()
    pid = os.fork()
    if pid == 0:   # the child: the parent's layer and a new one, its own team
        code = 1
        try:
            layer()
            fresh, fresh_counts = _counting_layer(4)
            for _ in range(10):
                fresh()
            good = (np.array_equal(counts[::16], 2 * np.arange(1, 5))
                    and np.array_equal(fresh_counts[::16], 10 * np.arange(1, 5))
                    and team.workers_running() >= 1)
            code = 0 if good else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_part_count_checked():
    for parts in (0, 0x10000):
        with pytest.raises(ValueError):
            team.bound(_count_step, (np.zeros(16), np.zeros((1, 1), np.int64)), parts, 2)


_CACHED_PROBE = """
import json
import numpy as np
from nnsim.kernels import team, threads
from nnsim.kernels.elementwise import prepare_binary
a = np.arange(50000, dtype=np.uint8).reshape(1, -1)
b = a[:, ::-1].copy()
plan = prepare_binary(0, a.shape, b.shape, np.uint8, np.uint8, fuse=1, in1_scale=0.05,
                      in1_zp=3, in2_scale=0.03, in2_zp=5, out_scale=0.07, out_zp=2)
outs = [np.zeros(plan.shape, np.uint8) for _ in range(2)]
calls = []
for n, out in zip((2, 1), outs):
    with threads.num_threads(n):
        calls.append(plan.bind(a, b, out))
    calls[-1]()
print(json.dumps([getattr(calls[0], "parts", 1), bool(np.array_equal(*outs)),
                  [c.cache_hits for c in team._CALLBACKS.values()]]))
"""


def test_kernel_callbacks_cached_across_processes():
    """A kernel step's callback is generated into the kernels' cache directory and loaded
    from numba's cache by the next process (compiling it again cost about 0.2 s a layer kind
    per process)."""
    runs = [json.loads(subprocess.run([sys.executable, "-c", _CACHED_PROBE], check=True,
                                      capture_output=True, text=True, timeout=600)
                       .stdout.strip().splitlines()[-1]) for _ in range(2)]
    for parts, same, _ in runs:
        assert parts == 2 and same
    assert runs[1][2] == [1]   # the one callback (ADD's step), from the cache


@njit
def _rebalance_now(ctl, address):
    team._rebalance(ctl, address)


def _rebalanced(bounds, times, ran_by, unit):
    """The parts table after one _rebalance with part 0 and 1 taking ``times`` ns, run by
    ``ran_by`` (0 the launcher, 1 a worker)."""
    ctl = np.zeros(team._STATE, np.int64)
    for part in (0, 1):
        ctl[team._TIMED + team._LINE * part] = times[part]
        ctl[team._TIMED + team._LINE * part + 1] = ran_by[part]
    parts = np.array(bounds, np.int64)
    balance = team.Balance(parts, 0, unit)
    _rebalance_now(ctl, balance.words.ctypes.data)
    return parts.tolist()


def test_rebalance_moves_the_boundary_halfway_toward_equal_times():
    """Hand-computed: parts 0:48 and 48:100 in 4-unit steps. Part 0 at 48 units / 100 ns,
    part 1 at 52 / 312: equal times at 100 * 0.48 / (0.48 + 1/6) = 74.2; halfway from 48:
    61.1, to a whole unit 60. A faster worker moves it the other way; equal speeds keep it."""
    assert _rebalanced([[0, 48, 9], [48, 100, 9]], (100, 312), (0, 1), 4) == \
        [[0, 60, 9], [60, 100, 9]]
    # part 1 at 52 units / 26 ns (rate 2): target 100 * 0.48 / 2.48 = 19.4, halfway 33.7 -> 32
    assert _rebalanced([[0, 48, 9], [48, 100, 9]], (100, 26), (0, 1), 4) == \
        [[0, 32, 9], [32, 100, 9]]
    assert _rebalanced([[0, 48, 9], [48, 100, 9]], (480, 520), (0, 1), 4) == \
        [[0, 48, 9], [48, 100, 9]]
    # never past the ends: a part keeps at least one unit
    assert _rebalanced([[0, 8, 0], [8, 12, 0]], (10, 10**6), (0, 1), 4) == \
        [[0, 8, 0], [8, 12, 0]]
    assert _rebalanced([[0, 4, 0], [4, 100, 0]], (10**6, 1), (0, 1), 4) == \
        [[0, 4, 0], [4, 100, 0]]


def test_rebalance_only_when_both_threads_ran_a_part():
    """The launcher ran both parts (the worker asleep) or the worker ran part 0: the times do
    not compare two threads' speeds, the boundary stays."""
    for ran_by in ((0, 0), (1, 0), (1, 1)):
        assert _rebalanced([[0, 48, 9], [48, 100, 9]], (100, 312), ran_by, 4) == \
            [[0, 48, 9], [48, 100, 9]]


def test_two_part_layer_boundary_follows_the_slower_part():
    """End to end: part 1 costs eight times as much per unit as part 0 (as if its thread ran
    that much slower), so the team moves the boundary toward equal times (89 of 100 units on
    two equally fast CPUs; 73 if the launcher's CPU ran 3 times slower than the worker's, 96
    the other way round); every unit still runs once per call, whatever the boundary."""
    counts = np.zeros(100, np.int64)
    bounds = np.array([[0, 50], [50, 100]], np.int64)
    layer = team.bound(_uneven_step, (counts, bounds), 2, 2, team.Balance(bounds, 0, 1))
    for _ in range(40):
        layer()
    assert (counts == 40).all()
    assert 65 <= bounds[0, 1] <= 99, bounds.tolist()
    assert bounds[1, 0] == bounds[0, 1] and bounds[1, 1] == 100


@njit
def _uneven_step(counts, bounds, t):
    spins = 5_000 * (8 if t == 1 else 1)
    for i in range(bounds[t, 0], bounds[t, 1]):
        x = 0
        for k in range(spins):
            x += at_load(counts, i) * k
        counts[i] += 1 + (x & 0)
