"""Reference REDUCE_SUM / REDUCE_MAX / REDUCE_MIN (numpy reductions): the oracle for
:mod:`nnsim.kernels.reduce_ext`."""

from __future__ import annotations

import numpy as np


def _axes(x, axes):
    return tuple(sorted({int(a) % x.ndim for a in np.asarray(axes).reshape(-1)}))


def _finish(result):
    result = np.asarray(result)
    return result if result.ndim else result.reshape(1)


def reduce_sum(x, axes, keep_dims=False):
    """Reference; see :func:`nnsim.kernels.reduce_ext.reduce_sum` (float64 sum)."""
    x = np.asarray(x)
    total = x.astype(np.float64).sum(axis=_axes(x, axes), keepdims=bool(keep_dims))
    return _finish(total.astype(x.dtype))


def reduce_max(x, axes, keep_dims=False):
    """Reference; see :func:`nnsim.kernels.reduce_ext.reduce_max`."""
    x = np.asarray(x)
    return _finish(np.max(x, axis=_axes(x, axes), keepdims=bool(keep_dims)))


def reduce_min(x, axes, keep_dims=False):
    """Reference; see :func:`nnsim.kernels.reduce_ext.reduce_min`."""
    x = np.asarray(x)
    return _finish(np.min(x, axis=_axes(x, axes), keepdims=bool(keep_dims)))
