"""Reference CONCATENATION (numpy): the oracle for :mod:`nnsim.kernels.reshape`."""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.fixed_point import qrange
from nnsim.kernels.reference import _fixed_point as fx


def concatenation(arrays, axis, *, in_scales=None, in_zps=None, out_scale=None, out_zp=0):
    """Reference concatenation; see :func:`nnsim.kernels.reshape.concatenation`."""
    arrays = [np.asarray(a) for a in arrays]
    dtype = arrays[0].dtype
    if cm.is_quantized(dtype) and out_scale is not None and in_scales is not None:
        zps = [0] * len(arrays) if in_zps is None else list(in_zps)
        qmin, qmax = qrange(dtype)
        inverse = np.float32(1.0) / np.float32(out_scale)
        converted = []
        for a, s, z in zip(arrays, in_scales, zps):
            if np.float32(s) == np.float32(out_scale) and int(z) == int(out_zp):
                converted.append(a)
                continue
            scale = np.float32(s) * inverse
            bias = np.float32(-int(z)) * scale
            real = a.astype(np.float32) * scale + bias  # float32 throughout, as TFLite
            q = fx.round_half_away(real).astype(np.int64) + int(out_zp)
            converted.append(fx.clamp_cast(q, qmin, qmax, dtype))
        arrays = converted
    return np.concatenate(arrays, axis=cm.normalize_axis(axis, arrays[0].ndim))
