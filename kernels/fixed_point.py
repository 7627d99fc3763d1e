"""TFLite / gemmlowp fixed-point arithmetic, bit-exact.

Two kinds of helpers live here:

* plain-Python precompute helpers used by kernel wrappers: :func:`quantize_multiplier`,
  :func:`quantized_activation_range`, :func:`float_activation_range`, ...;
* scalar ``@njit`` functions used inside kernel cores: :func:`saturating_rounding_doubling_high_mul`,
  :func:`rounding_divide_by_pot`, :func:`multiply_by_quantized_multiplier`, and the gemmlowp
  transcendental helpers used by the reference softmax (:func:`exp_on_negative_values`,
  :func:`get_reciprocal`).

The scalar functions take Python/NumPy integers holding int32 values and return an ``int64``
holding an int32 value. They compute in int64 and emulate C++ behaviour explicitly: ``/`` truncates
toward zero, ``>>`` is an arithmetic shift, int32 overflow wraps. Written so that they give the same
results compiled by numba and run as plain Python (``NNSIM_DISABLE_JIT=1``).

Sources: ``tensorflow/lite/kernels/internal/quantization_util.cc`` (QuantizeMultiplier),
``internal/common.h`` (MultiplyByQuantizedMultiplier, GetReciprocal), ``kernel_util.cc``
(CalculateActivationRangeQuantized), gemmlowp ``fixedpoint/fixedpoint.h``.
"""

from __future__ import annotations

import math

import numpy as np

from nnsim.kernels._jit import njit

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

FUSE_NONE, FUSE_RELU, FUSE_RELU1, FUSE_RELU6 = 0, 1, 2, 3


# --------------------------------------------------------------------------------------------
# Precompute helpers (plain Python, called once per kernel invocation by the wrappers)
# --------------------------------------------------------------------------------------------


def round_half_away(value: float) -> int:
    """``std::round`` on a double: round half away from zero, returned as a Python int."""
    if value >= 0:
        return int(math.floor(value + 0.5))
    return -int(math.floor(-value + 0.5))


def quantize_multiplier(double_multiplier: float, *, single_rounding: bool = False):
    """Split a real multiplier into ``(q, shift)`` with ``real ~= q * 2**(shift - 31)``.

    Port of TFLite ``QuantizeMultiplier``: ``frexp`` gives a fraction in [0.5, 1), which is
    rounded (half away from zero) to Q0.31; a fraction that rounds up to exactly 2**31 is halved
    and the shift bumped; a shift below -31 flushes the multiplier to zero.

    Parameters
    ----------
    double_multiplier : float
        The real multiplier, computed by the caller with the float/double rules of the op.
    single_rounding : bool
        Apply the ``TFLITE_SINGLE_ROUNDING`` clamp (shift at most 30).

    Returns
    -------
    (int, int)
        ``q`` in [2**30, 2**31 - 1] (or 0, or negative for a negative input) and the shift
        (positive = left shift).
    """
    m = float(double_multiplier)
    if m == 0.0:
        return 0, 0
    frac, shift = math.frexp(m)
    q = round_half_away(frac * float(1 << 31))
    if q == (1 << 31):
        q //= 2
        shift += 1
    if shift < -31:
        shift, q = 0, 0
    if single_rounding and shift > 30:
        shift, q = 30, (1 << 31) - 1
    return int(q), int(shift)


def quantize_multiplier_array(multipliers):
    """Vectorised :func:`quantize_multiplier`: returns ``(q, shift)`` as int32 arrays.

    Same arithmetic on float64 arrays (``frac * 2**31`` is exact, so is the rounding).
    """
    m = np.asarray(multipliers, dtype=np.float64)
    frac, shift = np.frexp(m)
    q = (np.sign(frac) * np.floor(np.abs(frac) * float(1 << 31) + 0.5)).astype(np.int64)
    shift = shift.astype(np.int64)
    full = q == (1 << 31)
    q = np.where(full, q // 2, q)
    shift = np.where(full, shift + 1, shift)
    flush = (m == 0.0) | (shift < -31)
    q = np.where(flush, 0, q)
    shift = np.where(flush, 0, shift)
    return q.astype(np.int32), shift.astype(np.int32)


def quantize_multiplier_greater_than_one(double_multiplier: float):
    """TFLite ``QuantizeMultiplierGreaterThanOne``: like :func:`quantize_multiplier`, shift >= 0."""
    q, shift = quantize_multiplier(double_multiplier)
    if shift < 0:
        raise ValueError(f"multiplier {double_multiplier!r} is smaller than one")
    return q, shift


def qrange(dtype):
    """``(qmin, qmax)`` of an integer dtype."""
    info = np.iinfo(np.dtype(dtype))
    return int(info.min), int(info.max)


def _quantize_bound(value: float, scale: float, zero_point: int) -> int:
    # TFLite: zero_point + static_cast<int32>(TfLiteRound(f / scale)), division in float32.
    quotient = np.float32(value) / np.float32(scale)
    return int(zero_point) + round_half_away(float(quotient))


def quantized_activation_range(fuse_code: int, scale: float, zero_point: int, qmin: int, qmax: int):
    """TFLite ``CalculateActivationRangeQuantized`` for an NNAPI fuse code.

    Parameters
    ----------
    fuse_code : int
        0 none, 1 relu, 2 relu1 (-1..1), 3 relu6.
    scale, zero_point
        Quantization of the tensor the clamp applies to (the op's output).
    qmin, qmax : int
        Limits of the output type.

    Returns
    -------
    (int, int)
        The clamp range in the quantized domain.
    """
    fuse_code = int(fuse_code)
    if fuse_code == FUSE_RELU:
        return max(qmin, _quantize_bound(0.0, scale, zero_point)), qmax
    if fuse_code == FUSE_RELU1:
        return (
            max(qmin, _quantize_bound(-1.0, scale, zero_point)),
            min(qmax, _quantize_bound(1.0, scale, zero_point)),
        )
    if fuse_code == FUSE_RELU6:
        return (
            max(qmin, _quantize_bound(0.0, scale, zero_point)),
            min(qmax, _quantize_bound(6.0, scale, zero_point)),
        )
    if fuse_code != FUSE_NONE:
        raise ValueError(f"unknown fuse code {fuse_code}")
    return qmin, qmax


def float_activation_range(fuse_code: int):
    """Clamp range ``(lo, hi)`` for a float tensor and an NNAPI fuse code (inf when unbounded)."""
    fuse_code = int(fuse_code)
    if fuse_code == FUSE_NONE:
        return -math.inf, math.inf
    if fuse_code == FUSE_RELU:
        return 0.0, math.inf
    if fuse_code == FUSE_RELU1:
        return -1.0, 1.0
    if fuse_code == FUSE_RELU6:
        return 0.0, 6.0
    raise ValueError(f"unknown fuse code {fuse_code}")


# --------------------------------------------------------------------------------------------
# Scalar integer primitives (njit; int32 values carried in int64)
# --------------------------------------------------------------------------------------------


@njit
def wrap_int32(x):
    """Two's-complement wrap of an integer to int32 (what a C++ int32 overflow does)."""
    return ((np.int64(x) + 2147483648) & 0xFFFFFFFF) - 2147483648


@njit
def saturating_rounding_doubling_high_mul(a, b):
    """gemmlowp ``SaturatingRoundingDoublingHighMul`` (ARM VQRDMULH) on int32 values.

    ``round(a * b / 2**31)`` with ties away from zero, computed as C++ does it: add a nudge of
    +-2**30 and divide by 2**31 truncating toward zero. ``INT32_MIN * INT32_MIN`` saturates to
    ``INT32_MAX``.
    """
    a = np.int64(a)
    b = np.int64(b)
    if a == b and a == -2147483648:
        return np.int64(2147483647)
    ab = a * b
    if ab >= 0:
        v = ab + 1073741824
        return v >> 31
    v = ab + (1 - 1073741824)
    return -((-v) >> 31)


@njit
def rounding_divide_by_pot(x, exponent):
    """gemmlowp ``RoundingDivideByPOT``: ``x / 2**exponent`` rounded half away from zero.

    ``exponent`` must be in [0, 31].
    """
    x = np.int64(x)
    mask = (np.int64(1) << exponent) - 1
    remainder = x & mask
    threshold = mask >> 1
    if x < 0:
        threshold += 1
    result = x >> exponent
    if remainder > threshold:
        result += 1
    return result


@njit
def saturating_rounding_multiply_by_pot(x, exponent):
    """gemmlowp ``SaturatingRoundingMultiplyByPOT``: saturating ``<<`` or rounding ``>>``."""
    x = np.int64(x)
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    if exponent == 0:
        return x
    threshold = (np.int64(1) << (31 - exponent)) - 1
    if x > threshold:
        return np.int64(2147483647)
    if x < -threshold:
        return np.int64(-2147483648)
    return x << exponent


@njit
def multiply_by_quantized_multiplier(x, quantized_multiplier, shift):
    """TFLite ``MultiplyByQuantizedMultiplier`` (default double-rounding build).

    ``RDBPOT(SRDHM(x << max(shift, 0), q), max(-shift, 0))``; the left shift wraps like the
    C++ int32 multiply it replaces.
    """
    left = shift if shift > 0 else 0
    right = -shift if shift < 0 else 0
    shifted = wrap_int32(np.int64(x) << left)
    return rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(shifted, quantized_multiplier), right
    )


@njit
def multiply_by_quantized_multiplier_single_rounding(x, quantized_multiplier, shift):
    """TFLite ``MultiplyByQuantizedMultiplier`` as built with ``TFLITE_SINGLE_ROUNDING=1``.

    ``(x * q + 2**(30 - shift)) >> (31 - shift)`` in 64 bits (round half up).
    """
    total_shift = 31 - shift
    rounding = np.int64(1) << (total_shift - 1)
    return wrap_int32((np.int64(x) * np.int64(quantized_multiplier) + rounding) >> total_shift)


@njit
def multiply_by_quantized_multiplier_smaller_than_one_exp(x, quantized_multiplier, left_shift):
    """Legacy TFLite helper: ``RDBPOT(SRDHM(x, q), -left_shift)`` for ``left_shift <= 0``."""
    return rounding_divide_by_pot(
        saturating_rounding_doubling_high_mul(x, quantized_multiplier), -left_shift
    )


@njit
def multiply_by_quantized_multiplier_greater_than_one(x, quantized_multiplier, left_shift):
    """Legacy TFLite helper: ``SRDHM(x * 2**left_shift, q)`` for ``left_shift >= 0``."""
    return saturating_rounding_doubling_high_mul(
        wrap_int32(np.int64(x) << left_shift), quantized_multiplier
    )


# --------------------------------------------------------------------------------------------
# gemmlowp transcendental functions (used by the fixed-point reference softmax)
# --------------------------------------------------------------------------------------------


@njit
def rounding_half_sum(a, b):
    """gemmlowp ``RoundingHalfSum``: ``(a + b + sign) / 2`` with C++ truncating division."""
    s = np.int64(a) + np.int64(b)
    if s >= 0:
        return (s + 1) >> 1
    return -((-(s - 1)) >> 1)


@njit
def exp_on_interval_between_negative_one_quarter_and_0_excl(a):
    """gemmlowp: ``exp(a)`` for a Q0.31 value ``a`` in [-1/4, 0); result in Q0.31."""
    # (np.int64 constants: numba compiles a variant of a callee per literal argument)
    constant_term = np.int64(1895147668)  # exp(-1/8) in Q0.31
    constant_1_over_3 = np.int64(715827883)
    x = wrap_int32(np.int64(a) + (1 << 28))  # a + 1/8
    x2 = saturating_rounding_doubling_high_mul(x, x)
    x3 = saturating_rounding_doubling_high_mul(x2, x)
    x4 = saturating_rounding_doubling_high_mul(x2, x2)
    x4_over_4 = rounding_divide_by_pot(x4, np.int64(2))
    poly = wrap_int32(
        saturating_rounding_doubling_high_mul(wrap_int32(x4_over_4 + x3), constant_1_over_3) + x2
    )
    poly = rounding_divide_by_pot(poly, np.int64(1))
    return wrap_int32(
        constant_term
        + saturating_rounding_doubling_high_mul(constant_term, wrap_int32(x + poly))
    )


@njit
def exp_on_negative_values(a, integer_bits):
    """gemmlowp ``exp_on_negative_values`` for a Q(integer_bits) value ``a <= 0``; Q0.31 out."""
    a = np.int64(a)
    fractional_bits = 31 - integer_bits
    one_quarter = np.int64(1) << (fractional_bits - 2)
    mask = one_quarter - 1
    a_mod_quarter_minus_one_quarter = wrap_int32((a & mask) - one_quarter)
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        saturating_rounding_multiply_by_pot(a_mod_quarter_minus_one_quarter,
                                            np.int64(integer_bits))
    )
    remainder = wrap_int32(a_mod_quarter_minus_one_quarter - a)
    # Barrel shifter: multiply by exp(-2**k) for every bit k of the remainder.
    multipliers = (1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242)
    for i in range(7):
        exponent = i - 2
        if integer_bits > exponent:
            shift_amount = fractional_bits + exponent
            if remainder & (np.int64(1) << shift_amount):
                result = saturating_rounding_doubling_high_mul(result, multipliers[i])
    if integer_bits > 5:
        clamp = -(np.int64(1) << (36 - integer_bits))
        if a < clamp:
            result = np.int64(0)
    if a == 0:
        result = np.int64(2147483647)
    return result


@njit
def one_over_one_plus_x_for_x_in_0_1(a):
    """gemmlowp: ``1 / (1 + a)`` for a Q0.31 value ``a`` in [0, 1); Q0.31 result."""
    # (np.int64 constants: numba compiles a variant of a callee per literal argument)
    half_denominator = rounding_half_sum(a, np.int64(2147483647))
    constant_48_over_17 = np.int64(1515870810)  # Q2.29
    constant_neg_32_over_17 = np.int64(-1010580540)  # Q2.29
    x = wrap_int32(
        constant_48_over_17
        + saturating_rounding_doubling_high_mul(half_denominator, constant_neg_32_over_17)
    )
    one_q2 = np.int64(1) << 29
    for _ in range(3):
        half_denominator_times_x = saturating_rounding_doubling_high_mul(half_denominator, x)
        one_minus = wrap_int32(one_q2 - half_denominator_times_x)
        product = saturating_rounding_doubling_high_mul(x, one_minus)  # Q4.27
        x = wrap_int32(x + saturating_rounding_multiply_by_pot(product, np.int64(2)))
    # ExactMulByPot<-1> turns Q2.29 into Q1.30 (same raw); Rescale<0> shifts left by one.
    return saturating_rounding_multiply_by_pot(x, np.int64(1))


@njit
def count_leading_zeros_u32(x):
    """Number of leading zero bits of ``x`` viewed as uint32 (32 for zero)."""
    x = np.int64(x) & 0xFFFFFFFF
    n = 0
    bit = np.int64(1) << 31
    while n < 32 and (x & bit) == 0:
        n += 1
        bit >>= 1
    return n


@njit
def get_reciprocal(x, x_integer_digits):
    """TFLite ``GetReciprocal``: ``(1/x in Q0.31 raw, num_bits_over_unit)`` for positive x."""
    headroom_plus_one = count_leading_zeros_u32(x)
    num_bits_over_unit = x_integer_digits - headroom_plus_one
    shifted = ((np.int64(x) << headroom_plus_one) & 0xFFFFFFFF) - (np.int64(1) << 31)
    shifted_sum_minus_one = wrap_int32(shifted)
    return one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one), num_bits_over_unit


# --------------------------------------------------------------------------------------------
# The same arithmetic on NumPy arrays, for tables computed when a layer is prepared
# --------------------------------------------------------------------------------------------
# A kernel that looks values up in such a table instead of calling the scalar functions
# above does not compile them (the quantized softmax: exp_on_negative_values and its callees
# were 0.6 s of the shared models' cold start, issue 13). Each equals its scalar counterpart
# on every int32 input (tests/kernels/test_kernels_fixed_point.py); int32 values in int64.
# Not kernels/reference/_fixed_point.py's twins, though they compute the same: those belong to
# the reference kernels, the oracle the quantized softmax is tested against, and stay a
# second implementation written apart from these.


def wrap_int32_np(x):
    """:func:`wrap_int32`, element-wise."""
    return ((x + 2147483648) & 0xFFFFFFFF) - 2147483648


def saturating_rounding_doubling_high_mul_np(a, b):
    """:func:`saturating_rounding_doubling_high_mul`, element-wise."""
    ab = a * b   # |ab| <= 2**62
    v = np.where(ab >= 0, (ab + 1073741824) >> 31, -((-(ab + 1 - 1073741824)) >> 31))
    return np.where((a == b) & (a == INT32_MIN), INT32_MAX, v)


def rounding_divide_by_pot_np(x, exponent: int):
    """:func:`rounding_divide_by_pot`, element-wise, for one exponent in [0, 31]."""
    mask = (1 << exponent) - 1
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + ((x & mask) > threshold)


def saturating_rounding_multiply_by_pot_np(x, exponent: int):
    """:func:`saturating_rounding_multiply_by_pot`, element-wise, for one exponent."""
    if exponent < 0:
        return rounding_divide_by_pot_np(x, -exponent)
    if exponent == 0:
        return x
    threshold = (1 << (31 - exponent)) - 1
    return np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, x << exponent))


def exp_on_negative_values_np(a, integer_bits: int):
    """:func:`exp_on_negative_values` of each value of the int64 array ``a`` (all <= 0)."""
    wrap, srdhm = wrap_int32_np, saturating_rounding_doubling_high_mul_np
    rdbp = rounding_divide_by_pot_np
    a = np.asarray(a, np.int64)
    fractional_bits = 31 - integer_bits
    one_quarter = 1 << (fractional_bits - 2)
    a_mod = wrap((a & (one_quarter - 1)) - one_quarter)
    # exp_on_interval_between_negative_one_quarter_and_0_excl of the rescaled a_mod
    x = wrap(saturating_rounding_multiply_by_pot_np(a_mod, integer_bits) + (1 << 28))
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4_over_4 = rdbp(srdhm(x2, x2), 2)
    poly = rdbp(wrap(srdhm(wrap(x4_over_4 + x3), np.int64(715827883)) + x2), 1)
    constant_term = np.int64(1895147668)
    result = wrap(constant_term + srdhm(constant_term, wrap(x + poly)))
    remainder = wrap(a_mod - a)
    multipliers = (1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242)
    for i, multiplier in enumerate(multipliers):
        exponent = i - 2
        if integer_bits > exponent:
            bit = (remainder >> (fractional_bits + exponent)) & 1
            result = np.where(bit != 0, srdhm(result, np.int64(multiplier)), result)
    if integer_bits > 5:
        result = np.where(a < -(1 << (36 - integer_bits)), 0, result)
    return np.where(a == 0, INT32_MAX, result)


def multiply_by_quantized_multiplier_greater_than_one_np(x, quantized_multiplier,
                                                         left_shift: int):
    """:func:`multiply_by_quantized_multiplier_greater_than_one`, element-wise."""
    shifted = wrap_int32_np(np.asarray(x, np.int64) << left_shift)
    return saturating_rounding_doubling_high_mul_np(shifted, np.int64(quantized_multiplier))
