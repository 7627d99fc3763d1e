"""Register-tiled GEMM cores for CONV_2D (and 1x1 convolutions / fully connected layers).

A convolution is ``out[p, c] = sum_k patch[p, k] * w[k, c]`` over output pixels ``p`` (rows of
the output viewed as ``[N * OH * OW, Cout]``) and taps ``k`` in TFLite's (ky, kx, ci) order.
Patches are either input rows (1x1, stride 1, unpadded: no copy) or gathered per block of
pixels (im2col). Micro-kernels compute 4 pixels x 64 channels in 16-lane vector registers
(:mod:`nnsim.kernels._jit` SIMD ops), then the tile is requantized (or biased and clamped)
into the output.

Integer path (uint8 / int8, exact modulo 2**32 like TFLite's int32 accumulator). With
``xu = x`` (uint8) or ``x + 128`` (int8) and ``ws = w`` (int8) or ``w - 128`` (uint8), i.e.
``x = xu - cx`` and ``w = ws + cw``::

    sum_k (x - x_zp)(w - w_zp) = D + (cw - w_zp) * (SX - K * (cx + x_zp)) - (cx + x_zp) * SW

where ``D = sum xu * ws`` (``vpdpbusd``: uint8 x int8, 4 taps per lane), ``SX = sum_k xu`` per
pixel, ``SW = sum_k ws`` per channel and ``K`` the number of taps. Padding taps are gathered as
``x = x_zp`` (``xu = cx + x_zp``), whose terms cancel: the same as skipping them. The per
channel term is folded into the bias once (:class:`QuantGemmPlan`); ``SX`` is only computed when
``cw != w_zp`` (uint8 filters whose zero point is not 128).

Float path: ``acc = 0; acc = acc + x[k] * w[k]`` in k order, one product at a time (no FMA),
then ``+ bias`` and the clamp: TFLite's reference order, lane by lane.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np

from nnsim.kernels._jit import (njit, vf_add, vf_bcast, vf_clamp, vf_load, vf_muladd, vf_store,
                                vf_zero, vi_bcast4, vi_dpbusd, vi_load, vi_requant, vi_splat,
                                vb_copy, vf_storen, vi_pack8, vi_store, vi_store8,
                                vi_store8n, vi_xor, vi_zero)

__all__ = ["QuantGemmPlan", "FloatGemmPlan", "PackedFilter", "pack_weights", "requant_params"]

_TILE = 64      # output channels per tile (4 vectors of 16 lanes)
_ROWS = 4       # output pixels per micro-kernel call
_BLOCK = 64     # output pixels per im2col block (multiple of _ROWS)


# --- packing (once per constant filter) --------------------------------------------------------

def _tiles(cout):
    """``[(c0, columns)]``: tiles of up to 4 columns of 16 channels covering ``cout``."""
    cols = -(-cout // 16)
    return [(16 * c, min(4, cols - c)) for c in range(0, cols, 4)]


class PackedFilter(NamedTuple):
    """A filter in the layout of the micro-kernels (see :func:`pack_weights`)."""

    data: np.ndarray          # int8 (quantized) or float32, 1-D
    sums: np.ndarray | None   # SW: int32 per output channel (quantized only)
    shape: tuple              # (Cout, K)
    dtype: np.dtype           # the filter's dtype


def pack_weights(w2d):
    """``w2d [Cout, K]`` (taps in (ky, kx, ci) order) -> :class:`PackedFilter`.

    uint8/int8: per tile of ``n`` columns of 16 channels, ``[K/4 groups][16 n][4 taps]`` bytes
    of ``ws`` (K padded with zeros to a multiple of 4), plus ``SW``; float: ``[K][16 n]``
    float32. Channels are padded with zeros to a multiple of 16."""
    w2d = np.asarray(w2d)
    if w2d.dtype.kind == "f":
        return PackedFilter(_pack_float(w2d), None, w2d.shape, w2d.dtype)
    data, sums = _pack_quant(w2d)
    return PackedFilter(data, sums, w2d.shape, w2d.dtype)


def _pack_quant(w2d):
    cout, k = w2d.shape
    ws = w2d.astype(np.int16) - (128 if w2d.dtype == np.uint8 else 0)
    kp, cp = -(-k // 4) * 4, -(-cout // 16) * 16
    full = np.zeros((cp, kp), np.int8)
    full[:cout, :k] = ws
    parts = [full[c0:c0 + 16 * n].reshape(16 * n, kp // 4, 4).transpose(1, 0, 2).ravel()
             for c0, n in _tiles(cout)]
    return np.concatenate(parts), ws.sum(axis=1, dtype=np.int64).astype(np.int32)


def _pack_float(w2d):
    w2d = w2d.astype(np.float32)
    cout, k = w2d.shape
    full = np.zeros((-(-cout // 16) * 16, k), np.float32)
    full[:cout] = w2d
    parts = [np.ascontiguousarray(full[c0:c0 + 16 * n].T).ravel() for c0, n in _tiles(cout)]
    return np.concatenate(parts)


def _check_packed(packed, w):
    kind = "f" if w.dtype.kind == "f" else "q"
    if packed.shape != (w.shape[0], w[0].size) or (packed.sums is None) != (kind == "f") \
            or (kind == "q" and packed.dtype != w.dtype):
        raise ValueError(f"packed filter {packed.shape} {packed.dtype} does not match the filter "
                         f"{w.shape} {w.dtype}")


def requant_params(bias, mults, shifts):
    """The ``qp`` table of :func:`nnsim.kernels._jit.vi_requant` for per-channel ``bias``
    (wrapped to int32), multipliers and shifts: 7 rows of ``cpad`` (Cout rounded up to 16)."""
    cout = len(mults)
    cpad = -(-cout // 16) * 16 + 16
    m = np.zeros(cpad, np.int64)
    m[:cout] = mults
    right = np.zeros(cpad, np.int64)
    right[:cout] = np.maximum(-np.asarray(shifts, np.int64), 0)
    qp = np.zeros((7, cpad), np.int64)
    qp[0, :cout] = bias
    qp[1] = m
    qp[2, 0:-1:2] = m[1::2]
    qp[3, :cout] = np.maximum(np.asarray(shifts, np.int64), 0)
    qp[4] = right
    qp[5] = (np.int64(1) << right) - 1
    qp[6] = qp[5] >> 1
    return ((qp[:, :cpad - 16] + 2**31) % 2**32 - 2**31).astype(np.int32).ravel()


# --- plans (everything computed once per layer) -----------------------------------------------

_DIRECT, _IMPLICIT, _GATHER = 0, 1, 2


class _Plan:
    """Geometry shared by the quantized and float plans; ``run(x, out)`` computes a layer.

    The micro-kernels read the patch of an output pixel as ``kh`` runs of ``seg`` contiguous
    elements, ``dy`` apart, from a row base offset:

    * ``direct`` (1x1, stride 1, unpadded): the input rows themselves;
    * ``implicit`` (any other undilated-in-width geometry): runs of the padded copy of the input
      (``padded``, refreshed at every run; the border keeps the padding value); an integer run
      that would not be whole groups of 4 bytes is widened to ``kw_p`` pixels, the extra taps
      with zero weights;
    * ``gather`` (dilation in width): patches copied into ``cols`` (im2col) from the padded
      copy, ``kp`` elements per pixel.
    """

    def __init__(self, x_shape, out_shape, kh, kw, cout, geometry, dtype, fill, quad):
        stride_h, stride_w, pad_top, pad_left, dil_h, dil_w = (int(g) for g in geometry)
        self.x_shape = n, h, w, cin = tuple(int(d) for d in x_shape)
        self.out_shape = tuple(int(d) for d in out_shape)
        self.k = kh * kw * cin
        self.cout = cout
        self.kw_p = kw
        align = 4 if quad else 1
        if (kh == 1 and kw == 1 and stride_h == 1 and stride_w == 1 and pad_top == 0
                and pad_left == 0 and cin % align == 0
                and self.out_shape[1:3] == self.x_shape[1:3]):
            self.mode = _DIRECT
        elif dil_w == 1:
            self.mode = _IMPLICIT
            while (self.kw_p * cin) % align:   # taps past the window, with zero weights
                self.kw_p += 1
        else:
            self.mode = _GATHER
        self.kp = -(-self.k // align) * align if self.mode == _GATHER else kh * self.kw_p * cin
        self.inner = None
        self.padded = np.zeros(64, dtype)
        hp = wp = 0
        if self.mode != _DIRECT:
            hp = max(h + pad_top, (self.out_shape[1] - 1) * stride_h + (kh - 1) * dil_h + 1)
            wp = max(w + pad_left, (self.out_shape[2] - 1) * stride_w + (kw - 1) * dil_w + 1)
            slack = (64 + 3 * cin * np.dtype(dtype).itemsize) // np.dtype(dtype).itemsize
            self.padded = np.full(n * hp * wp * cin + slack, fill, dtype)
            view = self.padded[:-slack].reshape(n, hp, wp, cin)
            self.inner = view[:, pad_top:pad_top + h, pad_left:pad_left + w]
        if self.mode == _IMPLICIT:
            runs = (kh, self.kw_p * cin, dil_h * wp * cin)
        else:
            runs = (1, self.kp, 0)
        self.geo = np.array([kh, kw, stride_h, stride_w, dil_h, dil_w, hp, wp, cin, self.mode,
                             *runs], np.int64)
        self.cols = np.zeros(_BLOCK * self.kp + 64 if self.mode == _GATHER else 64, dtype)
        self.rb = np.zeros(_BLOCK + 2 * _ROWS, np.int64)
        self.pads = np.array([pad_top, pad_left], np.int64)

    def _weights(self, w):
        """The filter as the [Cout, K] matrix of the micro-kernels (window widened)."""
        if self.kw_p != w.shape[2]:   # extra taps: ws = 0 (uint8 128 is ws 0)
            pad = np.full(w.shape[:2] + (self.kw_p - w.shape[2], w.shape[3]),
                          128 if w.dtype == np.uint8 else 0, w.dtype)
            w = np.concatenate([w, pad], axis=2)
        return w.reshape(w.shape[0], -1)


class QuantGemmPlan(_Plan):
    """A quantized convolution's constants: packed filter, folded bias, multipliers, clamp.

    ``x_dtype``: uint8 or int8 (``w`` [Cout, KH, KW, Cin] uint8 or int8); ``mults``/``shifts``:
    int32 per channel; ``geometry``: (stride_h, stride_w, pad_top, pad_left, dil_h, dil_w);
    ``out_shape``: [N, OH, OW, Cout], computed by the caller from the full padding.
    """

    def __init__(self, x_shape, out_shape, x_dtype, in_zp, w, w_zp, bias, mults, shifts, out_zp,
                 lo, hi, geometry, packed=None):
        cout, kh, kw, cin = w.shape
        cx = 128 if np.dtype(x_dtype) == np.int8 else 0
        cw = 128 if w.dtype == np.uint8 else 0
        fill = cx + int(in_zp)                     # xu of a padding tap (x = x_zp)
        super().__init__(x_shape, out_shape, kh, kw, cout, geometry, np.uint8, fill, True)
        if packed is None or self.kw_p != kw:
            packed = pack_weights(self._weights(w))
        else:
            _check_packed(packed, w)
        k = self.k
        bias = np.zeros(cout, np.int64) if bias is None else bias.astype(np.int64)
        self.wp = packed.data
        self.flip = bool(cx)
        self.qp = requant_params(bias - fill * packed.sums.astype(np.int64), mults, shifts)
        direct = self.mode == _DIRECT
        self.prm = np.array([k, cw - int(w_zp), k * fill, int(out_zp), int(lo), int(hi),
                             -(-cout // 16) * 16, 1 if cx and direct else 0], np.int64)
        self.sx = np.zeros(_BLOCK, np.int64)

    def run(self, x, out):
        """``out [N, OH, OW, Cout]`` (uint8/int8) = the convolution of ``x`` (same dtype as
        given to the plan, C-contiguous)."""
        self.bind(x, out)()
        return out

    def bind(self, x, out):
        """A function of no arguments computing ``out`` from the current contents of ``x``
        (both arrays fixed: an interpreter's tensor buffers), with every view made once."""
        xb = x.view(np.uint8)
        args = (self.geo, self.prm, self.wp, self.qp, out.view(np.uint8).reshape(-1, self.cout),
                out.shape[1], out.shape[2], self.cols, self.rb, self.sx)
        if self.mode == _DIRECT:
            return partial(_quant_conv_core, xb.reshape(-1), *args)
        # int8 -> uint8 + 128 while copying into the padded input
        fill = (xb, int(self.geo[6]), int(self.geo[7]), int(self.pads[0]), int(self.pads[1]),
                np.uint8(128 if self.flip else 0), self.padded)
        return partial(_padded_then, _quant_conv_core, fill, self.padded, args)


class FloatGemmPlan(_Plan):
    """A float32 convolution's constants: packed filter, bias, clamp."""

    def __init__(self, x_shape, out_shape, w, bias, lo, hi, geometry, packed=None):
        cout, kh, kw, _ = w.shape
        super().__init__(x_shape, out_shape, kh, kw, cout, geometry, np.float32, 0.0, False)
        packed = pack_weights(w.reshape(cout, -1)) if packed is None else packed
        _check_packed(packed, w)
        self.wp = packed.data
        cpad = -(-cout // 16) * 16
        self.bias = np.zeros(cpad, np.float32)
        if bias is not None:
            self.bias[:cout] = bias
        self.clamp = np.array([lo, hi], np.float32)

    def run(self, x, out):
        self.bind(x, out)()
        return out

    def bind(self, x, out):
        """As :meth:`QuantGemmPlan.bind`."""
        args = (self.geo, self.wp, self.bias, self.clamp, out.reshape(-1, self.cout),
                out.shape[1], out.shape[2], self.cols, self.rb)
        if self.mode == _DIRECT:
            return partial(_float_conv_core, x.reshape(-1), *args)
        fill = (x, int(self.geo[6]), int(self.geo[7]), int(self.pads[0]), int(self.pads[1]),
                np.uint8(0), self.padded)
        return partial(_padded_then, _float_conv_core, fill, self.padded, args)


def _padded_then(core, fill, padded, args):
    """Refresh the padded input copy, then run the core on it."""
    _fill_padded(*fill)
    core(padded, *args)


# --- shared: row bases of a block of output pixels, im2col -------------------------------------

@njit(_nrt=False)
def _fill_padded(x, hp, wp, pad_top, pad_left, flip, padded):
    """The interior of a padded NHWC copy: ``x`` (XOR ``flip`` per byte), row by row."""
    n, h, w, cin = x.shape
    xf = x.reshape(-1)
    size = w * cin
    step = 64 // x.itemsize
    s = 0
    for b in range(n):
        for y in range(h):
            d = ((b * hp + y + pad_top) * wp + pad_left) * cin
            for i in range(0, size, step):
                vb_copy(xf, s + i, padded, d + i, (size - i) * x.itemsize, flip)
            s += size


@njit(_nrt=False)
def _row_bases(geo, p0, n, out_h, out_w, rb):
    """``rb[j]``: where the patch of output pixel p0 + j starts in the kernel's source; entries
    n .. n + 7 repeat the last one (whole micro-kernels read them, nothing is stored)."""
    kh, kw, stride_h, stride_w, dil_h, dil_w = geo[0], geo[1], geo[2], geo[3], geo[4], geo[5]
    hp, wp, cp, mode, seg = geo[6], geo[7], geo[8], geo[9], geo[11]
    if mode == _DIRECT:
        for j in range(n):
            rb[j] = (p0 + j) * seg
    elif mode == _GATHER:
        for j in range(n):
            rb[j] = j * seg
    else:
        b, rest = divmod(p0, out_h * out_w)
        oy, ox = divmod(rest, out_w)
        for j in range(n):
            rb[j] = ((b * hp + oy * stride_h) * wp + ox * stride_w) * cp
            ox += 1
            if ox == out_w:
                ox = 0
                oy += 1
                if oy == out_h:
                    oy = 0
                    b += 1
    for j in range(n, n + 2 * _ROWS):
        rb[j] = rb[n - 1]


@njit(_nrt=False)
def _gather(xpad, geo, p0, n, out_h, out_w, cols):
    """im2col for a dilated-in-width window: patches of pixels p0.. as rows of ``kp``."""
    kh, kw, stride_h, stride_w, dil_h, dil_w = geo[0], geo[1], geo[2], geo[3], geo[4], geo[5]
    hp, wp, cin, kp = geo[6], geo[7], geo[8], geo[11]
    b, rest = divmod(p0, out_h * out_w)
    oy, ox = divmod(rest, out_w)
    for j in range(n):
        d = j * kp
        for ky in range(kh):
            s = ((b * hp + oy * stride_h + ky * dil_h) * wp + ox * stride_w) * cin
            for kx in range(kw):
                for ci in range(cin):
                    cols[d] = xpad[s + kx * dil_w * cin + ci]
                    d += 1
        while d < (j + 1) * kp:
            cols[d] = 0
            d += 1
        ox += 1
        if ox == out_w:
            ox = 0
            oy += 1
            if oy == out_h:
                oy = 0
                b += 1


# --- integer core ------------------------------------------------------------------------------

@njit
def _quant_conv_core(x, geo, prm, wp, qp, out, out_h, out_w, cols, rb, sx):
    k, rowcoef, kfill, out_zp, lo, hi = prm[0], prm[1], prm[2], prm[3], prm[4], prm[5]
    cpad, xflip = prm[6], prm[7]
    kh, seg, dy, mode = geo[10], geo[11], geo[12], geo[9]
    groups = kh * seg // 4
    pixels, cout = out.shape
    oflat = out.reshape(-1)
    scratch = np.empty(16, np.uint8)
    ex = np.zeros(_BLOCK + _ROWS, np.int32)
    xmask = np.int32(-2139062144) if xflip else np.int32(0)   # 0x80808080: int8 -> uint8 + 128
    src = cols if mode == _GATHER else x
    for p0 in range(0, pixels, _BLOCK):
        n = min(_BLOCK, pixels - p0)
        if mode == _GATHER:
            _gather(x, geo, p0, n, out_h, out_w, cols)
        _row_bases(geo, p0, n, out_h, out_w, rb)
        if rowcoef != 0:   # (the real taps only: not the zero-weight ones widening a run)
            _row_sums(src, rb, n, kh, geo[1] * geo[8] if mode == _IMPLICIT else seg, dy, sx,
                      xflip)
            for j in range(n):
                ex[j] = np.int32(rowcoef * (sx[j] - kfill))
        c0 = 0
        woff = 0
        while c0 < cout:
            ncol = min(4, (cout - c0 + 15) // 16)
            _tile(src, rb, n, dy, kh, seg // 4, wp, woff, ncol, xmask, qp, c0, cpad, ex, out_zp,
                  lo, hi, oflat, p0 * cout + c0, cout, scratch)
            woff += groups * ncol * 64
            c0 += _TILE
    return out


@njit(_nrt=False)
def _row_sums(src, rb, n, kh, seg, dy, sx, flip):
    """``sx[j] = sum of the xu values of the patch of pixel j`` (``flip``: int8 bytes)."""
    f = np.uint8(128) if flip else np.uint8(0)
    for j in range(n):
        total = np.int64(0)
        for ky in range(kh):
            s = rb[j] + ky * dy
            for i in range(s, s + seg):
                total += np.int64(src[i] ^ f)
        sx[j] = total


@njit(_nrt=False)
def _tile(src, rb, n, dy, kh, gpr, wp, woff, ncol, xmask, qp, c0, cpad, ex, zp, lo, hi, out, o,
          cout, scratch):
    """``n`` pixels (patch runs from ``src[rb[j]]``) times one tile of ``ncol`` x 16 channels
    (``gpr`` groups of 4 taps per run)."""
    stride = ncol * 64
    if ncol == 4:
        _mk4(src, rb, n, dy, kh, gpr, wp, woff, stride, xmask, qp, c0, cpad, ex, zp, lo, hi,
             out, o, cout, cout - c0, scratch)
    elif ncol >= 2:
        _mk2(src, rb, n, dy, kh, gpr, wp, woff, stride, xmask, qp, c0, cpad, ex, zp, lo, hi,
             out, o, cout, cout - c0, scratch)
        if ncol == 3:
            _mk1(src, rb, n, dy, kh, gpr, wp, woff + 128, stride, xmask, qp, c0 + 32, cpad, ex,
                 zp, lo, hi, out, o + 32, cout, cout - c0 - 32, scratch)
    else:
        _mk1(src, rb, n, dy, kh, gpr, wp, woff, stride, xmask, qp, c0, cpad, ex, zp, lo, hi,
             out, o, cout, cout - c0, scratch)


@njit(_nrt=False)
def _emit(v, qp, c, cpad, extra, zp, lo, hi, out, o, count, scratch):
    """Requantize 16 accumulators of channels c.. (``qp``: see :func:`requant_params`) and
    store the first ``count`` (at most 16) to ``out[o:]``."""
    r = vi_requant(v, qp, c, cpad, extra, zp, lo, hi)
    if count >= 16:
        vi_store8(r, out, o)
    else:
        vi_store8n(r, out, o, count)


@njit(_nrt=False)
def _mk4(src, rb, n, dy, kh, gpr, wp, wo, ws, xmask, qp, c, cpad, ex, zp, lo, hi,
         out, o0, cout, cv, scratch):
    """``n`` pixels, 4 at a time (patch runs at ``src[rb[j] + ky * dy]``), x 64 channels
    (``wp[wo:]``, ``ws`` bytes per group of 4 taps) -> ``out[o0 + j * cout:]``, ``cv``
    channels kept; ``ex[j]`` is added to the accumulators of pixel j."""
    m = vi_splat(xmask)
    for j in range(0, n, _ROWS):
        rows = min(_ROWS, n - j)
        r0, r1, r2, r3 = rb[j], rb[j + 1], rb[j + 2], rb[j + 3]
        o = o0 + j * cout
        a00, a01, a02, a03 = vi_zero(), vi_zero(), vi_zero(), vi_zero()
        a10, a11, a12, a13 = vi_zero(), vi_zero(), vi_zero(), vi_zero()
        a20, a21, a22, a23 = vi_zero(), vi_zero(), vi_zero(), vi_zero()
        a30, a31, a32, a33 = vi_zero(), vi_zero(), vi_zero(), vi_zero()
        p = wo
        for ky in range(kh):
            t = ky * dy
            for _ in range(gpr):
                w0, w1, w2, w3 = vi_load(wp, p), vi_load(wp, p + 64), vi_load(wp, p + 128), \
                    vi_load(wp, p + 192)
                p += ws
                b = vi_xor(vi_bcast4(src, r0 + t), m)
                a00, a01 = vi_dpbusd(a00, b, w0), vi_dpbusd(a01, b, w1)
                a02, a03 = vi_dpbusd(a02, b, w2), vi_dpbusd(a03, b, w3)
                b = vi_xor(vi_bcast4(src, r1 + t), m)
                a10, a11 = vi_dpbusd(a10, b, w0), vi_dpbusd(a11, b, w1)
                a12, a13 = vi_dpbusd(a12, b, w2), vi_dpbusd(a13, b, w3)
                b = vi_xor(vi_bcast4(src, r2 + t), m)
                a20, a21 = vi_dpbusd(a20, b, w0), vi_dpbusd(a21, b, w1)
                a22, a23 = vi_dpbusd(a22, b, w2), vi_dpbusd(a23, b, w3)
                b = vi_xor(vi_bcast4(src, r3 + t), m)
                a30, a31 = vi_dpbusd(a30, b, w0), vi_dpbusd(a31, b, w1)
                a32, a33 = vi_dpbusd(a32, b, w2), vi_dpbusd(a33, b, w3)
                t += 4
        if cv >= _TILE:   # whole tile: 64 bytes per pixel in one store
            e = ex[j]
            vi_store(vi_pack8(vi_requant(a00, qp, c, cpad, e, zp, lo, hi),
                              vi_requant(a01, qp, c + 16, cpad, e, zp, lo, hi),
                              vi_requant(a02, qp, c + 32, cpad, e, zp, lo, hi),
                              vi_requant(a03, qp, c + 48, cpad, e, zp, lo, hi)), out, o)
            if rows > 1:
                e = ex[j + 1]
                vi_store(vi_pack8(vi_requant(a10, qp, c, cpad, e, zp, lo, hi),
                                  vi_requant(a11, qp, c + 16, cpad, e, zp, lo, hi),
                                  vi_requant(a12, qp, c + 32, cpad, e, zp, lo, hi),
                                  vi_requant(a13, qp, c + 48, cpad, e, zp, lo, hi)), out,
                         o + cout)
            if rows > 2:
                e = ex[j + 2]
                vi_store(vi_pack8(vi_requant(a20, qp, c, cpad, e, zp, lo, hi),
                                  vi_requant(a21, qp, c + 16, cpad, e, zp, lo, hi),
                                  vi_requant(a22, qp, c + 32, cpad, e, zp, lo, hi),
                                  vi_requant(a23, qp, c + 48, cpad, e, zp, lo, hi)), out,
                         o + 2 * cout)
            if rows > 3:
                e = ex[j + 3]
                vi_store(vi_pack8(vi_requant(a30, qp, c, cpad, e, zp, lo, hi),
                                  vi_requant(a31, qp, c + 16, cpad, e, zp, lo, hi),
                                  vi_requant(a32, qp, c + 32, cpad, e, zp, lo, hi),
                                  vi_requant(a33, qp, c + 48, cpad, e, zp, lo, hi)), out,
                         o + 3 * cout)
            continue
        _emit(a00, qp, c, cpad, ex[j], zp, lo, hi, out, o, cv, scratch)
        _emit(a01, qp, c + 16, cpad, ex[j], zp, lo, hi, out, o + 16, cv - 16, scratch)
        _emit(a02, qp, c + 32, cpad, ex[j], zp, lo, hi, out, o + 32, cv - 32, scratch)
        _emit(a03, qp, c + 48, cpad, ex[j], zp, lo, hi, out, o + 48, cv - 48, scratch)
        if rows > 1:
            o += cout
            _emit(a10, qp, c, cpad, ex[j + 1], zp, lo, hi, out, o, cv, scratch)
            _emit(a11, qp, c + 16, cpad, ex[j + 1], zp, lo, hi, out, o + 16, cv - 16, scratch)
            _emit(a12, qp, c + 32, cpad, ex[j + 1], zp, lo, hi, out, o + 32, cv - 32, scratch)
            _emit(a13, qp, c + 48, cpad, ex[j + 1], zp, lo, hi, out, o + 48, cv - 48, scratch)
        if rows > 2:
            o += cout
            _emit(a20, qp, c, cpad, ex[j + 2], zp, lo, hi, out, o, cv, scratch)
            _emit(a21, qp, c + 16, cpad, ex[j + 2], zp, lo, hi, out, o + 16, cv - 16, scratch)
            _emit(a22, qp, c + 32, cpad, ex[j + 2], zp, lo, hi, out, o + 32, cv - 32, scratch)
            _emit(a23, qp, c + 48, cpad, ex[j + 2], zp, lo, hi, out, o + 48, cv - 48, scratch)
        if rows > 3:
            o += cout
            _emit(a30, qp, c, cpad, ex[j + 3], zp, lo, hi, out, o, cv, scratch)
            _emit(a31, qp, c + 16, cpad, ex[j + 3], zp, lo, hi, out, o + 16, cv - 16, scratch)
            _emit(a32, qp, c + 32, cpad, ex[j + 3], zp, lo, hi, out, o + 32, cv - 32, scratch)
            _emit(a33, qp, c + 48, cpad, ex[j + 3], zp, lo, hi, out, o + 48, cv - 48, scratch)


@njit(_nrt=False)
def _mk2(src, rb, n, dy, kh, gpr, wp, wo, ws, xmask, qp, c, cpad, ex, zp, lo, hi,
         out, o0, cout, cv, scratch):
    """:func:`_mk4` for 32 channels."""
    m = vi_splat(xmask)
    for j in range(0, n, _ROWS):
        rows = min(_ROWS, n - j)
        r0, r1, r2, r3 = rb[j], rb[j + 1], rb[j + 2], rb[j + 3]
        o = o0 + j * cout
        a00, a01, a10, a11 = vi_zero(), vi_zero(), vi_zero(), vi_zero()
        a20, a21, a30, a31 = vi_zero(), vi_zero(), vi_zero(), vi_zero()
        p = wo
        for ky in range(kh):
            t = ky * dy
            for _ in range(gpr):
                w0, w1 = vi_load(wp, p), vi_load(wp, p + 64)
                p += ws
                b = vi_xor(vi_bcast4(src, r0 + t), m)
                a00, a01 = vi_dpbusd(a00, b, w0), vi_dpbusd(a01, b, w1)
                b = vi_xor(vi_bcast4(src, r1 + t), m)
                a10, a11 = vi_dpbusd(a10, b, w0), vi_dpbusd(a11, b, w1)
                b = vi_xor(vi_bcast4(src, r2 + t), m)
                a20, a21 = vi_dpbusd(a20, b, w0), vi_dpbusd(a21, b, w1)
                b = vi_xor(vi_bcast4(src, r3 + t), m)
                a30, a31 = vi_dpbusd(a30, b, w0), vi_dpbusd(a31, b, w1)
                t += 4
        _emit(a00, qp, c, cpad, ex[j], zp, lo, hi, out, o, cv, scratch)
        _emit(a01, qp, c + 16, cpad, ex[j], zp, lo, hi, out, o + 16, cv - 16, scratch)
        if rows > 1:
            o += cout
            _emit(a10, qp, c, cpad, ex[j + 1], zp, lo, hi, out, o, cv, scratch)
            _emit(a11, qp, c + 16, cpad, ex[j + 1], zp, lo, hi, out, o + 16, cv - 16, scratch)
        if rows > 2:
            o += cout
            _emit(a20, qp, c, cpad, ex[j + 2], zp, lo, hi, out, o, cv, scratch)
            _emit(a21, qp, c + 16, cpad, ex[j + 2], zp, lo, hi, out, o + 16, cv - 16, scratch)
        if rows > 3:
            o += cout
            _emit(a30, qp, c, cpad, ex[j + 3], zp, lo, hi, out, o, cv, scratch)
            _emit(a31, qp, c + 16, cpad, ex[j + 3], zp, lo, hi, out, o + 16, cv - 16, scratch)


@njit(_nrt=False)
def _mk1(src, rb, n, dy, kh, gpr, wp, wo, ws, xmask, qp, c, cpad, ex, zp, lo, hi,
         out, o0, cout, cv, scratch):
    """:func:`_mk4` for 16 channels."""
    m = vi_splat(xmask)
    for j in range(0, n, _ROWS):
        rows = min(_ROWS, n - j)
        r0, r1, r2, r3 = rb[j], rb[j + 1], rb[j + 2], rb[j + 3]
        o = o0 + j * cout
        a0, a1, a2, a3 = vi_zero(), vi_zero(), vi_zero(), vi_zero()
        p = wo
        for ky in range(kh):
            t = ky * dy
            for _ in range(gpr):
                w0 = vi_load(wp, p)
                p += ws
                a0 = vi_dpbusd(a0, vi_xor(vi_bcast4(src, r0 + t), m), w0)
                a1 = vi_dpbusd(a1, vi_xor(vi_bcast4(src, r1 + t), m), w0)
                a2 = vi_dpbusd(a2, vi_xor(vi_bcast4(src, r2 + t), m), w0)
                a3 = vi_dpbusd(a3, vi_xor(vi_bcast4(src, r3 + t), m), w0)
                t += 4
        _emit(a0, qp, c, cpad, ex[j], zp, lo, hi, out, o, cv, scratch)
        if rows > 1:
            _emit(a1, qp, c, cpad, ex[j + 1], zp, lo, hi, out, o + cout, cv, scratch)
        if rows > 2:
            _emit(a2, qp, c, cpad, ex[j + 2], zp, lo, hi, out, o + 2 * cout, cv, scratch)
        if rows > 3:
            _emit(a3, qp, c, cpad, ex[j + 3], zp, lo, hi, out, o + 3 * cout, cv, scratch)


# --- float core --------------------------------------------------------------------------------

@njit
def _float_conv_core(x, geo, wp, bias, clamp, out, out_h, out_w, cols, rb):
    kh, seg, dy, mode = geo[10], geo[11], geo[12], geo[9]
    k = kh * seg
    pixels, cout = out.shape
    oflat = out.reshape(-1)
    scratch = np.empty(16, np.float32)
    lo, hi = clamp[0], clamp[1]
    src = cols if mode == _GATHER else x
    for p0 in range(0, pixels, _BLOCK):
        n = min(_BLOCK, pixels - p0)
        if mode == _GATHER:
            _gather(x, geo, p0, n, out_h, out_w, cols)
        _row_bases(geo, p0, n, out_h, out_w, rb)
        c0 = 0
        woff = 0
        while c0 < cout:
            ncol = min(4, (cout - c0 + 15) // 16)
            stride = ncol * 16
            if ncol == 4:
                _fk4(src, rb, n, dy, kh, seg, wp, woff, stride, bias, c0, lo, hi, oflat,
                     p0 * cout + c0, cout, cout - c0, scratch)
            else:   # narrow tiles: 8 pixels per call (8 independent sums hide the add latency)
                for j in range(0, n, 2 * _ROWS):
                    for c in range(ncol):
                        _fk1x8(src, rb, j, dy, kh, seg, wp, woff + 16 * c, stride, bias,
                               c0 + 16 * c, lo, hi, oflat, (p0 + j) * cout + c0 + 16 * c, cout,
                               min(2 * _ROWS, n - j), cout - c0 - 16 * c, scratch)
            woff += k * stride
            c0 += _TILE
    return out


@njit(_nrt=False)
def _emit_f(v, bias, c, lo, hi, out, o, count, scratch):
    """TFLite's ActivationFunctionWithMinMax(total + bias) for channels c.., first ``count``."""
    r = vf_clamp(vf_add(v, vf_load(bias, c)), lo, hi)
    if count >= 16:
        vf_store(r, out, o)
    else:
        vf_storen(r, out, o, count)


@njit(_nrt=False)
def _fk4(src, rb, n, dy, kh, seg, wp, wo, ws, bias, c, lo, hi, out, o0, cout, cv, scratch):
    """``n`` pixels, 4 at a time, x 64 channels, float: taps one at a time in k order from 0.0
    (no FMA)."""
    for j in range(0, n, _ROWS):
        rows = min(_ROWS, n - j)
        r0, r1, r2, r3 = rb[j], rb[j + 1], rb[j + 2], rb[j + 3]
        o = o0 + j * cout
        a00, a01, a02, a03 = vf_zero(), vf_zero(), vf_zero(), vf_zero()
        a10, a11, a12, a13 = vf_zero(), vf_zero(), vf_zero(), vf_zero()
        a20, a21, a22, a23 = vf_zero(), vf_zero(), vf_zero(), vf_zero()
        a30, a31, a32, a33 = vf_zero(), vf_zero(), vf_zero(), vf_zero()
        p = wo
        for ky in range(kh):
            t = ky * dy
            for _ in range(seg):
                w0, w1, w2, w3 = vf_load(wp, p), vf_load(wp, p + 16), vf_load(wp, p + 32), \
                    vf_load(wp, p + 48)
                p += ws
                b = vf_bcast(src, r0 + t)
                a00, a01 = vf_muladd(a00, b, w0), vf_muladd(a01, b, w1)
                a02, a03 = vf_muladd(a02, b, w2), vf_muladd(a03, b, w3)
                b = vf_bcast(src, r1 + t)
                a10, a11 = vf_muladd(a10, b, w0), vf_muladd(a11, b, w1)
                a12, a13 = vf_muladd(a12, b, w2), vf_muladd(a13, b, w3)
                b = vf_bcast(src, r2 + t)
                a20, a21 = vf_muladd(a20, b, w0), vf_muladd(a21, b, w1)
                a22, a23 = vf_muladd(a22, b, w2), vf_muladd(a23, b, w3)
                b = vf_bcast(src, r3 + t)
                a30, a31 = vf_muladd(a30, b, w0), vf_muladd(a31, b, w1)
                a32, a33 = vf_muladd(a32, b, w2), vf_muladd(a33, b, w3)
                t += 1
        _emit_f(a00, bias, c, lo, hi, out, o, cv, scratch)
        _emit_f(a01, bias, c + 16, lo, hi, out, o + 16, cv - 16, scratch)
        _emit_f(a02, bias, c + 32, lo, hi, out, o + 32, cv - 32, scratch)
        _emit_f(a03, bias, c + 48, lo, hi, out, o + 48, cv - 48, scratch)
        if rows > 1:
            o += cout
            _emit_f(a10, bias, c, lo, hi, out, o, cv, scratch)
            _emit_f(a11, bias, c + 16, lo, hi, out, o + 16, cv - 16, scratch)
            _emit_f(a12, bias, c + 32, lo, hi, out, o + 32, cv - 32, scratch)
            _emit_f(a13, bias, c + 48, lo, hi, out, o + 48, cv - 48, scratch)
        if rows > 2:
            o += cout
            _emit_f(a20, bias, c, lo, hi, out, o, cv, scratch)
            _emit_f(a21, bias, c + 16, lo, hi, out, o + 16, cv - 16, scratch)
            _emit_f(a22, bias, c + 32, lo, hi, out, o + 32, cv - 32, scratch)
            _emit_f(a23, bias, c + 48, lo, hi, out, o + 48, cv - 48, scratch)
        if rows > 3:
            o += cout
            _emit_f(a30, bias, c, lo, hi, out, o, cv, scratch)
            _emit_f(a31, bias, c + 16, lo, hi, out, o + 16, cv - 16, scratch)
            _emit_f(a32, bias, c + 32, lo, hi, out, o + 32, cv - 32, scratch)
            _emit_f(a33, bias, c + 48, lo, hi, out, o + 48, cv - 48, scratch)


@njit(_nrt=False)
def _fk1x8(src, rb, j, dy, kh, seg, wp, wo, ws, bias, c, lo, hi, out, o, cout, rows, cv,
           scratch):
    """:func:`_fk4` for 16 channels and 8 pixels (patches at ``rb[j:j + 8]``)."""
    r0, r1, r2, r3 = rb[j], rb[j + 1], rb[j + 2], rb[j + 3]
    r4, r5, r6, r7 = rb[j + 4], rb[j + 5], rb[j + 6], rb[j + 7]
    a0, a1, a2, a3 = vf_zero(), vf_zero(), vf_zero(), vf_zero()
    a4, a5, a6, a7 = vf_zero(), vf_zero(), vf_zero(), vf_zero()
    p = wo
    for ky in range(kh):
        t = ky * dy
        for _ in range(seg):
            w0 = vf_load(wp, p)
            p += ws
            a0 = vf_muladd(a0, vf_bcast(src, r0 + t), w0)
            a1 = vf_muladd(a1, vf_bcast(src, r1 + t), w0)
            a2 = vf_muladd(a2, vf_bcast(src, r2 + t), w0)
            a3 = vf_muladd(a3, vf_bcast(src, r3 + t), w0)
            a4 = vf_muladd(a4, vf_bcast(src, r4 + t), w0)
            a5 = vf_muladd(a5, vf_bcast(src, r5 + t), w0)
            a6 = vf_muladd(a6, vf_bcast(src, r6 + t), w0)
            a7 = vf_muladd(a7, vf_bcast(src, r7 + t), w0)
            t += 1
    _emit_f(a0, bias, c, lo, hi, out, o, cv, scratch)
    if rows > 1:
        _emit_f(a1, bias, c, lo, hi, out, o + cout, cv, scratch)
    if rows > 2:
        _emit_f(a2, bias, c, lo, hi, out, o + 2 * cout, cv, scratch)
    if rows > 3:
        _emit_f(a3, bias, c, lo, hi, out, o + 3 * cout, cv, scratch)
    if rows > 4:
        _emit_f(a4, bias, c, lo, hi, out, o + 4 * cout, cv, scratch)
    if rows > 5:
        _emit_f(a5, bias, c, lo, hi, out, o + 5 * cout, cv, scratch)
    if rows > 6:
        _emit_f(a6, bias, c, lo, hi, out, o + 6 * cout, cv, scratch)
    if rows > 7:
        _emit_f(a7, bias, c, lo, hi, out, o + 7 * cout, cv, scratch)


# --- requantization of an accumulator matrix (tests, and any core that needs it) ---------------

@njit
def _requantize_core(acc, qp, zp, lo, hi, out):
    """``out[r, c] = clamp(MBQM(acc[r, c] + bias[c]) + zp)`` with ``qp`` from
    :func:`requant_params` (``acc`` int32 [rows, C], ``out`` uint8 [rows, C])."""
    rows, cout = acc.shape
    cpad = qp.size // 7
    flat = acc.reshape(-1)
    oflat = out.reshape(-1)
    scratch = np.empty(16, np.uint8)
    buf = np.zeros(16, np.int32)
    for r in range(rows):
        for c in range(0, cout, 16):
            n = min(16, cout - c)
            buf[:n] = flat[r * cout + c:r * cout + c + n]
            _emit(vi_load(buf, 0), qp, c, cpad, 0, zp, lo, hi, oflat, r * cout + c, n, scratch)
    return out
