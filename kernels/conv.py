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
from nnsim.kernels._filters import cached_pack_filter
from nnsim.kernels._filters import pack_filter as _pack_filter
from nnsim.kernels._jit import njit
from nnsim.kernels.fully_connected import _fc_float_core, _fc_quant_core

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
        The result of :func:`pack_filter` for ``w``; by default filters are packed once per
        filter array and cached (see :mod:`nnsim.kernels._filters`).

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
    # A 1x1 unpadded convolution over a handful of pixels is a fully connected layer: the
    # dot-product core needs no packed filter and wastes no rows of the 4-pixel GEMM.
    as_fc = kh == 1 and kw == 1 and not any(pads) and packed_filter is None \
        and x.shape[0] * oh * ow < 2 * _PIXELS
    rows = None
    if as_fc:
        picked = x[:, ::stride_h, ::stride_w, :][:, :oh, :ow]
        rows = np.ascontiguousarray(picked).reshape(-1, x.shape[3])

    if cm.is_quantized(x.dtype):
        cm.check_dtype("filter", w, (np.uint8, np.int8))
        scales = cm.filter_scales(w_scales, cout)
        float_product = x.dtype == np.uint8 and w.dtype == np.uint8 and scales.size == 1
        mults, shifts = cm.conv_multipliers(in_scale, scales, out_scale, cout, float_product)
        odt = cm.output_dtype(out_dtype, x.dtype)
        lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, odt)
        out = np.empty((x.shape[0], oh, ow, cout), dtype=odt)
        if as_fc:
            _fc_quant_core(rows, int(in_zp), np.ascontiguousarray(w.reshape(cout, -1)), int(w_zp),
                           cm.bias_int32(bias, cout), mults, shifts, int(out_zp), int(lo), int(hi),
                           out.reshape(-1, cout))
            return out
        wt = cached_pack_filter(w, w_zp) if packed_filter is None else packed_filter
        _conv_quant_core(
            np.ascontiguousarray(x), int(in_zp), wt, kh, kw, cm.bias_int32(bias, cout), mults,
            shifts, int(out_zp), int(lo), int(hi), *geometry, out,
        )
        return out

    cm.check_dtype("input", x, cm.FLOAT_DTYPES)
    x32, dtype = cm.to_float32(x)
    lo, hi = cm.float_clamp(fuse)
    out = np.empty((x.shape[0], oh, ow, cout), dtype=np.float32)
    if as_fc:
        _fc_float_core(rows.astype(np.float32, copy=False),
                       np.ascontiguousarray(w.reshape(cout, -1), dtype=np.float32),
                       cm.bias_float32(bias, cout), lo, hi, out.reshape(-1, cout))
        return out.astype(dtype, copy=False)
    wt = cached_pack_filter(w) if packed_filter is None else packed_filter
    _conv_float_core(x32, wt, kh, kw, cm.bias_float32(bias, cout), lo, hi, *geometry, out)
    return out.astype(dtype, copy=False)


def pack_filter(w, w_zp=0):
    """Reorder an NNAPI filter ``[Cout, KH, KW, Cin]`` to the ``[KH * KW * Cin, Cout]`` matrix
    the cores use: int32 with the zero point subtracted, or float32. Pass the result as
    ``packed_filter`` to skip packing (and the packed-filter cache) on later calls."""
    return _pack_filter(w, w_zp)


# The cores treat a convolution as a GEMM over blocks of _PIXELS output pixels. Output pixels
# are rows of ``out`` viewed as [N * OH * OW, Cout]. A general convolution gathers the patches
# of a block into ``cols`` ((x - in_zp) as int32, zero for padding taps: a skipped tap); a 1x1,
# stride-1, unpadded convolution reads the input rows directly. Integer sums are exact and wrap
# like TFLite's int32 accumulator whatever the order; the float core keeps TFLite's order (taps
# in (ky, kx, ci) order, bias last) so that it is bit-exact with the reference kernel.

_PIXELS = 4


@njit
def _im2col(x, b, p0, n, out_w, kh, kw, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w,
            offset, cols):
    """Fill ``cols[j]`` with the patch of output pixel ``p0 + j`` of image b; zero rows >= n."""
    _, in_h, in_w, cin = x.shape
    for j in range(n):
        oy, ox = divmod(p0 + j, out_w)
        k = 0
        for ky in range(kh):
            iy = oy * stride_h - pad_top + ky * dil_h
            for kx in range(kw):
                ix = ox * stride_w - pad_left + kx * dil_w
                if 0 <= iy < in_h and 0 <= ix < in_w:
                    for ci in range(cin):
                        cols[j, k + ci] = x[b, iy, ix, ci] - offset
                else:
                    for ci in range(cin):
                        cols[j, k + ci] = 0
                k += cin
    for j in range(n, _PIXELS):
        cols[j, :] = 0


@njit
def _gemm_int(cols, wt, bias, acc):
    """``acc[j] = bias + cols[j] @ wt`` for the 4 rows, unrolled 4 x 4 (int32, wrapping)."""
    depth, cout = wt.shape
    a0, a1, a2, a3 = acc[0], acc[1], acc[2], acc[3]
    for c in range(cout):
        a0[c] = bias[c]
        a1[c] = bias[c]
        a2[c] = bias[c]
        a3[c] = bias[c]
    k4 = depth - depth % 4
    for k in range(0, k4, 4):
        x00, x01, x02, x03 = cols[0, k], cols[0, k + 1], cols[0, k + 2], cols[0, k + 3]
        x10, x11, x12, x13 = cols[1, k], cols[1, k + 1], cols[1, k + 2], cols[1, k + 3]
        x20, x21, x22, x23 = cols[2, k], cols[2, k + 1], cols[2, k + 2], cols[2, k + 3]
        x30, x31, x32, x33 = cols[3, k], cols[3, k + 1], cols[3, k + 2], cols[3, k + 3]
        for c in range(cout):
            w0, w1, w2, w3 = wt[k, c], wt[k + 1, c], wt[k + 2, c], wt[k + 3, c]
            a0[c] += x00 * w0 + x01 * w1 + x02 * w2 + x03 * w3
            a1[c] += x10 * w0 + x11 * w1 + x12 * w2 + x13 * w3
            a2[c] += x20 * w0 + x21 * w1 + x22 * w2 + x23 * w3
            a3[c] += x30 * w0 + x31 * w1 + x32 * w2 + x33 * w3
    for k in range(k4, depth):
        x0, x1, x2, x3 = cols[0, k], cols[1, k], cols[2, k], cols[3, k]
        for c in range(cout):
            w0 = wt[k, c]
            a0[c] += x0 * w0
            a1[c] += x1 * w0
            a2[c] += x2 * w0
            a3[c] += x3 * w0


@njit
def _rows_to_cols(x2d, r0, n, offset, cols):
    """1x1 stride-1 unpadded case: the patch of a pixel is its input row."""
    for j in range(n):
        for k in range(x2d.shape[1]):
            cols[j, k] = np.int32(x2d[r0 + j, k]) - offset
    for j in range(n, _PIXELS):
        cols[j, :] = 0


@njit
def _gemm_float(cols, wt, acc):
    """``acc[j] = cols[j] @ wt`` summing taps one at a time from 0.0 in k order (the 4-way
    unrolled expression associates left to right, so the order is TFLite's)."""
    depth, cout = wt.shape
    acc[:] = 0.0
    a0, a1, a2, a3 = acc[0], acc[1], acc[2], acc[3]
    k4 = depth - depth % 4
    for k in range(0, k4, 4):
        x00, x01, x02, x03 = cols[0, k], cols[0, k + 1], cols[0, k + 2], cols[0, k + 3]
        x10, x11, x12, x13 = cols[1, k], cols[1, k + 1], cols[1, k + 2], cols[1, k + 3]
        x20, x21, x22, x23 = cols[2, k], cols[2, k + 1], cols[2, k + 2], cols[2, k + 3]
        x30, x31, x32, x33 = cols[3, k], cols[3, k + 1], cols[3, k + 2], cols[3, k + 3]
        for c in range(cout):
            w0, w1, w2, w3 = wt[k, c], wt[k + 1, c], wt[k + 2, c], wt[k + 3, c]
            a0[c] = a0[c] + x00 * w0 + x01 * w1 + x02 * w2 + x03 * w3
            a1[c] = a1[c] + x10 * w0 + x11 * w1 + x12 * w2 + x13 * w3
            a2[c] = a2[c] + x20 * w0 + x21 * w1 + x22 * w2 + x23 * w3
            a3[c] = a3[c] + x30 * w0 + x31 * w1 + x32 * w2 + x33 * w3
    for k in range(k4, depth):
        x0, x1, x2, x3 = cols[0, k], cols[1, k], cols[2, k], cols[3, k]
        for c in range(cout):
            w0 = wt[k, c]
            a0[c] += x0 * w0
            a1[c] += x1 * w0
            a2[c] += x2 * w0
            a3[c] += x3 * w0


@njit
def _is_uniform(mults, shifts):
    """True when every channel has the same multiplier (per-tensor quantization)."""
    for c in range(1, mults.size):
        if mults[c] != mults[0] or shifts[c] != shifts[0]:
            return False
    return True


@njit
def _requantize_rows(acc, n, mults, shifts, uniform, out_zp, lo, hi, out, r0):
    """``out[r0 + j] = clamp(MBQM(acc[j], M[c], S[c]) + out_zp)`` for rows j < n.

    Branch-free form of :func:`~nnsim.kernels.fixed_point.multiply_by_quantized_multiplier`
    (so that it vectorises), valid for multipliers in [0, 2**31) and shifts in [-31, 31], which
    is what :func:`~nnsim.kernels.fixed_point.quantize_multiplier` produces for positive scales;
    ``uniform`` (see :func:`_is_uniform`) reads the parameters of channel 0 once.
    """
    cout = acc.shape[1]
    if uniform:
        m, left, right = np.int64(mults[0]), max(shifts[0], 0), max(-shifts[0], 0)
        for j in range(n):
            for c in range(cout):
                v = _mbqm_branch_free(acc[j, c], m, left, right) + out_zp
                out[r0 + j, c] = min(max(v, lo), hi)
    else:
        for j in range(n):
            for c in range(cout):
                v = _mbqm_branch_free(acc[j, c], np.int64(mults[c]), max(shifts[c], 0),
                                      max(-shifts[c], 0)) + out_zp
                out[r0 + j, c] = min(max(v, lo), hi)


@njit
def _mbqm_branch_free(x, m, left, right):
    x = (np.int64(x) << (32 + left)) >> 32             # int32 wrap of x << left
    ab = x * m
    v = ab + ((1 << 30) + ((ab >> 63) & (1 - (1 << 31))))  # SRDHM nudge: +2**30 or 1 - 2**30
    q = (v + ((v >> 63) & 0x7FFFFFFF)) >> 31            # C++ division by 2**31 (toward 0)
    mask = (np.int64(1) << right) - 1                    # RoundingDivideByPOT(q, right)
    return (q >> right) - (((mask >> 1) - (q >> 63) - (q & mask)) >> 63)


@njit
def _conv_quant_core(
    x, in_zp, wt, kh, kw, bias, mults, shifts, out_zp, lo, hi,
    stride_h, stride_w, pad_top, pad_left, dil_h, dil_w, out,
):
    batches, out_h, out_w, cout = out.shape
    pixels = out_h * out_w
    out2d = out.reshape(batches * pixels, cout)
    acc = np.empty((_PIXELS, cout), dtype=np.int32)
    cols = np.empty((_PIXELS, wt.shape[0]), dtype=np.int32)
    direct = kh == 1 and kw == 1 and stride_h == 1 and stride_w == 1 and pad_top == 0 \
        and pad_left == 0 and out_h == x.shape[1] and out_w == x.shape[2]
    x2d = x.reshape(batches * x.shape[1] * x.shape[2], x.shape[3])
    offset = np.int32(in_zp)  # int32 operands keep the GEMM in 32-bit lanes
    uniform = _is_uniform(mults, shifts)
    for b in range(batches):
        for p0 in range(0, pixels, _PIXELS):
            n = min(_PIXELS, pixels - p0)
            if direct:
                _rows_to_cols(x2d, b * pixels + p0, n, offset, cols)
            else:
                _im2col(x, b, p0, n, out_w, kh, kw, stride_h, stride_w, pad_top, pad_left,
                        dil_h, dil_w, offset, cols)
            _gemm_int(cols, wt, bias, acc)
            _requantize_rows(acc, n, mults, shifts, uniform, out_zp, lo, hi, out2d,
                             b * pixels + p0)
    return out


@njit
def _conv_float_core(x, wt, kh, kw, bias, lo, hi, stride_h, stride_w, pad_top, pad_left,
                     dil_h, dil_w, out):
    batches, out_h, out_w, cout = out.shape
    pixels = out_h * out_w
    out2d = out.reshape(batches * pixels, cout)
    cols = np.empty((_PIXELS, wt.shape[0]), dtype=np.float32)
    acc = np.empty((_PIXELS, cout), dtype=np.float32)
    for b in range(batches):
        for p0 in range(0, pixels, _PIXELS):
            n = min(_PIXELS, pixels - p0)
            _im2col(x, b, p0, n, out_w, kh, kw, stride_h, stride_w, pad_top, pad_left,
                    dil_h, dil_w, np.float32(0.0), cols)
            _gemm_float(cols, wt, acc)
            for j in range(n):
                for c in range(cout):
                    # TFLite: ActivationFunctionWithMinMax(total + bias) = min(max(v, lo), hi)
                    out2d[b * pixels + p0 + j, c] = min(max(acc[j, c] + bias[c], lo), hi)
    return out
