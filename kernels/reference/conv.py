"""Reference CONV_2D (numpy, readable): the oracle for :mod:`nnsim.kernels.conv`.

Same signature and semantics as :func:`nnsim.kernels.conv.conv_2d`. The input is padded with
zeros *after* subtracting the zero point, which is exactly TFLite's "skip out-of-image taps".
Integer accumulation is done in int64 and wrapped to int32 once (same result modulo 2**32 as
TFLite's wrapping int32 accumulator). The float path computes in float64.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.reference import _fixed_point as fx


def conv_2d(
    x, w, bias, *, stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right,
    dilation_h=1, dilation_w=1, fuse=0, in_scale=None, in_zp=0, w_scales=None, w_zp=0,
    out_scale=None, out_zp=0, out_dtype=None,
):
    """Reference 2-D convolution; see :func:`nnsim.kernels.conv.conv_2d`."""
    x, w = np.asarray(x), np.asarray(w)
    cout, kh, kw, _ = w.shape
    quantized = cm.is_quantized(x.dtype)
    xs = x.astype(np.int64) - int(in_zp) if quantized else x.astype(np.float64)
    ws = w.astype(np.int64) - int(w_zp) if quantized else w.astype(np.float64)
    acc = correlate(xs, ws, (stride_h, stride_w), (pad_top, pad_bottom, pad_left, pad_right),
                    (dilation_h, dilation_w))
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


def correlate(xs, ws, strides, pads, dilations):
    """Sum over taps of ``xs[n, y*sh + ky*dh - pt, ...] * ws[o, ky, kx, :]`` (zero padding)."""
    (sh, sw), (pt, pb, pl, pr), (dh, dw) = strides, pads, dilations
    n, h, wd, _ = xs.shape
    cout, kh, kw, _ = ws.shape
    oh = cm.conv_out_size(h, kh, sh, dh, pt, pb)
    ow = cm.conv_out_size(wd, kw, sw, dw, pl, pr)
    padded = np.pad(xs, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    acc = np.zeros((n, oh, ow, cout), dtype=xs.dtype)
    for ky in range(kh):
        for kx in range(kw):
            patch = padded[:, ky * dh: ky * dh + (oh - 1) * sh + 1: sh,
                           kx * dw: kx * dw + (ow - 1) * sw + 1: sw, :]
            acc += np.tensordot(patch, ws[:, ky, kx, :], axes=([3], [1]))
    return acc


def requantize_accumulators(acc, bias, mults, shifts, out_zp, lo, hi, dtype):
    """int32 accumulators (+ bias) -> MultiplyByQuantizedMultiplier per channel -> clamp."""
    acc = fx.wrap32(acc)
    if bias is not None:
        acc = fx.wrap32(acc + np.asarray(bias, np.int64))
    scaled = fx.mbqm(acc, mults.astype(np.int64), shifts.astype(np.int64)) + int(out_zp)
    return fx.clamp_cast(scaled, lo, hi, dtype)
