"""Integer GEMM micro-kernels for CPUs without AVX-512 (``SIMD_MODE == "avx2"``): the
convolution's block function :mod:`nnsim.kernels._gemm_int` uses there, and the matrix-vector
loops of a one-pixel 1x1 convolution (:mod:`nnsim.kernels._gemv`).

Same arithmetic as the VNNI kernels (``D = sum xu * ws``, see :mod:`nnsim.kernels.gemm`),
sized for 16 ymm registers. AVX2 has no byte dot product: ``vpmaddwd`` multiplies int16
pairs and adds each pair in an int32 lane. The convolution puts channels in lanes: each
block's patches are widened to int16 once (:func:`_widen`), the filter is stored widened with
two taps per lane (:func:`widen_pairs`), and one broadcast pair of input taps times the
filter's pairs adds straight into 16 channel sums per pixel (:func:`_col_pairs`, 6 pixels x
16 channels: 12 accumulator registers, one weight register, the broadcast and a product).
Nothing is left to add across lanes at the end, and a pixel needs no widening per column.
(The earlier kernel kept 4 taps of 16 channels in 4 registers of pair sums per pixel, 3
pixels a pass, widened the input bytes for every column and added the pair sums across
lanes once per output: MobileNet v2's layers on an AVX2-only CPU took 9.41 ms, with this
one 7.99 ms, benchmarks/README.md, "Seventh session".) The matrix-vector loops keep that layout
(``vd`` accumulators on the byte filter): one pixel has no patches to widen once for many.

A direct int8 input (``xmask`` set) is widened signed instead of XOR-ed to ``xu``: that sum
is ``D - 128 * SW``, which the plan folds into the bias (:class:`QuantGemmPlan`).
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels._common import aligned_copy
from nnsim.kernels._gemm_common import _TILE, _store8
from nnsim.kernels._builtins import lesser
from nnsim.kernels._jit import (njit, vd_dpbssd, vd_dpbusd, vd_sum, vd_zero, vi_add, vi_bcast4,
                                vi_dpwssd, vi_load, vi_requant, vi_requantb, vi_splat)
from nnsim.kernels._native import call_native


# (inlined: a call per 16 outputs costs as much as the requant)
@njit(_nrt=False, inline="always", inner=True)
def _emit(v, qp, c, cpad, extra, zp, lo, hi, out, o, count):
    """Requantize the 16 channel sums ``v`` (channels c..) and store the first ``count``."""
    _store8(vi_requant(v, qp, c, cpad, extra, zp, lo, hi), out, o, count)


@njit(_nrt=False, inline="always", inner=True)
def _emit_biased(v, qp, c, cpad, zp, lo, hi, out, o, count):
    """:func:`_emit` of sums that started at the bias and the pixel's extra term."""
    _store8(vi_requantb(v, qp, c, cpad, zp, lo, hi), out, o, count)


@njit(_nrt=False, inline="always", inner=True)
def _dp(acc, u, w, signed):
    """vd_dpbssd (input bytes signed) or vd_dpbusd; ``signed`` is the same for a whole loop."""
    return vd_dpbssd(acc, u, w) if signed else vd_dpbusd(acc, u, w)


@njit(_nrt=False, inner=True)
def _gemv_cols(x, groups, wp, p, ws, two, signed, qp, c, cpad, extra, zp, lo, hi, out, cout):
    """One output pixel (a 1x1 CONV_2D on one pixel: :mod:`nnsim.kernels._gemv`) x one
    column of 16 channels, or two (``two``), of the last, partial tile (``ws`` bytes a
    group), input bytes widened signed when ``signed``."""
    a0, a1 = vd_zero(), vd_zero()
    for g in range(groups):
        u = vi_bcast4(x, 4 * g)
        a0 = _dp(a0, u, vi_load(wp, p), signed)
        if two:
            a1 = _dp(a1, u, vi_load(wp, p + 64), signed)
        p += ws
    _emit(vd_sum(a0), qp, c, cpad, extra, zp, lo, hi, out, c, cout - c)
    if two:
        _emit(vd_sum(a1), qp, c + 16, cpad, extra, zp, lo, hi, out, c + 16, cout - c - 16)


@njit(_nrt=False, inner=True)
def _gemv_tile(x, groups, wp, p, signed, qp, c, cpad, extra, zp, lo, hi, out, cout):
    """A whole 64-channel tile of the one pixel (weights ``wp[p:]``, 256 bytes a group): four
    columns of :func:`_gemv_cols` in one pass, so that the weights stream by in order (16
    accumulator registers: some spill; in two passes of two columns each pass read every
    other 128 bytes, and the layer took 71 against 55 us with the weights out of cache)."""
    a0, a1, a2, a3 = vd_zero(), vd_zero(), vd_zero(), vd_zero()
    for g in range(groups):
        u = vi_bcast4(x, 4 * g)
        a0, a1 = _dp(a0, u, vi_load(wp, p), signed), _dp(a1, u, vi_load(wp, p + 64), signed)
        a2 = _dp(a2, u, vi_load(wp, p + 128), signed)
        a3 = _dp(a3, u, vi_load(wp, p + 192), signed)
        p += 256
    full = np.int64(16)   # (not the literal: numba would compile _store8 again for it)
    _emit(vd_sum(a0), qp, c, cpad, extra, zp, lo, hi, out, c, full)
    _emit(vd_sum(a1), qp, c + 16, cpad, extra, zp, lo, hi, out, c + 16, full)
    _emit(vd_sum(a2), qp, c + 32, cpad, extra, zp, lo, hi, out, c + 32, full)
    _emit(vd_sum(a3), qp, c + 48, cpad, extra, zp, lo, hi, out, c + 48, cout - c - 48)


# --- pair lanes ------------------------------------------------------------------------------

_RP = 6   # pixels per pass of the pair-lane kernel

#: :func:`_cols_pairs`'s argument types (codes of :func:`nnsim.kernels._native.native_types`):
#: :func:`_block_pairs` calls it through its address (the requantization table: uint32 or
#: int32, see :data:`nnsim.kernels._gemm_int._MK_CODES`).
_PAIRS_CODES = "i16 i64 i i i i i16 i u32|i32 i i i i32 i i i u8 i i"


def widen_pairs(wp, cout):
    """The packed filter of ``cout`` channels (per tile of up to 4 columns of 16 channels,
    64-byte groups of 4 taps, the tile's columns side by side) as the int16 filter of the
    pair-lane kernel: per tile, each column's groups one after the other, a group's 64 bytes
    becoming taps 0, 1 of the 16 channels as int16 pairs (lane j = channel j), then taps 2, 3.
    A tile starts at the same offset (int16 elements) as in ``wp`` (bytes); each column's
    filter is one stream (read with the column's groups 512 bytes apart, MobileNet v2's last
    layers lost 40-90 us each to the evicted filter after a LiteRT invoke)."""
    cols = -(-cout // 16)
    groups = np.asarray(wp).size // (64 * cols)
    b = np.asarray(wp).view(np.int8).astype(np.int16)
    out, at = [], 0
    for c in range(0, cols, 4):
        n = min(4, cols - c)
        tile = b[at:at + groups * n * 64].reshape(groups, n, 16, 2, 2)
        out.append(tile.transpose(1, 0, 3, 2, 4).reshape(-1))
        at += groups * n * 64
    return aligned_copy(np.concatenate(out))


@njit(_nrt=False, inner=True)
def _widen(src, rb, n, kh, seg, dy, step, f, dst, rbw):
    """The patches of ``n`` pixels (``kh`` runs of ``seg`` bytes from ``src[rb[j] + ky *
    dy]``) as int16 in ``dst`` (each byte zero-extended, or sign-extended when ``f`` is 128:
    int8 bytes). Pixels whose patches start ``step`` bytes after the one before (a row of
    the output; all of them for a 1x1 filter) share their runs: each stretch of input is
    widened once. Run ``ky`` of pixel j goes to ``dst[rbw[j] + ky * span]``; returns
    ``span`` (at most ``n * max(seg, step)``); ``rbw[n:n + _RP]`` = 0."""
    span = 0
    j = 0
    while j < n:   # where each pixel's first run goes
        e = _stretch(rb, j, n, step)
        for i in range(j, e):
            rbw[i] = span + rb[i] - rb[j]
        span += rb[e - 1] - rb[j] + seg
        j = e
    j = 0
    while j < n:
        e = _stretch(rb, j, n, step)
        length = rb[e - 1] - rb[j] + seg
        for ky in range(kh):
            # unsigned indices: no wrap-around code, so the loops vectorize (and compile
            # without the slices and view they once took for that)
            d0, s0 = np.uint64(rbw[j] + ky * span), np.uint64(rb[j] + ky * dy)
            if f:   # int8 bytes: sign-extended
                for i in range(length):
                    dst[d0 + np.uint64(i)] = np.int8(src[s0 + np.uint64(i)])
            else:
                for i in range(length):
                    dst[d0 + np.uint64(i)] = src[s0 + np.uint64(i)]
        j = e
    for j in range(n, n + _RP):
        rbw[j] = 0
    return span


@njit(_nrt=False, inline="always", inner=True)
def _stretch(rb, j, n, step):
    """The end of the pixels from j on whose patches start ``step`` bytes apart."""
    e = j + 1
    while e < n and rb[e] - rb[e - 1] == step:
        e += 1
    return e


@njit(_nrt=False, inline="always", inner=True)
def _col_pairs(src, rb, n, dy, kh, gpr, wp, wo, qp, c, cpad, ex, zp, lo, hi, out, o0, cout, cv):
    """``n`` pixels, 6 at a time (``kh`` runs of widened patches at ``src[rb[j] + ky *
    dy]``, ``gpr`` groups of 4 taps a run), x the 16 channels whose filter starts at
    ``wp[wo]`` (64 int16 a group): per pair of taps one vpmaddwd per 8 channels on the pair
    broadcast, channels in lanes."""
    b = vi_load(qp, c)   # the sums start at the bias plus the pixel's extra term
    for j in range(0, n, _RP):
        r0, r1, r2, r3, r4, r5 = rb[j], rb[j + 1], rb[j + 2], rb[j + 3], rb[j + 4], rb[j + 5]
        a0, a1 = vi_add(b, vi_splat(ex[j])), vi_add(b, vi_splat(ex[j + 1]))
        a2, a3 = vi_add(b, vi_splat(ex[j + 2])), vi_add(b, vi_splat(ex[j + 3]))
        a4, a5 = vi_add(b, vi_splat(ex[j + 4])), vi_add(b, vi_splat(ex[j + 5]))
        p = wo
        for ky in range(kh):
            t = ky * dy
            for _ in range(gpr):
                w = vi_load(wp, p)   # taps t, t + 1 of the 16 channels
                a0 = vi_dpwssd(a0, vi_bcast4(src, r0 + t), w)
                a1 = vi_dpwssd(a1, vi_bcast4(src, r1 + t), w)
                a2 = vi_dpwssd(a2, vi_bcast4(src, r2 + t), w)
                a3 = vi_dpwssd(a3, vi_bcast4(src, r3 + t), w)
                a4 = vi_dpwssd(a4, vi_bcast4(src, r4 + t), w)
                a5 = vi_dpwssd(a5, vi_bcast4(src, r5 + t), w)
                w = vi_load(wp, p + 32)   # taps t + 2, t + 3
                a0 = vi_dpwssd(a0, vi_bcast4(src, r0 + t + 2), w)
                a1 = vi_dpwssd(a1, vi_bcast4(src, r1 + t + 2), w)
                a2 = vi_dpwssd(a2, vi_bcast4(src, r2 + t + 2), w)
                a3 = vi_dpwssd(a3, vi_bcast4(src, r3 + t + 2), w)
                a4 = vi_dpwssd(a4, vi_bcast4(src, r4 + t + 2), w)
                a5 = vi_dpwssd(a5, vi_bcast4(src, r5 + t + 2), w)
                t += 4
                p += 64
        o = o0 + j * cout
        _emit_biased(a0, qp, c, cpad, zp, lo, hi, out, o, cv)
        if j + 1 < n:
            _emit_biased(a1, qp, c, cpad, zp, lo, hi, out, o + cout, cv)
        if j + 2 < n:
            _emit_biased(a2, qp, c, cpad, zp, lo, hi, out, o + 2 * cout, cv)
        if j + 3 < n:
            _emit_biased(a3, qp, c, cpad, zp, lo, hi, out, o + 3 * cout, cv)
        if j + 4 < n:
            _emit_biased(a4, qp, c, cpad, zp, lo, hi, out, o + 4 * cout, cv)
        if j + 5 < n:
            _emit_biased(a5, qp, c, cpad, zp, lo, hi, out, o + 5 * cout, cv)


@njit(_nrt=False, inline="always", inner=True)
def _block_pairs(src, rb, n, dy, kh, seg, step, wp, c_lo, c_hi, xmask, qp, cpad, ex, zp, lo,
                 hi, out, p0, cout, wide, rbw, cols_pairs):
    """Channels ``c_lo:c_hi`` of ``n`` pixels (the block at ``p0``): the patches widened once
    (:func:`_widen`), then the columns by :func:`_cols_pairs` at the address ``cols_pairs``
    (``wp``: the filter of :func:`widen_pairs`)."""
    span = _widen(src, rb, n, kh, seg, dy, step, np.uint8(128 if xmask != 0 else 0), wide, rbw)
    call_native(cols_pairs, (wide, rbw, n, span, kh, seg // 4, wp, kh * seg // 4, qp, c_lo,
                             c_hi, cpad, ex, zp, lo, hi, out, p0, cout), _PAIRS_CODES)


@njit(_nrt=False, inner=True)
def _cols_pairs(wide, rbw, n, span, kh, gpr, wp, groups, qp, c_lo, c_hi, cpad, ex, zp, lo, hi,
                out, p0, cout):
    """Each 16-channel column of channels ``c_lo:c_hi`` by :func:`_col_pairs` (inlined: one
    compilation), one call from the core per block through the address: the calling
    convention passes each array as 7 words, and a call per column made MobileNet v2 3%
    slower."""
    c0 = c_lo
    woff = (c_lo // _TILE) * groups * 256
    while c0 < c_hi:
        ncol = lesser(4, (cout - c0 + 15) // 16)
        for c in range(ncol):
            cc = c0 + 16 * c
            _col_pairs(wide, rbw, n, span, kh, gpr, wp, woff + groups * 64 * c, qp, cc, cpad,
                       ex, zp, lo, hi, out, p0 * cout + cc, cout, cout - cc)
        woff += groups * ncol * 64
        c0 += _TILE
