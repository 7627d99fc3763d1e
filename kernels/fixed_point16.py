"""gemmlowp's int16 fixed-point arithmetic (``FixedPoint<int16_t, N>``), shared by the int16
LSTM kernels (NNAPI QUANTIZED_16BIT_LSTM / QUANTIZED_LSTM, TFLite's integer LSTM): saturating
rounding doubling high multiply, rounding shifts, saturating add, and the exp / logistic / tanh
of gemmlowp/fixedpoint/fixedpoint.h on Q-format int16 values. Shared helpers, like
``fixed_point.py`` (their int32 counterparts), so their names are public.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels._builtins import greater, lesser

from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import rounding_divide_by_pot

__all__ = ["w16", "srdhm16", "rdbpot16", "srmpot16", "sat_add16", "const16",
           "exp_on_negative_values16", "logistic16", "tanh16"]


@njit
def w16(x):
    """Two's-complement wrap to int16 (a C++ int16 sum cast back to int16)."""
    return ((np.int64(x) + 32768) & 0xFFFF) - 32768


@njit
def srdhm16(a, b):
    """gemmlowp SaturatingRoundingDoublingHighMul for int16."""
    a, b = np.int64(a), np.int64(b)
    if a == b and a == -32768:
        return np.int64(32767)
    ab = a * b
    nudge = np.int64(1 << 14) if ab >= 0 else np.int64(1 - (1 << 14))
    v = ab + nudge
    q = v // 32768 if v >= 0 else -((-v) // 32768)    # C++ division truncates toward zero
    return w16(q)


@njit
def rdbpot16(x, exponent):
    """gemmlowp RoundingDivideByPOT (rounding half away from zero)."""
    return rounding_divide_by_pot(x, exponent)


@njit
def srmpot16(x, exponent):
    """gemmlowp SaturatingRoundingMultiplyByPOT for int16 (saturating << or rounding >>)."""
    x = np.int64(x)
    if exponent < 0:
        return rdbpot16(x, -exponent)
    if exponent == 0:
        return x
    threshold = (np.int64(1) << (15 - exponent)) - 1
    if x > threshold:
        return np.int64(32767)
    if x < -threshold:
        return np.int64(-32768)
    return x << exponent


@njit
def sat_add16(a, b):
    return lesser(greater(np.int64(a) + np.int64(b), -32768), 32767)


@njit
def const16(value32):
    """A gemmlowp 32-bit fixed-point constant as the int16 raw value."""
    return rounding_divide_by_pot(value32, np.int64(16))


@njit
def _exp_quarter16(a):
    """exp(a) for a Q0.15 value in [-1/4, 0)."""
    constant_term = const16(1895147668)
    one_third = const16(715827883)
    x = w16(a + (1 << 12))
    x2 = srdhm16(x, x)
    x3 = srdhm16(x2, x)
    x4 = srdhm16(x2, x2)
    x4_over_4 = srmpot16(x4, -2)
    poly = srmpot16(w16(srdhm16(w16(x4_over_4 + x3), one_third) + x2), -1)
    return sat_add16(constant_term, srdhm16(constant_term, w16(x + poly)))


@njit
def exp_on_negative_values16(a, integer_bits):
    """exp(a) for a Q(integer_bits) int16 value a <= 0; Q0.15 result."""
    a = np.int64(a)
    fractional_bits = 15 - integer_bits
    one_quarter = np.int64(1) << (fractional_bits - 2)
    amq = w16((a & (one_quarter - 1)) - one_quarter)
    result = _exp_quarter16(srmpot16(amq, integer_bits))
    remainder = w16(amq - a)
    multipliers = (1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242)
    for k in range(7):
        exponent = k - 2
        if integer_bits > exponent:
            if remainder & (np.int64(1) << (fractional_bits + exponent)):
                result = srdhm16(result, const16(multipliers[k]))
    if integer_bits > 5:
        if a < -(np.int64(1) << (fractional_bits + 5)):
            result = np.int64(0)
    if a == 0:
        result = np.int64(32767)
    return result


@njit
def _newton_reciprocal16(a):
    """The Q2.13 Newton-Raphson estimate of 1 / ((1 + a) / 2) shared by the two divisions."""
    s = np.int64(a) + 32767          # RoundingHalfSum(a, One): (s + sign(s)) / 2, truncated
    half_denominator = w16((s + 1) // 2) if s >= 0 else w16(-((1 - s) // 2))
    x = w16(const16(1515870810) + srdhm16(half_denominator, const16(-1010580540)))
    for _ in range(3):
        one_minus = w16((1 << 13) - srdhm16(half_denominator, x))
        x = w16(x + srmpot16(srdhm16(x, one_minus), 2))
    return x


@njit
def logistic16(a, integer_bits):
    """gemmlowp logistic of a Q(integer_bits) int16 value; Q0.15 result."""
    a = np.int64(a)
    if a == 0:
        return const16(1 << 30)
    abs_a = a if a > 0 else w16(-a)
    positive = srmpot16(_newton_reciprocal16(exp_on_negative_values16(w16(-abs_a),
                                                                       integer_bits)), 1)
    return positive if a > 0 else w16(32767 - positive)


@njit
def tanh16(a, integer_bits):
    """gemmlowp tanh of a Q(integer_bits) int16 value; Q0.15 result."""
    a = np.int64(a)
    if a == 0:
        return np.int64(0)
    n = a if a < 0 else w16(-a)
    x = _newton_reciprocal16(exp_on_negative_values16(n, integer_bits + 1))
    t = srmpot16(w16(x - (1 << 13)), 2)
    return w16(-t) if a < 0 else t
