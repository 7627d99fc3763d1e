"""Partitioner decision trace, for ``nnsim explain --steps``.

The runtime and the TFLite delegate call :func:`record` where they make a decision (the same
places that print the ``debug.nn.vlog`` lines); nothing is kept unless a :class:`recording` is
active in the calling thread, so the cost outside ``explain --steps`` is one attribute lookup.
Each event is ``{"stage": name, ...fields}`` with plain values (ints, strings, lists), in the
order the decisions are made.
"""
from __future__ import annotations

import threading

_state = threading.local()


def active() -> bool:
    return getattr(_state, "events", None) is not None


def record(stage: str, **fields) -> None:
    """Append one decision when a recording is active (a no-op otherwise)."""
    events = getattr(_state, "events", None)
    if events is not None:
        events.append({"stage": stage, **fields})


class recording:
    """``with trace.recording() as events: ...`` collects every decision made meanwhile."""

    def __enter__(self) -> list:
        self._was = getattr(_state, "events", None)
        _state.events = []
        return _state.events

    def __exit__(self, *exc) -> None:
        _state.events = self._was
