"""CONV_2D (NHWC), float and 8-bit quantized; numba fast path.

Matches TFLite ``reference_ops::Conv`` (uint8), ``reference_integer_ops::ConvPerChannel`` (int8)
and the float reference conv bit-exactly (float: same accumulation order, no FMA).

Integer rule, per output ``(b, y, x, c)``::

    acc = bias[c] + sum over in-image taps of (w - w_zp) * (x - in_zp)     # int32, wrapping
    out = clamp(MultiplyByQuantizedMultiplier(acc, M[c], S[c]) + out_zp, act_min, act_max)

Taps that fall in the padding are skipped (zero in real space). The uint8 filter form
``(w + w_off)(x + x_off)`` and the int8 form ``w * (x + x_off)`` (w_zp = 0) are both this rule.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import multiply_by_quantized_multiplier

__all__ = ["conv_2d", "pack_filter"]


def conv_2d(
    x,
    w,
    bias,
    *,
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
    packed_filter=None,
):
    """2-D convolution, NHWC.

    Parameters
    ----------
    x : ndarray [N, H, W, Cin]
        float32 / float16, or uint8 / int8 (quantized with ``in_scale``, ``in_zp``).
    w : ndarray [Cout, KH, KW, Cin]
        Same float type as ``x``; for quantized ``x``: uint8 (per-tensor, any ``w_zp``) or int8
        (per-tensor or per-channel symmetric).
    bias : ndarray [Cout] or None
        float32 for float ``x``; int32 (scale ``in_scale * w_scale[c]``) for quantized. None = 0.
    stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right, dilation_h, dilation_w : int
        Explicit NNAPI geometry.
    fuse : int
        NNAPI fuse code (0 none, 1 relu, 2 relu1, 3 relu6), applied in the output domain.
    in_scale, in_zp, w_scales, w_zp, out_scale, out_zp
        Quantization. ``w_scales`` has 1 (per-tensor) or Cout (per-channel) entries.
    out_dtype : np.uint8 or np.int8, optional
        Quantized output type; defaults to ``x.dtype``.
    packed_filter : ndarray, optional
        The result of :func:`pack_filter` for ``w`` (lets a caller pack constant weights once).

    Returns
    -------
    ndarray [N, OH, OW, Cout]
        float32 (float16 for float16 input) or ``out_dtype``.

    Notes
    -----
    Multipliers: uint8 input with a per-tensor uint8 filter uses TFLite's per-tensor rule
    ``double(float32(in_scale * w_scale)) / out_scale``; every other quantized combination uses
    the per-channel rule ``double(in_scale) * double(w_scale[c]) / double(out_scale)``.
    """
    x, w = np.asarray(x), np.asarray(w)
    cm.check_rank("input", x, 4)
    cm.check_rank("filter", w, 4)
    if w.shape[3] != x.shape[3]:
        raise ValueError(f"filter depth {w.shape[3]} != input depth {x.shape[3]}")
    pads = (pad_top, pad_bottom, pad_left, pad_right)
    cm.check_conv_geometry(stride_h, stride_w, dilation_h, dilation_w, pads)
    cout, kh, kw, _ = w.shape
    oh = cm.conv_out_size(x.shape[1], kh, stride_h, dilation_h, pad_top, pad_bottom)
    ow = cm.conv_out_size(x.shape[2], kw, stride_w, dilation_w, pad_left, pad_right)
    geometry = (stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w)

    if cm.is_quantized(x.dtype):
        cm.check_dtype("filter", w, (np.uint8, np.int8))
        scales = cm.filter_scales(w_scales, cout)
        float_product = x.dtype == np.uint8 and w.dtype == np.uint8 and scales.size == 1
        mults, shifts = cm.conv_multipliers(in_scale, scales, out_scale, cout, float_product)
        odt = cm.output_dtype(out_dtype, x.dtype)
        lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, odt)
        wt = pack_filter(w, w_zp) if packed_filter is None else packed_filter
        out = np.empty((x.shape[0], oh, ow, cout), dtype=odt)
        _conv_quant_core(
            np.ascontiguousarray(x), int(in_zp), wt, cm.bias_int32(bias, cout), mults, shifts,
            int(out_zp), int(lo), int(hi), *geometry, out,
        )
        return out

    cm.check_dtype("input", x, cm.FLOAT_DTYPES)
    x32, dtype = cm.to_float32(x)
    wt = pack_filter(w.astype(np.float32), 0) if packed_filter is None else packed_filter
    lo, hi = cm.float_clamp(fuse)
    out = np.empty((x.shape[0], oh, ow, cout), dtype=np.float32)
    _conv_float_core(x32, wt, cm.bias_float32(bias, cout), lo, hi, *geometry, out)
    return out.astype(dtype, copy=False)


def pack_filter(w, w_zp=0):
    """Reorder an NNAPI filter ``[Cout, KH, KW, Cin]`` to ``[KH, KW, Cin, Cout]``.

    Integer filters become int32 with the zero point subtracted; float filters stay float32.
    """
    w = np.asarray(w)
    if w.dtype.kind == "f":
        return np.ascontiguousarray(np.transpose(w.astype(np.float32, copy=False), (1, 2, 3, 0)))
    packed = np.empty((w.shape[1], w.shape[2], w.shape[3], w.shape[0]), dtype=np.int32)
    _pack_int_filter_core(np.ascontiguousarray(w), int(w_zp), packed)
    return packed


@njit
def _pack_int_filter_core(w, w_zp, packed):
    cout, kh, kw, cin = w.shape
    for co in range(cout):
        for ky in range(kh):
            for kx in range(kw):
                for ci in range(cin):
                    packed[ky, kx, ci, co] = np.int32(w[co, ky, kx, ci]) - w_zp


@njit
def _conv_quant_core(
    x, in_zp, wt, bias, mults, shifts, out_zp, lo, hi,
    stride_h, stride_w, pad_top, pad_left, dil_h, dil_w, out,
):
    batches, in_h, in_w, cin = x.shape
    kh, kw, _, cout = wt.shape
    _, out_h, out_w, _ = out.shape
    acc = np.empty(cout, dtype=np.int32)
    for b in range(batches):
        for oy in range(out_h):
            for ox in range(out_w):
                for c in range(cout):
                    acc[c] = bias[c]
                for ky in range(kh):
                    iy = oy * stride_h - pad_top + ky * dil_h
                    if iy < 0 or iy >= in_h:
                        continue
                    for kx in range(kw):
                        ix = ox * stride_w - pad_left + kx * dil_w
                        if ix < 0 or ix >= in_w:
                            continue
                        for ci in range(cin):
                            xv = np.int32(x[b, iy, ix, ci]) - in_zp
                            for c in range(cout):
                                acc[c] += xv * wt[ky, kx, ci, c]
                for c in range(cout):
                    v = multiply_by_quantized_multiplier(acc[c], mults[c], shifts[c]) + out_zp
                    out[b, oy, ox, c] = min(max(v, lo), hi)
    return out


@njit
def _conv_float_core(x, wt, bias, lo, hi, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w, out):
    batches, in_h, in_w, cin = x.shape
    kh, kw, _, cout = wt.shape
    _, out_h, out_w, _ = out.shape
    acc = np.empty(cout, dtype=np.float32)
    for b in range(batches):
        for oy in range(out_h):
            for ox in range(out_w):
                acc[:] = 0.0
                for ky in range(kh):
                    iy = oy * stride_h - pad_top + ky * dil_h
                    if iy < 0 or iy >= in_h:
                        continue
                    for kx in range(kw):
                        ix = ox * stride_w - pad_left + kx * dil_w
                        if ix < 0 or ix >= in_w:
                            continue
                        for ci in range(cin):
                            xv = x[b, iy, ix, ci]
                            for c in range(cout):
                                acc[c] += xv * wt[ky, kx, ci, c]
                for c in range(cout):
                    # TFLite: ActivationFunctionWithMinMax(total + bias) = min(max(v, lo), hi)
                    v = acc[c] + bias[c]
                    out[b, oy, ox, c] = min(max(v, lo), hi)
    return out
