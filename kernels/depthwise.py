"""DEPTHWISE_CONV_2D (NHWC), float and 8-bit quantized; numba fast path.

Matches TFLite ``reference_ops::DepthwiseConv`` (uint8, rounding ``kAwayFromZero`` = double
rounding MultiplyByQuantizedMultiplier), ``reference_integer_ops::DepthwiseConvPerChannel``
(int8) and the float reference. Output channel ``oc = ic * depth_multiplier + m`` reads input
channel ``ic``; padding taps are skipped. Requantization as in :mod:`nnsim.kernels.conv`.

The cores work on 16 channels at a time (:mod:`nnsim.kernels._jit` SIMD ops) over a copy of
the input with the padding materialised (and channels repeated ``depth_multiplier`` times):
integer padding holds ``x_zp`` and the accumulator is ``sum x * (w - w_zp) + bias - x_zp *
sum(w - w_zp)`` (int16 products: ``vpdpwssd``), so a padding tap adds exactly nothing, as a
skipped one; float padding holds
0.0 and taps are summed one at a time from 0.0 in (ky, kx) order, then the bias is added
(TFLite's order; a 0.0 tap adds nothing to a sum that starts at +0.0).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._jit import (njit, vf_add, vf_clamp, vf_load, vf_muladd, vf_store, vf_storen,
                                vf_zero, vh_load, vh_store, vh_zero, vi_add, vi_dpwssd, vi_load,
                                vi_load8, vi_requant, vi_store8, vi_store8n, vi_zero)
from nnsim.kernels.gemm import _fill_padded, requant_params

__all__ = ["depthwise_conv_2d", "prepare_depthwise_conv_2d"]


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
    x = np.asarray(x)
    plan, out_shape = prepare_depthwise_conv_2d(
        x.shape, x.dtype, w, bias, depth_multiplier=depth_multiplier, stride_h=stride_h,
        stride_w=stride_w, pad_top=pad_top, pad_bottom=pad_bottom, pad_left=pad_left,
        pad_right=pad_right, dilation_h=dilation_h, dilation_w=dilation_w, fuse=fuse,
        in_scale=in_scale, in_zp=in_zp, w_scales=w_scales, w_zp=w_zp, out_scale=out_scale,
        out_zp=out_zp, out_dtype=out_dtype)
    if cm.is_quantized(x.dtype):
        return plan.run(np.ascontiguousarray(x), np.empty(out_shape, plan.out_dtype))
    x32, dtype = cm.to_float32(x)
    return plan.run(x32, np.empty(out_shape, np.float32)).astype(dtype, copy=False)


def prepare_depthwise_conv_2d(x_shape, x_dtype, w, bias, *, depth_multiplier, stride_h,
                              stride_w, pad_top, pad_bottom, pad_left, pad_right, dilation_h=1,
                              dilation_w=1, fuse=0, in_scale=None, in_zp=0, w_scales=None,
                              w_zp=0, out_scale=None, out_zp=0, out_dtype=None):
    """Checks and precomputation of :func:`depthwise_conv_2d` (TFLite's Prepare): returns
    ``(plan, out_shape)``; ``plan.run(x, out)`` as :func:`nnsim.kernels.conv.prepare_conv_2d`."""
    w, x_dtype = np.asarray(w), np.dtype(x_dtype)
    if len(x_shape) != 4:
        raise ValueError(f"input: expected rank 4, got shape {tuple(x_shape)}")
    cm.check_rank("filter", w, 4)
    cin, m = x_shape[3], int(depth_multiplier)
    if w.shape[0] != 1 or m < 1 or w.shape[3] != cin * m:
        raise ValueError(
            f"filter shape {w.shape} does not match input depth {cin} x multiplier {m}"
        )
    pads = (pad_top, pad_bottom, pad_left, pad_right)
    cm.check_conv_geometry(stride_h, stride_w, dilation_h, dilation_w, pads)
    _, kh, kw, cout = w.shape
    oh = cm.conv_out_size(x_shape[1], kh, stride_h, dilation_h, pad_top, pad_bottom)
    ow = cm.conv_out_size(x_shape[2], kw, stride_w, dilation_w, pad_left, pad_right)
    out_shape = (x_shape[0], oh, ow, cout)
    geo = np.array([kh, kw, stride_h, stride_w, dilation_h, dilation_w], np.int64)

    if cm.is_quantized(x_dtype):
        cm.check_dtype("filter", w, (np.uint8, np.int8))
        scales = cm.filter_scales(w_scales, cout)
        float_product = x_dtype == np.uint8 and w.dtype == np.uint8 and scales.size == 1
        mults, shifts = cm.conv_multipliers(in_scale, scales, out_scale, cout, float_product)
        odt = cm.output_dtype(out_dtype, x_dtype)
        lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, odt)
        wq = w[0].astype(np.int64) - int(w_zp)
        bias = cm.bias_int32(bias, cout).astype(np.int64) - int(in_zp) * wq.sum(axis=(0, 1))
        plan = _Plan(x_shape, out_shape, x_dtype, pads, m, geo, int(in_zp))
        # int16 weights in the low half of each int32 lane (vi_dpwssd: acc + x * w)
        plan.weights = _pad_channels(wq.astype(np.int32) & 0xFFFF, plan.cpad)
        plan.qp = requant_params(bias, mults, shifts)
        plan.prm = np.array([int(out_zp), int(lo), int(hi)], np.int64)
        plan.out_dtype = odt
        return plan, out_shape

    if x_dtype not in cm.FLOAT_DTYPES:
        names = ", ".join(np.dtype(a).name for a in cm.FLOAT_DTYPES)
        raise TypeError(f"input: dtype {x_dtype.name} not supported (expected {names})")
    plan = _Plan(x_shape, out_shape, np.dtype(np.float32), pads, m, geo, 0)
    plan.weights = _pad_channels(w[0].astype(np.float32), plan.cpad)
    plan.bias = _pad_channels(cm.bias_float32(bias, cout), plan.cpad)
    plan.clamp = np.array(cm.float_clamp(fuse), np.float32)
    plan.out_dtype = np.dtype(np.float32)
    return plan, out_shape


def _pad_channels(a, cpad):
    out = np.zeros(a.shape[:-1] + (cpad,), a.dtype)
    out[..., :a.shape[-1]] = a
    return out.reshape(-1)


class _Plan:
    """Constants of one depthwise layer and the padded-input buffer it reuses."""

    def __init__(self, x_shape, out_shape, dtype, pads, m, geo, fill):
        n, h, w, cin = (int(d) for d in x_shape)
        pt, pb, pl, pr = (int(p) for p in pads)
        self.m, self.pt, self.pl = m, pt, pl
        self.cout = cin * m
        self.cpad = -(-self.cout // 16) * 16
        self.geo = geo
        self.out_shape = tuple(out_shape)
        self.copy = bool(pt or pb or pl or pr or m > 1 or self.cout % 16)
        self.padded = None
        if self.copy:   # + 16 elements: a vector load of the last channels stays inside
            size = n * (h + pt + pb) * (w + pl + pr) * self.cout + 16
            self.padded = np.full(size, fill, dtype)
            self.view = self.padded[:-16].reshape(n, h + pt + pb, w + pl + pr, self.cout)
            self.inner = self.view[:, pt:pt + h, pl:pl + w]
        self.padded_hw = (h + pt + pb, w + pl + pr)

    def run(self, x, out):
        """``out`` = the depthwise convolution of ``x`` (C-contiguous, the plan's dtype)."""
        self.bind(x, out)()
        return out

    def bind(self, x, out):
        """A function of no arguments computing ``out`` from the current contents of ``x``
        (both arrays fixed: an interpreter's tensor buffers)."""
        hp, wp = self.padded_hw
        if out.dtype.kind == "f":
            core = _dw_float_core
            args = (hp, wp, self.geo, self.weights, self.bias, self.clamp, out.reshape(-1),
                    self.out_shape, self.cpad)
        else:
            core = _dw_quant_core
            args = (hp, wp, self.geo, self.weights, self.qp, self.prm,
                    out.view(np.uint8).reshape(-1), self.out_shape, self.cpad)
        if not self.copy:
            return partial(core, x.reshape(-1).view(x.dtype), *args)
        return partial(_copy_then, self, x, core, args)


def _copy_then(plan, x, core, args):
    if plan.m > 1:
        plan.inner[...] = np.repeat(x, plan.m, axis=3)
    else:
        hp, wp = plan.padded_hw
        _fill_padded(x, hp, wp, plan.pt, plan.pl, np.uint8(0), plan.padded)
    core(plan.padded.view(x.dtype), *args)


@njit
def _dw_quant_core(x, hp, wp, geo, w, qp, prm, out, out_shape, cpad):
    kh, kw, stride_h, stride_w, dil_h, dil_w = geo[0], geo[1], geo[2], geo[3], geo[4], geo[5]
    zp, lo, hi = prm[0], prm[1], prm[2]
    batches, out_h, out_w, cout = out_shape
    scratch = np.empty(16, np.uint8)
    fast = kh == 3 and kw == 3 and dil_h == 1 and dil_w == 1
    for b in range(batches):
        for oy in range(out_h):
            row0 = (b * hp + oy * stride_h) * wp * cout
            o0 = ((b * out_h + oy) * out_w) * cout
            for c in range(0, cout, 16):
                if fast:
                    _dw3x3_quant_row(x, row0 + c, wp * cout, stride_w * cout, cout,
                                     w, c, cpad, qp, zp, lo, hi, out, o0 + c, out_w,
                                     cout - c, scratch)
                else:
                    for ox in range(out_w):
                        acc = _dw_quant_taps(x, row0 + ox * stride_w * cout + c, kh,
                                             kw, dil_h * wp * cout, dil_w * cout, w, c, cpad)
                        _store_q(vi_requant(acc, qp, c, cpad, 0, zp, lo, hi), out,
                                 o0 + ox * cout + c, cout - c, scratch)
    return out


@njit(_nrt=False)
def _dw_quant_taps(x, i0, kh, kw, dy, dx, w, c, cpad):
    acc = vi_zero()
    for ky in range(kh):
        for kx in range(kw):
            acc = vi_dpwssd(acc, vi_load8(x, i0 + ky * dy + kx * dx),
                            vi_load(w, (ky * kw + kx) * cpad + c))
    return acc


@njit(_nrt=False)
def _store_q(r, out, o, count, scratch):
    if count >= 16:
        vi_store8(r, out, o)
    else:
        vi_store8n(r, out, o, count)


@njit(_nrt=False)
def _dw3x3_quant_row(x, i0, dy, step, cout, w, c, cpad, qp, zp, lo, hi, out, o0,
                     out_w, count, scratch):
    """One output row of 16 channels of a 3x3 undilated window (weights in registers)."""
    w0, w1, w2 = vi_load(w, c), vi_load(w, cpad + c), vi_load(w, 2 * cpad + c)
    w3, w4, w5 = vi_load(w, 3 * cpad + c), vi_load(w, 4 * cpad + c), vi_load(w, 5 * cpad + c)
    w6, w7, w8 = vi_load(w, 6 * cpad + c), vi_load(w, 7 * cpad + c), vi_load(w, 8 * cpad + c)
    for ox in range(out_w):
        i = i0 + ox * step
        a = vi_dpwssd(vi_zero(), vi_load8(x, i), w0)
        b = vi_dpwssd(vi_zero(), vi_load8(x, i + dy), w3)
        a = vi_dpwssd(a, vi_load8(x, i + cout), w1)
        b = vi_dpwssd(b, vi_load8(x, i + dy + cout), w4)
        a = vi_dpwssd(a, vi_load8(x, i + 2 * cout), w2)
        b = vi_dpwssd(b, vi_load8(x, i + dy + 2 * cout), w5)
        i += 2 * dy
        a = vi_dpwssd(a, vi_load8(x, i), w6)
        b = vi_dpwssd(b, vi_load8(x, i + cout), w7)
        a = vi_dpwssd(a, vi_load8(x, i + 2 * cout), w8)
        _store_q(vi_requant(vi_add(a, b), qp, c, cpad, 0, zp, lo, hi), out, o0 + ox * cout,
                 count, scratch)


@njit
def _dw_float_core(x, hp, wp, geo, w, bias, clamp, out, out_shape, cpad):
    kh, kw, stride_h, stride_w, dil_h, dil_w = geo[0], geo[1], geo[2], geo[3], geo[4], geo[5]
    batches, out_h, out_w, cout = out_shape
    scratch = np.empty(16, np.float32)
    lo, hi = clamp[0], clamp[1]
    fast = kh == 3 and kw == 3 and dil_h == 1 and dil_w == 1
    for b in range(batches):
        for oy in range(out_h):
            row0 = (b * hp + oy * stride_h) * wp * cout
            o0 = ((b * out_h + oy) * out_w) * cout
            for c in range(0, cout, 16):
                if fast and cout - c > 8:
                    _dw3x3_float_row(x, row0 + c, wp * cout, stride_w * cout, cout, w, c,
                                     cpad, bias, lo, hi, out, o0 + c, out_w, cout - c, scratch)
                    continue
                if fast:   # the last <= 8 channels: 8-lane vectors
                    _dw3x3_float_row8(x, row0 + c, wp * cout, stride_w * cout, cout, w, c,
                                      cpad, bias, lo, hi, out, o0 + c, out_w, cout - c, scratch)
                    continue
                for ox in range(out_w):
                    acc = _dw_float_taps(x, row0 + ox * stride_w * cout + c, kh, kw,
                                         dil_h * wp * cout, dil_w * cout, w, c, cpad)
                    # TFLite: ActivationFunctionWithMinMax(total + bias)
                    r = vf_clamp(vf_add(acc, vf_load(bias, c)), lo, hi)
                    _store_f(r, out, o0 + ox * cout + c, cout - c, scratch)
    return out


@njit(_nrt=False)
def _dw3x3_float_row(x, i0, dy, step, cout, w, c, cpad, bias, lo, hi, out, o0, out_w, count,
                     scratch):
    """:func:`_dw3x3_quant_row` for float32: taps summed in (ky, kx) order from 0.0."""
    w0, w1, w2 = vf_load(w, c), vf_load(w, cpad + c), vf_load(w, 2 * cpad + c)
    w3, w4, w5 = vf_load(w, 3 * cpad + c), vf_load(w, 4 * cpad + c), vf_load(w, 5 * cpad + c)
    w6, w7, w8 = vf_load(w, 6 * cpad + c), vf_load(w, 7 * cpad + c), vf_load(w, 8 * cpad + c)
    b = vf_load(bias, c)
    for ox in range(out_w):
        i = i0 + ox * step
        acc = vf_muladd(vf_zero(), vf_load(x, i), w0)
        acc = vf_muladd(acc, vf_load(x, i + cout), w1)
        acc = vf_muladd(acc, vf_load(x, i + 2 * cout), w2)
        i += dy
        acc = vf_muladd(acc, vf_load(x, i), w3)
        acc = vf_muladd(acc, vf_load(x, i + cout), w4)
        acc = vf_muladd(acc, vf_load(x, i + 2 * cout), w5)
        i += dy
        acc = vf_muladd(acc, vf_load(x, i), w6)
        acc = vf_muladd(acc, vf_load(x, i + cout), w7)
        acc = vf_muladd(acc, vf_load(x, i + 2 * cout), w8)
        _store_f(vf_clamp(vf_add(acc, b), lo, hi), out, o0 + ox * cout, count, scratch)


@njit(_nrt=False)
def _dw3x3_float_row8(x, i0, dy, step, cout, w, c, cpad, bias, lo, hi, out, o0, out_w, count,
                      scratch):
    """:func:`_dw3x3_float_row` for the last <= 8 channels, in 8-lane vectors."""
    w0, w1, w2 = vh_load(w, c), vh_load(w, cpad + c), vh_load(w, 2 * cpad + c)
    w3, w4, w5 = vh_load(w, 3 * cpad + c), vh_load(w, 4 * cpad + c), vh_load(w, 5 * cpad + c)
    w6, w7, w8 = vh_load(w, 6 * cpad + c), vh_load(w, 7 * cpad + c), vh_load(w, 8 * cpad + c)
    b = vh_load(bias, c)
    for ox in range(out_w):
        i = i0 + ox * step
        acc = vf_muladd(vh_zero(), vh_load(x, i), w0)
        acc = vf_muladd(acc, vh_load(x, i + cout), w1)
        acc = vf_muladd(acc, vh_load(x, i + 2 * cout), w2)
        i += dy
        acc = vf_muladd(acc, vh_load(x, i), w3)
        acc = vf_muladd(acc, vh_load(x, i + cout), w4)
        acc = vf_muladd(acc, vh_load(x, i + 2 * cout), w5)
        i += dy
        acc = vf_muladd(acc, vh_load(x, i), w6)
        acc = vf_muladd(acc, vh_load(x, i + cout), w7)
        acc = vf_muladd(acc, vh_load(x, i + 2 * cout), w8)
        r = vf_clamp(vf_add(acc, b), lo, hi)
        if count >= 8:
            vh_store(r, out, o0 + ox * cout)
        else:
            vf_storen(r, out, o0 + ox * cout, count)


@njit(_nrt=False)
def _dw_float_taps(x, i0, kh, kw, dy, dx, w, c, cpad):
    acc = vf_zero()
    for ky in range(kh):
        for kx in range(kw):
            acc = vf_muladd(acc, vf_load(x, i0 + ky * dy + kx * dx),
                            vf_load(w, (ky * kw + kx) * cpad + c))
    return acc


@njit(_nrt=False)
def _store_f(r, out, o, count, scratch):
    if count >= 16:
        vf_store(r, out, o)
    else:
        vf_storen(r, out, o, count)
