"""DEPTHWISE_CONV_2D (NHWC), float and 8-bit quantized; numba fast path.

Matches TFLite ``reference_ops::DepthwiseConv`` (uint8, rounding ``kAwayFromZero`` = double
rounding MultiplyByQuantizedMultiplier), ``reference_integer_ops::DepthwiseConvPerChannel``
(int8) and the float reference. Output channel ``oc = ic * depth_multiplier + m`` reads input
channel ``ic``; padding taps are skipped. Requantization as in :mod:`nnsim.kernels.conv`.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._jit import njit
from nnsim.kernels.conv import _is_uniform, _requantize_rows

__all__ = ["depthwise_conv_2d"]


def depthwise_conv_2d(
    x,
    w,
    bias,
    *,
    depth_multiplier,
    stride_h,
    stride_w,
    pad_top,
    pad_bottom,
    pad_left,
    pad_right,
    dilation_h=1,
    dilation_w=1,
    fuse=0,
    in_scale=None,
    in_zp=0,
    w_scales=None,
    w_zp=0,
    out_scale=None,
    out_zp=0,
    out_dtype=None,
):
    """Depthwise 2-D convolution, NHWC.

    Parameters
    ----------
    x : ndarray [N, H, W, Cin]
        float32 / float16, or uint8 / int8.
    w : ndarray [1, KH, KW, Cout]
        ``Cout = Cin * depth_multiplier``; uint8 (per-tensor) or int8 (per-tensor or per-channel
        along the last axis) for quantized ``x``.
    bias : ndarray [Cout] or None
        float32, or int32 for quantized input.
    depth_multiplier : int
        Output channels per input channel.
    stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right, dilation_h, dilation_w, fuse
        As :func:`nnsim.kernels.conv.conv_2d`.
    in_scale, in_zp, w_scales, w_zp, out_scale, out_zp, out_dtype
        Quantization, as :func:`nnsim.kernels.conv.conv_2d` (same multiplier rules).

    Returns
    -------
    ndarray [N, OH, OW, Cout]
    """
    x, w = np.asarray(x), np.asarray(w)
    cm.check_rank("input", x, 4)
    cm.check_rank("filter", w, 4)
    cin, m = x.shape[3], int(depth_multiplier)
    if w.shape[0] != 1 or m < 1 or w.shape[3] != cin * m:
        raise ValueError(
            f"filter shape {w.shape} does not match input depth {cin} x multiplier {m}"
        )
    cm.check_conv_geometry(stride_h, stride_w, dilation_h, dilation_w,
                           (pad_top, pad_bottom, pad_left, pad_right))
    _, kh, kw, cout = w.shape
    oh = cm.conv_out_size(x.shape[1], kh, stride_h, dilation_h, pad_top, pad_bottom)
    ow = cm.conv_out_size(x.shape[2], kw, stride_w, dilation_w, pad_left, pad_right)
    geometry = (m, stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w)

    if cm.is_quantized(x.dtype):
        cm.check_dtype("filter", w, (np.uint8, np.int8))
        scales = cm.filter_scales(w_scales, cout)
        float_product = x.dtype == np.uint8 and w.dtype == np.uint8 and scales.size == 1
        mults, shifts = cm.conv_multipliers(in_scale, scales, out_scale, cout, float_product)
        odt = cm.output_dtype(out_dtype, x.dtype)
        lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, odt)
        wq = w[0].astype(np.int32) - np.int32(w_zp)
        out = np.empty((x.shape[0], oh, ow, cout), dtype=odt)
        _depthwise_quant_core(
            np.ascontiguousarray(x), int(in_zp), wq, cm.bias_int32(bias, cout), mults, shifts,
            int(out_zp), int(lo), int(hi), *geometry, out,
        )
        return out

    cm.check_dtype("input", x, cm.FLOAT_DTYPES)
    x32, dtype = cm.to_float32(x)
    lo, hi = cm.float_clamp(fuse)
    out = np.empty((x.shape[0], oh, ow, cout), dtype=np.float32)
    _depthwise_float_core(x32, np.ascontiguousarray(w[0], dtype=np.float32),
                          cm.bias_float32(bias, cout), lo, hi, *geometry, out)
    return out.astype(dtype, copy=False)


@njit
def _depthwise_quant_core(
    x, in_zp, w, bias, mults, shifts, out_zp, lo, hi,
    m, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w, out,
):
    batches, in_h, in_w, cin = x.shape
    kh, kw, cout = w.shape
    _, out_h, out_w, _ = out.shape
    out2d = out.reshape(batches * out_h * out_w, cout)
    acc = np.empty((out_w, cout), dtype=np.int32)  # one output row
    offset = np.int32(in_zp)  # int32 operands keep the loops in 32-bit lanes
    uniform = _is_uniform(mults, shifts)
    # 3x3 windows fully inside the image: sum x * w + (bias - in_zp * sum w), one pass
    fast = kh == 3 and kw == 3 and m == 1 and dil_h == 1 and dil_w == 1
    folded_bias = _folded_bias(w, bias, offset) if fast else bias
    ox_lo = min(out_w, (pad_left + stride_w - 1) // stride_w)
    ox_hi = max(ox_lo, min(out_w, (in_w - kw + pad_left) // stride_w + 1))
    for b in range(batches):
        for oy in range(out_h):
            y0 = oy * stride_h - pad_top
            inner = fast and y0 >= 0 and y0 + 3 <= in_h
            if inner:
                _row3x3(x, b, y0, ox_lo, ox_hi, stride_w, pad_left, w, folded_bias, acc)
            for ox in range(out_w):
                if not inner or ox < ox_lo or ox >= ox_hi:
                    _window_any(x, b, y0, ox * stride_w - pad_left, offset, w, bias, m,
                                dil_h, dil_w, acc[ox])
            _requantize_rows(acc, out_w, mults, shifts, uniform, out_zp, lo, hi, out2d,
                             (b * out_h + oy) * out_w)
    return out


@njit
def _folded_bias(w, bias, offset):
    folded = np.empty_like(bias)
    for c in range(w.shape[2]):
        total = np.int32(0)
        for ky in range(w.shape[0]):
            for kx in range(w.shape[1]):
                total += w[ky, kx, c]
        folded[c] = bias[c] - offset * total
    return folded


@njit
def _row3x3(x, b, y0, ox_lo, ox_hi, stride_w, pad_left, w, folded_bias, acc):
    r0, r1, r2 = x[b, y0], x[b, y0 + 1], x[b, y0 + 2]
    w0, w1, w2 = w[0], w[1], w[2]
    for ox in range(ox_lo, ox_hi):
        x0 = ox * stride_w - pad_left
        a = acc[ox]
        for c in range(a.size):
            a[c] = (folded_bias[c]
                    + np.int32(r0[x0, c]) * w0[0, c] + np.int32(r0[x0 + 1, c]) * w0[1, c]
                    + np.int32(r0[x0 + 2, c]) * w0[2, c] + np.int32(r1[x0, c]) * w1[0, c]
                    + np.int32(r1[x0 + 1, c]) * w1[1, c] + np.int32(r1[x0 + 2, c]) * w1[2, c]
                    + np.int32(r2[x0, c]) * w2[0, c] + np.int32(r2[x0 + 1, c]) * w2[1, c]
                    + np.int32(r2[x0 + 2, c]) * w2[2, c])


@njit
def _window_any(x, b, y0, x0, offset, w, bias, m, dil_h, dil_w, acc):
    _, in_h, in_w, cin = x.shape
    kh, kw, cout = w.shape
    for c in range(cout):
        acc[c] = bias[c]
    for ky in range(kh):
        iy = y0 + ky * dil_h
        if iy < 0 or iy >= in_h:
            continue
        for kx in range(kw):
            ix = x0 + kx * dil_w
            if ix < 0 or ix >= in_w:
                continue
            if m == 1:
                for c in range(cout):
                    acc[c] += (np.int32(x[b, iy, ix, c]) - offset) * w[ky, kx, c]
            else:
                for ic in range(cin):
                    xv = np.int32(x[b, iy, ix, ic]) - offset
                    for j in range(m):
                        acc[ic * m + j] += xv * w[ky, kx, ic * m + j]


@njit
def _depthwise_float_core(
    x, w, bias, lo, hi, m, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w, out
):
    batches, in_h, in_w, cin = x.shape
    kh, kw, cout = w.shape
    _, out_h, out_w, _ = out.shape
    acc = np.empty((out_w, cout), dtype=np.float32)  # one output row
    fast = kh == 3 and kw == 3 and m == 1 and dil_h == 1 and dil_w == 1
    ox_lo = min(out_w, (pad_left + stride_w - 1) // stride_w)
    ox_hi = max(ox_lo, min(out_w, (in_w - kw + pad_left) // stride_w + 1))
    for b in range(batches):
        for oy in range(out_h):
            y0 = oy * stride_h - pad_top
            inner = fast and y0 >= 0 and y0 + 3 <= in_h
            if inner:
                _row3x3_float(x, b, y0, ox_lo, ox_hi, stride_w, pad_left, w, acc)
            for ox in range(out_w):
                if not inner or ox < ox_lo or ox >= ox_hi:
                    _window_any_float(x, b, y0, ox * stride_w - pad_left, w, m, dil_h, dil_w,
                                      acc[ox])
            for ox in range(out_w):
                for c in range(cout):
                    # TFLite: ActivationFunctionWithMinMax(total + bias)
                    out[b, oy, ox, c] = min(max(acc[ox, c] + bias[c], lo), hi)
    return out


@njit
def _row3x3_float(x, b, y0, ox_lo, ox_hi, stride_w, pad_left, w, acc):
    # taps summed one at a time in (ky, kx) order from 0.0f, as the reference kernel does
    r0, r1, r2 = x[b, y0], x[b, y0 + 1], x[b, y0 + 2]
    w0, w1, w2 = w[0], w[1], w[2]
    zero = np.float32(0.0)
    for ox in range(ox_lo, ox_hi):
        x0 = ox * stride_w - pad_left
        a = acc[ox]
        for c in range(a.size):
            a[c] = (zero + r0[x0, c] * w0[0, c] + r0[x0 + 1, c] * w0[1, c]
                    + r0[x0 + 2, c] * w0[2, c] + r1[x0, c] * w1[0, c]
                    + r1[x0 + 1, c] * w1[1, c] + r1[x0 + 2, c] * w1[2, c]
                    + r2[x0, c] * w2[0, c] + r2[x0 + 1, c] * w2[1, c]
                    + r2[x0 + 2, c] * w2[2, c])


@njit
def _window_any_float(x, b, y0, x0, w, m, dil_h, dil_w, acc):
    _, in_h, in_w, cin = x.shape
    kh, kw, cout = w.shape
    acc[:] = 0.0
    for ky in range(kh):
        iy = y0 + ky * dil_h
        if iy < 0 or iy >= in_h:
            continue
        for kx in range(kw):
            ix = x0 + kx * dil_w
            if ix < 0 or ix >= in_w:
                continue
            if m == 1:
                for c in range(cout):
                    acc[c] += x[b, iy, ix, c] * w[ky, kx, c]
            else:
                for ic in range(cin):
                    xv = x[b, iy, ix, ic]
                    for j in range(m):
                        acc[ic * m + j] += xv * w[ky, kx, ic * m + j]
