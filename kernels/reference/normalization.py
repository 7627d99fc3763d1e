"""Reference L2_NORMALIZATION (numpy): the oracle for :mod:`nnsim.kernels.normalization`.

The inverse square root multiplier is recomputed per row with the vectorised primitives of
``reference._fixed_point`` (written from ``GetInvSqrtQuantizedMultiplierExp``); floats use a
float64 norm.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.fixed_point import qrange
from nnsim.kernels.reference import _fixed_point as fx


def inv_sqrt_multiplier(value: int):
    """Reference ``GetInvSqrtQuantizedMultiplierExp(value, -1)``."""
    value = int(value)
    if value <= 1:
        return 2**31 - 1, 0
    shift = 11
    while value >= 1 << 29:
        value //= 4
        shift += 1
    pairs = (32 - value.bit_length() - 1) // 2 - 1
    shift -= pairs
    value <<= 2 * pairs
    x_in = np.int64(value >> 1)
    half_in = fx.rdbpot(x_in, 1)
    x = np.int64(1 << 28)
    for _ in range(5):
        x3 = fx.saturating_mul_pot(fx.srdhm(fx.srdhm(x, x), x), 6)
        x = fx.saturating_mul_pot(fx.wrap32(fx.srdhm((1 << 28) + (1 << 27), x)
                                            - fx.srdhm(half_in, x3)), 3)
    result = int(fx.srdhm(x, 1518500250))
    if shift < 0:
        result = int(fx.wrap32(result << -shift))
        shift = 0
    return result, -shift


def l2_normalization(x, axis=-1, *, in_zp=0):
    """Reference; see :func:`nnsim.kernels.normalization.l2_normalization`."""
    x = np.asarray(x)
    axis = cm.normalize_axis(axis, x.ndim)
    if not cm.is_quantized(x.dtype):
        f = x.astype(np.float64)
        norm = np.maximum(np.sqrt((f * f).sum(axis=axis, keepdims=True)), 1e-6)
        return (f / norm).astype(np.float32).astype(x.dtype)
    d = np.moveaxis(x.astype(np.int64) - int(in_zp), axis, -1)
    out = np.empty(d.shape, dtype=np.int64)
    unsigned = x.dtype == np.uint8
    last = axis == x.ndim - 1
    for idx in np.ndindex(*d.shape[:-1]):
        m, s = inv_sqrt_multiplier(fx.wrap32((d[idx] * d[idx]).sum()))
        if last and not unsigned:
            out[idx] = fx.mbqm(d[idx], m, s + 7)
        else:
            out[idx] = fx.rdbpot(fx.srdhm(d[idx] * 128, m), -s) + (128 if unsigned else 0)
    return fx.clamp_cast(np.moveaxis(out, -1, axis), *qrange(x.dtype), x.dtype)
