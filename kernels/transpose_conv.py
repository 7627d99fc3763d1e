"""TRANSPOSE_CONV_2D (NHWC), float and 8-bit quantized (per-tensor and per-channel); numba.

NNAPI's own kernel (``TransposeConv2D.cpp``), a scatter of every input pixel through the
filter [O, KH, KW, I]::

    out[b, h * sh - pad_top + i, w * sw - pad_left + j, k] += x[b, h, w, d] * f[k, i, j, d]

in the loop order b, h, w, k, i, j, d (float32 accumulation in that order), then + bias and
the fused activation. Quantized: int32 accumulation of ``(x - x_zp) * (f - f_zp)`` (per-channel
filters are symmetric), then ``MBQM(acc + bias[k], M[k], S[k]) + out_zp`` clamped, with
``(M, S) = QuantizeMultiplier(double(float32(in_scale * f_scale[k])) / double(out_scale))``
(``GetQuantizedConvolutionMultipler``, also per channel). Float16 computes in float32.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import greater, lesser
from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import multiply_by_quantized_multiplier

__all__ = ["transpose_conv_2d"]


def transpose_conv_2d(x, w, bias, *, out_h, out_w, stride_h, stride_w, pad_top, pad_left,
                      fuse=0, in_scale=None, in_zp=0, w_scales=None, w_zp=0, out_scale=None,
                      out_zp=0, out_dtype=None):
    """Transposed convolution.

    Parameters
    ----------
    x : ndarray [N, H, W, I]
        float32 / float16 / uint8 / int8.
    w : ndarray [O, KH, KW, I]
        Same float type, or uint8 / int8 (per-tensor, ``w_zp``) or int8 per-channel.
    bias : ndarray [O]
        Float for float inputs, int32 for quantized ones.
    out_h, out_w : int
        Output size (NNAPI derives it from the padding).
    stride_h, stride_w, pad_top, pad_left : int
        Geometry (the bottom / right padding only shrinks the output).
    fuse : int
        NNAPI fuse code.
    in_scale, in_zp, w_scales, w_zp, out_scale, out_zp, out_dtype
        Quantization; ``w_scales`` has one entry (per-tensor) or one per output channel.

    Returns
    -------
    ndarray [N, out_h, out_w, O]
    """
    x, w = np.asarray(x), np.asarray(w)
    cm.check_rank("input", x, 4)
    cm.check_rank("filter", w, 4)
    if w.shape[3] != x.shape[3]:
        raise ValueError(f"filter depth {w.shape[3]} != input depth {x.shape[3]}")
    if min(stride_h, stride_w) < 1 or min(pad_top, pad_left) < 0 or min(out_h, out_w) < 1:
        raise ValueError("strides and the output size must be >= 1, top/left padding >= 0")
    channels = w.shape[0]
    shape = (x.shape[0], int(out_h), int(out_w), channels)
    geometry = (int(stride_h), int(stride_w), int(pad_top), int(pad_left))
    if cm.is_quantized(x.dtype):
        odt = cm.output_dtype(out_dtype, x.dtype)
        scales = cm.filter_scales(w_scales, channels)
        mults, shifts = cm.conv_multipliers(in_scale, scales, out_scale, channels, True)
        lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, odt)
        acc = np.zeros(shape, dtype=np.int64)
        _accumulate_quant_core(np.ascontiguousarray(x), np.ascontiguousarray(w), int(in_zp),
                               int(w_zp), *geometry, acc)
        out = np.empty(shape, dtype=odt)
        _requantize_core(acc, cm.bias_int32(bias, channels), mults, shifts, int(out_zp),
                         int(lo), int(hi), out)
        return out
    cm.check_dtype("input", x, cm.FLOAT_DTYPES)
    x32, dtype = cm.to_float32(x)
    lo, hi = cm.float_clamp(fuse)
    out = np.zeros(shape, dtype=np.float32)
    _transpose_conv_float_core(x32, np.ascontiguousarray(w, dtype=np.float32),
                               cm.bias_float32(bias, channels), *geometry, lo, hi, out)
    return out.astype(dtype, copy=False)


@njit
def _transpose_conv_float_core(x, w, bias, sh, sw, pad_top, pad_left, lo, hi, out):
    n, in_h, in_w, depth = x.shape
    o, fh, fw, _ = w.shape
    _, out_h, out_w, _ = out.shape
    for b in range(n):
        for h in range(in_h):
            for wi in range(in_w):
                oy0 = h * sh - pad_top
                ox0 = wi * sw - pad_left
                for k in range(o):
                    for i in range(fh):
                        for j in range(fw):
                            oy = oy0 + i
                            ox = ox0 + j
                            if 0 <= oy < out_h and 0 <= ox < out_w:
                                for d in range(depth):
                                    out[b, oy, ox, k] += x[b, h, wi, d] * w[k, i, j, d]
    for b in range(n):
        for oy in range(out_h):
            for ox in range(out_w):
                for k in range(o):
                    v = out[b, oy, ox, k] + bias[k]
                    out[b, oy, ox, k] = greater(lesser(v, hi), lo)
    return out


@njit
def _accumulate_quant_core(x, w, in_zp, w_zp, sh, sw, pad_top, pad_left, acc):
    n, in_h, in_w, depth = x.shape
    o, fh, fw, _ = w.shape
    _, out_h, out_w, _ = acc.shape
    for b in range(n):
        for h in range(in_h):
            for wi in range(in_w):
                for d in range(depth):
                    xv = np.int64(x[b, h, wi, d]) - in_zp
                    for i in range(fh):
                        oy = h * sh - pad_top + i
                        if oy < 0 or oy >= out_h:
                            continue
                        for j in range(fw):
                            ox = wi * sw - pad_left + j
                            if ox < 0 or ox >= out_w:
                                continue
                            for k in range(o):
                                acc[b, oy, ox, k] += xv * (np.int64(w[k, i, j, d]) - w_zp)
    return acc


@njit
def _requantize_core(acc, bias, mults, shifts, out_zp, lo, hi, out):
    n, oh, ow, o = acc.shape
    for b in range(n):
        for y in range(oh):
            for x in range(ow):
                for k in range(o):
                    v = multiply_by_quantized_multiplier(acc[b, y, x, k] + bias[k], mults[k],
                                                         shifts[k]) + out_zp
                    out[b, y, x, k] = lesser(greater(v, lo), hi)
    return out
