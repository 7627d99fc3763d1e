"""Vectorised numpy versions of TFLite/gemmlowp fixed-point primitives (reference kernels only).

Written independently of the scalar ``@njit`` helpers in :mod:`nnsim.kernels.fixed_point`, so
that the reference kernels are a genuine second implementation. Arrays hold int32 values in
int64; C++ semantics (truncating division, arithmetic shift, int32 wrap) are explicit.
"""

from __future__ import annotations

import numpy as np

INT32_MIN = np.int64(-(2**31))
INT32_MAX = np.int64(2**31 - 1)


def i64(x):
    """``x`` as an int64 array."""
    return np.asarray(x, dtype=np.int64)


def wrap32(x):
    """Wrap int64 values to int32 two's complement (C++ int32 overflow)."""
    return (i64(x) + 2**31) % 2**32 - 2**31


def trunc_div_pot(v, bits):
    """C++ ``v / 2**bits`` (truncation toward zero) for int64 arrays."""
    v = i64(v)
    return np.where(v >= 0, v >> bits, -((-v) >> bits))


def srdhm(a, b):
    """SaturatingRoundingDoublingHighMul, elementwise."""
    a, b = i64(a), i64(b)
    ab = a * b
    nudge = np.where(ab >= 0, np.int64(1 << 30), np.int64(1 - (1 << 30)))
    high = trunc_div_pot(ab + nudge, 31)
    return np.where((a == b) & (a == INT32_MIN), INT32_MAX, high)


def rdbpot(x, exponent):
    """RoundingDivideByPOT (round half away from zero), elementwise; exponent in [0, 31]."""
    x, exponent = i64(x), i64(exponent)
    mask = (np.int64(1) << exponent) - 1
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + ((x & mask) > threshold)


def mbqm(x, multiplier, shift):
    """MultiplyByQuantizedMultiplier (double rounding), elementwise."""
    shift = i64(shift)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    return rdbpot(srdhm(wrap32(i64(x) << left), multiplier), right)


def saturating_mul_pot(x, exponent: int):
    """gemmlowp SaturatingRoundingMultiplyByPOT with a scalar exponent."""
    x = i64(x)
    if exponent < 0:
        return rdbpot(x, -exponent)
    if exponent == 0:
        return x
    threshold = (1 << (31 - exponent)) - 1
    return np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, x << exponent))


def round_half_away(v):
    """Round float values half away from zero (``std::round``)."""
    v = np.asarray(v, dtype=np.float64)
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def clamp_cast(values, lo, hi, dtype):
    """Clamp integer values to [lo, hi] and cast to ``dtype``."""
    return np.clip(i64(values), lo, hi).astype(dtype)


# gemmlowp transcendental functions, vectorised (used by the reference softmax) -------------

_EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
               (2, 39332535), (3, 720401), (4, 242))


def rounding_half_sum(a, b):
    """gemmlowp RoundingHalfSum: ``(a + b + sign) / 2`` truncating."""
    s = i64(a) + i64(b)
    return trunc_div_pot(s + np.where(s >= 0, 1, -1), 1)


def exp_on_interval_between_negative_one_quarter_and_0_excl(a):
    """exp(a) for Q0.31 ``a`` in [-1/4, 0): Taylor expansion around -1/8."""
    constant_term, one_third = 1895147668, 715827883
    x = wrap32(i64(a) + (1 << 28))
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    poly = rdbpot(wrap32(srdhm(wrap32(rdbpot(x4, 2) + x3), one_third) + x2), 1)
    return wrap32(constant_term + srdhm(constant_term, wrap32(x + poly)))


def exp_on_negative_values(a, integer_bits: int):
    """exp(a) for Q(integer_bits) values ``a <= 0``; Q0.31 result."""
    a = i64(a)
    fractional_bits = 31 - integer_bits
    quarter = 1 << (fractional_bits - 2)
    a_mod = wrap32((a & (quarter - 1)) - quarter)
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        saturating_mul_pot(a_mod, integer_bits))
    remainder = wrap32(a_mod - a)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent:
            bit_set = (remainder & (1 << (fractional_bits + exponent))) != 0
            result = np.where(bit_set, srdhm(result, multiplier), result)
    if integer_bits > 5:
        result = np.where(a < -(1 << (36 - integer_bits)), 0, result)
    return np.where(a == 0, INT32_MAX, result)


def one_over_one_plus_x_for_x_in_0_1(a):
    """1 / (1 + a) for Q0.31 ``a`` in [0, 1): Newton-Raphson in Q2.29, Q0.31 result."""
    half_denominator = rounding_half_sum(a, INT32_MAX)
    x = wrap32(1515870810 + srdhm(half_denominator, -1010580540))
    for _ in range(3):
        one_minus = wrap32((1 << 29) - srdhm(half_denominator, x))
        x = wrap32(x + saturating_mul_pot(srdhm(x, one_minus), 2))
    return saturating_mul_pot(x, 1)


def get_reciprocal(x, x_integer_digits: int):
    """TFLite GetReciprocal for positive int32 ``x``: ``(Q0.31 reciprocal, bits over unit)``."""
    x = i64(x)
    _, bit_length = np.frexp(x.astype(np.float64))
    headroom_plus_one = 32 - bit_length.astype(np.int64)
    shifted = wrap32(((x << headroom_plus_one) & 0xFFFFFFFF) - (1 << 31))
    return one_over_one_plus_x_for_x_in_0_1(shifted), x_integer_digits - headroom_plus_one
