"""CUMSUM along one axis, inclusive or exclusive, forward or reverse (TFLite ``CumSum``).

TFLite accumulates each line along the axis in order, starting from 0 (``T accumulator = 0``),
in the element type: float32 additions rounded one at a time, int32 / int64 wrapping. numpy's
``add.accumulate`` adds sequentially in the same order and type (it is not pairwise), so the
vectorised numpy form below is exact; there is no numba core.
"""

from __future__ import annotations

import numpy as np

__all__ = ["cumsum"]

_TYPES = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.int64))


def cumsum(x, axis, *, exclusive=False, reverse=False):
    """Cumulative sum of ``x`` along ``axis``.

    Parameters
    ----------
    x : ndarray
        float32, int32 or int64, rank >= 1.
    axis : int
        In ``[-rank, rank)``.
    exclusive : bool
        Element k gets the sum of the elements before k (the first gets 0).
    reverse : bool
        Sum from the end of the axis.

    Returns
    -------
    ndarray
        Same shape and dtype as ``x``.
    """
    x = np.asarray(x)
    if x.dtype not in _TYPES:
        raise TypeError(f"cumsum: dtype {x.dtype.name} not supported")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"cumsum: axis {axis} out of range for rank {x.ndim}")
    axis %= x.ndim
    if reverse:
        x = np.flip(x, axis)
    zero = np.zeros_like(np.take(x, [0], axis=axis)) if x.shape[axis] else \
        np.zeros(x.shape[:axis] + (1,) + x.shape[axis + 1:], x.dtype)
    # Start from an explicit 0 as TFLite does (0 + -0.0 is +0.0).
    running = np.cumsum(np.concatenate([zero, x], axis=axis), axis=axis, dtype=x.dtype)
    n = x.shape[axis]
    out = np.take(running, range(0, n) if exclusive else range(1, n + 1), axis=axis)
    return np.ascontiguousarray(np.flip(out, axis) if reverse else out)
