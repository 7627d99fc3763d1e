"""LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT and SELECT; numba.

Logical ops (``LogicalAndOr.cpp``, ``LogicalNot.cpp``): a bool8 byte is true when non-zero;
AND / OR broadcast their inputs; the output bytes are 0 / 1.

SELECT (``Select.cpp``): ``out = condition ? x : y`` elementwise. NNAPI requires the three
shapes to be equal (checked by the operation); quantized inputs are first requantized to the
output's parameters with NNAPI's ``requantize`` (see :mod:`nnsim.kernels.minmax`). TFLite's
SELECT / SELECT_V2 copy raw values without requantizing and broadcast the condition (V2: all
three inputs); :func:`select` with no quantization arguments and broadcastable shapes is that.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._jit import njit
from nnsim.kernels._common import broadcast_flat
from nnsim.kernels.fixed_point import qrange
from nnsim.kernels.minmax import requantize_table

__all__ = ["logical_and", "logical_or", "logical_not", "select"]

_AND, _OR = 0, 1


def logical_and(a, b):
    """``a && b`` elementwise with broadcasting; bool inputs (any non-zero byte is true)."""
    return _logical(_AND, a, b)


def logical_or(a, b):
    """``a || b`` elementwise with broadcasting; bool inputs (any non-zero byte is true)."""
    return _logical(_OR, a, b)


def logical_not(x):
    """``x == 0`` elementwise; bool input, same shape."""
    x = np.asarray(x)
    cm.check_dtype("input", x, (np.bool_,))
    flat = np.ascontiguousarray(x).reshape(-1).view(np.uint8)
    out = np.empty(flat.size, dtype=np.bool_)
    _not_core(flat, out)
    return out.reshape(x.shape)


def select(condition, x, y, *, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0,
           out_scale=None, out_zp=0):
    """``condition ? x : y`` elementwise, the three inputs broadcast together.

    Parameters
    ----------
    condition : ndarray of bool
    x, y : ndarray
        Same dtype (any numeric or bool).
    in1_scale, in1_zp, in2_scale, in2_zp, out_scale, out_zp
        uint8 / int8 only: when ``out_scale`` is given, ``x`` and ``y`` are requantized to
        the output's parameters (NNAPI); without it their raw values are copied (TFLite).

    Returns
    -------
    ndarray
        The broadcast shape, dtype of ``x``.
    """
    condition, x, y = np.asarray(condition), np.asarray(x), np.asarray(y)
    cm.check_dtype("condition", condition, (np.bool_,))
    if x.dtype != y.dtype:
        raise TypeError(f"input dtypes differ: {x.dtype.name} and {y.dtype.name}")
    shape = np.broadcast_shapes(condition.shape, x.shape, y.shape)
    fc = _flat(condition, shape).view(np.uint8)
    fx, fy = _flat(x, shape), _flat(y, shape)
    out = np.empty(fc.size, dtype=x.dtype)
    if out_scale is not None:
        cm.check_dtype("input1", x, cm.QUANT_DTYPES)
        tx = requantize_table(x.dtype, cm.require(in1_scale, "in1_scale"), in1_zp, out_scale,
                              out_zp)
        ty = requantize_table(y.dtype, cm.require(in2_scale, "in2_scale"), in2_zp, out_scale,
                              out_zp)
        _select_table_core(fc, fx, fy, tx, ty, qrange(x.dtype)[0], out)
    else:
        # raw copy as unsigned words of the same size: bool bytes stay as they are, and
        # float16 (which numba does not type) needs no conversion
        view = np.dtype(f"u{x.dtype.itemsize}")
        _select_core(fc, fx.view(view), fy.view(view), out.view(view))
    return out.reshape(shape)


def _flat(v, shape):
    return np.ascontiguousarray(np.broadcast_to(v, shape)).reshape(-1)


def _logical(op, a, b):
    a, b = np.asarray(a), np.asarray(b)
    cm.check_dtype("input1", a, (np.bool_,))
    cm.check_dtype("input2", b, (np.bool_,))
    shape, fa, fb = broadcast_flat(a, b)
    out = np.empty(fa.size, dtype=np.bool_)
    _logical_core(op, fa.view(np.uint8), fb.view(np.uint8), out)
    return out.reshape(shape)


@njit
def _logical_core(op, a, b, out):
    for i in range(out.size):
        if op == _AND:
            out[i] = a[i] != 0 and b[i] != 0
        else:
            out[i] = a[i] != 0 or b[i] != 0
    return out


@njit
def _not_core(x, out):
    for i in range(out.size):
        out[i] = x[i] == 0
    return out


@njit
def _select_core(c, x, y, out):
    for i in range(out.size):
        out[i] = x[i] if c[i] != 0 else y[i]
    return out


@njit
def _select_table_core(c, x, y, tx, ty, qmin, out):
    for i in range(out.size):
        if c[i] != 0:
            out[i] = tx[np.int64(x[i]) - qmin]
        else:
            out[i] = ty[np.int64(y[i]) - qmin]
    return out
