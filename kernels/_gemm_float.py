"""Float GEMM core of CONV_2D (see :mod:`nnsim.kernels.gemm`): 4 pixels x 64 channels (8
pixels x 32 or 16 for narrow tiles, 8 x 8 in 8-lane vectors for at most 8 channels; 6 or 5 x
16 in 8-lane registers on AVX2, 12 x 8 there for the last <= 8) per micro-kernel group, taps
one at a time in k order (fused multiply-adds when the CPU has FMA:
``nnsim.kernels._jit.FMA``)."""

from __future__ import annotations

import numpy as np

from nnsim.kernels._gemm_common import (_BLOCK, _FLOAT_BLOCK, _FLOAT_COLS, _GATHER, _ROWS,
                                        _fill_part_rows, _gather)
from nnsim.kernels._builtins import flat, lesser
from nnsim.kernels._jit import (SIMD_MODE, njit, vb_prefetch, vf_add, vf_bcast, vf_clamp, vf_load,
                                vf_muladd, vf_store, vf_storen, vf_zero, vh_bcast, vh_load,
                                vh_store, vh_zero)
from nnsim.kernels._native import call_native, native_address


@njit(_nrt=False)
def _float_conv_step(x, geo, rb, wp, bias, clamp, mks, out, out_h, out_w, cols, scratch, parts,
                     xin, fill, xbytes, t):
    """As :func:`nnsim.kernels._gemm_int._quant_conv_step` (``xbytes``: the bytes of ``x``,
    which the copy fills)."""
    _fill_part_rows(xin, fill, geo, out_h, out_w, xbytes, parts[t, 0], parts[t, 1])
    _float_conv_part(x, geo, rb, wp, bias, clamp, mks, out, out_h, out_w, cols[t], scratch[t],
                     parts[t, 0], parts[t, 1], parts[t, 2], parts[t, 3])


@njit(_nrt=False)
def _float_conv_part(x, geo, rb, wp, bias, clamp, mks, out, out_h, out_w, cols, scratch, p_lo,
                     p_hi, c_lo, c_hi):
    """Output pixels ``p_lo:p_hi`` x channels ``c_lo:c_hi`` (``c_lo`` a multiple of 64): each
    sum is computed by the same sequence of vector operations whatever the bounds. ``rb``:
    the row bases (:func:`nnsim.kernels._gemm_common.row_bases`); ``mks``: the
    micro-kernels' addresses (:func:`micro_kernels`); ``cols``, ``scratch`` (16 floats):
    scratch, allocated with the plan (a core that allocates counts references around each
    micro-kernel call, see _gemm_int.scratch_arrays)."""
    kh, seg, dy, mode = geo[10], geo[11], geo[12], geo[9]
    k = kh * seg
    cout = out.shape[1]
    oflat = flat(out)
    lo, hi = clamp[0], clamp[1]
    src = cols if mode == _GATHER else x
    # pixels a block: as many as the im2col buffer holds, more without one
    block = _BLOCK if mode == _GATHER else _FLOAT_BLOCK
    for p0 in range(p_lo, p_hi, block):
        n = lesser(block, p_hi - p0)
        if mode == _GATHER:
            _gather(x, geo, p0, n, out_h, out_w, cols)
            rbp = rb
        else:
            rbp = rb[p0:]   # (a view: the table's entries past the block's are real)
            # the input the next block reads, assumed to follow this block's as far again
            # (the first block's own too)
            first, end = rbp[0], rbp[n - 1] + (kh - 1) * dy + seg
            for e in range(first if p0 == p_lo else end, lesser(2 * end - first, src.size), 16):
                vb_prefetch(src, e)
        if _AVX2:
            _fcols_avx2(src, rbp, n, dy, kh, seg, wp, c_lo * k, bias, c_lo, c_hi, lo, hi, oflat,
                        p0 * cout, cout, mks)
            continue
        c0 = c_lo
        woff = c_lo * k
        while c0 < c_hi:   # tiles of _FLOAT_COLS columns (gemm.pack_weights)
            ncol = lesser(_FLOAT_COLS, (cout - c0 + 15) // 16)
            stride = ncol * 16
            _ftile_512(src, rbp, n, dy, kh, seg, wp, woff, stride, ncol, bias, c0, lo, hi,
                       oflat, p0 * cout + c0, cout, scratch, mks)
            woff += k * stride
            c0 += 16 * _FLOAT_COLS


#: AVX2 (16 ymm registers) runs each block's columns with :func:`_fcols_avx2`.
_AVX2 = SIMD_MODE == "avx2"

#: The micro-kernels' argument types (codes of :func:`nnsim.kernels._native.native_types`):
#: :func:`_fk4`, :func:`_fk8x2`, :func:`_fk8x1`; :func:`_fh1x8`; on AVX2 :func:`_fh5x16`,
#: :func:`_fh6x16` (their last code: how many 16-channel columns), :func:`_fh12x8`.
_FK_CODES = "f32 i64 i i i i f32 i i f32 i f f f32 i i i f32"
_FH_CODES = "f32 i64 i i i i i f32 i i f32 i f f f32 i i i"
_FH5_CODES = "f32 i64 i i i i f32 i i f32 i f f f32 i i i i"
_FH6_CODES = "f32 i64 i i i i i f32 i i f32 i f f f32 i i i i"
_FH12_CODES = "f32 i64 i i i i f32 i i f32 i f f f32 i i i"


def micro_kernels(cout: int, window: tuple = ()) -> np.ndarray:
    """int64 [4]: the addresses of the micro-kernels a float convolution of ``cout`` output
    channels calls, compiled (or loaded from numba's cache) here, 0 for the ones it never
    calls: on AVX-512 :func:`_fk4`, :func:`_fh1x8`, :func:`_fk8x1`, :func:`_fk8x2` (whole
    64-channel tiles; a last tile of at most 8 channels; one of 9-16 or 33-48; one of 17-48),
    on AVX2 :func:`_fh5x16`, :func:`_fh6x16` (columns of 16 channels), :func:`_fh12x8` (or
    :func:`_fh12x8_3x9` when ``window``, the patch's rows and taps a row, is ``(3, 9)``),
    :func:`_fh1x8` (a last column of at most 8). As the integer core's
    (:func:`nnsim.kernels._gemm_int.micro_kernels`): only these are compiled, and the core's
    compilation no longer optimises and compiles their code again (float MobileNet's cold
    compilation 10.7 -> 8.9 s, issue 13)."""
    if _AVX2:
        wide, narrow = cout > 8, 0 < cout % 16 <= 8   # (a last column of <= 8 channels)
        twelve = _fh12x8_3x9 if tuple(int(v) for v in window) == (3, 9) else _fh12x8
        kernels = ((_fh5x16, _FH5_CODES, wide), (_fh6x16, _FH6_CODES, wide),
                   (twelve, _FH12_CODES, narrow), (_fh1x8, _FH_CODES, narrow))
    else:
        want = [False] * 4
        for c0 in range(0, cout, 16 * _FLOAT_COLS):   # as _ftile_512 chooses
            ncol = min(_FLOAT_COLS, (cout - c0 + 15) // 16)
            if ncol == 4:
                want[0] = True
            elif cout - c0 <= 8:
                want[1] = True
            else:
                want[2] |= ncol != 2
                want[3] |= ncol != 1
        kernels = zip((_fk4, _fh1x8, _fk8x1, _fk8x2),
                      (_FK_CODES, _FH_CODES, _FK_CODES, _FK_CODES), want)
    return np.array([native_address(fn, codes) if want else 0 for fn, codes, want in kernels],
                    np.int64)


@njit(_nrt=False, inline="always", inner=True)
def _ftile_512(src, rb, n, dy, kh, seg, wp, woff, stride, ncol, bias, c0, lo, hi, out, o, cout,
               scratch, mks):
    """``n`` pixels x one tile of ``ncol`` columns of 16 channels, in 16-lane registers, by
    the micro-kernels at the addresses ``mks`` (:func:`micro_kernels`)."""
    if ncol == 4:
        call_native(mks[0], (src, rb, n, dy, kh, seg, wp, woff, stride, bias, c0, lo, hi, out,
                             o, cout, cout - c0, scratch), _FK_CODES)
    elif cout - c0 <= 8:   # at most 8 channels: 8-lane vectors (_fh1x8)
        call_native(mks[1], (src, rb, 0, n, dy, kh, seg, wp, woff, stride, bias, c0, lo, hi,
                             out, o, cout, cout - c0), _FH_CODES)
    else:   # 16 channels (_fk8x1), 32 or 48 (_fk8x2, then _fk8x1 for the third): 8 pixels
        call_native(mks[2] if ncol == 1 else mks[3], (src, rb, n, dy, kh, seg, wp, woff,
                                                      stride, bias, c0, lo, hi, out, o, cout,
                                                      cout - c0, scratch), _FK_CODES)
        if ncol == 3:
            call_native(mks[2], (src, rb, n, dy, kh, seg, wp, woff + 32, stride, bias, c0 + 32,
                                 lo, hi, out, o + 32, cout, cout - c0 - 32, scratch),
                        _FK_CODES)


@njit(_nrt=False, inline="always", inner=True)
def _fcols_avx2(src, rb, n, dy, kh, seg, wp, woff, bias, c_lo, c_hi, lo, hi, out, o, cout, mks):
    """:func:`_ftile_512` for 16 ymm registers: ``n`` pixels x channels ``c_lo:c_hi`` in
    columns of 16 (a tile a column on AVX2, ``_FLOAT_COLS``; the filter from ``wp[woff:]``,
    the output from ``out[o + c_lo:]``), 6 or 5 pixels x 16 channels per pass (12 or 10
    8-lane accumulators: the pixels as 6 * a + 5 * b, no pass computing pixels that are not
    there), or for a last column of <= 8 channels 12 pixels x 8 channels (``mks[2]``:
    :func:`_fh12x8` or :func:`_fh12x8_3x9`), then 8 x 8 for the rest. Four calls at most,
    each over every column (a call per column and block cost 3% on the integer path,
    _gemm_avx2)."""
    ncols = (c_hi - c_lo + 15) // 16
    last = c_lo + 16 * (ncols - 1)
    narrow = cout - last <= 8
    wide = ncols - 1 if narrow else ncols
    if wide > 0:
        five = _five_pixel_passes(n)
        if five > 0:
            call_native(mks[0], (src, rb, five, dy, kh, seg, wp, woff, 16, bias, c_lo, lo, hi,
                                 out, o + c_lo, cout, cout - c_lo, wide), _FH5_CODES)
        call_native(mks[1], (src, rb, five, n, dy, kh, seg, wp, woff, 16, bias, c_lo, lo, hi,
                             out, o + c_lo, cout, cout - c_lo, wide), _FH6_CODES)
    if narrow:
        twelve = n - n % 12
        wo = woff + (last - c_lo) * kh * seg
        call_native(mks[2], (src, rb, twelve, dy, kh, seg, wp, wo, 16, bias, last, lo, hi, out,
                             o + last, cout, cout - last), _FH12_CODES)
        call_native(mks[3], (src, rb, twelve, n, dy, kh, seg, wp, wo, 16, bias, last, lo, hi,
                             out, o + last, cout, cout - last), _FH_CODES)


@njit(_nrt=False, inline="always", inner=True)
def _five_pixel_passes(n):
    """Pixels ``0:f`` that passes of 5 take so that passes of 6 end exactly at ``n``
    (f = 5 * b, b = -n mod 6), or 0 when n is too small for that (then the last pass of 6 is
    partial). MobileNet's 7x7 layers: 49 = 5 * 5 + 6 * 4, against 9 passes of 6 (54 pixels'
    work); 14x14: 196 = 5 * 2 + 6 * 31."""
    b = (6 - n % 6) % 6
    return 5 * b if n >= 5 * b else 0


@njit(_nrt=False, inner=True)
def _fh5x16(src, rb, n, dy, kh, seg, wp, wo, ws, bias, c, lo, hi, out, o0, cout, cv, ncols):
    """Pixels ``0:n`` (``n`` a multiple of 5), 5 at a time, as :func:`_fh6x16`."""
    for col in range(ncols):
        _fh5x16_col(src, rb, n, dy, kh, seg, wp, wo + col * kh * seg * ws, ws, bias,
                    c + 16 * col, lo, hi, out, o0 + 16 * col, cout, cv - 16 * col)


@njit(_nrt=False, inline="always", inner=True)
def _fh5x16_col(src, rb, n, dy, kh, seg, wp, wo, ws, bias, c, lo, hi, out, o0, cout, cv):
    """:func:`_fh5x16` for one column."""
    for j in range(0, n, 5):
        o = o0 + j * cout
        r0, r1, r2, r3, r4 = rb[j], rb[j + 1], rb[j + 2], rb[j + 3], rb[j + 4]
        a0, b0, a1, b1 = vh_zero(), vh_zero(), vh_zero(), vh_zero()
        a2, b2, a3, b3 = vh_zero(), vh_zero(), vh_zero(), vh_zero()
        a4, b4 = vh_zero(), vh_zero()
        p = wo
        for ky in range(kh):
            t = ky * dy
            for _ in range(seg):
                w0, w1 = vh_load(wp, p), vh_load(wp, p + 8)
                p += ws
                x = vh_bcast(src, r0 + t)
                a0, b0 = vf_muladd(a0, x, w0), vf_muladd(b0, x, w1)
                x = vh_bcast(src, r1 + t)
                a1, b1 = vf_muladd(a1, x, w0), vf_muladd(b1, x, w1)
                x = vh_bcast(src, r2 + t)
                a2, b2 = vf_muladd(a2, x, w0), vf_muladd(b2, x, w1)
                x = vh_bcast(src, r3 + t)
                a3, b3 = vf_muladd(a3, x, w0), vf_muladd(b3, x, w1)
                x = vh_bcast(src, r4 + t)
                a4, b4 = vf_muladd(a4, x, w0), vf_muladd(b4, x, w1)
                t += 1
        _emit_h2(a0, b0, bias, c, lo, hi, out, o, cv)
        _emit_h2(a1, b1, bias, c, lo, hi, out, o + cout, cv)
        _emit_h2(a2, b2, bias, c, lo, hi, out, o + 2 * cout, cv)
        _emit_h2(a3, b3, bias, c, lo, hi, out, o + 3 * cout, cv)
        _emit_h2(a4, b4, bias, c, lo, hi, out, o + 4 * cout, cv)


@njit(_nrt=False, inner=True)
def _fh6x16(src, rb, j0, n, dy, kh, seg, wp, wo, ws, bias, c, lo, hi, out, o0, cout, cv,
            ncols):
    """Pixels ``j0:n`` x ``ncols`` columns of 16 channels, one column after the other (the
    filter's ``kh * seg * ws`` floats apart), see :func:`_fh6x16_col`."""
    for col in range(ncols):
        _fh6x16_col(src, rb, j0, n, dy, kh, seg, wp, wo + col * kh * seg * ws, ws, bias,
                    c + 16 * col, lo, hi, out, o0 + 16 * col, cout, cv - 16 * col)


@njit(_nrt=False, inline="always", inner=True)
def _fh6x16_col(src, rb, j0, n, dy, kh, seg, wp, wo, ws, bias, c, lo, hi, out, o0, cout, cv):
    """Pixels ``j0:n``, 6 at a time (patches at ``rb[j:j + 6]``), x 16 channels in 8-lane
    vectors, taps one at a time in k order (the loop over the pixels inside: a call per 6
    pixels cost as much as their multiply-adds in 1x1 layers of 8-32 channels). A whole pass
    (6 pixels, 16 channels kept) stores without a test per row: with the patches indexed from
    0 (no negative-index fix-up per pass), 1x1 layers of 8 input channels took 10% less
    (benchmarks/README.md, "Sixteenth session")."""
    rbv = rb[j0:]
    for jj in range(0, n - j0, 6):
        rows = lesser(6, n - j0 - jj)
        o = o0 + (j0 + jj) * cout
        r0, r1, r2 = rbv[jj], rbv[jj + 1], rbv[jj + 2]
        r3, r4, r5 = rbv[jj + 3], rbv[jj + 4], rbv[jj + 5]
        a0, b0, a1, b1 = vh_zero(), vh_zero(), vh_zero(), vh_zero()
        a2, b2, a3, b3 = vh_zero(), vh_zero(), vh_zero(), vh_zero()
        a4, b4, a5, b5 = vh_zero(), vh_zero(), vh_zero(), vh_zero()
        p = wo
        for ky in range(kh):
            t = ky * dy
            for _ in range(seg):
                w0, w1 = vh_load(wp, p), vh_load(wp, p + 8)
                p += ws
                x = vh_bcast(src, r0 + t)
                a0, b0 = vf_muladd(a0, x, w0), vf_muladd(b0, x, w1)
                x = vh_bcast(src, r1 + t)
                a1, b1 = vf_muladd(a1, x, w0), vf_muladd(b1, x, w1)
                x = vh_bcast(src, r2 + t)
                a2, b2 = vf_muladd(a2, x, w0), vf_muladd(b2, x, w1)
                x = vh_bcast(src, r3 + t)
                a3, b3 = vf_muladd(a3, x, w0), vf_muladd(b3, x, w1)
                x = vh_bcast(src, r4 + t)
                a4, b4 = vf_muladd(a4, x, w0), vf_muladd(b4, x, w1)
                x = vh_bcast(src, r5 + t)
                a5, b5 = vf_muladd(a5, x, w0), vf_muladd(b5, x, w1)
                t += 1
        if rows == 6 and cv >= 16:   # TFLite's ActivationFunctionWithMinMax(total + bias)
            bl, bh = vh_load(bias, c), vh_load(bias, c + 8)
            vh_store(vf_clamp(vf_add(a0, bl), lo, hi), out, o)
            vh_store(vf_clamp(vf_add(b0, bh), lo, hi), out, o + 8)
            vh_store(vf_clamp(vf_add(a1, bl), lo, hi), out, o + cout)
            vh_store(vf_clamp(vf_add(b1, bh), lo, hi), out, o + cout + 8)
            vh_store(vf_clamp(vf_add(a2, bl), lo, hi), out, o + 2 * cout)
            vh_store(vf_clamp(vf_add(b2, bh), lo, hi), out, o + 2 * cout + 8)
            vh_store(vf_clamp(vf_add(a3, bl), lo, hi), out, o + 3 * cout)
            vh_store(vf_clamp(vf_add(b3, bh), lo, hi), out, o + 3 * cout + 8)
            vh_store(vf_clamp(vf_add(a4, bl), lo, hi), out, o + 4 * cout)
            vh_store(vf_clamp(vf_add(b4, bh), lo, hi), out, o + 4 * cout + 8)
            vh_store(vf_clamp(vf_add(a5, bl), lo, hi), out, o + 5 * cout)
            vh_store(vf_clamp(vf_add(b5, bh), lo, hi), out, o + 5 * cout + 8)
            continue
        _emit_h2(a0, b0, bias, c, lo, hi, out, o, cv)
        if rows > 1:
            _emit_h2(a1, b1, bias, c, lo, hi, out, o + cout, cv)
        if rows > 2:
            _emit_h2(a2, b2, bias, c, lo, hi, out, o + 2 * cout, cv)
        if rows > 3:
            _emit_h2(a3, b3, bias, c, lo, hi, out, o + 3 * cout, cv)
        if rows > 4:
            _emit_h2(a4, b4, bias, c, lo, hi, out, o + 4 * cout, cv)
        if rows > 5:
            _emit_h2(a5, b5, bias, c, lo, hi, out, o + 5 * cout, cv)


@njit(_nrt=False, inner=True)
def _emit_h2(a, b, bias, c, lo, hi, out, o, count):
    """16 channels held as two 8-lane halves (``count`` > 8 of them kept)."""
    _emit_h(a, bias, c, lo, hi, out, o, np.int64(8))   # (not a literal: one variant)
    _emit_h(b, bias, c + 8, lo, hi, out, o + 8, count - 8)


@njit(_nrt=False, inner=True)
def _emit_f(v, bias, c, lo, hi, out, o, count, scratch):
    """TFLite's ActivationFunctionWithMinMax(total + bias) for channels c.., first ``count``."""
    r = vf_clamp(vf_add(v, vf_load(bias, c)), lo, hi)
    if count >= 16:
        vf_store(r, out, o)
    else:
        vf_storen(r, out, o, count)


@njit(_nrt=False, inner=True)
def _fk4(src, rb, n, dy, kh, seg, wp, wo, ws, bias, c, lo, hi, out, o0, cout, cv, scratch):
    """``n`` pixels, 4 at a time, x 64 channels, float: taps one at a time in k order from 0.0
    (fused when :data:`nnsim.kernels._jit.FMA`)."""
    for j in range(0, n, _ROWS):
        rows = lesser(_ROWS, n - j)
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


@njit(_nrt=False, inner=True)
def _emit8(a0, a1, a2, a3, a4, a5, a6, a7, bias, c, lo, hi, out, o, cout, rows, cv, scratch):
    """:func:`_emit_f` of the first ``rows`` (1..8) of 8 pixels' vectors, ``cout`` apart."""
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


@njit(_nrt=False, inner=True)
def _emit8_whole(a0, a1, a2, a3, a4, a5, a6, a7, b, lo, hi, out, o, cout):
    """:func:`_emit8` of a whole pass: 8 pixels' 16 channels (bias ``b``), no test per store."""
    vf_store(vf_clamp(vf_add(a0, b), lo, hi), out, o)
    vf_store(vf_clamp(vf_add(a1, b), lo, hi), out, o + cout)
    vf_store(vf_clamp(vf_add(a2, b), lo, hi), out, o + 2 * cout)
    vf_store(vf_clamp(vf_add(a3, b), lo, hi), out, o + 3 * cout)
    vf_store(vf_clamp(vf_add(a4, b), lo, hi), out, o + 4 * cout)
    vf_store(vf_clamp(vf_add(a5, b), lo, hi), out, o + 5 * cout)
    vf_store(vf_clamp(vf_add(a6, b), lo, hi), out, o + 6 * cout)
    vf_store(vf_clamp(vf_add(a7, b), lo, hi), out, o + 7 * cout)


@njit(_nrt=False, inner=True)
def _emit_h(v, bias, c, lo, hi, out, o, count):
    r = vf_clamp(vf_add(v, vh_load(bias, c)), lo, hi)
    if count >= 8:
        vh_store(r, out, o)
    else:
        vf_storen(r, out, o, count)


@njit(_nrt=False, inner=True)
def _fh12x8(src, rb, n, dy, kh, seg, wp, wo, ws, bias, c, lo, hi, out, o0, cout, cv):
    """Pixels ``0:n`` (``n`` a multiple of 12), 12 at a time, x at most 8 channels in 8-lane
    vectors (AVX2: 12 accumulators, one weight vector and one broadcast of the 16 ymm
    registers; 8 pixels left each sum waiting on the fused multiply-add's latency)."""
    _fh12x8_passes(src, rb, n, dy, kh, seg, wp, wo, ws, bias, c, lo, hi, out, o0, cout, cv)


@njit(_nrt=False, inner=True)
def _fh12x8_3x9(src, rb, n, dy, kh, seg, wp, wo, ws, bias, c, lo, hi, out, o0, cout, cv):
    """:func:`_fh12x8` for a window of 3 rows of 9 taps (a 3x3 filter over 3 channels: the
    first layer on an RGB image; ``ws`` 16, as :func:`_fcols_avx2` passes it): the loops'
    counts known, the compiler keeps the 12 sums in registers and addresses each tap at a
    constant offset (MobileNet v1 0.25's first layer, 224x224x3 -> 8 channels: 131 -> 113
    us, Zen 3; LiteRT's 109). The same operations in the same order."""
    _fh12x8_passes(src, rb, n, dy, 3, 9, wp, wo, 16, bias, c, lo, hi, out, o0, cout, cv)


@njit(_nrt=False, inline="always", inner=True)
def _fh12x8_passes(src, rb, n, dy, kh, seg, wp, wo, ws, bias, c, lo, hi, out, o0, cout, cv):
    """The loops of :func:`_fh12x8` (inlined: constant ``kh``, ``seg`` and ``ws`` stay
    constants)."""
    for j in range(0, n, 12):
        o = o0 + j * cout
        r0, r1, r2, r3, r4, r5 = rb[j], rb[j + 1], rb[j + 2], rb[j + 3], rb[j + 4], rb[j + 5]
        r6, r7, r8, r9 = rb[j + 6], rb[j + 7], rb[j + 8], rb[j + 9]
        r10, r11 = rb[j + 10], rb[j + 11]
        a0, a1, a2, a3 = vh_zero(), vh_zero(), vh_zero(), vh_zero()
        a4, a5, a6, a7 = vh_zero(), vh_zero(), vh_zero(), vh_zero()
        a8, a9, a10, a11 = vh_zero(), vh_zero(), vh_zero(), vh_zero()
        p = wo
        for ky in range(kh):
            t = ky * dy
            for _ in range(seg):
                w0 = vh_load(wp, p)
                p += ws
                a0 = vf_muladd(a0, vh_bcast(src, r0 + t), w0)
                a1 = vf_muladd(a1, vh_bcast(src, r1 + t), w0)
                a2 = vf_muladd(a2, vh_bcast(src, r2 + t), w0)
                a3 = vf_muladd(a3, vh_bcast(src, r3 + t), w0)
                a4 = vf_muladd(a4, vh_bcast(src, r4 + t), w0)
                a5 = vf_muladd(a5, vh_bcast(src, r5 + t), w0)
                a6 = vf_muladd(a6, vh_bcast(src, r6 + t), w0)
                a7 = vf_muladd(a7, vh_bcast(src, r7 + t), w0)
                a8 = vf_muladd(a8, vh_bcast(src, r8 + t), w0)
                a9 = vf_muladd(a9, vh_bcast(src, r9 + t), w0)
                a10 = vf_muladd(a10, vh_bcast(src, r10 + t), w0)
                a11 = vf_muladd(a11, vh_bcast(src, r11 + t), w0)
                t += 1
        _emit_h(a0, bias, c, lo, hi, out, o, cv)
        _emit_h(a1, bias, c, lo, hi, out, o + cout, cv)
        _emit_h(a2, bias, c, lo, hi, out, o + 2 * cout, cv)
        _emit_h(a3, bias, c, lo, hi, out, o + 3 * cout, cv)
        _emit_h(a4, bias, c, lo, hi, out, o + 4 * cout, cv)
        _emit_h(a5, bias, c, lo, hi, out, o + 5 * cout, cv)
        _emit_h(a6, bias, c, lo, hi, out, o + 6 * cout, cv)
        _emit_h(a7, bias, c, lo, hi, out, o + 7 * cout, cv)
        _emit_h(a8, bias, c, lo, hi, out, o + 8 * cout, cv)
        _emit_h(a9, bias, c, lo, hi, out, o + 9 * cout, cv)
        _emit_h(a10, bias, c, lo, hi, out, o + 10 * cout, cv)
        _emit_h(a11, bias, c, lo, hi, out, o + 11 * cout, cv)


@njit(_nrt=False, inner=True)
def _fh1x8(src, rb, j0, n, dy, kh, seg, wp, wo, ws, bias, c, lo, hi, out, o0, cout, cv):
    """:func:`_fk8x1` for at most 8 channels, in 8-lane vectors, from pixel ``j0``."""
    for j in range(j0, n, 8):
        rows = lesser(8, n - j)
        o = o0 + j * cout
        r0, r1, r2, r3 = rb[j], rb[j + 1], rb[j + 2], rb[j + 3]
        r4, r5, r6, r7 = rb[j + 4], rb[j + 5], rb[j + 6], rb[j + 7]
        a0, a1, a2, a3 = vh_zero(), vh_zero(), vh_zero(), vh_zero()
        a4, a5, a6, a7 = vh_zero(), vh_zero(), vh_zero(), vh_zero()
        p = wo
        for ky in range(kh):
            t = ky * dy
            for _ in range(seg):
                w0 = vh_load(wp, p)
                p += ws
                a0 = vf_muladd(a0, vh_bcast(src, r0 + t), w0)
                a1 = vf_muladd(a1, vh_bcast(src, r1 + t), w0)
                a2 = vf_muladd(a2, vh_bcast(src, r2 + t), w0)
                a3 = vf_muladd(a3, vh_bcast(src, r3 + t), w0)
                a4 = vf_muladd(a4, vh_bcast(src, r4 + t), w0)
                a5 = vf_muladd(a5, vh_bcast(src, r5 + t), w0)
                a6 = vf_muladd(a6, vh_bcast(src, r6 + t), w0)
                a7 = vf_muladd(a7, vh_bcast(src, r7 + t), w0)
                t += 1
        _emit_h(a0, bias, c, lo, hi, out, o, cv)
        if rows > 1:
            _emit_h(a1, bias, c, lo, hi, out, o + cout, cv)
        if rows > 2:
            _emit_h(a2, bias, c, lo, hi, out, o + 2 * cout, cv)
        if rows > 3:
            _emit_h(a3, bias, c, lo, hi, out, o + 3 * cout, cv)
        if rows > 4:
            _emit_h(a4, bias, c, lo, hi, out, o + 4 * cout, cv)
        if rows > 5:
            _emit_h(a5, bias, c, lo, hi, out, o + 5 * cout, cv)
        if rows > 6:
            _emit_h(a6, bias, c, lo, hi, out, o + 6 * cout, cv)
        if rows > 7:
            _emit_h(a7, bias, c, lo, hi, out, o + 7 * cout, cv)


@njit(_nrt=False, inner=True)
def _fk8x2(src, rb, n, dy, kh, seg, wp, wo, ws, bias, c, lo, hi, out, o0, cout, cv,
           scratch):
    """``n`` pixels, 8 at a time (patches at ``rb[j:j + 8]``), x 2 columns of 16 channels: one
    broadcast of each tap serves both columns, and the loop over the pixels is inside (a call
    per 16 pixels of one column, MobileNet's 16- and 32-channel 1x1 layers took 1.3-1.6x as
    long). Each sum is :func:`_fk4`'s sequence."""
    for j in range(0, n, 8):
        rows = lesser(8, n - j)
        o = o0 + j * cout
        r0, r1, r2, r3 = rb[j], rb[j + 1], rb[j + 2], rb[j + 3]
        r4, r5, r6, r7 = rb[j + 4], rb[j + 5], rb[j + 6], rb[j + 7]
        a0, a1, a2, a3 = vf_zero(), vf_zero(), vf_zero(), vf_zero()
        a4, a5, a6, a7 = vf_zero(), vf_zero(), vf_zero(), vf_zero()
        b0, b1, b2, b3 = vf_zero(), vf_zero(), vf_zero(), vf_zero()
        b4, b5, b6, b7 = vf_zero(), vf_zero(), vf_zero(), vf_zero()
        p = wo
        for ky in range(kh):
            t = ky * dy
            for _ in range(seg):
                w0, w1 = vf_load(wp, p), vf_load(wp, p + 16)
                p += ws
                e = vf_bcast(src, r0 + t)
                a0, b0 = vf_muladd(a0, e, w0), vf_muladd(b0, e, w1)
                e = vf_bcast(src, r1 + t)
                a1, b1 = vf_muladd(a1, e, w0), vf_muladd(b1, e, w1)
                e = vf_bcast(src, r2 + t)
                a2, b2 = vf_muladd(a2, e, w0), vf_muladd(b2, e, w1)
                e = vf_bcast(src, r3 + t)
                a3, b3 = vf_muladd(a3, e, w0), vf_muladd(b3, e, w1)
                e = vf_bcast(src, r4 + t)
                a4, b4 = vf_muladd(a4, e, w0), vf_muladd(b4, e, w1)
                e = vf_bcast(src, r5 + t)
                a5, b5 = vf_muladd(a5, e, w0), vf_muladd(b5, e, w1)
                e = vf_bcast(src, r6 + t)
                a6, b6 = vf_muladd(a6, e, w0), vf_muladd(b6, e, w1)
                e = vf_bcast(src, r7 + t)
                a7, b7 = vf_muladd(a7, e, w0), vf_muladd(b7, e, w1)
                t += 1
        if rows == 8 and cv >= 32:   # whole: no test per store (5-8% less, K = 16, 32)
            _emit8_whole(a0, a1, a2, a3, a4, a5, a6, a7, vf_load(bias, c), lo, hi, out, o,
                         cout)
            _emit8_whole(b0, b1, b2, b3, b4, b5, b6, b7, vf_load(bias, c + 16), lo, hi, out,
                         o + 16, cout)
            continue
        _emit8(a0, a1, a2, a3, a4, a5, a6, a7, bias, c, lo, hi, out, o, cout, rows, cv, scratch)
        _emit8(b0, b1, b2, b3, b4, b5, b6, b7, bias, c + 16, lo, hi, out, o + 16, cout, rows,
               cv - 16, scratch)


@njit(_nrt=False, inner=True)
def _fk8x1(src, rb, n, dy, kh, seg, wp, wo, ws, bias, c, lo, hi, out, o0, cout, cv,
           scratch):
    """:func:`_fk8x2` for one column of 16 channels."""
    for j in range(0, n, 8):
        rows = lesser(8, n - j)
        o = o0 + j * cout
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
        if rows == 8 and cv >= 16:   # whole: no test per store (7% less, K = 8)
            _emit8_whole(a0, a1, a2, a3, a4, a5, a6, a7, vf_load(bias, c), lo, hi, out, o,
                         cout)
            continue
        _emit8(a0, a1, a2, a3, a4, a5, a6, a7, bias, c, lo, hi, out, o, cout, rows, cv, scratch)
