"""DEPTHWISE_CONV_2D (NHWC), float and 8-bit quantized; numba fast path.

Matches TFLite ``reference_ops::DepthwiseConv`` (uint8, rounding ``kAwayFromZero`` = double
rounding MultiplyByQuantizedMultiplier), ``reference_integer_ops::DepthwiseConvPerChannel``
(int8) and the float reference. Output channel ``oc = ic * depth_multiplier + m`` reads input
channel ``ic``; padding taps are skipped. Requantization as in :mod:`nnsim.kernels.conv`.

The cores work on 16 channels at a time (:mod:`nnsim.kernels._jit` SIMD ops) over a copy of
the input with the padding materialised (and channels repeated ``depth_multiplier`` times):
integer padding holds ``x_zp`` and the accumulator is ``sum x * (w - w_zp) + bias - x_zp *
sum(w - w_zp)`` (int16 products: ``vpdpwssd``), so a padding tap adds exactly nothing, as a
skipped one. An int8 input is copied as uint8 ``x + 128`` with ``x_zp + 128`` (the same sum,
exactly), so int8 and uint8 layers run one compiled core; float padding holds
0.0 and taps are summed one at a time from 0.0 in (ky, kx) order, then the bias is added
(TFLite's order; a 0.0 tap adds nothing to a sum that starts at +0.0).

With AVX-512 VNNI, 3x3 stride-1 undilated layers with int8 weights (w_zp = 0), and stride-2
ones with AVX-512 VBMI too, run :mod:`nnsim.kernels._dw_widened` instead: one ``vpdpbusd``
per window row, the same sums. With AVX2, 3x3 stride-1 and stride-2 undilated layers (any
weights) run :mod:`nnsim.kernels._dw_pairs`: input rows widened once to int16 pairs, two
``vpmaddwd`` per window row, the same sums.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels import threads as _threads
from nnsim.kernels._dw_pairs import (_dw_pairs_part, _dw_pairs_step, pair_ring_bytes,
                                     pair_weights)
from nnsim.kernels._dw_widened import (_dw_s2_part, _dw_s2_step, _dw_widened_part,
                                       _dw_widened_step, compact_ring_bytes, ring_bytes,
                                       widened_weights)
from nnsim.kernels._builtins import greater, lesser
from nnsim.kernels._jit import (SIMD_MODE, VBMI, njit, vf_add, vf_clamp, vf_load, vf_muladd,
                                vf_store, vf_storen, vf_zero, vh_load, vh_store, vh_zero, vi_add,
                                vi_dpwssd, vi_load, vi_load8, vi_pack8q, vi_requantb, vi_requantqb,
                                vi_requantqr, vi_store4, vi_zero, vq_load)
from nnsim.kernels._gemm_common import _copy_run, _store8
from nnsim.kernels.gemm import requant_params, shift_free

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
        # int8 as uint8 + 128 (module doc): the zero point moves with the values
        flip = 128 if x_dtype == np.int8 else 0
        xzp = int(in_zp) + flip
        bias = cm.bias_int32(bias, cout).astype(np.int64) - xzp * wq.sum(axis=(0, 1))
        plan = _Plan(x_shape, out_shape, np.dtype(np.uint8), pads, m, geo, xzp)
        plan.flip = flip
        # int16 weights in the low half of each int32 lane (vi_dpwssd: acc + x * w)
        plan.weights = _pad_channels(wq.astype(np.int32) & 0xFFFF, plan.cpad)
        plan.qp = shift_free(requant_params(bias, mults, shifts))
        plan.prm = np.array([int(out_zp), int(lo), int(hi), xzp, flip], np.int64)
        # int8 weights only (vpdpbusd's signed bytes; uint8 ones minus their zero point need
        # 9 bits); stride 1 widens each input row once for 3 output rows, stride 2 (1.5 output
        # rows per input row: widening cost what it saved) needs vpermb (_dw_widened doc)
        geometry = (kh, kw, stride_h, stride_w, dilation_h, dilation_w)
        plan.stride2 = VBMI and geometry == (3, 3, 2, 2, 1, 1)
        if (SIMD_MODE == "avx512vnni" and w.dtype == np.int8 and int(w_zp) == 0 and m == 1
                and (geometry == (3, 3, 1, 1, 1, 1) or plan.stride2)):
            ring = compact_ring_bytes(ow, cout) if plan.stride2 else ring_bytes(ow)
            plan.widened = (widened_weights(wq, plan.cpad),
                            np.array([x_shape[1], x_shape[2], pad_top, pad_left], np.int64),
                            cm.aligned_zeros(ring, np.uint8))
        elif SIMD_MODE == "avx2" and m == 1 and geometry in ((3, 3, 1, 1, 1, 1),
                                                              (3, 3, 2, 2, 1, 1)):
            # int16 pairs of widened rows, any weight type (nnsim.kernels._dw_pairs)
            plan.pairs = True
            plan.widened = (pair_weights(wq, plan.cpad),
                            np.array([x_shape[1], x_shape[2], pad_top, pad_left, stride_h],
                                     np.int64),
                            cm.aligned_zeros(pair_ring_bytes(ow), np.uint8))
        plan.out_dtype = odt
        return plan, out_shape

    if x_dtype not in cm.FLOAT_DTYPES:
        names = ", ".join(np.dtype(a).name for a in cm.FLOAT_DTYPES)
        raise TypeError(f"input: dtype {x_dtype.name} not supported (expected {names})")
    plan = _Plan(x_shape, out_shape, np.dtype(np.float32), pads, m, geo, 0)
    plan.flip = 0
    plan.weights = _pad_channels(w[0].astype(np.float32), plan.cpad)
    plan.bias = _pad_channels(cm.bias_float32(bias, cout), plan.cpad)
    if cout == 8:   # lanes 8-15 repeat 0-7: two window positions per vector (_dw3x3_float_part)
        for a in (plan.weights, plan.bias):
            a.reshape(-1, 16)[:, 8:] = a.reshape(-1, 16)[:, :8]
    plan.clamp = np.array(cm.float_clamp(fuse), np.float32)
    plan.out_dtype = np.dtype(np.float32)
    return plan, out_shape


def _pad_channels(a, cpad):
    out = cm.aligned_zeros(a.shape[:-1] + (cpad,), a.dtype)
    out[..., :a.shape[-1]] = a
    return out.reshape(-1)


class _Plan:
    """Constants of one depthwise layer and the input rows it reads from.

    The cores read the input through a ring of padded rows (``src``: ``span`` rows of
    ``wp`` pixels, their borders holding the padding value; an input row is copied in when an
    output row first needs it), so the padding costs a few rows of memory, not a copy of the
    input; float 3x3 stride-2 rows whose input rows lie inside the input read them in place
    and take only their edge windows' pixels through the ring (:func:`_edge_rows`); float 3x3
    stride-1 rows, computed two at a time, need a ring of 4 rows (:func:`_two_rows`) and a
    spare row (:func:`_dw3x3_float_rows2_part`).
    A depth multiplier > 1 uses a whole padded copy with the channels repeated."""

    def __init__(self, x_shape, out_shape, dtype, pads, m, geo, fill):
        n, h, w, cin = (int(d) for d in x_shape)
        pt, pb, pl, pr = (int(p) for p in pads)
        self.m = m
        self.cout = cin * m
        self.cpad = -(-self.cout // 16) * 16
        self.geo = geo
        self.out_shape = tuple(out_shape)
        hp, wp = h + pt + pb, w + pl + pr
        self.ring = m == 1
        span = (int(geo[0]) - 1) * int(geo[4]) + 1
        if dtype == np.float32 and self.ring and _two_rows(geo):
            span += 1   # the input rows of two output rows (_dw3x3_float_rows2)
        rows = span if self.ring else n * hp
        # (part, step) of a float layer (:func:`_float_core`)
        self.float_core = _float_core(geo, self.cout, self.ring) if dtype == np.float32 \
            else None
        if self.float_core is not None and self.float_core[0] is _dw3x3_float_rows2_part:
            rows += 1   # the spare row: an odd last output row's dropped second one
        # + 16 elements: a vector load of the last channels stays inside
        self.src = cm.aligned_full(rows * wp * self.cout + 16, fill, dtype)
        if not self.ring:
            view = self.src[:-16].reshape(n, hp, wp, self.cout)
            self.inner = view[:, pt:pt + h, pl:pl + w]
        self.dims = np.array([h, w, pt, pl, hp, wp, span], np.int64)
        self.slots = np.zeros(span, np.int64)
        self.rows = np.zeros(int(geo[0]), np.int64)
        # (weights, dims, ring) of nnsim.kernels._dw_widened or _dw_pairs, or None
        self.widened = None
        self.stride2 = False   # widened with the stride-2 core (compact rows)
        self.pairs = False   # widened to int16 pairs (AVX2)
        self._split = {}   # thread count -> see _parallel

    def run(self, x, out):
        """``out`` = the depthwise convolution of ``x`` (C-contiguous, the plan's dtype)."""
        self.bind(x, out)()
        return out

    def bind(self, x, out):
        """A function of no arguments computing ``out`` from the current contents of ``x``
        (both arrays fixed: an interpreter's tensor buffers); with more than one thread
        (:mod:`nnsim.kernels.threads`) the layer is split into parts, see :meth:`_parallel`."""
        split = self._parallel()
        if self.widened is not None:
            w3, dims, ring = self.widened
            batches, out_h, _, cout = self.out_shape
            args = (x.view(np.uint8).reshape(-1), dims, w3, self.qp, self.prm,
                    out.view(np.uint8).reshape(-1), self.out_shape, self.cpad)
            part, step = ((_dw_s2_part, _dw_s2_step) if self.stride2 else
                          (_dw_pairs_part, _dw_pairs_step) if self.pairs else
                          (_dw_widened_part, _dw_widened_step))
            if split is None:
                return partial(part, *args, ring, 0, batches * out_h, 0, cout)
            return _threads.in_parts(step, (*args, split[4], split[0]), split[0],
                                     units=(1, 16))
        srcs = self.src if split is None else split[1]
        # rows are copied as bytes: one compiled _window_rows serves every dtype
        common = (srcs, srcs.view(np.uint8), self.ring, self.dims, self.geo)
        common += (self.slots, self.rows) if split is None else (split[2], split[3])
        xb = x.view(np.uint8).reshape(-1)
        if out.dtype.kind == "f":
            core = self.float_core[split is not None]
            args = (self.weights, self.bias, self.clamp, out.reshape(-1))
            x = x.reshape(-1)
        else:   # int8 read as uint8 (module doc)
            core = _dw_quant_part if split is None else _dw_quant_step
            args = (self.weights, self.qp, self.prm, out.view(np.uint8).reshape(-1))
            x = xb
        args += (self.out_shape, self.cpad)
        # serially, the part of every row and channel (no wrapper: one compilation fewer)
        batches, out_h, _, cout = self.out_shape
        if split is None:
            call = partial(core, x, xb, *common, *args, 0, batches * out_h, 0, cout)
        else:
            call = _threads.in_parts(core, (x, xb, *common, *args, split[0]), split[0],
                                     units=(1, 16))
        return call if self.ring else partial(_repeat_then, self, xb, call)

    def _parallel(self):
        """For the current thread count: ``(parts, rings, slots, rows, widened rings)`` with
        per part one ring (or the shared padded copy) and row bookkeeping, or for a widened
        layer only one ring of widened rows (the others None), or None to run serially. Parts
        are ranges of output rows (all channels), or of 16-channel groups (all rows) when
        those spread the work clearly more evenly
        (:func:`nnsim.kernels.threads.rows_or_channels`)."""
        count = _threads.get_num_threads()
        if count <= 1:
            return None
        if count not in self._split:
            self._split[count] = self._make_split(count)
        return self._split[count]

    def _make_split(self, count):
        batches, out_h, out_w, cout = self.out_shape
        rows = batches * out_h
        work = rows * out_w * cout * int(self.geo[0] * self.geo[1])
        if work < _threads.MIN_PARALLEL_WORK // 4:
            return None
        by_rows = [(lo, hi, 0, cout) for lo, hi in _threads.split(rows, count)]
        by_channels = [(0, rows, 16 * lo, min(16 * hi, cout))
                       for lo, hi in _threads.split(-(-cout // 16), count)]
        parts = _threads.rows_or_channels(by_rows, by_channels, lambda ps: (
            max((r1 - r0) * -(-(c1 - c0) // 16) for r0, r1, c0, c1 in ps), len(ps)))
        if len(parts) < 2:
            return None
        n = len(parts)
        if self.widened is not None:   # its parts read the input in place: widened rings only
            return (np.array(parts, np.int64), None, None, None,
                    _threads.per_part(n, self.widened[2]))
        srcs = _threads.per_part(n, self.src, copy=True) if self.ring else self.src[None]
        return (np.array(parts, np.int64), srcs, _threads.per_part(n, self.slots),
                _threads.per_part(n, self.rows), None)


def _repeat_then(plan, xb, call):
    x = xb.view(plan.src.dtype).reshape(plan.inner.shape[:3] + (-1,))
    if plan.flip:
        x = x ^ np.uint8(plan.flip)
    plan.inner[...] = np.repeat(x, plan.m, axis=3)
    call()


@njit(_nrt=False, inner=True)
def _window_rows(xb, sb, size, ring, dims, geo, slots, rows, b, oy, cout, c_lo, c_hi, fill,
                 flip):
    """``rows[ky]``: where padded input row ``ky`` of output row ``oy``'s windows starts in
    ``src`` (in elements of ``size`` bytes); with the ring, rows not in it yet are copied
    (bytes XOR ``flip``; only channels ``c_lo:c_hi``, those the caller computes: a part of a
    layer split by channels copies its own) or filled with the padding byte ``fill`` first.
    ``xb`` and ``sb`` are byte views of the input and of ``src``."""
    kh, stride_h, dil_h = geo[0], geo[2], geo[4]
    h, w, pt, pl, hp, wp, span = dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], dims[6]
    length = wp * cout
    for ky in range(kh):
        iy = oy * stride_h - pt + ky * dil_h
        if not ring:
            rows[ky] = (b * hp + iy + pt) * length
            continue
        slot = iy % span
        rows[ky] = slot * length
        if slots[slot] != iy:
            slots[slot] = iy
            d = (slot * length + pl * cout) * size
            s = (b * h + iy) * w * cout * size
            if 0 <= iy < h and c_hi - c_lo == cout:   # the whole row: one run
                _copy_run(xb, s, sb, d, w * cout * size, flip)
            elif 0 <= iy < h:   # each pixel's channels c_lo:c_hi
                for px in range(w):
                    o = (px * cout + c_lo) * size
                    _copy_run(xb, s + o, sb, d + o, (c_hi - c_lo) * size, flip)
            else:   # a slice: one memset (a loop of byte stores took 2.5 us a 7 KB row)
                sb[d:d + w * cout * size] = fill


@njit(_nrt=False)
def _dw_quant_step(x, xb, srcs, sbs, ring, dims, geo, slots, rows, w, qp, prm, out, out_shape,
                   cpad, parts, t):
    """Part ``t`` of the layer in parts (see :meth:`_Plan.bind`; :mod:`nnsim.kernels.team`):
    output rows ``parts[t, 0:2]`` (over batches) x channels ``parts[t, 2:4]``, with its own
    ring ``srcs[t]`` (one shared padded copy ``srcs[0]`` without a ring)."""
    k = lesser(np.int64(t), srcs.shape[0] - 1)
    _dw_quant_part(x, xb, srcs[k], sbs[k], ring, dims, geo, slots[t], rows[t], w, qp, prm, out,
                   out_shape, cpad, parts[t, 0], parts[t, 1], parts[t, 2], parts[t, 3])


@njit(_nrt=False)
def _dw_quant_part(x, xb, src, sb, ring, dims, geo, slots, rows, w, qp, prm, out, out_shape,
                   cpad, r_lo, r_hi, c_lo, c_hi):
    """Output rows ``r_lo:r_hi`` (row ``b * OH + oy``) x channels ``c_lo:c_hi`` (multiples of
    16, or the end); each output vector gets the same instructions whatever the bounds.
    ``x`` / ``src`` uint8 (int8 flipped), ``xb`` / ``sb`` their byte views (the same)."""
    kh, kw, stride_w, dil_w = geo[0], geo[1], geo[3], geo[5]
    zp, lo, hi, xzp, flip = prm[0], prm[1], prm[2], prm[3], prm[4]
    out_h, out_w, cout = out_shape[1], out_shape[2], out_shape[3]
    fast = kh == 3 and kw == 3 and geo[4] == 1 and dil_w == 1
    for r in range(r_lo, r_hi):
        b, oy = r // out_h, r % out_h
        if r == r_lo or oy == 0:   # a new image: nothing in the ring belongs to it
            slots[:] = -(1 << 40)
        # (an int64, not the literal 1: numba would compile a variant per literal size)
        _window_rows(xb, sb, np.int64(1), ring, dims, geo, slots, rows, b, oy, cout, c_lo,
                     c_hi, np.uint8(xzp), np.uint8(flip))
        o0 = r * out_w * cout
        for c in range(c_lo, c_hi, 16):
            if fast:
                _dw3x3_quant_row(src, rows[0] + c, rows[1] + c, rows[2] + c,
                                 stride_w * cout, cout, w, c, cpad, qp, zp, lo, hi, out,
                                 o0 + c, out_w, cout - c)
            else:
                for ox in range(out_w):
                    acc = _dw_quant_taps(src, rows, ox * stride_w * cout + c, kh, kw,
                                         dil_w * cout, w, c, cpad, qp)
                    _store8(vi_requantb(acc, qp, c, cpad, zp, lo, hi), out,
                            o0 + ox * cout + c, cout - c)


@njit(_nrt=False, inline="always", inner=True)
def _dw_quant_taps(x, rows, i0, kh, kw, dx, w, c, cpad, qp):
    acc = vi_load(qp, c)   # the bias (row 0 of the requantization table)
    for ky in range(kh):
        for kx in range(kw):
            acc = vi_dpwssd(acc, vi_load8(x, rows[ky] + i0 + kx * dx),
                            vi_load(w, (ky * kw + kx) * cpad + c))
    return acc


#: Whether the 3x3 core packs 4 window positions per store: 3-10% faster layers on AVX-512,
#: 2-4% slower with AVX2's 32-byte vectors (measured on MobileNet v2).
_PACKED_STORES = SIMD_MODE == "avx512vnni"


@njit(_nrt=False, inner=True)
def _taps3x3(x, r0, r1, r2, i, cout, bias, w0, w1, w2, w3, w4, w5, w6, w7, w8):
    """The sum of one 3x3 window at ``x[r0 + i]`` (rows ``x[r1]``, ``x[r2]``) from the bias,
    in two chains of multiply-adds."""
    a = vi_dpwssd(bias, vi_load8(x, r0 + i), w0)
    b = vi_dpwssd(vi_zero(), vi_load8(x, r1 + i), w3)
    a = vi_dpwssd(a, vi_load8(x, r0 + i + cout), w1)
    b = vi_dpwssd(b, vi_load8(x, r1 + i + cout), w4)
    a = vi_dpwssd(a, vi_load8(x, r0 + i + 2 * cout), w2)
    b = vi_dpwssd(b, vi_load8(x, r1 + i + 2 * cout), w5)
    a = vi_dpwssd(a, vi_load8(x, r2 + i), w6)
    b = vi_dpwssd(b, vi_load8(x, r2 + i + cout), w7)
    a = vi_dpwssd(a, vi_load8(x, r2 + i + 2 * cout), w8)
    return vi_add(a, b)


@njit(_nrt=False, inline="always", inner=True)
def _dw3x3_quant_row(x, r0, r1, r2, step, cout, w, c, cpad, qp, zp, lo, hi, out, o0,
                     out_w, count):
    """One output row of 16 channels of a 3x3 undilated window (weights in registers); the
    window rows start at ``x[r0]``, ``x[r1]``, ``x[r2]``. With all 16 channels kept, on
    AVX-512, 4 window positions at a time are requantized into one packed vector
    (vi_pack8q) stored as 4 pieces of 16 bytes."""
    w0, w1, w2 = vi_load(w, c), vi_load(w, cpad + c), vi_load(w, 2 * cpad + c)
    w3, w4, w5 = vi_load(w, 3 * cpad + c), vi_load(w, 4 * cpad + c), vi_load(w, 5 * cpad + c)
    w6, w7, w8 = vi_load(w, 6 * cpad + c), vi_load(w, 7 * cpad + c), vi_load(w, 8 * cpad + c)
    q = vq_load(qp, c, cpad)   # in registers for the whole row (see nnsim.kernels._jit)
    bias = vi_load(qp, c)
    ox = 0
    if _PACKED_STORES and count >= 16:
        while ox + 4 <= out_w:
            i = ox * step
            v0 = _taps3x3(x, r0, r1, r2, i, cout, bias, w0, w1, w2, w3, w4, w5, w6, w7, w8)
            v1 = _taps3x3(x, r0, r1, r2, i + step, cout, bias, w0, w1, w2, w3, w4, w5, w6,
                          w7, w8)
            v2 = _taps3x3(x, r0, r1, r2, i + 2 * step, cout, bias, w0, w1, w2, w3, w4, w5,
                          w6, w7, w8)
            v3 = _taps3x3(x, r0, r1, r2, i + 3 * step, cout, bias, w0, w1, w2, w3, w4, w5,
                          w6, w7, w8)
            vi_store4(vi_pack8q(vi_requantqr(v0, q), vi_requantqr(v1, q), vi_requantqr(v2, q),
                                vi_requantqr(v3, q), zp, lo, hi), out, o0 + ox * cout, cout)
            ox += 4
    for ox in range(ox, out_w):
        v = _taps3x3(x, r0, r1, r2, ox * step, cout, bias, w0, w1, w2, w3, w4, w5, w6, w7, w8)
        _store8(vi_requantqb(v, q, zp, lo, hi), out, o0 + ox * cout, count)


#: Float 3x3 rows in 8-lane vectors only (CPUs without AVX-512): the 9 weights, bias and
#: clamp bounds of 16 lanes need 24 of the 16 ymm registers; of 8 lanes, 12.
_HALF_ROWS = SIMD_MODE == "avx2"


def _two_rows(geo):
    """Whether a float layer of this geometry computes two output rows at a time (3x3 stride 1
    undilated: :func:`_dw3x3_float_rows2`); its ring then holds 4 rows."""
    return tuple(int(g) for g in geo) == (3, 3, 1, 1, 1, 1)


def _float_core(geo, cout, ring):
    """``(part, step)``: the float core of a layer (its class compiled apart, so that a model
    compiles only the classes it has and the cold start's two processes two of them at once,
    see :mod:`nnsim.tools.warmup`): :func:`_dw3x3_float_rows2_part` when the rows go two at a
    time (:func:`_two_rows` with the ring, not the 8-channel pairs of :func:`_dw3x3_float_part`),
    :func:`_dw3x3_float_part` for the other 3x3 undilated windows, :func:`_dw_float_part`
    (every tap in turn) for the rest."""
    g = tuple(int(v) for v in geo)
    if ring and _two_rows(geo) and not (cout == 8 and not _HALF_ROWS):
        return _dw3x3_float_rows2_part, _dw3x3_float_rows2_step
    if g[:2] == (3, 3) and g[4:] == (1, 1):
        return _dw3x3_float_part, _dw3x3_float_step
    return _dw_float_part, _dw_float_step


@njit(_nrt=False)
def _dw_float_step(x, xb, srcs, sbs, ring, dims, geo, slots, rows, w, bias, clamp, out,
                   out_shape, cpad, parts, t):
    """As :func:`_dw_quant_step`."""
    k = lesser(np.int64(t), srcs.shape[0] - 1)
    _dw_float_part(x, xb, srcs[k], sbs[k], ring, dims, geo, slots[t], rows[t], w, bias, clamp,
                   out, out_shape, cpad, parts[t, 0], parts[t, 1], parts[t, 2], parts[t, 3])


@njit(_nrt=False)
def _dw_float_part(x, xb, src, sb, ring, dims, geo, slots, rows, w, bias, clamp, out,
                   out_shape, cpad, r_lo, r_hi, c_lo, c_hi):
    """As :func:`_dw_quant_part`, float32, any window: each output vector's taps summed in
    (ky, kx) order from 0.0 (:func:`_dw_float_taps`), then the bias added."""
    kh, kw, stride_w, dil_w = geo[0], geo[1], geo[3], geo[5]
    out_h, out_w, cout = out_shape[1], out_shape[2], out_shape[3]
    lo, hi = clamp[0], clamp[1]
    for r in range(r_lo, r_hi):
        b, oy = r // out_h, r % out_h
        if r == r_lo or oy == 0:
            slots[:] = -(1 << 40)
        _window_rows(xb, sb, np.int64(4), ring, dims, geo, slots, rows, b, oy, cout, c_lo,
                     c_hi, np.uint8(0), np.uint8(0))
        o0 = r * out_w * cout
        for c in range(c_lo, c_hi, 16):
            for ox in range(out_w):
                acc = _dw_float_taps(src, rows, ox * stride_w * cout + c, kh, kw, dil_w * cout,
                                     w, c, cpad)
                # TFLite: ActivationFunctionWithMinMax(total + bias)
                r_ = vf_clamp(vf_add(acc, vf_load(bias, c)), lo, hi)
                _store_f(r_, out, o0 + ox * cout + c, cout - c)


@njit(_nrt=False)
def _dw3x3_float_rows2_step(x, xb, srcs, sbs, ring, dims, geo, slots, rows, w, bias, clamp,
                            out, out_shape, cpad, parts, t):
    """As :func:`_dw_float_step`, for :func:`_dw3x3_float_rows2_part`."""
    k = lesser(np.int64(t), srcs.shape[0] - 1)
    _dw3x3_float_rows2_part(x, xb, srcs[k], sbs[k], ring, dims, geo, slots[t], rows[t], w,
                            bias, clamp, out, out_shape, cpad, parts[t, 0], parts[t, 1],
                            parts[t, 2], parts[t, 3])


@njit(_nrt=False)
def _dw3x3_float_rows2_part(x, xb, src, sb, ring, dims, geo, slots, rows, w, bias, clamp, out,
                            out_shape, cpad, r_lo, r_hi, c_lo, c_hi):
    """As :func:`_dw_float_part`, for 3x3 stride-1 undilated windows through a ring of 4 rows:
    output rows two at a time (:func:`_dw3x3_float_rows2`); an image's or the part's odd last
    row with a second row that is computed and dropped (written to the ring's spare row, past
    its 4 input rows; its input rows past the image are padding): one inlined row kernel, the
    same operations for each sum."""
    out_h, out_w, cout = out_shape[1], out_shape[2], out_shape[3]
    lo, hi = clamp[0], clamp[1]
    spare = dims[6] * dims[5] * cout   # (_Plan: the ring's rows, then the spare one)
    r = r_lo
    while r < r_hi:
        b, oy = r // out_h, r % out_h
        if r == r_lo or oy == 0:
            slots[:] = -(1 << 40)
        _window_rows(xb, sb, np.int64(4), ring, dims, geo, slots, rows, b, oy, cout, c_lo,
                     c_hi, np.uint8(0), np.uint8(0))
        q0, q1 = rows[0], rows[1]
        _window_rows(xb, sb, np.int64(4), ring, dims, geo, slots, rows, b, oy + 1, cout, c_lo,
                     c_hi, np.uint8(0), np.uint8(0))
        o0 = r * out_w * cout
        both = r + 1 < r_hi and oy + 1 < out_h
        second, o1 = (out, o0 + out_w * cout) if both else (src, spare)
        for c in range(c_lo, c_hi, _LANES):
            _dw3x3_float_rows2(src, q0 + c, q1 + c, rows[1] + c, rows[2] + c, cout, w, c, cpad,
                               bias, lo, hi, out, o0 + c, second, o1 + c, out_w, cout - c)
        r += 2 if both else 1


@njit(_nrt=False)
def _dw3x3_float_step(x, xb, srcs, sbs, ring, dims, geo, slots, rows, w, bias, clamp, out,
                      out_shape, cpad, parts, t):
    """As :func:`_dw_float_step`, for :func:`_dw3x3_float_part`."""
    k = lesser(np.int64(t), srcs.shape[0] - 1)
    _dw3x3_float_part(x, xb, srcs[k], sbs[k], ring, dims, geo, slots[t], rows[t], w, bias,
                      clamp, out, out_shape, cpad, parts[t, 0], parts[t, 1], parts[t, 2],
                      parts[t, 3])


@njit(_nrt=False)
def _dw3x3_float_part(x, xb, src, sb, ring, dims, geo, slots, rows, w, bias, clamp, out,
                      out_shape, cpad, r_lo, r_hi, c_lo, c_hi):
    """As :func:`_dw_float_part`, for 3x3 undilated windows, one output row at a time (the
    rows kernels: weights in registers). A stride-2 row whose three input rows all lie inside
    the input reads them in place (:func:`_in_place_columns`): the ring then holds only the
    few pixels its first and last windows read, so the input is not copied. 8 channels at
    stride 1 on AVX-512: two window positions per vector."""
    stride_w = geo[3]
    h, w_in, pt, pl = dims[0], dims[1], dims[2], dims[3]
    out_h, out_w, cout = out_shape[1], out_shape[2], out_shape[3]
    lo, hi = clamp[0], clamp[1]
    # 8 channels, stride 1: two window positions' channels per 16-lane vector (weights and
    # bias repeated in lanes 8-15, see prepare_depthwise_conv_2d), then an odd last position
    # in 8 lanes (one call site each: a second one compiled the inlined row again, 0.5 s more
    # at a cold start)
    pairs = cout == 8 and stride_w == 1 and not _HALF_ROWS
    step = stride_w * cout
    # stride 1 stays on the ring: its rows, each read by three output rows, ran slower in
    # place (14x14x128 13.7 -> 16.7 us, benchmarks/README.md "Fifteenth session")
    in_place_ok = ring and stride_w == 2 and cout % 8 == 0
    ox_lo, ox_hi = _in_place_columns(in_place_ok, w_in, pl, stride_w, out_w)
    for r in range(r_lo, r_hi):
        b, oy = r // out_h, r % out_h
        if r == r_lo or oy == 0:
            slots[:] = -(1 << 40)
        iy0 = oy * geo[2] - pt
        in_place = ox_lo < ox_hi and iy0 >= 0 and iy0 + 2 < h
        if in_place:   # rows of x (column -pl at x0), the edge windows' pixels in the ring
            x0 = ((b * h + iy0) * w_in - pl) * cout
            _edge_rows(xb, sb, dims, slots, rows, b, iy0, cout, ox_lo, ox_hi, stride_w, out_w)
        else:
            _window_rows(xb, sb, np.int64(4), ring, dims, geo, slots, rows, b, oy, cout, c_lo,
                         c_hi, np.uint8(0), np.uint8(0))
        o0 = r * out_w * cout
        for c in range(c_lo, c_hi, 8 if _HALF_ROWS else 16):
            # window positions ox0:ox0 + count from a (the ring, or x for the inside ones)
            for segment in range(3 if in_place else 1):
                a, ox0, count = src, 0, out_w
                a0, a1, a2 = rows[0] + c, rows[1] + c, rows[2] + c
                if segment == 1:
                    count = ox_lo
                elif segment == 2:
                    ox0, count = ox_hi, out_w - ox_hi
                elif in_place:
                    a, ox0, count = x, ox_lo, ox_hi - ox_lo
                    a0 = x0 + c
                    a1, a2 = a0 + w_in * cout, a0 + 2 * w_in * cout
                if count == 0:
                    continue
                a0, a1, a2 = a0 + ox0 * step, a1 + ox0 * step, a2 + ox0 * step
                oc = o0 + c + ox0 * cout
                if not _HALF_ROWS and (cout - c > 8 or pairs):
                    _dw3x3_float_row(a, a0, a1, a2, 16 if pairs else step, cout,
                                     16 if pairs else cout, w, c, cpad, bias, lo, hi, out, oc,
                                     out_w // 2 if pairs else count, 16 if pairs else cout - c)
                    if not pairs or out_w % 2 == 0:
                        continue
                # 8 channels (or the odd last pair position): 8 lanes
                i = (out_w - 1) * 8 if pairs else 0
                _dw3x3_float_row8(a, a0 + i, a1 + i, a2 + i, step, cout, w, c, cpad, bias, lo,
                                  hi, out, oc + i, 1 if pairs else count, cout - c)


@njit(_nrt=False, inner=True)
def _in_place_columns(possible, w_in, pl, stride_w, out_w):
    """``(ox_lo, ox_hi)``: the output columns whose 3-wide windows lie inside the input row
    (read in place), or ``(0, 0)`` when none is or ``possible`` is false. In place needs
    the ring (depth multiplier 1), the 3x3 undilated rows and whole 8-channel vectors (a
    vector load of the last channels then ends at the input's end; the ring has 16 elements
    more)."""
    if not possible:
        return 0, 0
    ox_lo = (pl + stride_w - 1) // stride_w
    ox_hi = lesser(out_w, (w_in - 3 + pl) // stride_w + 1) if w_in >= 3 else 0
    return (ox_lo, ox_hi) if ox_lo < ox_hi else (0, 0)


@njit(_nrt=False, inner=True)
def _edge_rows(xb, sb, dims, slots, rows, b, iy0, cout, ox_lo, ox_hi, stride_w, out_w):
    """For an output row read in place from input rows ``iy0:iy0 + 3``: ``rows[ky]`` = where
    ring row ``iy0 + ky`` starts, holding (with its padding columns) the input pixels the
    windows of columns ``0:ox_lo`` and ``ox_hi:out_w`` read; the slots are marked as holding
    no whole row (a row read through the ring later is copied whole)."""
    h, w_in, pl, wp, span = dims[0], dims[1], dims[3], dims[5], dims[6]
    length = wp * cout
    left = lesser(w_in, (ox_lo - 1) * stride_w + 3 - pl) if ox_lo > 0 else 0
    right = greater(left, ox_hi * stride_w - pl) if ox_hi < out_w else w_in
    for ky in range(3):
        iy = iy0 + ky
        slot = iy % span
        rows[ky] = slot * length
        slots[slot] = -(1 << 40)
        d, s = (slot * length + pl * cout) * 4, (b * h + iy) * w_in * cout * 4
        if left > 0:
            _copy_run(xb, s, sb, d, left * cout * 4, np.uint8(0))
        if right < w_in:
            o = right * cout * 4
            _copy_run(xb, s + o, sb, d + o, (w_in - right) * cout * 4, np.uint8(0))


@njit(_nrt=False, inline="always", inner=True)
def _dw3x3_float_row(x, r0, r1, r2, step, cout, ostep, w, c, cpad, bias, lo, hi, out, o0,
                     out_w, count):
    """:func:`_dw3x3_quant_row` for float32: taps summed in (ky, kx) order from 0.0; window
    positions ``step`` apart in ``x``, ``ostep`` apart in ``out``."""
    w0, w1, w2 = vf_load(w, c), vf_load(w, cpad + c), vf_load(w, 2 * cpad + c)
    w3, w4, w5 = vf_load(w, 3 * cpad + c), vf_load(w, 4 * cpad + c), vf_load(w, 5 * cpad + c)
    w6, w7, w8 = vf_load(w, 6 * cpad + c), vf_load(w, 7 * cpad + c), vf_load(w, 8 * cpad + c)
    b = vf_load(bias, c)
    for ox in range(out_w):
        i = ox * step
        acc = vf_muladd(vf_zero(), vf_load(x, r0 + i), w0)
        acc = vf_muladd(acc, vf_load(x, r0 + i + cout), w1)
        acc = vf_muladd(acc, vf_load(x, r0 + i + 2 * cout), w2)
        acc = vf_muladd(acc, vf_load(x, r1 + i), w3)
        acc = vf_muladd(acc, vf_load(x, r1 + i + cout), w4)
        acc = vf_muladd(acc, vf_load(x, r1 + i + 2 * cout), w5)
        acc = vf_muladd(acc, vf_load(x, r2 + i), w6)
        acc = vf_muladd(acc, vf_load(x, r2 + i + cout), w7)
        acc = vf_muladd(acc, vf_load(x, r2 + i + 2 * cout), w8)
        _store_f(vf_clamp(vf_add(acc, b), lo, hi), out, o0 + ox * ostep, count)


@njit(_nrt=False, inline="always", inner=True)
def _dw3x3_float_row8(x, r0, r1, r2, step, cout, w, c, cpad, bias, lo, hi, out, o0, out_w,
                      count):
    """:func:`_dw3x3_float_row` for the last <= 8 channels, in 8-lane vectors."""
    w0, w1, w2 = vh_load(w, c), vh_load(w, cpad + c), vh_load(w, 2 * cpad + c)
    w3, w4, w5 = vh_load(w, 3 * cpad + c), vh_load(w, 4 * cpad + c), vh_load(w, 5 * cpad + c)
    w6, w7, w8 = vh_load(w, 6 * cpad + c), vh_load(w, 7 * cpad + c), vh_load(w, 8 * cpad + c)
    b = vh_load(bias, c)
    for ox in range(out_w):
        i = ox * step
        acc = vf_muladd(vh_zero(), vh_load(x, r0 + i), w0)
        acc = vf_muladd(acc, vh_load(x, r0 + i + cout), w1)
        acc = vf_muladd(acc, vh_load(x, r0 + i + 2 * cout), w2)
        acc = vf_muladd(acc, vh_load(x, r1 + i), w3)
        acc = vf_muladd(acc, vh_load(x, r1 + i + cout), w4)
        acc = vf_muladd(acc, vh_load(x, r1 + i + 2 * cout), w5)
        acc = vf_muladd(acc, vh_load(x, r2 + i), w6)
        acc = vf_muladd(acc, vh_load(x, r2 + i + cout), w7)
        acc = vf_muladd(acc, vh_load(x, r2 + i + 2 * cout), w8)
        r = vf_clamp(vf_add(acc, b), lo, hi)
        if count >= 8:
            vh_store(r, out, o0 + ox * cout)
        else:
            vf_storen(r, out, o0 + ox * cout, count)



#: The two-row kernel's vectors: 8 lanes with AVX2 (16 ymm registers), 16 with AVX-512 (the
#: last <= 8 channels too: a vector load past them stays in the ring, its lanes are not
#: stored). One kernel per SIMD mode: each inlined kernel adds about 0.5 s to a cold start.
_LANES = 8 if _HALF_ROWS else 16
_vload, _vzero, _vstore = ((vh_load, vh_zero, vh_store) if _HALF_ROWS else
                           (vf_load, vf_zero, vf_store))


@njit(_nrt=False, inline="always", inner=True)
def _dw3x3_float_rows2(x, r0, r1, r2, r3, cout, w, c, cpad, bias, lo, hi, out, o0, out2, o1,
                       out_w, count):
    """:func:`_dw3x3_float_row` (stride 1) for two output rows at once, in vectors of
    :data:`_LANES`: the first's window rows at ``r0:r3``, the second's at ``r1:r4``, outputs at
    ``out[o0]`` and ``out2[o1]``; each pixel of the two middle rows is loaded once for both sums
    (12 loads for 18 multiply-adds, two independent sums in flight), each sum the same
    operations in the same order."""
    w0, w1, w2 = _vload(w, c), _vload(w, cpad + c), _vload(w, 2 * cpad + c)
    w3, w4, w5 = _vload(w, 3 * cpad + c), _vload(w, 4 * cpad + c), _vload(w, 5 * cpad + c)
    w6, w7, w8 = _vload(w, 6 * cpad + c), _vload(w, 7 * cpad + c), _vload(w, 8 * cpad + c)
    b = _vload(bias, c)
    for ox in range(out_w):
        i = ox * cout
        acc = vf_muladd(_vzero(), _vload(x, r0 + i), w0)
        acc = vf_muladd(acc, _vload(x, r0 + i + cout), w1)
        acc = vf_muladd(acc, _vload(x, r0 + i + 2 * cout), w2)
        v = _vload(x, r1 + i)
        acc, acc2 = vf_muladd(acc, v, w3), vf_muladd(_vzero(), v, w0)
        v = _vload(x, r1 + i + cout)
        acc, acc2 = vf_muladd(acc, v, w4), vf_muladd(acc2, v, w1)
        v = _vload(x, r1 + i + 2 * cout)
        acc, acc2 = vf_muladd(acc, v, w5), vf_muladd(acc2, v, w2)
        v = _vload(x, r2 + i)
        acc, acc2 = vf_muladd(acc, v, w6), vf_muladd(acc2, v, w3)
        v = _vload(x, r2 + i + cout)
        acc, acc2 = vf_muladd(acc, v, w7), vf_muladd(acc2, v, w4)
        v = _vload(x, r2 + i + 2 * cout)
        acc, acc2 = vf_muladd(acc, v, w8), vf_muladd(acc2, v, w5)
        acc2 = vf_muladd(acc2, _vload(x, r3 + i), w6)
        acc2 = vf_muladd(acc2, _vload(x, r3 + i + cout), w7)
        acc2 = vf_muladd(acc2, _vload(x, r3 + i + 2 * cout), w8)
        first, second = vf_clamp(vf_add(acc, b), lo, hi), vf_clamp(vf_add(acc2, b), lo, hi)
        if count >= _LANES:
            _vstore(first, out, o0 + i)
            _vstore(second, out2, o1 + i)
        else:
            vf_storen(first, out, o0 + i, count)
            vf_storen(second, out2, o1 + i, count)


@njit(_nrt=False, inner=True)
def _dw_float_taps(x, rows, i0, kh, kw, dx, w, c, cpad):
    acc = vf_zero()
    for ky in range(kh):
        for kx in range(kw):
            acc = vf_muladd(acc, vf_load(x, rows[ky] + i0 + kx * dx),
                            vf_load(w, (ky * kw + kx) * cpad + c))
    return acc


@njit(_nrt=False, inner=True)
def _store_f(r, out, o, count):
    if count >= 16:
        vf_store(r, out, o)
    else:
        vf_storen(r, out, o, count)
