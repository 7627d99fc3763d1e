"""INSTANCE_NORMALIZATION (NHWC), float32 / float16; numba fast path.

AOSP ``InstanceNormalization.cpp`` (``instanceNormNhwc<T>``), computed in the tensor's own type
``T`` for each (batch, channel) plane of ``H * W`` values::

    mean = T(0);  mean += v (in h, w order);  mean /= T(H * W)
    s = T(0);     s += (v - mean) * (v - mean)
    sigma = T(sqrt(float(s / T(H * W)) + epsilon))        # sqrt and + in float32
    out = (v - mean) * gamma / sigma + beta               # left to right, in T

Every operation is computed in float64 and rounded to ``T`` (float32 or IEEE half, ties to
even): exactly IEEE arithmetic in ``T`` for +, -, *, / and sqrt, i.e. what a device with native
half arithmetic (and without fused multiply-add) computes.
"""

from __future__ import annotations

import math

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._jit import njit

__all__ = ["instance_normalization"]


def instance_normalization(x, gamma, beta, epsilon):
    """Normalise each channel of each batch of an NHWC ``x`` over its H x W plane.

    Parameters
    ----------
    x : ndarray [N, H, W, C]
        float32 / float16.
    gamma, beta, epsilon : float
        Scale, offset and variance epsilon, values of ``x``'s type.

    Returns
    -------
    ndarray [N, H, W, C], dtype of ``x``.
    """
    x = np.asarray(x)
    cm.check_rank("input", x, 4)
    cm.check_dtype("input", x, cm.FLOAT_DTYPES)
    half = x.dtype == np.float16
    n, h, w, c = x.shape
    planes = np.ascontiguousarray(x, dtype=np.float64).reshape(n, h * w, c)
    params = np.array([gamma, beta, epsilon], dtype=x.dtype).astype(np.float64)
    out = np.empty(planes.shape, np.float64)
    with np.errstate(all="ignore"):   # an empty or constant plane gives NaN / inf, as in C++
        _instance_norm_core(planes, params, half, out)
    return out.reshape(x.shape).astype(x.dtype)


@njit(inner=True)
def _to_half(v):
    """``v`` rounded to the nearest IEEE half value (ties to even), as a float64."""
    a = abs(v)
    if a != a:
        return v
    if a >= 65520.0:                 # past the largest half (65504) plus half its quantum
        return math.copysign(math.inf, v)
    if a < 6.103515625e-05:          # subnormal halves: quantum 2**-24
        quantum = 5.960464477539063e-08
    else:
        _, e = math.frexp(a)         # a in [2**(e-1), 2**e): 11 significant bits
        quantum = math.ldexp(1.0, e - 11)
    return np.rint(v / quantum) * quantum


@njit(inner=True)
def _round(v, half):
    if half:
        return _to_half(v)
    return np.float64(np.float32(v))


@njit(error_model="numpy")
def _instance_norm_core(planes, params, half, out):
    n, size, channels = planes.shape
    gamma, beta, epsilon = params[0], params[1], params[2]
    count = _round(np.float64(size), half)
    for b in range(n):
        for d in range(channels):
            mean = 0.0
            for i in range(size):
                mean = _round(mean + planes[b, i, d], half)
            mean = _round(mean / count, half)
            total = 0.0
            for i in range(size):
                v = _round(planes[b, i, d] - mean, half)
                total = _round(total + _round(v * v, half), half)
            variance = np.float64(np.float32(_round(total / count, half) + epsilon))
            sigma = _round(np.float64(np.float32(np.sqrt(variance))), half)
            for i in range(size):
                v = _round(planes[b, i, d] - mean, half)
                v = _round(_round(v * gamma, half) / sigma, half)
                out[b, i, d] = _round(v + beta, half)
    return out
