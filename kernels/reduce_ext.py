"""REDUCE_SUM, REDUCE_MAX, REDUCE_MIN over axes; numba fast path.

NNAPI's CPU executor (``Reduce.cpp``) calls TFLite ``reference_ops::ReduceGeneric<T>``: every
output starts at an init value (0, lowest, max) and takes ``out = f(out, x)`` for the inputs in
row-major order, in the tensor's own type:

* REDUCE_SUM float32 accumulates in float32; float16 accumulates in float16 (each partial sum
  rounded to half, exactly what float32 addition followed by a half cast gives);
* REDUCE_MAX / MIN are ``std::max(out, x)`` / ``std::min(out, x)`` (a NaN input never wins);
  quantized tensors compare raw values (input and output share their quantization).
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._jit import njit

__all__ = ["reduce_sum", "reduce_max", "reduce_min", "reduction_rows"]

_SUM, _MAX, _MIN = 0, 1, 2


def reduction_rows(x, axes, keep_dims):
    """``(rows [kept, reduced], output shape)`` for a reduction of ``x`` over ``axes``."""
    x = np.asarray(x)
    reduced = sorted({cm.normalize_axis(int(a), x.ndim)
                      for a in np.asarray(axes, dtype=np.int64).reshape(-1)})
    kept = [d for d in range(x.ndim) if d not in reduced]
    if keep_dims:
        shape = tuple(1 if d in reduced else x.shape[d] for d in range(x.ndim))
    else:
        shape = tuple(x.shape[d] for d in kept)
    n_kept = int(np.prod([x.shape[d] for d in kept], dtype=np.int64))
    n_red = int(np.prod([x.shape[d] for d in reduced], dtype=np.int64))
    rows = np.ascontiguousarray(np.transpose(x, kept + reduced)).reshape(n_kept, n_red)
    return rows, (shape or (1,))


def reduce_sum(x, axes, keep_dims=False):
    """Sum over ``axes`` (float32 / float16, accumulated in the input type).

    Parameters
    ----------
    x : ndarray
    axes : sequence of int
        Negative allowed, duplicates ignored; empty = no reduction.
    keep_dims : bool

    Returns
    -------
    ndarray
        Dtype of ``x``; shape [1] when every dimension is reduced without keep_dims.
    """
    x = np.asarray(x)
    cm.check_dtype("input", x, cm.FLOAT_DTYPES)
    rows, shape = reduction_rows(x, axes, keep_dims)
    if x.dtype == np.float16:
        acc = np.zeros(rows.shape[0], dtype=np.float16)
        for k in range(rows.shape[1]):
            acc = (acc.astype(np.float32) + rows[:, k].astype(np.float32)).astype(np.float16)
        return acc.reshape(shape)
    out = np.empty(rows.shape[0], dtype=np.float32)
    _reduce_core(_SUM, rows, np.float32(0.0), out)
    return out.reshape(shape)


def reduce_max(x, axes, keep_dims=False):
    """Maximum over ``axes``; float32 / float16 / uint8 / int8 (raw quantized values)."""
    return _extreme(_MAX, x, axes, keep_dims)


def reduce_min(x, axes, keep_dims=False):
    """Minimum over ``axes``; arguments as :func:`reduce_max`."""
    return _extreme(_MIN, x, axes, keep_dims)


def _extreme(op, x, axes, keep_dims):
    x = np.asarray(x)
    cm.check_dtype("input", x, cm.FLOAT_DTYPES + cm.QUANT_DTYPES)
    rows, shape = reduction_rows(x, axes, keep_dims)
    if x.dtype == np.float16:
        init = np.float32(-65504.0 if op == _MAX else 65504.0)
        rows = rows.astype(np.float32)
    elif cm.is_quantized(x.dtype):
        info = np.iinfo(x.dtype)
        init = x.dtype.type(info.min if op == _MAX else info.max)
    else:
        finfo = np.finfo(np.float32)
        init = np.float32(finfo.min if op == _MAX else finfo.max)
    out = np.empty(rows.shape[0], dtype=rows.dtype)
    _reduce_core(op, rows, init, out)
    return out.reshape(shape).astype(x.dtype, copy=False)


@njit
def _reduce_core(op, rows, init, out):
    n_rows, count = rows.shape
    for r in range(n_rows):
        acc = init
        for i in range(count):
            v = rows[r, i]
            if op == _SUM:
                acc = acc + v
            elif op == _MAX:
                acc = v if acc < v else acc
            else:
                acc = v if v < acc else acc
        out[r] = acc
    return out
