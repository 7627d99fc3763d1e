"""Integer GEMM micro-kernels for CPUs without AVX-512 (``SIMD_MODE == "avx2"``): the tile
function :mod:`nnsim.kernels._gemm_int` uses there.

Same packed filter and arithmetic as the VNNI kernels (``D = sum xu * ws``, see
:mod:`nnsim.kernels.gemm`), sized for 16 ymm registers: 3 pixels x 16 channels per pass, each
accumulator a ``vd`` (4 ymm of pair sums: ``vpmaddwd`` on bytes widened to int16, whose
horizontal add is left to the end of the sum, once per output). 12 accumulator registers, the
widened input of the current pixel and one weight register fit without spilling. Integer sums
are exact, so the order in which pair sums are added does not matter.

A direct int8 input (``xmask`` set) is widened signed instead of XOR-ed to ``xu``: that sum
is ``D - 128 * SW``, which the plan folds into the bias (:class:`QuantGemmPlan`).
"""

from __future__ import annotations

from nnsim.kernels._gemm_common import _store8
from nnsim.kernels._jit import (njit, vd_dpbssd, vd_dpbusd, vd_sum, vd_zero, vi_bcast4, vi_load,
                                vi_requant)

_R = 3   # pixels per pass


@njit(_nrt=False)
def _tile_avx2(src, rb, n, dy, kh, gpr, wp, woff, ncol, xmask, qp, c0, cpad, ex, zp, lo, hi,
               out, o, cout, scratch):
    """``n`` pixels (patch runs from ``src[rb[j]]``) x ``ncol`` columns of 16 channels
    (``gpr`` groups of 4 taps per run; weights ``wp[woff:]``, ``64 * ncol`` bytes a group)."""
    stride = ncol * 64
    for c in range(ncol):
        if xmask != 0:
            _col_signed(src, rb, n, dy, kh, gpr, wp, woff + 64 * c, stride, qp, c0 + 16 * c,
                        cpad, ex, zp, lo, hi, out, o + 16 * c, cout, cout - c0 - 16 * c)
        else:
            _col(src, rb, n, dy, kh, gpr, wp, woff + 64 * c, stride, qp, c0 + 16 * c, cpad, ex,
                 zp, lo, hi, out, o + 16 * c, cout, cout - c0 - 16 * c)


@njit(_nrt=False, inline="always")   # a call per 16 outputs costs as much as the requant
def _emit(v, qp, c, cpad, extra, zp, lo, hi, out, o, count):
    _store8(vi_requant(vd_sum(v), qp, c, cpad, extra, zp, lo, hi), out, o, count)


@njit(_nrt=False)
def _col(src, rb, n, dy, kh, gpr, wp, wo, ws, qp, c, cpad, ex, zp, lo, hi, out, o0, cout, cv):
    """``n`` pixels, 3 at a time, x 16 channels: ``xu`` bytes (unsigned)."""
    for j in range(0, n, _R):
        r0, r1, r2 = rb[j], rb[j + 1], rb[j + 2]
        a0, a1, a2 = vd_zero(), vd_zero(), vd_zero()
        p = wo
        for ky in range(kh):
            t = ky * dy
            for _ in range(gpr):
                w = vi_load(wp, p)
                p += ws
                a0 = vd_dpbusd(a0, vi_bcast4(src, r0 + t), w)
                a1 = vd_dpbusd(a1, vi_bcast4(src, r1 + t), w)
                a2 = vd_dpbusd(a2, vi_bcast4(src, r2 + t), w)
                t += 4
        o = o0 + j * cout
        _emit(a0, qp, c, cpad, ex[j], zp, lo, hi, out, o, cv)
        if j + 1 < n:
            _emit(a1, qp, c, cpad, ex[j + 1], zp, lo, hi, out, o + cout, cv)
        if j + 2 < n:
            _emit(a2, qp, c, cpad, ex[j + 2], zp, lo, hi, out, o + 2 * cout, cv)


@njit(_nrt=False)
def _col_signed(src, rb, n, dy, kh, gpr, wp, wo, ws, qp, c, cpad, ex, zp, lo, hi, out, o0, cout,
                cv):
    """:func:`_col` for int8 input bytes (widened signed)."""
    for j in range(0, n, _R):
        r0, r1, r2 = rb[j], rb[j + 1], rb[j + 2]
        a0, a1, a2 = vd_zero(), vd_zero(), vd_zero()
        p = wo
        for ky in range(kh):
            t = ky * dy
            for _ in range(gpr):
                w = vi_load(wp, p)
                p += ws
                a0 = vd_dpbssd(a0, vi_bcast4(src, r0 + t), w)
                a1 = vd_dpbssd(a1, vi_bcast4(src, r1 + t), w)
                a2 = vd_dpbssd(a2, vi_bcast4(src, r2 + t), w)
                t += 4
        o = o0 + j * cout
        _emit(a0, qp, c, cpad, ex[j], zp, lo, hi, out, o, cv)
        if j + 1 < n:
            _emit(a1, qp, c, cpad, ex[j + 1], zp, lo, hi, out, o + cout, cv)
        if j + 2 < n:
            _emit(a2, qp, c, cpad, ex[j + 2], zp, lo, hi, out, o + 2 * cout, cv)


@njit(_nrt=False, inline="always")
def _dp(acc, u, w, signed):
    """vd_dpbssd (input bytes signed) or vd_dpbusd; ``signed`` is the same for a whole loop."""
    return vd_dpbssd(acc, u, w) if signed else vd_dpbusd(acc, u, w)


@njit(_nrt=False)
def _gemv_cols(x, groups, wp, p, ws, two, signed, qp, c, cpad, extra, zp, lo, hi, out, cout):
    """One output pixel (a 1x1 CONV_2D on one pixel: :mod:`nnsim.kernels._gemv`) x one
    column of 16 channels, or two (``two``), of the last, partial tile (``ws`` bytes a
    group): the sums of :func:`_col` (:func:`_col_signed` when ``signed``) for a single
    pixel."""
    a0, a1 = vd_zero(), vd_zero()
    for g in range(groups):
        u = vi_bcast4(x, 4 * g)
        a0 = _dp(a0, u, vi_load(wp, p), signed)
        if two:
            a1 = _dp(a1, u, vi_load(wp, p + 64), signed)
        p += ws
    _emit(a0, qp, c, cpad, extra, zp, lo, hi, out, c, cout - c)
    if two:
        _emit(a1, qp, c + 16, cpad, extra, zp, lo, hi, out, c + 16, cout - c - 16)


@njit(_nrt=False)
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
    _emit(a0, qp, c, cpad, extra, zp, lo, hi, out, c, 16)
    _emit(a1, qp, c + 16, cpad, extra, zp, lo, hi, out, c + 16, 16)
    _emit(a2, qp, c + 32, cpad, extra, zp, lo, hi, out, c + 32, 16)
    _emit(a3, qp, c + 48, cpad, extra, zp, lo, hi, out, c + 48, cout - c - 48)
