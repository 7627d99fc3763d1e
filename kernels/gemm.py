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

from typing import NamedTuple

import numpy as np

from nnsim.kernels._jit import (njit, vf_add, vf_bcast, vf_clamp, vf_load, vf_muladd, vf_store,
                                vf_zero, vi_bcast4, vi_dpbusd, vi_load, vi_requant, vi_splat,
                                vi_store, vi_store8, vi_xor, vi_zero)

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

class _Plan:
    """Geometry shared by the quantized and float plans; ``run(x, out)`` computes a layer.

    A 1x1, stride-1, unpadded convolution reads its patches straight from the input rows
    (``direct``); any other one gathers them from a padded copy of the input (``padded``,
    refreshed at every run; the border keeps the padding value) in blocks of pixels."""

    def __init__(self, x_shape, out_shape, kh, kw, cout, geometry, dtype, fill, aligned):
        stride_h, stride_w, pad_top, pad_left, dil_h, dil_w = (int(g) for g in geometry)
        self.x_shape = n, h, w, cin = tuple(int(d) for d in x_shape)
        self.out_shape = tuple(int(d) for d in out_shape)
        self.k = kh * kw * cin
        self.cout = cout
        self.direct = (kh == 1 and kw == 1 and stride_h == 1 and stride_w == 1
                       and pad_top == 0 and pad_left == 0 and aligned
                       and self.out_shape[1:3] == self.x_shape[1:3])
        self.geo = np.array([kh, kw, stride_h, stride_w, dil_h, dil_w], np.int64)
        self.hp = self.wp_ = 0
        self.inner = None
        self.padded = np.zeros(64, dtype)
        if not self.direct:
            # rows / columns up to the last tap of the last output pixel, + 64 bytes of slack
            hp = max(h + pad_top, (self.out_shape[1] - 1) * stride_h + (kh - 1) * dil_h + 1)
            wp = max(w + pad_left, (self.out_shape[2] - 1) * stride_w + (kw - 1) * dil_w + 1)
            self.hp, self.wp_ = hp, wp
            slack = 64 // np.dtype(dtype).itemsize
            self.padded = np.full(n * hp * wp * cin + slack, fill, dtype)
            view = self.padded[:-slack].reshape(n, hp, wp, cin)
            self.inner = view[:, pad_top:pad_top + h, pad_left:pad_left + w]


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
        super().__init__(x_shape, out_shape, kh, kw, cout, geometry, np.uint8, fill,
                         cin % 4 == 0)
        packed = pack_weights(w.reshape(cout, -1)) if packed is None else packed
        _check_packed(packed, w)
        k = self.k
        bias = np.zeros(cout, np.int64) if bias is None else bias.astype(np.int64)
        self.wp = packed.data
        self.flip = bool(cx)
        self.qp = requant_params(bias - fill * packed.sums.astype(np.int64), mults, shifts)
        self.prm = np.array([k, cw - int(w_zp), k * fill, int(out_zp), int(lo), int(hi),
                             -(-cout // 16) * 16, 1 if cx and self.direct else 0], np.int64)
        kp = -(-k // 4) * 4
        self.cols = np.zeros((_ROWS if self.direct else _BLOCK) * kp + 64, np.uint8)
        self.sx = np.zeros(_BLOCK, np.int64)

    def run(self, x, out):
        """``out [N, OH, OW, Cout]`` (uint8/int8) = the convolution of ``x`` (same dtype as
        given to the plan, C-contiguous)."""
        xb = x.view(np.uint8)
        if self.direct:
            src = xb.reshape(-1)
        else:
            if self.flip:
                np.bitwise_xor(xb, np.uint8(128), out=self.inner)   # int8 -> uint8 + 128
            else:
                self.inner[...] = xb
            src = self.padded
        _quant_conv_core(src, self.hp, self.wp_, self.x_shape[3], self.geo, self.prm, self.wp,
                         self.qp, out.view(np.uint8).reshape(-1, self.cout), out.shape[1],
                         out.shape[2], self.direct, self.cols, self.sx)
        return out


class FloatGemmPlan(_Plan):
    """A float32 convolution's constants: packed filter, bias, clamp."""

    def __init__(self, x_shape, out_shape, w, bias, lo, hi, geometry, packed=None):
        cout, kh, kw, _ = w.shape
        super().__init__(x_shape, out_shape, kh, kw, cout, geometry, np.float32, 0.0, True)
        packed = pack_weights(w.reshape(cout, -1)) if packed is None else packed
        _check_packed(packed, w)
        self.wp = packed.data
        cpad = -(-cout // 16) * 16
        self.bias = np.zeros(cpad, np.float32)
        if bias is not None:
            self.bias[:cout] = bias
        self.clamp = np.array([lo, hi], np.float32)
        self.cols = np.zeros((_ROWS if self.direct else _BLOCK) * self.k + 16, np.float32)

    def run(self, x, out):
        if self.direct:
            src = x.reshape(-1)
        else:
            self.inner[...] = x
            src = self.padded
        _float_conv_core(src, self.hp, self.wp_, self.x_shape[3], self.geo, self.wp, self.bias,
                         self.clamp, out.reshape(-1, self.cout), out.shape[1], out.shape[2],
                         self.direct, self.cols)
        return out


# --- integer core ------------------------------------------------------------------------------

@njit
def _quant_conv_core(x, hp, wp_, cin, geo, prm, wp, qp, out, out_h, out_w, direct, cols, sx):
    k, rowcoef, kfill, out_zp, lo, hi = prm[0], prm[1], prm[2], prm[3], prm[4], prm[5]
    cpad, xflip = prm[6], prm[7]
    kp = (k + 3) // 4 * 4
    kg = kp // 4
    pixels, cout = out.shape
    oflat = out.reshape(-1)
    scratch = np.empty(16, np.uint8)
    xmask = np.int32(-2139062144) if xflip else np.int32(0)   # 0x80808080: int8 -> uint8 + 128
    block = _ROWS if direct else _BLOCK
    for p0 in range(0, pixels, block):
        n = min(block, pixels - p0)
        if direct:
            if n == _ROWS:
                src, base = x, p0 * kp
            else:
                cols[:] = 0
                cols[:n * kp] = x[p0 * kp:(p0 + n) * kp]
                src, base = cols, 0
            if rowcoef != 0:
                _row_sums(src, base, kp, k, n, sx, xflip)
        else:
            _im2col_u8(x, hp, wp_, cin, geo, p0, n, out_h, out_w, kp, cols)
            src, base = cols, 0
            if rowcoef != 0:
                _row_sums(cols, 0, kp, k, n, sx, 0)
        for j in range(0, n, _ROWS):
            rows = min(_ROWS, n - j)
            e0, e1, e2, e3 = 0, 0, 0, 0
            if rowcoef != 0:
                e0 = rowcoef * (sx[j] - kfill)
                e1 = rowcoef * (sx[j + 1] - kfill) if rows > 1 else 0
                e2 = rowcoef * (sx[j + 2] - kfill) if rows > 2 else 0
                e3 = rowcoef * (sx[j + 3] - kfill) if rows > 3 else 0
            ex = (np.int32(e0), np.int32(e1), np.int32(e2), np.int32(e3))
            xo = base + j * kp
            o = (p0 + j) * cout
            c0 = 0
            woff = 0
            while c0 < cout:
                ncol = min(4, (cout - c0 + 15) // 16)
                stride = ncol * 64
                if ncol == 4:
                    _mk4(src, xo, kp, wp, woff, stride, kg, xmask, qp, c0, cpad, ex, out_zp,
                         lo, hi, oflat, o + c0, cout, rows, cout - c0, scratch)
                elif ncol >= 2:
                    _mk2(src, xo, kp, wp, woff, stride, kg, xmask, qp, c0, cpad, ex, out_zp,
                         lo, hi, oflat, o + c0, cout, rows, cout - c0, scratch)
                    if ncol == 3:
                        _mk1(src, xo, kp, wp, woff + 128, stride, kg, xmask, qp, c0 + 32, cpad,
                             ex, out_zp, lo, hi, oflat, o + c0 + 32, cout, rows, cout - c0 - 32,
                             scratch)
                else:
                    _mk1(src, xo, kp, wp, woff, stride, kg, xmask, qp, c0, cpad, ex, out_zp,
                         lo, hi, oflat, o + c0, cout, rows, cout - c0, scratch)
                woff += kg * stride
                c0 += _TILE
    return out


@njit
def _row_sums(src, base, kp, k, n, sx, flip):
    """``sx[j] = sum of the first k xu values of row j`` (``flip``: rows hold int8 bytes)."""
    f = np.uint8(128) if flip else np.uint8(0)
    for j in range(n):
        total = np.int64(0)
        for i in range(base + j * kp, base + j * kp + k):
            total += np.int64(src[i] ^ f)
        sx[j] = total


@njit(_nrt=False)
def _copy_bytes(src, s, dst, d, n):
    """``dst[d:d + n] = src[s:s + n]`` in 64-byte vectors (writes and reads up to 63 more)."""
    for i in range(0, n, 64):
        vi_store(vi_load(src, s + i), dst, d + i)


@njit
def _im2col_u8(xpad, hp, wp, cin, geo, p0, n, out_h, out_w, kp, cols):
    """Patches of output pixels p0 .. p0 + n - 1 as rows of ``cols`` from the padded input
    (``xu`` values); bytes past the k taps of a row are left undefined (zero weights)."""
    kh, kw, stride_h, stride_w, dil_h, dil_w = geo[0], geo[1], geo[2], geo[3], geo[4], geo[5]
    for j in range(n):
        b, rest = divmod(p0 + j, out_h * out_w)
        oy, ox = divmod(rest, out_w)
        d = j * kp
        for ky in range(kh):
            s = ((b * hp + oy * stride_h + ky * dil_h) * wp + ox * stride_w) * cin
            if dil_w == 1:
                _copy_bytes(xpad, s, cols, d, kw * cin)
                d += kw * cin
            else:
                for kx in range(kw):
                    _copy_bytes(xpad, s + kx * dil_w * cin, cols, d, cin)
                    d += cin


@njit(_nrt=False)
def _emit(v, qp, c, cpad, extra, zp, lo, hi, out, o, count, scratch):
    """Requantize 16 accumulators of channels c.. (``qp``: see :func:`requant_params`) and
    store the first ``count`` (at most 16) to ``out[o:]``."""
    r = vi_requant(v, qp, c, cpad, extra, zp, lo, hi)
    if count >= 16:
        vi_store8(r, out, o)
    else:
        vi_store8(r, scratch, 0)
        for i in range(count):
            out[o + i] = scratch[i]


@njit(_nrt=False)
def _mk4(src, xo, kp, wp, wo, ws, kg, xmask, qp, c, cpad, ex, zp, lo, hi, out, o, cout, rows,
         cv, scratch):
    """4 pixels (patches at ``src[xo + r * kp]``) x 64 channels (``wp[wo:]``, ``ws`` bytes per
    group of 4 taps) -> ``out[o + r * cout:]``, first ``rows`` pixels, ``cv`` channels."""
    m = vi_splat(xmask)
    a00, a01, a02, a03 = vi_zero(), vi_zero(), vi_zero(), vi_zero()
    a10, a11, a12, a13 = vi_zero(), vi_zero(), vi_zero(), vi_zero()
    a20, a21, a22, a23 = vi_zero(), vi_zero(), vi_zero(), vi_zero()
    a30, a31, a32, a33 = vi_zero(), vi_zero(), vi_zero(), vi_zero()
    for g in range(kg):
        p = wo + g * ws
        w0, w1, w2, w3 = vi_load(wp, p), vi_load(wp, p + 64), vi_load(wp, p + 128), \
            vi_load(wp, p + 192)
        b = vi_xor(vi_bcast4(src, xo + 4 * g), m)
        a00, a01 = vi_dpbusd(a00, b, w0), vi_dpbusd(a01, b, w1)
        a02, a03 = vi_dpbusd(a02, b, w2), vi_dpbusd(a03, b, w3)
        b = vi_xor(vi_bcast4(src, xo + kp + 4 * g), m)
        a10, a11 = vi_dpbusd(a10, b, w0), vi_dpbusd(a11, b, w1)
        a12, a13 = vi_dpbusd(a12, b, w2), vi_dpbusd(a13, b, w3)
        b = vi_xor(vi_bcast4(src, xo + 2 * kp + 4 * g), m)
        a20, a21 = vi_dpbusd(a20, b, w0), vi_dpbusd(a21, b, w1)
        a22, a23 = vi_dpbusd(a22, b, w2), vi_dpbusd(a23, b, w3)
        b = vi_xor(vi_bcast4(src, xo + 3 * kp + 4 * g), m)
        a30, a31 = vi_dpbusd(a30, b, w0), vi_dpbusd(a31, b, w1)
        a32, a33 = vi_dpbusd(a32, b, w2), vi_dpbusd(a33, b, w3)
    _emit(a00, qp, c, cpad, ex[0], zp, lo, hi, out, o, cv, scratch)
    _emit(a01, qp, c + 16, cpad, ex[0], zp, lo, hi, out, o + 16, cv - 16, scratch)
    _emit(a02, qp, c + 32, cpad, ex[0], zp, lo, hi, out, o + 32, cv - 32, scratch)
    _emit(a03, qp, c + 48, cpad, ex[0], zp, lo, hi, out, o + 48, cv - 48, scratch)
    if rows > 1:
        o += cout
        _emit(a10, qp, c, cpad, ex[1], zp, lo, hi, out, o, cv, scratch)
        _emit(a11, qp, c + 16, cpad, ex[1], zp, lo, hi, out, o + 16, cv - 16, scratch)
        _emit(a12, qp, c + 32, cpad, ex[1], zp, lo, hi, out, o + 32, cv - 32, scratch)
        _emit(a13, qp, c + 48, cpad, ex[1], zp, lo, hi, out, o + 48, cv - 48, scratch)
    if rows > 2:
        o += cout
        _emit(a20, qp, c, cpad, ex[2], zp, lo, hi, out, o, cv, scratch)
        _emit(a21, qp, c + 16, cpad, ex[2], zp, lo, hi, out, o + 16, cv - 16, scratch)
        _emit(a22, qp, c + 32, cpad, ex[2], zp, lo, hi, out, o + 32, cv - 32, scratch)
        _emit(a23, qp, c + 48, cpad, ex[2], zp, lo, hi, out, o + 48, cv - 48, scratch)
    if rows > 3:
        o += cout
        _emit(a30, qp, c, cpad, ex[3], zp, lo, hi, out, o, cv, scratch)
        _emit(a31, qp, c + 16, cpad, ex[3], zp, lo, hi, out, o + 16, cv - 16, scratch)
        _emit(a32, qp, c + 32, cpad, ex[3], zp, lo, hi, out, o + 32, cv - 32, scratch)
        _emit(a33, qp, c + 48, cpad, ex[3], zp, lo, hi, out, o + 48, cv - 48, scratch)


@njit(_nrt=False)
def _mk2(src, xo, kp, wp, wo, ws, kg, xmask, qp, c, cpad, ex, zp, lo, hi, out, o, cout, rows,
         cv, scratch):
    """:func:`_mk4` for 32 channels."""
    m = vi_splat(xmask)
    a00, a01, a10, a11 = vi_zero(), vi_zero(), vi_zero(), vi_zero()
    a20, a21, a30, a31 = vi_zero(), vi_zero(), vi_zero(), vi_zero()
    for g in range(kg):
        p = wo + g * ws
        w0, w1 = vi_load(wp, p), vi_load(wp, p + 64)
        b = vi_xor(vi_bcast4(src, xo + 4 * g), m)
        a00, a01 = vi_dpbusd(a00, b, w0), vi_dpbusd(a01, b, w1)
        b = vi_xor(vi_bcast4(src, xo + kp + 4 * g), m)
        a10, a11 = vi_dpbusd(a10, b, w0), vi_dpbusd(a11, b, w1)
        b = vi_xor(vi_bcast4(src, xo + 2 * kp + 4 * g), m)
        a20, a21 = vi_dpbusd(a20, b, w0), vi_dpbusd(a21, b, w1)
        b = vi_xor(vi_bcast4(src, xo + 3 * kp + 4 * g), m)
        a30, a31 = vi_dpbusd(a30, b, w0), vi_dpbusd(a31, b, w1)
    _emit(a00, qp, c, cpad, ex[0], zp, lo, hi, out, o, cv, scratch)
    _emit(a01, qp, c + 16, cpad, ex[0], zp, lo, hi, out, o + 16, cv - 16, scratch)
    if rows > 1:
        o += cout
        _emit(a10, qp, c, cpad, ex[1], zp, lo, hi, out, o, cv, scratch)
        _emit(a11, qp, c + 16, cpad, ex[1], zp, lo, hi, out, o + 16, cv - 16, scratch)
    if rows > 2:
        o += cout
        _emit(a20, qp, c, cpad, ex[2], zp, lo, hi, out, o, cv, scratch)
        _emit(a21, qp, c + 16, cpad, ex[2], zp, lo, hi, out, o + 16, cv - 16, scratch)
    if rows > 3:
        o += cout
        _emit(a30, qp, c, cpad, ex[3], zp, lo, hi, out, o, cv, scratch)
        _emit(a31, qp, c + 16, cpad, ex[3], zp, lo, hi, out, o + 16, cv - 16, scratch)


@njit(_nrt=False)
def _mk1(src, xo, kp, wp, wo, ws, kg, xmask, qp, c, cpad, ex, zp, lo, hi, out, o, cout, rows,
         cv, scratch):
    """:func:`_mk4` for 16 channels."""
    m = vi_splat(xmask)
    a0, a1, a2, a3 = vi_zero(), vi_zero(), vi_zero(), vi_zero()
    for g in range(kg):
        w0 = vi_load(wp, wo + g * ws)
        a0 = vi_dpbusd(a0, vi_xor(vi_bcast4(src, xo + 4 * g), m), w0)
        a1 = vi_dpbusd(a1, vi_xor(vi_bcast4(src, xo + kp + 4 * g), m), w0)
        a2 = vi_dpbusd(a2, vi_xor(vi_bcast4(src, xo + 2 * kp + 4 * g), m), w0)
        a3 = vi_dpbusd(a3, vi_xor(vi_bcast4(src, xo + 3 * kp + 4 * g), m), w0)
    _emit(a0, qp, c, cpad, ex[0], zp, lo, hi, out, o, cv, scratch)
    if rows > 1:
        _emit(a1, qp, c, cpad, ex[1], zp, lo, hi, out, o + cout, cv, scratch)
    if rows > 2:
        _emit(a2, qp, c, cpad, ex[2], zp, lo, hi, out, o + 2 * cout, cv, scratch)
    if rows > 3:
        _emit(a3, qp, c, cpad, ex[3], zp, lo, hi, out, o + 3 * cout, cv, scratch)


# --- float core --------------------------------------------------------------------------------

@njit
def _float_conv_core(x, hp, wp_, cin, geo, wp, bias, clamp, out, out_h, out_w, direct, cols):
    k = geo[0] * geo[1] * cin
    pixels, cout = out.shape
    oflat = out.reshape(-1)
    scratch = np.empty(16, np.float32)
    lo, hi = clamp[0], clamp[1]
    block = _ROWS if direct else _BLOCK
    for p0 in range(0, pixels, block):
        n = min(block, pixels - p0)
        if direct and n == _ROWS:
            src, base = x, p0 * k
        elif direct:
            cols[:] = 0
            cols[:n * k] = x[p0 * k:(p0 + n) * k]
            src, base = cols, 0
        else:
            _im2col_f32(x, hp, wp_, cin, geo, p0, n, out_h, out_w, k, cols)
            src, base = cols, 0
        for j in range(0, n, _ROWS):
            rows = min(_ROWS, n - j)
            xo = base + j * k
            o = (p0 + j) * cout
            c0 = 0
            woff = 0
            while c0 < cout:
                ncol = min(4, (cout - c0 + 15) // 16)
                stride = ncol * 16
                if ncol == 4:
                    _fk4(src, xo, k, wp, woff, stride, bias, c0, lo, hi, oflat, o + c0, cout,
                         rows, cout - c0, scratch)
                else:
                    for c in range(ncol):
                        _fk1(src, xo, k, wp, woff + 16 * c, stride, bias, c0 + 16 * c, lo, hi,
                             oflat, o + c0 + 16 * c, cout, rows, cout - c0 - 16 * c, scratch)
                woff += k * stride
                c0 += _TILE
    return out


@njit(_nrt=False)
def _copy_floats(src, s, dst, d, n):
    """``dst[d:d + n] = src[s:s + n]`` in vectors of 16 (writes and reads up to 15 more)."""
    for i in range(0, n, 16):
        vf_store(vf_load(src, s + i), dst, d + i)


@njit
def _im2col_f32(xpad, hp, wp, cin, geo, p0, n, out_h, out_w, k, cols):
    kh, kw, stride_h, stride_w, dil_h, dil_w = geo[0], geo[1], geo[2], geo[3], geo[4], geo[5]
    for j in range(n):
        b, rest = divmod(p0 + j, out_h * out_w)
        oy, ox = divmod(rest, out_w)
        d = j * k
        for ky in range(kh):
            s = ((b * hp + oy * stride_h + ky * dil_h) * wp + ox * stride_w) * cin
            if dil_w == 1:
                _copy_floats(xpad, s, cols, d, kw * cin)
                d += kw * cin
            else:
                for kx in range(kw):
                    _copy_floats(xpad, s + kx * dil_w * cin, cols, d, cin)
                    d += cin


@njit(_nrt=False)
def _emit_f(v, bias, c, lo, hi, out, o, count, scratch):
    """TFLite's ActivationFunctionWithMinMax(total + bias) for channels c.., first ``count``."""
    r = vf_clamp(vf_add(v, vf_load(bias, c)), lo, hi)
    if count >= 16:
        vf_store(r, out, o)
    else:
        vf_store(r, scratch, 0)
        for i in range(count):
            out[o + i] = scratch[i]


@njit(_nrt=False)
def _fk4(src, xo, k, wp, wo, ws, bias, c, lo, hi, out, o, cout, rows, cv, scratch):
    """4 pixels x 64 channels, float: taps one at a time in k order from 0.0 (no FMA)."""
    a00, a01, a02, a03 = vf_zero(), vf_zero(), vf_zero(), vf_zero()
    a10, a11, a12, a13 = vf_zero(), vf_zero(), vf_zero(), vf_zero()
    a20, a21, a22, a23 = vf_zero(), vf_zero(), vf_zero(), vf_zero()
    a30, a31, a32, a33 = vf_zero(), vf_zero(), vf_zero(), vf_zero()
    for i in range(k):
        p = wo + i * ws
        w0, w1, w2, w3 = vf_load(wp, p), vf_load(wp, p + 16), vf_load(wp, p + 32), \
            vf_load(wp, p + 48)
        b = vf_bcast(src, xo + i)
        a00, a01 = vf_muladd(a00, b, w0), vf_muladd(a01, b, w1)
        a02, a03 = vf_muladd(a02, b, w2), vf_muladd(a03, b, w3)
        b = vf_bcast(src, xo + k + i)
        a10, a11 = vf_muladd(a10, b, w0), vf_muladd(a11, b, w1)
        a12, a13 = vf_muladd(a12, b, w2), vf_muladd(a13, b, w3)
        b = vf_bcast(src, xo + 2 * k + i)
        a20, a21 = vf_muladd(a20, b, w0), vf_muladd(a21, b, w1)
        a22, a23 = vf_muladd(a22, b, w2), vf_muladd(a23, b, w3)
        b = vf_bcast(src, xo + 3 * k + i)
        a30, a31 = vf_muladd(a30, b, w0), vf_muladd(a31, b, w1)
        a32, a33 = vf_muladd(a32, b, w2), vf_muladd(a33, b, w3)
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
def _fk1(src, xo, k, wp, wo, ws, bias, c, lo, hi, out, o, cout, rows, cv, scratch):
    """:func:`_fk4` for 16 channels."""
    a0, a1, a2, a3 = vf_zero(), vf_zero(), vf_zero(), vf_zero()
    for i in range(k):
        w0 = vf_load(wp, wo + i * ws)
        a0 = vf_muladd(a0, vf_bcast(src, xo + i), w0)
        a1 = vf_muladd(a1, vf_bcast(src, xo + k + i), w0)
        a2 = vf_muladd(a2, vf_bcast(src, xo + 2 * k + i), w0)
        a3 = vf_muladd(a3, vf_bcast(src, xo + 3 * k + i), w0)
    _emit_f(a0, bias, c, lo, hi, out, o, cv, scratch)
    if rows > 1:
        _emit_f(a1, bias, c, lo, hi, out, o + cout, cv, scratch)
    if rows > 2:
        _emit_f(a2, bias, c, lo, hi, out, o + 2 * cout, cv, scratch)
    if rows > 3:
        _emit_f(a3, bias, c, lo, hi, out, o + 3 * cout, cv, scratch)


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
