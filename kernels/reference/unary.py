"""Reference unary operations (numpy): the oracle for :mod:`nnsim.kernels.unary`.

Float functions are evaluated in float64 and rounded to float32 (then to the input dtype);
the quantized TANH uses the vectorised gemmlowp primitives of ``reference._fixed_point``.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels.reference import _fixed_point as fx
from nnsim.kernels.unary import tanh_params


def _float(fn, x):
    x = np.asarray(x)
    with np.errstate(all="ignore"):
        return fn(x.astype(np.float64)).astype(np.float32).astype(x.dtype)


def sqrt(x):
    """Reference; see :func:`nnsim.kernels.unary.sqrt`."""
    return _float(np.sqrt, x)


def rsqrt(x):
    """Reference; see :func:`nnsim.kernels.unary.rsqrt`."""
    x = np.asarray(x)
    with np.errstate(all="ignore"):
        root = np.sqrt(x.astype(np.float32))
        return (np.float32(1.0) / root).astype(x.dtype)


def exp(x):
    """Reference; see :func:`nnsim.kernels.unary.exp`."""
    return _float(np.exp, x)


def log(x):
    """Reference; see :func:`nnsim.kernels.unary.log`."""
    return _float(np.log, x)


def floor(x):
    """Reference; see :func:`nnsim.kernels.unary.floor`."""
    return _float(np.floor, x)


def elu(x, alpha):
    """Reference; see :func:`nnsim.kernels.unary.elu`."""
    return _float(lambda v: np.maximum(0.0, v) + np.minimum(0.0, float(alpha) * np.expm1(v)), x)


def absolute(x):
    """Reference; see :func:`nnsim.kernels.unary.absolute`."""
    x = np.asarray(x)
    if x.dtype == np.int32:
        return fx.wrap32(np.abs(x.astype(np.int64))).astype(np.int32)
    return _float(np.abs, x)


def neg(x):
    """Reference; see :func:`nnsim.kernels.unary.neg`."""
    x = np.asarray(x)
    if x.dtype == np.int32:
        return fx.wrap32(-x.astype(np.int64)).astype(np.int32)
    return _float(np.negative, x)


def _one_minus_x_over_one_plus_x(a):
    half_denominator = fx.rounding_half_sum(a, fx.INT32_MAX)
    x = fx.wrap32(1515870810 + fx.srdhm(half_denominator, -1010580540))
    for _ in range(3):
        one_minus = fx.wrap32((1 << 29) - fx.srdhm(half_denominator, x))
        x = fx.wrap32(x + fx.saturating_mul_pot(fx.srdhm(x, one_minus), 2))
    return fx.saturating_mul_pot(fx.wrap32(x - (1 << 29)), 2)


def gemmlowp_tanh_q4(a):
    """gemmlowp ``tanh`` of Q4.27 raw values (vectorised); Q0.31 raw results."""
    a = fx.i64(a)
    n = np.where(a < 0, a, -a)
    t = _one_minus_x_over_one_plus_x(fx.exp_on_negative_values(n, 5))
    return np.where(a == 0, 0, np.where(a < 0, -t, t))


def tanh_quantized(x, *, in_scale, in_zp=0):
    """Reference; see :func:`nnsim.kernels.unary.tanh_quantized`."""
    x = np.asarray(x)
    m, shift, radius = tanh_params(in_scale)
    unsigned = x.dtype == np.uint8
    lo, hi = (0, 255) if unsigned else (-128, 127)
    d = x.astype(np.int64) - int(in_zp)
    inner = np.clip(d, -radius + 1, radius - 1)  # keep the fixed-point path in range
    t = gemmlowp_tanh_q4(fx.srdhm(fx.wrap32(inner << shift), m))
    v = np.clip(fx.rdbpot(t, 24) + (128 if unsigned else 0), lo, hi)
    v = np.where(d <= -radius, lo, np.where(d >= radius, hi, v))
    return v.astype(x.dtype)
