"""EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL with numpy broadcasting; numba.

Two semantics, which differ for 8-bit quantized inputs only:

NNAPI (``Comparisons.cpp``, :func:`compare`): float32, float16, int32 and bool8 compare their
own values (float16 exactly as float32, bool8 as raw bytes); uint8 / int8 inputs are
dequantized in float32 and compared as floats::

    real = float32(x - zp) * float32(scale)

TFLite (``comparisons.cc``, ``ComparisonWithScaling``, :func:`compare_tflite_quantized`): each
input is rescaled on its own, in integers, with ``left_shift = 8``::

    M, S = QuantizeMultiplier(double(scale))            # scale < 1: shift S <= 0
    key = RDBPOT(SRDHM((x - zp) * 2**8, M), -S)          # MultiplyByQuantizedMultiplier-
                                                         #   SmallerThanOneExp
and the int32 keys are compared. Scales so small that ``256 * scale < 1`` merge neighbouring
values, so the two semantics really differ (e.g. EQUAL(0, 1) is true in TFLite at scale 1e-3).

Both quantized paths map every possible 8-bit value to a float64 key once (a 256-entry table
per input; float32 and int32 keys are exact in float64) and compare keys.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._jit import njit
from nnsim.kernels._common import broadcast_flat
from nnsim.kernels.fixed_point import (
    multiply_by_quantized_multiplier_smaller_than_one_exp,
    qrange,
    quantize_multiplier,
)

__all__ = ["EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL", "compare",
           "compare_tflite_quantized", "dequantize_table", "tflite_scale_table"]

#: Comparison codes understood by the kernels.
EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL = range(6)

_DIRECT = (np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.int32), np.dtype(np.int64),
           np.dtype(np.int16), np.dtype(np.bool_))


def compare(op, a, b, *, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0):
    """NNAPI comparison ``a <op> b`` elementwise, with broadcasting.

    Parameters
    ----------
    op : int
        One of :data:`EQUAL` ... :data:`LESS_EQUAL`.
    a, b : ndarray
        Same dtype: float32, float16, int32 (int16 / int64 also accepted), bool, or uint8 /
        int8 with the quantization ``in1_*`` / ``in2_*`` (compared dequantized, in float32).

    Returns
    -------
    ndarray of bool
        The broadcast shape.
    """
    a, b = _same_dtype(a, b)
    if cm.is_quantized(a.dtype):
        ta = dequantize_table(a.dtype, cm.require(in1_scale, "in1_scale"), in1_zp)
        tb = dequantize_table(b.dtype, cm.require(in2_scale, "in2_scale"), in2_zp)
        return _by_table(op, a, b, ta, tb)
    cm.check_dtype("input1", a, _DIRECT)
    shape, fa, fb = broadcast_flat(a, b)
    if a.dtype == np.float16:  # float16 values are exact in float32
        fa, fb = fa.astype(np.float32), fb.astype(np.float32)
    elif a.dtype == np.bool_:  # bool8 compares its raw bytes
        fa, fb = fa.view(np.uint8), fb.view(np.uint8)
    out = np.empty(fa.size, dtype=np.bool_)
    _compare_core(_op(op), fa, fb, out)
    return out.reshape(shape)


def compare_tflite_quantized(op, a, b, *, in1_scale, in1_zp=0, in2_scale, in2_zp=0):
    """TFLite's quantized comparison (``ComparisonWithScaling``) of uint8 / int8 inputs.

    Scales must be in (0, 1): TFLite's rescaling of a scale >= 1 shifts by a negative amount,
    which C++ leaves undefined (ValueError here).
    """
    a, b = _same_dtype(a, b)
    cm.check_dtype("input1", a, cm.QUANT_DTYPES)
    ta = tflite_scale_table(a.dtype, in1_scale, in1_zp)
    tb = tflite_scale_table(b.dtype, in2_scale, in2_zp)
    return _by_table(op, a, b, ta, tb)


def dequantize_table(dtype, scale, zero_point) -> np.ndarray:
    """``float32(v - zp) * float32(scale)`` for every value ``v`` of ``dtype`` (entry
    ``v - qmin``), as float64."""
    qmin, qmax = qrange(dtype)
    v = np.arange(qmin, qmax + 1, dtype=np.int64) - int(zero_point)
    return (v.astype(np.float32) * np.float32(scale)).astype(np.float64)


def tflite_scale_table(dtype, scale, zero_point) -> np.ndarray:
    """TFLite's rescaled comparison key of every value of ``dtype`` (entry ``v - qmin``)."""
    scale = float(scale)
    if not 0.0 < scale < 1.0:
        raise ValueError(f"TFLite's quantized comparison needs a scale in (0, 1), got {scale}")
    m, shift = quantize_multiplier(scale)
    qmin, qmax = qrange(dtype)
    out = np.empty(qmax - qmin + 1, dtype=np.float64)
    _tflite_table_core(qmin, int(zero_point), m, shift, out)
    return out


def _same_dtype(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype:
        raise TypeError(f"input dtypes differ: {a.dtype.name} and {b.dtype.name}")
    return a, b


def _op(op) -> int:
    op = int(op)
    if not EQUAL <= op <= LESS_EQUAL:
        raise ValueError(f"unknown comparison {op}")
    return op


def _by_table(op, a, b, ta, tb):
    shape, fa, fb = broadcast_flat(a, b)
    out = np.empty(fa.size, dtype=np.bool_)
    _compare_table_core(_op(op), fa, fb, ta, tb, qrange(a.dtype)[0], out)
    return out.reshape(shape)


@njit(inner=True)
def _test(op, x, y):
    if op == EQUAL:
        return x == y
    if op == NOT_EQUAL:
        return x != y
    if op == GREATER:
        return x > y
    if op == GREATER_EQUAL:
        return x >= y
    if op == LESS:
        return x < y
    return x <= y


@njit
def _compare_core(op, a, b, out):
    for i in range(out.size):
        out[i] = _test(op, a[i], b[i])
    return out


@njit
def _compare_table_core(op, a, b, ta, tb, qmin, out):
    for i in range(out.size):
        out[i] = _test(op, ta[np.int64(a[i]) - qmin], tb[np.int64(b[i]) - qmin])
    return out


@njit
def _tflite_table_core(qmin, zp, m, shift, out):
    for k in range(out.size):
        shifted = (np.int64(qmin + k) - zp) * 256  # left_shift 8; |(v - zp) << 8| < 2**17
        out[k] = multiply_by_quantized_multiplier_smaller_than_one_exp(shifted, m, shift)
    return out
