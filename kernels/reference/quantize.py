"""Reference QUANTIZE / DEQUANTIZE / requantize (numpy): the oracle for
:mod:`nnsim.kernels.quantize`."""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.fixed_point import qrange, quantize_multiplier
from nnsim.kernels.reference import _fixed_point as fx


def quantize(x_float, *, out_scale, out_zp, out_dtype):
    """Reference quantize; see :func:`nnsim.kernels.quantize.quantize`."""
    x = np.asarray(x_float, dtype=np.float32)
    qmin, qmax = qrange(out_dtype)
    with np.errstate(invalid="ignore"):
        quotient = (x / np.float32(out_scale)).astype(np.float64)
        rounded = np.nan_to_num(fx.round_half_away(quotient), nan=qmin - int(out_zp))
    clipped = np.clip(rounded, qmin - int(out_zp), qmax - int(out_zp))
    return (clipped.astype(np.int64) + int(out_zp)).astype(out_dtype)


def dequantize(x_q, *, in_scale=None, in_zp=0, channel_scales=None, channel_axis=None,
               out_dtype=np.float32):
    """Reference dequantize; see :func:`nnsim.kernels.quantize.dequantize`."""
    x = np.asarray(x_q).astype(np.int64)
    if channel_scales is None:
        result = float(np.float32(in_scale)) * (x - int(in_zp)).astype(np.float64)
        return result.astype(np.float32).astype(out_dtype)
    axis = cm.normalize_axis(channel_axis, x.ndim)
    shape = [1] * x.ndim
    shape[axis] = -1
    scales = np.asarray(channel_scales, dtype=np.float32).reshape(shape)
    return (x.astype(np.float32) * scales).astype(out_dtype)


def requantize(x_q, *, in_scale, in_zp, out_scale, out_zp, out_dtype):
    """Reference requantize; see :func:`nnsim.kernels.quantize.requantize`."""
    x = np.asarray(x_q)
    m, s = quantize_multiplier(float(np.float32(in_scale)) / float(np.float32(out_scale)))
    raw = fx.mbqm(x.astype(np.int64) - int(in_zp), m, s) + int(out_zp)
    return fx.clamp_cast(raw, *qrange(out_dtype), out_dtype)
