"""Hand-computed cases for the TFLite/gemmlowp fixed-point helpers, scalar and vectorised."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnsim.kernels import fixed_point as fp
from nnsim.kernels.reference import _fixed_point as fx

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
int32s = st.integers(INT32_MIN, INT32_MAX)


# --- QuantizeMultiplier ------------------------------------------------------------------------

@pytest.mark.parametrize(
    "real, expected",
    [
        (0.0, (0, 0)),
        (0.5, (2**30, 0)),
        (1.0, (2**30, 1)),
        (0.25, (2**30, -1)),
        (0.75, (3 * 2**29, 0)),
        (2.0, (2**30, 2)),
        (1.0 / 3.0, (1431655765, -1)),   # 2/3 * 2**31 = 1431655765.33 -> rounds down
        (0.1, (1717986918, -3)),          # 0.8 * 2**31 = 1717986918.4
        # fraction within half an ulp of 1.0: rounds to 2**31, halved, shift bumped
        (1.0 - 2.0**-40, (2**30, 1)),
        (2.0**-31, (2**30, -30)),
        (2.0**-32, (2**30, -31)),
        (2.0**-33, (0, 0)),                # shift < -31 flushes to zero
        (-0.5, (-(2**30), 0)),
    ],
)
def test_quantize_multiplier(real, expected):
    assert fp.quantize_multiplier(real) == expected


def test_quantize_multiplier_single_rounding_clamps_large_shift():
    assert fp.quantize_multiplier(2.0**40) == (2**30, 41)
    assert fp.quantize_multiplier(2.0**40, single_rounding=True) == (2**31 - 1, 30)


@given(st.floats(min_value=1e-9, max_value=1e6))
def test_quantize_multiplier_approximates_real(real):
    q, shift = fp.quantize_multiplier(real)
    assert 2**30 <= q < 2**31
    assert math.isclose(q * 2.0 ** (shift - 31), real, rel_tol=2.0**-30)


def test_quantize_multiplier_greater_than_one_rejects_small():
    assert fp.quantize_multiplier_greater_than_one(3.0) == (3 * 2**29, 2)
    with pytest.raises(ValueError):
        fp.quantize_multiplier_greater_than_one(0.3)


# --- SaturatingRoundingDoublingHighMul ---------------------------------------------------------

@pytest.mark.parametrize(
    "a, b, expected",
    [
        (INT32_MIN, INT32_MIN, INT32_MAX),   # the only overflow: saturates
        (INT32_MIN, INT32_MAX, -(2**31 - 1)),
        (INT32_MAX, INT32_MAX, 2**31 - 2),
        (2**30, 2**30, 2**29),               # 0.5 * 0.5 = 0.25
        (1, 2**30, 1),                       # 0.5 -> 1
        (-1, 2**30, 0),                      # -0.5 -> 0: the nudge makes ties go up
        (-3, 2**30, -1),                     # -1.5 -> -1
        (3, 2**29, 1),                       # 0.75 -> 1
        (-3, 2**29, -1),
        (5, 2**28, 1),                       # 0.625 -> 1
        (1, 2**29, 0),                       # 0.25 -> 0
        (0, INT32_MIN, 0),
    ],
)
def test_srdhm_hand_cases(a, b, expected):
    assert fp.saturating_rounding_doubling_high_mul(a, b) == expected
    assert fx.srdhm(a, b) == expected


@given(int32s, int32s)
def test_srdhm_is_floor_of_product_plus_half(a, b):
    # (a*b + nudge) / 2**31 truncated == floor(a*b / 2**31 + 1/2): ties round toward +inf
    expected = INT32_MAX if a == b == INT32_MIN else (2 * a * b + 2**31) // 2**32
    assert fp.saturating_rounding_doubling_high_mul(a, b) == expected
    assert fx.srdhm(a, b) == expected


# --- RoundingDivideByPOT -----------------------------------------------------------------------

@pytest.mark.parametrize(
    "x, e, expected",
    [(5, 1, 3), (-5, 1, -3), (4, 1, 2), (-4, 1, -2), (6, 2, 2), (-6, 2, -2), (5, 2, 1),
     (-5, 2, -1), (7, 0, 7), (INT32_MAX, 31, 1), (INT32_MIN, 31, -1), (-(2**30), 31, -1),
     (2**30 - 1, 31, 0)],
)
def test_rounding_divide_by_pot(x, e, expected):
    assert fp.rounding_divide_by_pot(x, e) == expected
    assert fx.rdbpot(x, e) == expected


@given(int32s, st.integers(0, 31))
def test_rdbpot_is_round_half_away(x, e):
    exact = x / 2**e
    expected = int(math.floor(abs(exact) + 0.5)) * (1 if exact >= 0 else -1)
    assert fp.rounding_divide_by_pot(x, e) == expected


# --- MultiplyByQuantizedMultiplier -------------------------------------------------------------

@pytest.mark.parametrize(
    "x, real, expected",
    [
        (100, 0.5, 50),
        (3, 0.5, 2),        # SRDHM: 1.5 -> 2
        (-3, 0.5, -1),      # SRDHM: -1.5 -> -1 (ties toward +inf)
        (5, 0.25, 2),       # double rounding: SRDHM(5, 0.5) = 2.5 -> 3, then 3 / 2 -> 2
        (-5, 0.25, -1),     # SRDHM(-5, 0.5) = -2.5 -> -2, then -2 / 2 -> -1
        (6, 0.25, 2),       # 1.5 -> 2
        (-6, 0.25, -2),
        (100, 2.0, 200),    # positive shift: left shift first
        (100, 3.0, 300),
        (-7, 1.0, -7),
        (1000, 0.001, 1),
    ],
)
def test_multiply_by_quantized_multiplier_hand_cases(x, real, expected):
    q, shift = fp.quantize_multiplier(real)
    assert fp.multiply_by_quantized_multiplier(x, q, shift) == expected
    assert fx.mbqm(x, q, shift) == expected


def test_multiply_by_quantized_multiplier_double_rounding():
    # x * 0.75 * 2**-3 = 0.46875 * 5: SRDHM(5, 0.75) = round(3.75) = 4, then 4 / 8 = 0.5 -> 1
    # (single rounding: (5 * 0.75) / 8 = 0.46875 -> 0)
    q, shift = 3 * 2**29, -3
    assert fp.multiply_by_quantized_multiplier(5, q, shift) == 1
    assert fp.multiply_by_quantized_multiplier_single_rounding(5, q, shift) == 0


def test_multiply_by_quantized_multiplier_left_shift_wraps_like_int32():
    q, shift = fp.quantize_multiplier(2.0)  # (2**30, 2)
    # x << 2 overflows int32 for x = 2**30: C++ wraps to 0
    assert fp.multiply_by_quantized_multiplier(2**30, q, shift) == 0
    assert fx.mbqm(2**30, q, shift) == 0


@given(int32s, st.floats(min_value=1e-6, max_value=0.99), st.integers(-31, 0))
def test_mbqm_scalar_matches_vectorised(x, frac, extra_shift):
    q, shift = fp.quantize_multiplier(frac)
    shift = max(shift + extra_shift, -31)
    assert fp.multiply_by_quantized_multiplier(x, q, shift) == fx.mbqm(x, q, shift)
    assert fp.multiply_by_quantized_multiplier_smaller_than_one_exp(x, q, shift) == \
        fp.multiply_by_quantized_multiplier(x, q, shift)


def test_multiply_by_quantized_multiplier_greater_than_one():
    q, shift = fp.quantize_multiplier(3.0)
    assert fp.multiply_by_quantized_multiplier_greater_than_one(7, q, shift) == 21


# --- activation ranges -------------------------------------------------------------------------

@pytest.mark.parametrize(
    "fuse, scale, zp, qmin, qmax, expected",
    [
        (0, 0.1, 10, 0, 255, (0, 255)),
        (1, 0.1, 10, 0, 255, (10, 255)),
        (3, 0.1, 10, 0, 255, (10, 70)),
        (2, 0.1, 10, 0, 255, (0, 20)),
        (2, 0.1, 128, 0, 255, (118, 138)),
        (3, 0.01, 0, 0, 255, (0, 255)),        # 6 / 0.01 = 600 clamps to qmax
        (1, 0.05, -128, -128, 127, (-128, 127)),
        (3, 0.05, -128, -128, 127, (-128, -8)),
        (2, 1 / 128, 0, -128, 127, (-128, 127)),
        (3, 0.04, 5, 0, 255, (5, 155)),        # 6 / 0.04 = 150.0000...
        (2, 0.4, 0, 0, 255, (0, 3)),           # round(2.5) = 3: half away from zero
        (2, 0.4, 5, -128, 127, (2, 8)),        # round(-2.5) = -3
    ],
)
def test_quantized_activation_range(fuse, scale, zp, qmin, qmax, expected):
    assert fp.quantized_activation_range(fuse, scale, zp, qmin, qmax) == expected


def test_float_activation_range():
    assert fp.float_activation_range(0) == (-math.inf, math.inf)
    assert fp.float_activation_range(1) == (0.0, math.inf)
    assert fp.float_activation_range(2) == (-1.0, 1.0)
    assert fp.float_activation_range(3) == (0.0, 6.0)
    with pytest.raises(ValueError):
        fp.float_activation_range(4)


# --- gemmlowp transcendental functions (softmax) -----------------------------------------------

@pytest.mark.parametrize("value", [0.0, -1e-6, -0.125, -0.25, -1.0, -2.5, -8.0, -20.0, -31.9])
def test_exp_on_negative_values(value):
    raw = int(round(value * 2**26))  # Q5.26
    got = fp.exp_on_negative_values(raw, 5)
    assert got == fx.exp_on_negative_values(raw, 5)
    assert abs(got / 2**31 - math.exp(raw / 2**26)) < 3e-7  # gemmlowp's accuracy


def test_exp_on_negative_values_at_zero_is_one():
    assert fp.exp_on_negative_values(0, 5) == INT32_MAX


@given(st.integers(-(2**31), 0))
def test_exp_scalar_matches_vectorised(raw):
    assert fp.exp_on_negative_values(raw, 5) == fx.exp_on_negative_values(raw, 5)


# The array twins (tables computed at prepare time) equal the scalar functions, value by value,
# on hand-picked edges and on random int32 values; the scalar ones are checked above against
# gemmlowp's values and the reference kernels' independent versions.
_EDGES = [INT32_MIN, INT32_MIN + 1, -(2**30) - 1, -(2**30), -1, 0, 1, 2**30, INT32_MAX - 1,
          INT32_MAX]


@settings(max_examples=30, deadline=None)
@given(st.lists(int32s, min_size=1, max_size=64), st.lists(int32s, min_size=1, max_size=64),
       st.integers(0, 31), st.integers(-31, 31))
def test_fixed_point_array_twins_equal_the_scalar_functions(a, b, exponent, pot):
    a, b = np.array(_EDGES + a, np.int64), np.array(_EDGES[::-1] + b, np.int64)
    n = min(a.size, b.size)
    a, b = a[:n], b[:n]
    pairs = list(zip(a.tolist(), b.tolist()))
    assert fp.wrap_int32_np(a * 3).tolist() == [fp.wrap_int32(x * 3) for x, _ in pairs]
    assert fp.saturating_rounding_doubling_high_mul_np(a, b).tolist() == [
        fp.saturating_rounding_doubling_high_mul(x, y) for x, y in pairs]
    assert fp.rounding_divide_by_pot_np(a, exponent).tolist() == [
        fp.rounding_divide_by_pot(x, exponent) for x, _ in pairs]
    assert fp.saturating_rounding_multiply_by_pot_np(a, pot).tolist() == [
        fp.saturating_rounding_multiply_by_pot(x, pot) for x, _ in pairs]
    shift = exponent
    assert fp.multiply_by_quantized_multiplier_greater_than_one_np(a, b[0], shift).tolist() \
        == [fp.multiply_by_quantized_multiplier_greater_than_one(x, b[0], shift) for x, _ in pairs]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(-(2**31), 0), min_size=1, max_size=64), st.integers(0, 12))
def test_exp_on_negative_values_np_equals_the_scalar_function(raw, integer_bits):
    a = np.array([INT32_MIN, INT32_MIN + 1, -(2**26), -1, 0] + raw, np.int64)
    assert fp.exp_on_negative_values_np(a, integer_bits).tolist() == [
        fp.exp_on_negative_values(x, integer_bits) for x in a.tolist()]


@given(st.integers(0, INT32_MAX))
def test_one_over_one_plus_x(raw):
    got = fp.one_over_one_plus_x_for_x_in_0_1(raw)
    assert got == fx.one_over_one_plus_x_for_x_in_0_1(raw)
    assert abs(got / 2**31 - 1 / (1 + raw / 2**31)) < 1e-8


@settings(max_examples=50)
@given(st.integers(1, INT32_MAX))
def test_get_reciprocal(x):
    recip, bits = fp.get_reciprocal(x, 12)
    vrecip, vbits = fx.get_reciprocal(np.int64(x), 12)
    assert (recip, bits) == (int(vrecip), int(vbits))
    # x in Q12.19: 1/x == recip / 2**31 * 2**-bits
    assert math.isclose(recip / 2**31 * 2.0**-bits, 2**19 / x, rel_tol=1e-7)


def test_count_leading_zeros():
    assert fp.count_leading_zeros_u32(0) == 32
    assert fp.count_leading_zeros_u32(1) == 31
    assert fp.count_leading_zeros_u32(2**31) == 0
    assert fp.count_leading_zeros_u32(-1) == 0


def test_rounding_half_sum():
    assert fp.rounding_half_sum(3, 4) == 4       # 3.5 -> 4
    assert fp.rounding_half_sum(-3, -4) == -4    # -3.5 -> -4
    assert fp.rounding_half_sum(INT32_MAX, INT32_MAX) == INT32_MAX
    assert fx.rounding_half_sum(-3, -4) == -4
