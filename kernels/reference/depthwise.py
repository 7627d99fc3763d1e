"""Reference DEPTHWISE_CONV_2D (numpy): the oracle for :mod:`nnsim.kernels.depthwise`.

Input channels are repeated ``depth_multiplier`` times so that output channel ``oc`` reads input
channel ``oc // depth_multiplier``; then every tap is an elementwise product.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.reference.conv import requantize_accumulators


def depthwise_conv_2d(
    x, w, bias, *, depth_multiplier, stride_h, stride_w, pad_top, pad_bottom, pad_left,
    pad_right, dilation_h=1, dilation_w=1, fuse=0, in_scale=None, in_zp=0, w_scales=None,
    w_zp=0, out_scale=None, out_zp=0, out_dtype=None,
):
    """Reference depthwise convolution; see :func:`nnsim.kernels.depthwise.depthwise_conv_2d`."""
    x, w = np.asarray(x), np.asarray(w)
    _, kh, kw, cout = w.shape
    quantized = cm.is_quantized(x.dtype)
    xs = x.astype(np.int64) - int(in_zp) if quantized else x.astype(np.float64)
    ws = w[0].astype(np.int64) - int(w_zp) if quantized else w[0].astype(np.float64)
    xs = np.repeat(xs, int(depth_multiplier), axis=3)

    n, h, wd, _ = xs.shape
    oh = cm.conv_out_size(h, kh, stride_h, dilation_h, pad_top, pad_bottom)
    ow = cm.conv_out_size(wd, kw, stride_w, dilation_w, pad_left, pad_right)
    padded = np.pad(xs, ((0, 0), (pad_top, pad_bottom), (pad_left, pad_right), (0, 0)))
    acc = np.zeros((n, oh, ow, cout), dtype=xs.dtype)
    for ky in range(kh):
        for kx in range(kw):
            y0, x0 = ky * dilation_h, kx * dilation_w
            patch = padded[:, y0: y0 + (oh - 1) * stride_h + 1: stride_h,
                           x0: x0 + (ow - 1) * stride_w + 1: stride_w, :]
            acc += patch * ws[ky, kx]

    if not quantized:
        b = np.zeros(cout) if bias is None else np.asarray(bias, np.float64)
        lo, hi = cm.float_activation_range(fuse)
        return np.clip(acc + b, lo, hi).astype(np.float32).astype(x.dtype)

    scales = cm.filter_scales(w_scales, cout)
    float_product = x.dtype == np.uint8 and w.dtype == np.uint8 and scales.size == 1
    mults, shifts = cm.conv_multipliers(in_scale, scales, out_scale, cout, float_product)
    odt = cm.output_dtype(out_dtype, x.dtype)
    lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, odt)
    return requantize_accumulators(acc, bias, mults, shifts, out_zp, lo, hi, odt)
