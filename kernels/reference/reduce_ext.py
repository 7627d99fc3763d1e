"""Reference REDUCE_SUM / PROD / MAX / MIN / ALL / ANY (numpy reductions): the oracle for
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


def reduce_prod(x, axes, keep_dims=False, *, zero_guard=True):
    """Reference; see :func:`nnsim.kernels.reduce_ext.reduce_prod`: the product in the input
    type, moving the reduced axes last and multiplying one column at a time (with the zero
    guard, a zero factor or a zero partial product gives +0)."""
    x = np.asarray(x)
    reduced = _axes(x, axes)
    kept = [d for d in range(x.ndim) if d not in reduced]
    count = int(np.prod([x.shape[d] for d in reduced], dtype=np.int64))
    cols = np.transpose(x, kept + list(reduced)).reshape([x.shape[d] for d in kept] + [count])
    acc = np.ones(cols.shape[:-1], dtype=x.dtype)
    for k in range(cols.shape[-1]):
        v = cols[..., k]
        wide = np.float64 if x.dtype.kind == "f" else np.int64   # int64 wraps like int32
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            product = (acc.astype(wide) * v.astype(wide)).astype(x.dtype)
        acc = np.where((acc == 0) | (v == 0), x.dtype.type(0), product) if zero_guard \
            else product
    if keep_dims:
        acc = acc.reshape([1 if d in reduced else x.shape[d] for d in range(x.ndim)])
    return _finish(acc)


def reduce_all(x, axes, keep_dims=False):
    """Reference; see :func:`nnsim.kernels.reduce_ext.reduce_all`."""
    x = np.asarray(x)
    return _finish(np.all(x, axis=_axes(x, axes), keepdims=bool(keep_dims)))


def reduce_any(x, axes, keep_dims=False):
    """Reference; see :func:`nnsim.kernels.reduce_ext.reduce_any`."""
    x = np.asarray(x)
    return _finish(np.any(x, axis=_axes(x, axes), keepdims=bool(keep_dims)))
