"""A bound invoke as one compiled loop: the steps of an interpreter's plan (or of an NNAPI
execution's chain, :mod:`nnsim.ops.executor`), each a bound call over fixed buffers, run from
a table without Python between them.

Called from Python, a bound step (``partial(core, *arrays)``) paid numba's argument unboxing
on every call (about 30-50 ns an array: 0.5-1 us for a convolution's 20 arguments) and the
interpreter's loop around it: about 45 us of MobileNet v2's 1.58 ms invoke (Zen 5). Here each
compiled piece of a step becomes a row ``(callback, table, parts, workers, balance, stamp)``:
a C callback of :mod:`nnsim.kernels.team` that rebuilds the core's arguments from an int64 table
(addresses and shapes), called in turn by one compiled loop; a layer in parts launches the
thread team from the same loop. The loop reads the clock after each step, as the
interpreter's Python loop did (``CLOCK_MONOTONIC``, the clock of ``time.perf_counter_ns``), so
per-step profiles stay.

What a step can be:

* ``partial(core, *args)`` of a compiled core whose arguments fit a table (arrays, numbers,
  tuples of ints): one row;
* a layer in parts (:func:`nnsim.kernels.team.bound`): one row launching the team;
* :func:`nnsim.kernels._common.in_turn` of such calls: one row each;
* ``nothing`` (a step whose output is a view): no row, its clock reading only;
* anything else: a Python call between two compiled stretches.

With the JIT off, or on a system without Linux's ``clock_gettime``, the program calls the
steps from Python, as before.
"""

from __future__ import annotations

import functools
import sys
import time

import numpy as np

from nnsim.kernels import team as _team
from nnsim.kernels._common import _in_turn, direct, nothing
from nnsim.kernels._jit import JIT_ENABLED, njit
from nnsim.kernels._native import call_address, monotonic_ns

__all__ = ["Program"]

#: Compiled stretches only where the clock they read is Python's ``perf_counter_ns``.
COMPILED = JIT_ENABLED and sys.platform.startswith("linux")

_FN, _TABLE, _PARTS, _WORKERS, _BALANCE, _STAMP = range(6)


@njit
def _run_rows(rows, stamps, ctl, start):
    """Run rows ``start:``: ``parts == 0``: ``callback(table, 0)``; ``parts > 0``: the layer's
    parts on the team whose control array is ``ctl``; ``parts < 0``: nothing. After a step's
    last row (``stamp >= 0``) the clock goes to ``stamps[stamp]``. Returns -1 when every row
    ran, or, after a launch that found workers asleep, the next row's index: the caller wakes
    them (from Python) and resumes there, so that the rest of the invoke has them."""
    for i in range(start, rows.shape[0]):
        asleep = 0
        if rows[i, _PARTS] == 0:
            call_address(rows[i, _FN], rows[i, _TABLE], 0)
        elif rows[i, _PARTS] > 0:
            asleep = _team._launch(ctl, rows[i, _FN], rows[i, _TABLE], rows[i, _PARTS],
                                   rows[i, _WORKERS], rows[i, _BALANCE])
        if rows[i, _STAMP] >= 0:
            stamps[rows[i, _STAMP]] = monotonic_ns()
        if asleep:
            return i + 1
    return -1


class Program:
    """The bound ``calls`` (one per step) as compiled stretches and Python calls.

    :meth:`run` runs every step once, in order; ``stamps`` then holds ``len(calls) + 1``
    clock readings (``perf_counter_ns``): before the first step and after each. The first run
    calls the steps from Python and then makes the compiled stretches (their callbacks compile
    once, about 0.2 s each, then load from numba's cache): a one-invoke run does not pay for
    them.
    """

    def __init__(self, calls):
        self.stamps = np.zeros(len(calls) + 1, np.int64)
        self.team = None
        self._calls = [direct(call) for call in calls]   # the first run's
        self._source = list(calls)
        self._segments = None   # (rows array, None) or (stamp index or -1, Python call)
        self._keep = []         # the callbacks and tables the rows' addresses point into
        self._ctl = None

    def run(self):
        """Run every step once (``stamps``: the clock before and after each)."""
        stamps, clock = self.stamps, time.perf_counter_ns
        stamps[0] = clock()
        if self._segments is None:
            for index, call in enumerate(self._calls, 1):
                call()
                stamps[index] = clock()
            self._segments = self._stretches() if COMPILED else [
                (index, call) for index, call in enumerate(self._calls, 1)]
            return
        if self.team is not None:
            # a worker asleep (the last invoke ended more than team.SPINS ago) is woken
            # before the first step: it takes 50-90 us to start, and woken only at the first
            # launch that found it asleep, it missed that whole layer (the input layer of a
            # DeepLab invoke after a pause: 1.8 ms on one thread)
            _team.wake(self.team)
        for first, call in self._segments:
            if call is None:   # first: the rows
                # a worker that fell asleep during the invoke (a Python step longer than
                # team.SPINS) is woken at the first launch that finds it so: waking it after
                # the whole stretch left the stretch's layers to this thread
                resume = _run_rows(first, stamps, self._ctl, 0)
                while resume >= 0:
                    _team.wake(self.team)
                    resume = _run_rows(first, stamps, self._ctl, resume)
            else:              # first: the stamp index, or -1 within a step
                call()
                if first >= 0:
                    stamps[first] = clock()

    def _stretches(self):
        segments, rows = [], []
        for index, call in enumerate(self._source):
            pieces = self._pieces(call)
            if pieces is None:
                pieces = [self._calls[index]]
            elif not pieces:
                pieces = [[0, 0, -1, 0, 0]]   # nothing to run: the clock reading only
            for k, piece in enumerate(pieces):
                stamp = index + 1 if k == len(pieces) - 1 else -1
                if isinstance(piece, list):
                    rows.append(piece + [stamp])
                    continue
                if rows:
                    segments.append((np.array(rows, np.int64), None))
                    rows = []
                segments.append((stamp, piece))
        if rows:
            segments.append((np.array(rows, np.int64), None))
        self._ctl = self.team.ctl if self.team is not None else np.zeros(1, np.int64)
        return segments

    def _pieces(self, call):
        """The step ``call`` as rows (lists) and Python calls, or None to call it whole."""
        if call is nothing:
            return []
        launch = getattr(call, "launch", None)
        if launch is not None:
            team, fn, table, parts, workers, balance = launch
            if self.team not in (None, team):   # (bound before and after a fork)
                return None
            self.team = team
            self._keep.append(call.keep)
            return [[fn, table, parts, workers, balance]]
        if not isinstance(call, functools.partial) or call.keywords:
            return None
        if call.func is _in_turn:
            pieces = []
            for inner in call.args[0]:
                more = self._pieces(inner)
                pieces += [direct(inner)] if more is None else more
            return pieces
        made = _team.serial(call.func, call.args)
        if made is None:
            return None
        callback, table = made
        self._keep.append((call.args, callback, table))
        return [[callback.address, table.ctypes.data, 0, 0, 0]]
