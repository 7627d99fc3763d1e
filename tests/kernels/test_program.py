"""The compiled program of a bound invoke (nnsim.kernels.program): steps of every kind (a
compiled core over fixed arrays, a sequence of them, a layer in parts, a view step that runs
nothing, a Python call) run in order from the second run on, each step's clock reading after
it; the oracle: the same calls made one by one from Python."""

from __future__ import annotations

import time
from functools import partial

import numpy as np
import pytest

from nnsim.kernels import program, team
from nnsim.kernels._common import in_turn
from nnsim.kernels._jit import JIT_ENABLED, njit
from nnsim.tflite.builtins._base import nothing


@njit
def _scale_add(x, k, out):
    for i in range(x.size):
        out[i] = out[i] * 3 + x[i] * k


@njit
def _part_add(x, out, parts, t):
    for i in range(parts[t, 0], parts[t, 1]):
        out[i] = out[i] * 5 + x[i] + t


def _steps(x, a, b, c, log):
    parts = np.array([[0, 40], [40, 100]], np.int64)
    return [partial(_scale_add, x, np.int64(2), a),                 # a compiled core
            in_turn(partial(_scale_add, a, np.int64(-1), b),          # two in one step
                    partial(_scale_add, b, np.int64(7), c)),
            nothing,                                                  # a view: no call
            partial(log.append, 1),                                   # Python
            team.bound(_part_add, (c, a, parts), 2, 2),               # a layer in parts
            in_turn(partial(_scale_add, a, np.int64(1), b), partial(log.append, 2))]


def _arrays():
    x = np.arange(100, dtype=np.int64)
    return x, x * 0 + 1, x * 0 + 2, x * 0 + 3


def test_program_runs_the_steps_in_order():
    x, a, b, c = _arrays()
    log = []
    prog = program.Program(_steps(x, a, b, c, log))
    ref_arrays, ref_log = _arrays(), []
    ref_steps = _steps(*ref_arrays, ref_log)
    for run in range(4):
        start = time.perf_counter_ns()
        prog.run()
        end = time.perf_counter_ns()
        for step in ref_steps:
            step()
        for got, want in zip((a, b, c), ref_arrays[1:]):
            assert np.array_equal(got, want), run
        assert log == ref_log
        stamps = prog.stamps.tolist()
        assert len(stamps) == 7 and start <= stamps[0] and stamps[-1] <= end
        assert stamps == sorted(stamps)


@pytest.mark.skipif(not (JIT_ENABLED and program.COMPILED), reason="no compiled program")
def test_compiled_stretches_after_the_first_run():
    x, a, b, c = _arrays()
    log = []
    prog = program.Program(_steps(x, a, b, c, log))
    prog.run()
    kinds = [("rows", len(first)) if call is None else ("call", first)
             for first, call in prog._segments]
    # core, core + core, nothing | log.append(1) | layer in parts, core | log.append(2)
    assert kinds == [("rows", 4), ("call", 4), ("rows", 2), ("call", 6)]


def test_first_run_calls_from_python(monkeypatch):
    """A one-run program compiles nothing: its stretches are made after the first run."""
    made = []
    monkeypatch.setattr(team, "serial", lambda *a: made.append(a))
    x, a, b, c = _arrays()
    prog = program.Program(_steps(x, a, b, c, []))
    assert prog._segments is None
    prog.run()
    assert prog._segments is not None and (made or not program.COMPILED)


@pytest.mark.skipif(not (JIT_ENABLED and program.COMPILED) or team._cpus() < 2,
                    reason="no compiled program or one CPU")
def test_sleeping_worker_woken_before_the_first_step():
    """An invoke that starts with the worker asleep (the last one ended longer than
    team.SPINS ago, as when a 1-thread invoke of 40 ms ran in between) wakes it before its
    first step: every layer shares its parts, the first one too (woken only by the first
    launch that found it asleep, as before, the worker missed that whole layer). Oracle:
    part 0 of a layer sees part 1 running at the same time only on two threads."""
    from tests.kernels.test_team import _meet_step
    team.start(1)
    flags = [np.zeros(48, np.int64) for _ in range(12)]
    prog = program.Program([team.bound(_meet_step, (f, 20_000_000), 2, 2) for f in flags])
    prog.run()   # the first run, from Python; then the stretch
    prog.run()
    assert [len(first) for first, call in prog._segments] == [12]
    for f in flags:
        f[:] = 0
    started = time.monotonic()
    while team._TEAM.ctl[team._STATE] != team._ASLEEP:
        assert time.monotonic() < started + 10, "the worker never slept"
        time.sleep(0.002)
    prog.run()
    met = [int(f[0]) for f in flags]
    assert all(f[16] == 1 and f[32] == 1 for f in flags)
    # part 0 of the first layer waits up to 20,000,000 loads (tens of ms) for part 1, and
    # the worker, woken before the invoke's first step, starts within about 0.1 ms
    assert met[0] == 1 and sum(met) >= 10, met
