"""REDUCE_SUM, REDUCE_PROD, REDUCE_MAX, REDUCE_MIN, REDUCE_ALL, REDUCE_ANY over axes; numba
fast path.

NNAPI's CPU executor (``Reduce.cpp``) calls TFLite ``reference_ops::ReduceGeneric<T>``: every
output starts at an init value (0, lowest, max) and takes ``out = f(out, x)`` for the inputs in
row-major order, in the tensor's own type:

* REDUCE_SUM float32 accumulates in float32; float16 accumulates in float16 (each partial sum
  rounded to half, exactly what float32 addition followed by a half cast gives);
* REDUCE_PROD is ``(out == 0 || x == 0) ? 0 : out * x`` from 1 (AOSP's guard against
  ``0 * inf``: a zero anywhere gives +0, never NaN or -0), float32 in float32, float16 with
  every partial product rounded to half (a float32 product of halves is exact);
  (TFLite's own REDUCE_PROD has no guard: ``zero_guard=False``);
* REDUCE_MAX / MIN are ``std::max(out, x)`` / ``std::min(out, x)`` (a NaN input never wins);
  quantized tensors compare raw values (input and output share their quantization);
* REDUCE_ALL / ANY are ``out && x`` from true / ``out || x`` from false on TENSOR_BOOL8.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._jit import njit

__all__ = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_all", "reduce_any",
           "reduction_rows"]

_SUM, _MAX, _MIN, _PROD, _PLAIN_PROD, _ALL, _ANY = 0, 1, 2, 3, 4, 5, 6


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


def reduce_prod(x, axes, keep_dims=False, *, zero_guard=True):
    """Product over ``axes`` in the input type; arguments as :func:`reduce_sum`.

    ``zero_guard=True`` is NNAPI's product (float32 / float16, see the module docstring);
    ``zero_guard=False`` is TFLite's ``in * current`` from 1 (float32, and int32 / int64
    wrapping), where ``0 * inf`` is NaN.
    """
    x = np.asarray(x)
    allowed = cm.FLOAT_DTYPES if zero_guard else (np.float32, np.int32, np.int64)
    cm.check_dtype("input", x, allowed)
    rows, shape = reduction_rows(x, axes, keep_dims)
    if not zero_guard:
        out = np.empty(rows.shape[0], dtype=x.dtype)
        with np.errstate(over="ignore", invalid="ignore"):   # wraps and NaNs are the result
            _reduce_core(_PLAIN_PROD, rows, x.dtype.type(1), out)
        return out.reshape(shape)
    if x.dtype == np.float16:
        acc = np.ones(rows.shape[0], dtype=np.float16)
        for k in range(rows.shape[1]):   # a loop over the reduced axis, vectorised over rows
            v = rows[:, k]
            with np.errstate(invalid="ignore", over="ignore"):   # 0 * inf is replaced below
                product = (acc.astype(np.float32) * v.astype(np.float32)).astype(np.float16)
            acc = np.where((acc == 0) | (v == 0), np.float16(0.0), product)
        return acc.reshape(shape)
    out = np.empty(rows.shape[0], dtype=np.float32)
    _reduce_core(_PROD, rows, np.float32(1.0), out)
    return out.reshape(shape)


def reduce_all(x, axes, keep_dims=False):
    """Logical AND over ``axes`` of a bool tensor; arguments as :func:`reduce_sum`."""
    return _logical(_ALL, x, axes, keep_dims)


def reduce_any(x, axes, keep_dims=False):
    """Logical OR over ``axes`` of a bool tensor; arguments as :func:`reduce_sum`."""
    return _logical(_ANY, x, axes, keep_dims)


def _logical(op, x, axes, keep_dims):
    x = np.asarray(x)
    cm.check_dtype("input", x, (np.bool_,))
    rows, shape = reduction_rows(x, axes, keep_dims)
    out = np.empty(rows.shape[0], dtype=np.bool_)
    _logical_core(op == _ALL, rows, out)
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
            elif op == _PROD:
                zero = init - init      # +0 of the accumulator's type (1 - 1)
                acc = zero if (acc == zero or v == zero) else acc * v
            elif op == _PLAIN_PROD:
                acc = v * acc
            elif op == _MAX:
                acc = v if acc < v else acc
            else:
                acc = v if v < acc else acc
        out[r] = acc
    return out


@njit
def _logical_core(is_all, rows, out):
    n_rows, count = rows.shape
    for r in range(n_rows):
        acc = is_all
        for i in range(count):
            acc = (acc and rows[r, i]) if is_all else (acc or rows[r, i])
        out[r] = acc
    return out
