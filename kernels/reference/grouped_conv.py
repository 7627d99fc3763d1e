"""Reference GROUPED_CONV_2D (numpy, readable): the oracle for :mod:`nnsim.kernels.grouped_conv`.

Each group is correlated with :func:`nnsim.kernels.reference.conv.correlate` (int64 / float64)
and the accumulators of all groups are requantized together.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.reference.conv import correlate, requantize_accumulators


def grouped_conv_2d(x, w, bias, *, groups, stride_h, stride_w, pad_top, pad_bottom, pad_left,
                    pad_right, dilation_h=1, dilation_w=1, fuse=0, in_scale=None, in_zp=0,
                    w_scales=None, w_zp=0, out_scale=None, out_zp=0, out_dtype=None,
                    multipliers="tflite"):
    """Reference; see :func:`nnsim.kernels.grouped_conv.grouped_conv_2d`."""
    x, w = np.asarray(x), np.asarray(w)
    cout, cg = w.shape[0], w.shape[3]
    og = cout // groups
    quantized = cm.is_quantized(x.dtype)
    xs = x.astype(np.int64) - int(in_zp) if quantized else x.astype(np.float64)
    ws = w.astype(np.int64) - int(w_zp) if quantized else w.astype(np.float64)
    geometry = ((stride_h, stride_w), (pad_top, pad_bottom, pad_left, pad_right),
                (dilation_h, dilation_w))
    acc = np.concatenate([correlate(xs[..., g * cg:(g + 1) * cg], ws[g * og:(g + 1) * og],
                                    *geometry) for g in range(groups)], axis=3)
    if not quantized:
        b = np.zeros(cout) if bias is None else np.asarray(bias, np.float64)
        lo, hi = cm.float_activation_range(fuse)
        return np.clip(acc + b, lo, hi).astype(np.float32).astype(x.dtype)
    scales = cm.filter_scales(w_scales, cout)
    float_product = multipliers == "aosp" or (
        x.dtype == np.uint8 and w.dtype == np.uint8 and scales.size == 1)
    mults, shifts = cm.conv_multipliers(in_scale, scales, out_scale, cout, float_product)
    odt = cm.output_dtype(out_dtype, x.dtype)
    lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, odt)
    return requantize_accumulators(acc, bias, mults, shifts, out_zp, lo, hi, odt)
