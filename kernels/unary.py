"""Elementwise unary operations of NNAPI's CPU executor; numba fast path.

Float (float32 and float16, computed in float32 and rounded back, as ``compute<float, T>`` in
``Elementwise.cpp``): SQRT, RSQRT (``1.f / std::sqrt(x)``), EXP, LOG, FLOOR, ABS, NEG, and
ELU (``max(0, x) + min(0, alpha * (exp(x) - 1))``, ``Elu.cpp``). ABS and NEG also take int32
(two's-complement wrap for INT32_MIN).

Quantized TANH is NNAPI's fixed-point kernel, not TFLite's lookup table
(``ActivationExecution.cpp``: ``optimized_ops::Tanh`` for uint8,
``reference_integer_ops::Tanh`` for int8; both gemmlowp ``tanh`` on Q4.27)::

    M, L = QuantizeMultiplierGreaterThanOne(double(in_scale) * 2**27)   # must be > 1
    radius = floor(15 * 2**27 / 2**L)                      # CalculateInputRadius(4, L)
    d = x - in_zp
    d <= -radius -> type min;  d >= radius -> type max
    otherwise t = gemmlowp::tanh(Q4.27 raw SRDHM(d << L, M))             # Q0.31
              uint8: RDBPOT(t, 24) + 128 (256 -> 255);  int8: clamp(RDBPOT(t, 24))

The output is on the fixed scale 1/128 with zero point 128 (uint8) / 0 (int8).
"""

from __future__ import annotations

import math

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import greater, lesser
from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import (
    exp_on_negative_values,
    qrange,
    quantize_multiplier,
    rounding_divide_by_pot,
    rounding_half_sum,
    saturating_rounding_doubling_high_mul,
    saturating_rounding_multiply_by_pot,
    wrap_int32,
)

__all__ = ["sqrt", "rsqrt", "exp", "log", "floor", "absolute", "neg", "elu", "tanh_quantized",
           "tanh_params"]

_SQRT, _RSQRT, _EXP, _LOG, _FLOOR, _ABS, _NEG, _ELU = range(8)


def sqrt(x):
    """``std::sqrt`` per element; float32 / float16 (computed in float32)."""
    return _float_unary(_SQRT, x)


def rsqrt(x):
    """``1.f / std::sqrt(x)`` per element; float32 / float16."""
    return _float_unary(_RSQRT, x)


def exp(x):
    """``std::exp`` per element; float32 / float16."""
    return _float_unary(_EXP, x)


def log(x):
    """``std::log`` per element; float32 / float16 (NaN for negative inputs)."""
    return _float_unary(_LOG, x)


def floor(x):
    """``std::floor`` per element; float32 / float16."""
    return _float_unary(_FLOOR, x)


def elu(x, alpha):
    """``max(0, x) + min(0, alpha * (exp(x) - 1))``; float32 / float16, ``alpha`` a float."""
    return _float_unary(_ELU, x, alpha)


def absolute(x):
    """``|x|``; float32 / float16 / int32 (INT32_MIN stays INT32_MIN)."""
    return _int_or_float(_ABS, x)


def neg(x):
    """``-x``; float32 / float16 / int32 (INT32_MIN stays INT32_MIN)."""
    return _int_or_float(_NEG, x)


def _float_unary(op, x, alpha=0.0):
    x = np.asarray(x)
    cm.check_dtype("input", x, cm.FLOAT_DTYPES)
    x32, dtype = cm.to_float32(x)
    out = np.empty(x32.size, dtype=np.float32)
    with np.errstate(all="ignore"):  # NaN/inf as C++ gives them (matters without the JIT)
        _float_core(op, x32.reshape(-1), np.float32(alpha), out)
    return out.reshape(x.shape).astype(dtype, copy=False)


def _int_or_float(op, x):
    x = np.asarray(x)
    if x.dtype != np.int32:
        return _float_unary(op, x)
    out = np.empty(x.size, dtype=np.int32)
    _int_core(op, np.ascontiguousarray(x).reshape(-1), out)
    return out.reshape(x.shape)


def tanh_params(in_scale):
    """``(M, L, radius)`` of NNAPI's quantized TANH; ValueError when the input scale is so small
    that the multiplier is not > 1 (QuantizeMultiplierGreaterThanOne fails: OP_FAILED)."""
    real = float(np.float32(in_scale)) * float(1 << 27)
    if not real > 1.0:
        raise ValueError(f"tanh: input scale {in_scale} gives a multiplier {real} <= 1")
    m, shift = quantize_multiplier(real)
    radius = int(math.floor(15.0 * float(1 << 27) / float(1 << shift)))
    return m, shift, radius


def tanh_quantized(x, *, in_scale, in_zp=0):
    """Quantized TANH (uint8 / int8) on NNAPI's fixed output scale 1/128.

    Parameters
    ----------
    x : ndarray of uint8 or int8
    in_scale, in_zp
        Input quantization.

    Returns
    -------
    ndarray
        Same shape and dtype; zero point 128 (uint8) or 0 (int8).
    """
    x = np.asarray(x)
    cm.check_dtype("input", x, (np.uint8, np.int8))
    m, shift, radius = tanh_params(in_scale)
    qmin, qmax = qrange(x.dtype)
    out = np.empty(x.size, dtype=x.dtype)
    _tanh_quant_core(np.ascontiguousarray(x).reshape(-1), int(in_zp), m, shift, radius,
                     qmin == 0, out)
    return out.reshape(x.shape)


@njit(error_model="numpy")  # 1 / 0 gives inf as in C++, no exception
def _float_core(op, x, alpha, out):
    one = np.float32(1.0)
    zero = np.float32(0.0)
    for i in range(x.size):
        v = x[i]
        if op == _SQRT:
            r = np.sqrt(v)
        elif op == _RSQRT:
            r = one / np.sqrt(v)
        elif op == _EXP:
            r = np.exp(v)
        elif op == _LOG:
            r = np.log(v)
        elif op == _FLOOR:
            r = np.floor(v)
        elif op == _ABS:
            r = np.abs(v)
        elif op == _NEG:
            r = -v
        else:
            r = greater(zero, v) + lesser(zero, np.float32(alpha * np.float32(np.exp(v) - one)))
        out[i] = r
    return out


@njit
def _int_core(op, x, out):
    for i in range(x.size):
        v = np.int64(x[i])
        if op == _ABS and v < 0:
            v = -v
        elif op == _NEG:
            v = -v
        out[i] = wrap_int32(v)
    return out


@njit
def _one_minus_x_over_one_plus_x(a):
    """gemmlowp ``one_minus_x_over_one_plus_x_for_x_in_0_1``: Q0.31 in and out."""
    half_denominator = rounding_half_sum(a, 2147483647)
    x = wrap_int32(1515870810 + saturating_rounding_doubling_high_mul(half_denominator,
                                                                      -1010580540))
    for _ in range(3):
        one_minus = wrap_int32((1 << 29) - saturating_rounding_doubling_high_mul(half_denominator,
                                                                               x))
        x = wrap_int32(x + saturating_rounding_multiply_by_pot(
            saturating_rounding_doubling_high_mul(x, one_minus), np.int64(2)))
    return saturating_rounding_multiply_by_pot(wrap_int32(x - (1 << 29)), np.int64(2))


@njit(inner=True)
def _tanh_q4(a):
    """gemmlowp ``tanh`` of a Q4.27 raw value; Q0.31 raw result."""
    if a == 0:
        return np.int64(0)
    n = a if a < 0 else -a
    t = _one_minus_x_over_one_plus_x(exp_on_negative_values(n, 5))
    return -t if a < 0 else t


@njit
def _tanh_quant_core(x, in_zp, m, shift, radius, unsigned, out):
    for i in range(x.size):
        d = np.int64(x[i]) - in_zp
        if unsigned:
            lo, hi, offset = 0, 255, 128
        else:
            lo, hi, offset = -128, 127, 0
        if d <= -radius:
            v = lo
        elif d >= radius:
            v = hi
        else:
            rescaled = saturating_rounding_doubling_high_mul(wrap_int32(d << shift), m)
            v = rounding_divide_by_pot(_tanh_q4(rescaled), 24) + offset
            v = lesser(greater(v, lo), hi)
        out[i] = v
    return out
