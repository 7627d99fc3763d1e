"""Reference TRANSPOSE_CONV_2D (numpy, gather form: each output sums the taps that reach it):
the oracle for :mod:`nnsim.kernels.transpose_conv`."""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.reference import _fixed_point as fx


def _accumulate(x, w, out_h, out_w, sh, sw, pt, pl, dtype):
    n, in_h, in_w, _ = x.shape
    o, fh, fw, _ = w.shape
    acc = np.zeros((n, out_h, out_w, o), dtype=dtype)
    for i in range(fh):
        for j in range(fw):
            for h in range(in_h):
                oy = h * sh - pt + i
                if not 0 <= oy < out_h:
                    continue
                for wi in range(in_w):
                    ox = wi * sw - pl + j
                    if 0 <= ox < out_w:
                        acc[:, oy, ox, :] += x[:, h, wi, :] @ w[:, i, j, :].T
    return acc


def transpose_conv_2d(x, w, bias, *, out_h, out_w, stride_h, stride_w, pad_top, pad_left,
                      fuse=0, in_scale=None, in_zp=0, w_scales=None, w_zp=0, out_scale=None,
                      out_zp=0, out_dtype=None):
    """Reference; see :func:`nnsim.kernels.transpose_conv.transpose_conv_2d`."""
    x, w = np.asarray(x), np.asarray(w)
    channels = w.shape[0]
    geometry = (out_h, out_w, stride_h, stride_w, pad_top, pad_left)
    if not cm.is_quantized(x.dtype):
        acc = _accumulate(x.astype(np.float64), w.astype(np.float64), *geometry, np.float64)
        acc = acc + np.asarray(bias, np.float64)
        lo, hi = cm.float_activation_range(fuse)
        return np.clip(acc, lo, hi).astype(np.float32).astype(x.dtype)
    acc = _accumulate(x.astype(np.int64) - int(in_zp), w.astype(np.int64) - int(w_zp), *geometry,
                      np.int64)
    scales = cm.filter_scales(w_scales, channels)
    mults, shifts = cm.conv_multipliers(in_scale, scales, out_scale, channels, True)
    raw = fx.mbqm(acc + np.asarray(bias, np.int64), mults, shifts) + int(out_zp)
    odt = cm.output_dtype(out_dtype, x.dtype)
    lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, odt)
    return fx.clamp_cast(raw, lo, hi, odt)
