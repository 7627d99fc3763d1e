"""LOG_SOFTMAX on the last axis, uint8 / int8 (TFLite's fixed-point reference kernel).

``reference_ops::LogSoftmax`` (uint8) and ``reference_integer_ops::LogSoftmax`` (int8), used by
LiteRT's ``BUILTIN_REF`` resolver; the output has scale 16/256 and zero point ``qmax`` (255 /
127), i.e. the values ``[-255/16, 0]`` (int8: ``[-255/16, 0]`` shifted by 128)::

    M, L, diff_min = softmax parameters for beta 1 (nnsim.kernels.softmax.softmax_params)
    R, RS = QuantizeMultiplierSmallerThanOneExp(2**(31 - L) / M)
    per row: d = x - max(row)
        sum = sum over d >= diff_min of RDBPOT(exp_on_negative_values(SRDHM(d << L, M)), 12)
        log = _log_x_for_x_greater_than_or_equal_to_1<5>(sum as Q12.19)      # Q5.26
        limit = max(diff_min - 1, RDBPOT(SRDHM(log + INT32_MIN, R), -RS))
        out = d > limit ? clamp(RDBPOT(SRDHM(d << L, M) - log, 22) + qmax) : qmin

The uint8 and int8 kernels are the same arithmetic on the shifted type. The Q5.26 logarithm is
gemmlowp/TFLite's ``log_x_for_x_greater_than_or_equal_to_1_impl`` (``internal/common.h``),
ported in :func:`_log_x_for_x_greater_than_or_equal_to_1`.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import greater, lesser
from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import (count_leading_zeros_u32, exp_on_negative_values,
                                       multiply_by_quantized_multiplier_greater_than_one,
                                       multiply_by_quantized_multiplier_smaller_than_one_exp,
                                       one_over_one_plus_x_for_x_in_0_1, qrange,
                                       quantize_multiplier, rounding_divide_by_pot,
                                       rounding_half_sum, wrap_int32)
from nnsim.kernels.fixed_point import saturating_rounding_doubling_high_mul as _srdhm
from nnsim.kernels.fixed_point import saturating_rounding_multiply_by_pot as _srmbpot
from nnsim.kernels.softmax import softmax_params

__all__ = ["log_softmax_quantized", "log_softmax_params", "OUTPUT_SCALE"]

#: The only output scale TFLite accepts (16 / 256); the zero point is the type's maximum.
OUTPUT_SCALE = 16.0 / 256

_SCALED_DIFF_INTEGER_BITS = 5
_ACCUMULATION_INTEGER_BITS = 12
_OUTPUT_INTEGER_BITS = 4

# gemmlowp constants (Q0.31)
_LOG_2 = 1488522236
_SQRT_SQRT_HALF = 1805811301
_SQRT_HALF = 1518500250
_ONE_QUARTER = 536870912
_ALPHA_N = 117049297
_ALPHA_D = 127690142
_ALPHA_I = 1057819769
_ALPHA_F = 638450708


def log_softmax_quantized(x, in_scale):
    """Quantized log-softmax of ``x`` (uint8 / int8, rank >= 1) along its last axis.

    ``in_scale`` is the input scale (the zero point cancels out). Returns the output values
    (same dtype) on the scale :data:`OUTPUT_SCALE` with zero point 255 / 127.
    """
    x = np.asarray(x)
    cm.check_dtype("input", x, cm.QUANT_DTYPES)
    if x.ndim < 1:
        raise ValueError("input must have rank >= 1")
    m, left_shift, diff_min, rev_m, rev_shift = log_softmax_params(in_scale)
    rows = np.ascontiguousarray(x).reshape(-1, x.shape[-1]) if x.size else x.reshape(0, 1)
    qmin, qmax = qrange(x.dtype)
    out = np.empty(rows.shape, x.dtype)
    _log_softmax_quant_core(rows, m, left_shift, diff_min, rev_m, rev_shift, qmin, qmax, out)
    return out.reshape(x.shape)


def log_softmax_params(in_scale):
    """``(M, L, diff_min, R, RS)`` of TFLite's ``PreprocessLogSoftmaxScalingExp`` (beta 1)."""
    m, left_shift, diff_min = softmax_params(1.0, in_scale)
    real = float(1 << (31 - left_shift)) / float(m)
    rev_m, rev_shift = quantize_multiplier(real)
    if not 0.0 < real < 1.0 or rev_shift > 0:   # TFLite's QuantizeMultiplierSmallerThanOneExp
        raise ValueError(f"input scale {in_scale} gives a reverse scaling {real} outside (0, 1)")
    return m, left_shift, diff_min, rev_m, rev_shift


@njit(inner=True)
def _saturating_add(a, b):
    return lesser(greater(np.int64(a) + np.int64(b), -2147483648), 2147483647)


@njit(inner=True)
def _log_x_for_x_greater_than_or_equal_to_1(raw, input_bits, output_bits):
    """``log(x)`` for a fixed-point ``x >= 1`` with ``input_bits`` integer bits (raw int32),
    as a raw value with ``output_bits`` integer bits (TFLite ``internal/common.h``).

    ``x = 2**z * r`` with ``r`` in [sqrt(1/2), sqrt(2)) found twice (from ``x`` and from
    ``x * sqrt(1/2)``, keeping the smaller ``r``); ``log(r)`` is a rational approximation
    around ``2**-1/4`` in Q0.31, summed with ``z * log(2)`` in ``output_bits + 1`` integer bits.
    """
    accum_bits = output_bits + 1
    quarter = rounding_divide_by_pot(_ONE_QUARTER, accum_bits)            # Rescale<accum>
    z_a = np.int64(raw)
    headroom_a = count_leading_zeros_u32(z_a)                             # headroom + 1
    r_a = _srmbpot(_srdhm(_srmbpot(z_a, headroom_a - 1), _SQRT_HALF), 1)
    pow_a = _saturating_add(_srmbpot(input_bits - headroom_a, 31 - accum_bits), quarter)
    headroom_b = count_leading_zeros_u32(_srdhm(z_a, _SQRT_HALF)) - 1
    r_b = _srmbpot(z_a, headroom_b)
    pow_b = _saturating_add(_srmbpot(input_bits - headroom_b, 31 - accum_bits), -quarter)
    r = lesser(r_a, r_b)
    z_pow_2 = greater(pow_a, pow_b)
    p = rounding_half_sum(r, _SQRT_SQRT_HALF)
    q = wrap_int32(r - _SQRT_SQRT_HALF)
    q = wrap_int32(q + q)
    q_sq = _srdhm(q, q)
    num = wrap_int32(_srdhm(q, r) + _srdhm(_srdhm(q, q_sq), _ALPHA_N))
    inner = wrap_int32(wrap_int32(_ALPHA_I + q) + _srdhm(_ALPHA_D, q_sq))
    denom_minus_one = wrap_int32(_srdhm(p, inner) + _srdhm(_ALPHA_F, q))
    recip_denom = one_over_one_plus_x_for_x_in_0_1(denom_minus_one)
    num_scaled = rounding_divide_by_pot(num, accum_bits)                 # Rescale<accum>
    total = wrap_int32(_srdhm(z_pow_2, _LOG_2) + _srdhm(num_scaled, recip_denom))
    return _srmbpot(total, accum_bits - output_bits)                     # Rescale<output>


@njit
def _log_softmax_quant_core(rows, m, left_shift, diff_min, rev_m, rev_shift, qmin, qmax, out):
    n_rows, depth = rows.shape
    right = 31 - _SCALED_DIFF_INTEGER_BITS - _OUTPUT_INTEGER_BITS
    for r in range(n_rows):
        max_in_row = np.int64(qmin)
        for c in range(depth):
            max_in_row = greater(max_in_row, np.int64(rows[r, c]))
        sum_of_exps = np.int64(0)
        for c in range(depth):
            diff = np.int64(rows[r, c]) - max_in_row
            if diff >= diff_min:
                scaled = multiply_by_quantized_multiplier_greater_than_one(diff, m, left_shift)
                e = exp_on_negative_values(scaled, _SCALED_DIFF_INTEGER_BITS)
                sum_of_exps = wrap_int32(
                    sum_of_exps + rounding_divide_by_pot(e, np.int64(_ACCUMULATION_INTEGER_BITS)))
        log_sum = _log_x_for_x_greater_than_or_equal_to_1(
            sum_of_exps, _ACCUMULATION_INTEGER_BITS, _SCALED_DIFF_INTEGER_BITS)
        limit = greater(diff_min - 1, multiply_by_quantized_multiplier_smaller_than_one_exp(
            wrap_int32(log_sum - 2147483648), rev_m, rev_shift))
        for c in range(depth):
            diff = np.int64(rows[r, c]) - max_in_row
            if diff > limit:
                scaled = multiply_by_quantized_multiplier_greater_than_one(diff, m, left_shift)
                v = rounding_divide_by_pot(wrap_int32(scaled - log_sum), right) + qmax
                out[r, c] = lesser(greater(v, qmin), qmax)
            else:
                out[r, c] = qmin
    return out
