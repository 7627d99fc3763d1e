"""Reference quantized LOG_SOFTMAX (numpy, whole arrays): the oracle for
:mod:`nnsim.kernels.log_softmax_quant`, written with the vectorised fixed-point primitives of
:mod:`nnsim.kernels.reference._fixed_point` (independent of the scalar ``@njit`` helpers)."""

from __future__ import annotations

import numpy as np

from nnsim.kernels.fixed_point import qrange
from nnsim.kernels.log_softmax_quant import log_softmax_params
from nnsim.kernels.reference import _fixed_point as fx


def _clz(x):
    """Leading zero bits of positive int32 values."""
    _, bit_length = np.frexp(fx.i64(x).astype(np.float64))
    return 32 - bit_length.astype(np.int64)


def _shift_left_saturating(x, exponent):
    """SaturatingRoundingMultiplyByPOTParam for per-element exponents >= 0."""
    x, exponent = fx.i64(x), fx.i64(exponent)
    threshold = (np.int64(1) << (31 - exponent)) - 1
    return np.where(x > threshold, fx.INT32_MAX,
                    np.where(x < -threshold, fx.INT32_MIN, x << exponent))


def _saturate(x):
    return np.clip(fx.i64(x), fx.INT32_MIN, fx.INT32_MAX)


def log_q12_to_q5(x):
    """log of Q12.19 values >= 1 as Q5.26 (gemmlowp's ``log_x_for_x_greater_than_or_equal_to_1``
    with 12 input and 5 output integer bits; 6 accumulator bits)."""
    quarter = fx.rdbpot(536870912, 6)
    sqrt_half, sqrt_sqrt_half = 1518500250, 1805811301
    hp1 = _clz(x)
    r_a = _shift_left_saturating(fx.srdhm(_shift_left_saturating(x, hp1 - 1), sqrt_half), 1)
    pow_a = _saturate(_shift_left_saturating(12 - hp1, 25) + quarter)
    z_b = fx.srdhm(x, sqrt_half)
    headroom_b = _clz(z_b) - 1
    r_b = _shift_left_saturating(x, headroom_b)
    pow_b = _saturate(_shift_left_saturating(12 - headroom_b, 25) - quarter)
    r = np.minimum(r_a, r_b)
    z_pow_2 = np.maximum(pow_a, pow_b)
    p = fx.rounding_half_sum(r, sqrt_sqrt_half)
    q = fx.wrap32(2 * fx.wrap32(r - sqrt_sqrt_half))
    sq = fx.srdhm(q, q)
    num = fx.wrap32(fx.srdhm(q, r) + fx.srdhm(fx.srdhm(q, sq), 117049297))
    denom = fx.wrap32(fx.srdhm(p, fx.wrap32(1057819769 + q + fx.srdhm(127690142, sq)))
                      + fx.srdhm(638450708, q))
    total = fx.wrap32(fx.srdhm(z_pow_2, 1488522236)
                      + fx.srdhm(fx.rdbpot(num, 6), fx.one_over_one_plus_x_for_x_in_0_1(denom)))
    return fx.saturating_mul_pot(total, 1)


def log_softmax_quantized(x, in_scale):
    """Reference; see :func:`nnsim.kernels.log_softmax_quant.log_softmax_quantized`."""
    x = np.asarray(x)
    m, left_shift, diff_min, rev_m, rev_shift = log_softmax_params(in_scale)
    qmin, qmax = qrange(x.dtype)
    diff = fx.i64(x) - fx.i64(x).max(axis=-1, keepdims=True)
    scaled = fx.srdhm(fx.wrap32(diff << left_shift), m)
    exps = fx.rdbpot(fx.exp_on_negative_values(np.minimum(scaled, 0), 5), 12)
    total = fx.wrap32(np.where(diff >= diff_min, exps, 0).sum(axis=-1, keepdims=True))
    log_sum = log_q12_to_q5(total)
    limit = np.maximum(diff_min - 1,
                       fx.rdbpot(fx.srdhm(fx.wrap32(log_sum + fx.INT32_MIN), rev_m), -rev_shift))
    out = fx.rdbpot(fx.wrap32(scaled - log_sum), 22) + qmax
    return np.where(diff > limit, np.clip(out, qmin, qmax), qmin).astype(x.dtype)
