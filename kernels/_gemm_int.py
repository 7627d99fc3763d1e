"""Integer GEMM core of CONV_2D (see :mod:`nnsim.kernels.gemm` for the arithmetic): 4 pixels x
up to 64 channels per micro-kernel group, ``vpdpbusd`` accumulation, requantization from the
registers."""

from __future__ import annotations

import numpy as np

from nnsim.kernels._gemm_avx2 import _PAIRS_CODES, _RP, _block_pairs, _cols_pairs
from nnsim.kernels._gemm_common import (_BLOCK, _GATHER, _IMPLICIT, _ROWS, _TILE, _fill_part_rows,
                                        _gather, _store8)
from nnsim.kernels._builtins import empty, flat, lesser, zeros
from nnsim.kernels._jit import (QP_ROWS, SIMD_MODE, njit, vb_sum64, vi_add, vi_bcast4, vi_dpbusd,
                                vi_load, vi_pack8q, vi_requantb, vi_requantqr, vi_requantr,
                                vi_splat, vi_store, vi_store2, vi_store2n, vi_store4, vi_xor,
                                vq_load)
from nnsim.kernels._claims import Claimed
from nnsim.kernels._native import call_native, native_address


#: Where the micro-kernels find the input XOR mask in ``scratch`` (0x80 bytes for int8 inputs,
#: read as uint8 + 128; zeros for uint8 ones). Loaded from memory, not splat from the scalar:
#: LLVM moved an XOR with a known splat before the broadcast (an xmm XOR, then vpbroadcastd
#: from the register: two vector operations per broadcast), and with a vector it does not
#: know, it broadcasts from memory (a load) and XORs the zmm: MobileNet v2's 112x112x32 -> 16
#: layer 45-47 -> 38-40 us, 56x56x24 -> 144 63 -> 61 us, the 3x3 first layer 88-94 -> 83-87
#: us (Zen 5).
_MASK = 16


def scratch_arrays(geo):
    """The per-part scratch of :func:`_quant_conv_part` after ``cols``, ``rb``, ``sx``: the
    row-sum extras ``ex``, the AVX2 kernels' widened patches ``wide`` and their bases ``rbw``
    (empty on AVX-512), and 80 bytes: 16 for partial stores, then the input XOR mask as one
    64-byte vector (:data:`_MASK`). Allocated with the plan, not in the core, which then runs
    without numba's runtime (``nnsim.kernels._jit.njit``): no reference counting around its
    calls to the micro-kernels."""
    kh, seg = int(geo[10]), int(geo[11])
    step = int(geo[3] * geo[8]) if geo[9] == _IMPLICIT else seg   # between patches in a row
    return (np.zeros(_BLOCK + _ROWS, np.int32),
            np.zeros(_BLOCK * kh * max(seg, step) if _PAIRS else 0, np.int16),
            np.zeros(_BLOCK + _RP if _PAIRS else 0, np.int64), np.zeros(_MASK + 64, np.uint8))


@njit(_nrt=False)
def _quant_conv_step(x, geo, rb, prm, wp, qp, mks, out, out_h, out_w, cols, sx, ex, wide,
                     rbw, scratch, parts, xin, fill, t):
    """Part ``t`` of the convolution in ``len(parts)`` parts (one thread's, run by
    :mod:`nnsim.kernels.team`): first, when ``fill[5]`` is set, copies the rows of ``xin`` its
    pixels read into the padded input ``x`` (:func:`_fill_part_rows`), then computes output
    pixels ``parts[t, 0:2]`` x channels ``parts[t, 2:4]`` (channel bounds multiples of 64)
    with its own scratch ``cols[t]``, ``sx[t]`` and those of :func:`scratch_arrays`."""
    _fill_part_rows(xin, fill, geo, out_h, out_w, x, parts[t, 0], parts[t, 1])
    _quant_conv_part(x, geo, rb, prm, wp, qp, mks, out, out_h, out_w, cols[t], sx[t], ex[t],
                     wide[t], rbw[t], scratch[t], parts[t, 0], parts[t, 1], parts[t, 2],
                     parts[t, 3])


@njit(_nrt=False)
def _quant_conv_part(x, geo, rb, prm, wp, qp, mks, out, out_h, out_w, cols, sx, ex, wide, rbw,
                     scratch, p_lo, p_hi, c_lo, c_hi):
    """Output pixels ``p_lo:p_hi`` x channels ``c_lo:c_hi`` (``c_lo`` a multiple of 64, the
    tiles before it whole). Each output element gets the same instruction sequence whatever
    the bounds: only which micro-kernel call computes it changes. ``rb``: the row bases
    (:func:`nnsim.kernels._gemm_common.row_bases`); ``mks``: the micro-kernels' addresses
    (:func:`micro_kernels`); ``cols``, ``sx`` and :func:`scratch_arrays`: scratch."""
    rowcoef, kfill, out_zp, lo, hi = prm[1], prm[2], prm[3], prm[4], prm[5]
    cpad, xflip = prm[6], prm[7]
    kh, seg, dy, mode = geo[10], geo[11], geo[12], geo[9]
    groups = kh * seg // 4
    cout = out.shape[1]
    oflat = flat(out)
    xmask = np.int32(-2139062144) if xflip else np.int32(0)   # 0x80808080: int8 -> uint8 + 128
    for i in range(_MASK, _MASK + 64):
        scratch[i] = 128 if xflip else 0
    src = cols if mode == _GATHER else x
    step = geo[3] * geo[8] if mode == _IMPLICIT else seg   # between patches in a row
    for p0 in range(p_lo, p_hi, _BLOCK):
        n = lesser(_BLOCK, p_hi - p0)
        rbp = rb if mode == _GATHER else rb[p0:]
        if mode == _GATHER:
            _gather(x, geo, p0, n, out_h, out_w, cols)
        if rowcoef != 0:   # (the real taps only: not the zero-weight ones widening a run)
            _row_sums(src, rbp, n, kh, geo[1] * geo[8] if mode == _IMPLICIT else seg, dy, sx,
                      xflip)
            for j in range(n):
                ex[j] = np.int32(rowcoef * (sx[j] - kfill))
        if _PAIRS:
            _block_pairs(src, rbp, n, dy, kh, seg, step, wp, c_lo, c_hi, xmask, qp, cpad, ex,
                         out_zp, lo, hi, oflat, p0, cout, wide, rbw, mks[0])
            continue
        c0 = c_lo
        woff = (c_lo // _TILE) * groups * 256
        while c0 < c_hi:
            ncol = lesser(4, (cout - c0 + 15) // 16)
            _tile_vnni(src, rbp, n, dy, kh, seg // 4, wp, woff, ncol, qp, c0, cpad, ex,
                       out_zp, lo, hi, oflat, p0 * cout + c0, cout, scratch, mks)
            woff += groups * ncol * 64
            c0 += _TILE


@njit(_nrt=False, inline="always", inner=True)
def _row_sums(src, rb, n, kh, seg, dy, sx, flip):
    """``sx[j] = sum of the xu values of the patch of pixel j`` (``flip``: int8 bytes)."""
    f = np.uint8(128) if flip else np.uint8(0)
    size = src.size
    for j in range(n):
        total = np.int64(0)
        for ky in range(kh):
            s = rb[j] + ky * dy
            end, i = s + seg, s
            # 64 bytes at a time (vpsadbw), the run's last ones masked: a byte loop for the
            # last 16 of 32 bytes took 40 cycles a pixel (DeepLab's 257x257x32 -> 16 layer:
            # 1466 -> 477 us without the sums, AVX-512)
            while i < end and i + 64 <= size:
                total += vb_sum64(src, i, f, lesser(64, end - i))
                i += 64
            for i in range(i, end):   # the array's last bytes (64 from i would pass its end)
                total += np.int64(src[i] ^ f)
        sx[j] = total


#: The micro-kernels' argument types (codes of :func:`nnsim.kernels._native.native_types`):
#: :func:`_quant_conv_part` calls them through their addresses (:func:`micro_kernels`). The
#: requantization table is uint32 when :func:`nnsim.kernels.gemm.shift_free` could make it
#: so (every layer of the shared models), else int32.
_MK_CODES = "u8 i64 i i i i i8 i i u32|i32 i i i32 i i i u8 i i i u8"


def micro_kernels(cout: int, qp_dtype) -> np.ndarray:
    """int64 [3]: the addresses of the micro-kernels a convolution of ``cout`` output channels
    (requantization table of ``qp_dtype``, uint32 or int32) calls, compiled (or loaded from
    numba's cache) here, 0 for the ones it never calls: on AVX-512 :func:`_mk4`, :func:`_mk2`,
    :func:`_mk1` (whole 64-channel tiles; a last tile of 17-48 channels; one of 1-16 or
    33-48), on AVX2 :func:`nnsim.kernels._gemm_avx2._cols_pairs` first. Only these are
    compiled: MobileNet v1 never needs ``_mk1``, whose compilation was a second of its cold
    start, and the core's own compilation no longer optimises and compiles their code again
    (issue 13)."""
    codes = _micro_kernel_codes(qp_dtype)
    return np.array([native_address(fn, codes) if fn is not None else 0
                     for fn in _micro_kernels_called(cout)], np.int64)


def compile_micro_kernels(couts, qp_dtype=np.uint32) -> int:
    """Compile (or load) every micro-kernel convolutions of ``couts`` output channels call
    (:func:`micro_kernels`), the whole-tile one first, skipping one the other process is
    compiling (:class:`nnsim.kernels._claims.Claimed`). Returns how many were compiled or
    loaded here."""
    called = {fn for cout in couts for fn in _micro_kernels_called(cout)}
    codes = _micro_kernel_codes(qp_dtype)
    done = 0
    for fn in [fn for fn in ((_cols_pairs,) if _PAIRS else (_mk4, _mk2, _mk1)) if fn in called]:
        try:
            native_address(fn, codes)
        except Claimed:
            continue
        done += 1
    return done


def _micro_kernels_called(cout: int) -> tuple:
    """The three entries of :func:`micro_kernels` for ``cout`` channels: the function or
    None."""
    if _PAIRS:
        return (_cols_pairs, None, None)
    ncols = {min(4, (cout - c0 + 15) // 16) for c0 in range(0, cout, _TILE)}
    wanted = (4 in ncols, bool(ncols & {2, 3}), bool(ncols & {1, 3}))
    return tuple(fn if want else None for fn, want in zip((_mk4, _mk2, _mk1), wanted))


def _micro_kernel_codes(qp_dtype) -> str:
    table = "u32" if np.dtype(qp_dtype) == np.uint32 else "i32"
    return (_PAIRS_CODES if _PAIRS else _MK_CODES).replace("u32|i32", table)


@njit(_nrt=False, inline="always", inner=True)
def _tile_vnni(src, rb, n, dy, kh, gpr, wp, woff, ncol, qp, c0, cpad, ex, zp, lo, hi,
               out, o, cout, scratch, mks):
    """``n`` pixels (patch runs from ``src[rb[j]]``) times one tile of ``ncol`` x 16 channels
    (``gpr`` groups of 4 taps per run): :func:`_mk4`, :func:`_mk2` and :func:`_mk1` at the
    addresses ``mks``."""
    # ncol 4: _mk4; 2 or 3: _mk2, then _mk1 for a third column; 1: _mk1
    first = mks[0] if ncol == 4 else (mks[1] if ncol >= 2 else mks[2])
    call_native(first, (src, rb, n, dy, kh, gpr, wp, woff, ncol * 64, qp, c0, cpad, ex, zp, lo,
                        hi, out, o, cout, cout - c0, scratch), _MK_CODES)
    if ncol == 3:
        call_native(mks[2], (src, rb, n, dy, kh, gpr, wp, woff + 128, ncol * 64, qp, c0 + 32,
                             cpad, ex, zp, lo, hi, out, o + 32, cout, cout - c0 - 32, scratch),
                    _MK_CODES)


#: AVX2 (16 ymm registers, no byte dot product) computes each block with the pair-lane
#: kernels of :mod:`nnsim.kernels._gemm_avx2` instead of the tiles above.
_PAIRS = SIMD_MODE == "avx2"


@njit(_nrt=False, inline="always", inner=True)
def _extras(ex, j, rows):
    """``ex[j:j + 4]`` as vectors of equal lanes (0 past the ``rows`` pixels there are)."""
    return (vi_splat(ex[j]), vi_splat(ex[j + 1] if rows > 1 else 0),
            vi_splat(ex[j + 2] if rows > 2 else 0), vi_splat(ex[j + 3] if rows > 3 else 0))


@njit(_nrt=False, inner=True)
def _emit(v, qp, c, cpad, zp, lo, hi, out, o, count, scratch):
    """Requantize 16 accumulators of channels c.. (``qp``: see :func:`requant_params`; the
    accumulators started at the bias and the pixel's extra term) and store the first
    ``count`` (at most 16) to ``out[o:]``."""
    _store8(vi_requantb(v, qp, c, cpad, zp, lo, hi), out, o, count)


@njit(_nrt=False, inner=True)
def _mk4(src, rb, n, dy, kh, gpr, wp, wo, ws, qp, c, cpad, ex, zp, lo, hi,
         out, o0, cout, cv, scratch):
    """``n`` pixels, 4 at a time (patch runs at ``src[rb[j] + ky * dy]``), x 64 channels
    (``wp[wo:]``, ``ws`` bytes per group of 4 taps) -> ``out[o0 + j * cout:]``, ``cv``
    channels kept; ``ex[j]`` is added to the accumulators of pixel j. The accumulators start
    at bias + ``ex[j]`` (int32 sums wrap, so the order of the additions does not matter)."""
    m = vi_load(scratch, _MASK)   # the input XOR mask (see _MASK)
    b0, b1, b2, b3 = vi_load(qp, c), vi_load(qp, c + 16), vi_load(qp, c + 32), \
        vi_load(qp, c + 48)
    for j in range(0, n, _ROWS):
        rows = lesser(_ROWS, n - j)
        if rows == 1:   # a last pixel alone: its 4 sums only (7x7 layers: 49 = 12 * 4 + 1)
            _mk4_one(src, rb[j], ex[j], dy, kh, gpr, wp, wo, ws, qp, c, cpad, zp, lo, hi,
                     out, o0 + j * cout, cv, scratch)
            break
        r0, r1, r2, r3 = rb[j], rb[j + 1], rb[j + 2], rb[j + 3]
        o = o0 + j * cout
        e0, e1, e2, e3 = _extras(ex, j, rows)
        a00, a01, a02, a03 = vi_add(b0, e0), vi_add(b1, e0), vi_add(b2, e0), vi_add(b3, e0)
        a10, a11, a12, a13 = vi_add(b0, e1), vi_add(b1, e1), vi_add(b2, e1), vi_add(b3, e1)
        a20, a21, a22, a23 = vi_add(b0, e2), vi_add(b1, e2), vi_add(b2, e2), vi_add(b3, e2)
        a30, a31, a32, a33 = vi_add(b0, e3), vi_add(b1, e3), vi_add(b2, e3), vi_add(b3, e3)
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
        if cv >= _TILE and rows == _ROWS:   # whole tile: 64 bytes per pixel in one store
            # column by column, before any store: each column's table rows are loaded once
            # for the 4 pixels (requantized pixel by pixel between stores, they were loaded
            # again for each, as out may alias qp: 8 vector loads per 16 outputs, the
            # requantization's bottleneck on Zen 5). Stores not conditional on the rows, or
            # LLVM sinks each pixel's requantization into its store's branch again.
            q = vq_load(qp, c, cpad)
            a00, a10, a20, a30 = (vi_requantqr(a00, q), vi_requantqr(a10, q),
                                  vi_requantqr(a20, q), vi_requantqr(a30, q))
            q = vq_load(qp, c + 16, cpad)
            a01, a11, a21, a31 = (vi_requantqr(a01, q), vi_requantqr(a11, q),
                                  vi_requantqr(a21, q), vi_requantqr(a31, q))
            q = vq_load(qp, c + 32, cpad)
            a02, a12, a22, a32 = (vi_requantqr(a02, q), vi_requantqr(a12, q),
                                  vi_requantqr(a22, q), vi_requantqr(a32, q))
            q = vq_load(qp, c + 48, cpad)
            a03, a13, a23, a33 = (vi_requantqr(a03, q), vi_requantqr(a13, q),
                                  vi_requantqr(a23, q), vi_requantqr(a33, q))
            vi_store(vi_pack8q(a00, a01, a02, a03, zp, lo, hi), out, o)
            vi_store(vi_pack8q(a10, a11, a12, a13, zp, lo, hi), out, o + cout)
            vi_store(vi_pack8q(a20, a21, a22, a23, zp, lo, hi), out, o + 2 * cout)
            vi_store(vi_pack8q(a30, a31, a32, a33, zp, lo, hi), out, o + 3 * cout)
            continue
        _emit(a00, qp, c, cpad, zp, lo, hi, out, o, cv, scratch)
        _emit(a01, qp, c + 16, cpad, zp, lo, hi, out, o + 16, cv - 16, scratch)
        _emit(a02, qp, c + 32, cpad, zp, lo, hi, out, o + 32, cv - 32, scratch)
        _emit(a03, qp, c + 48, cpad, zp, lo, hi, out, o + 48, cv - 48, scratch)
        if rows > 1:
            o += cout
            _emit(a10, qp, c, cpad, zp, lo, hi, out, o, cv, scratch)
            _emit(a11, qp, c + 16, cpad, zp, lo, hi, out, o + 16, cv - 16, scratch)
            _emit(a12, qp, c + 32, cpad, zp, lo, hi, out, o + 32, cv - 32, scratch)
            _emit(a13, qp, c + 48, cpad, zp, lo, hi, out, o + 48, cv - 48, scratch)
        if rows > 2:
            o += cout
            _emit(a20, qp, c, cpad, zp, lo, hi, out, o, cv, scratch)
            _emit(a21, qp, c + 16, cpad, zp, lo, hi, out, o + 16, cv - 16, scratch)
            _emit(a22, qp, c + 32, cpad, zp, lo, hi, out, o + 32, cv - 32, scratch)
            _emit(a23, qp, c + 48, cpad, zp, lo, hi, out, o + 48, cv - 48, scratch)
        if rows > 3:
            o += cout
            _emit(a30, qp, c, cpad, zp, lo, hi, out, o, cv, scratch)
            _emit(a31, qp, c + 16, cpad, zp, lo, hi, out, o + 16, cv - 16, scratch)
            _emit(a32, qp, c + 32, cpad, zp, lo, hi, out, o + 32, cv - 32, scratch)
            _emit(a33, qp, c + 48, cpad, zp, lo, hi, out, o + 48, cv - 48, scratch)


@njit(_nrt=False, inline="always", inner=True)
def _mk4_one(src, r0, extra, dy, kh, gpr, wp, wo, ws, qp, c, cpad, zp, lo, hi, out, o, cv,
             scratch):
    """One pixel (patch runs at ``src[r0 + ky * dy]``) x 64 channels, as :func:`_mk4` computes
    each of its pixels (sums from bias + ``extra``, the same taps in the same order): the last
    pass of a 7x7 layer computed 4 pixels' sums for this one before, 6% of the layer."""
    m = vi_load(scratch, _MASK)
    e = vi_splat(extra)
    a0, a1 = vi_add(vi_load(qp, c), e), vi_add(vi_load(qp, c + 16), e)
    a2, a3 = vi_add(vi_load(qp, c + 32), e), vi_add(vi_load(qp, c + 48), e)
    p = wo
    for ky in range(kh):
        t = ky * dy
        for _ in range(gpr):
            b = vi_xor(vi_bcast4(src, r0 + t), m)
            a0, a1 = vi_dpbusd(a0, b, vi_load(wp, p)), vi_dpbusd(a1, b, vi_load(wp, p + 64))
            a2 = vi_dpbusd(a2, b, vi_load(wp, p + 128))
            a3 = vi_dpbusd(a3, b, vi_load(wp, p + 192))
            p += ws
            t += 4
    _emit(a0, qp, c, cpad, zp, lo, hi, out, o, cv, scratch)
    _emit(a1, qp, c + 16, cpad, zp, lo, hi, out, o + 16, cv - 16, scratch)
    _emit(a2, qp, c + 32, cpad, zp, lo, hi, out, o + 32, cv - 32, scratch)
    _emit(a3, qp, c + 48, cpad, zp, lo, hi, out, o + 48, cv - 48, scratch)


@njit(_nrt=False, inner=True)
def _mk2(src, rb, n, dy, kh, gpr, wp, wo, ws, qp, c, cpad, ex, zp, lo, hi,
         out, o0, cout, cv, scratch):
    """:func:`_mk4` for 32 channels."""
    m = vi_load(scratch, _MASK)   # the input XOR mask (see _MASK)
    b0, b1 = vi_load(qp, c), vi_load(qp, c + 16)
    for j in range(0, n, _ROWS):
        rows = lesser(_ROWS, n - j)
        r0, r1, r2, r3 = rb[j], rb[j + 1], rb[j + 2], rb[j + 3]
        o = o0 + j * cout
        e0, e1, e2, e3 = _extras(ex, j, rows)
        a00, a01, a10, a11 = vi_add(b0, e0), vi_add(b1, e0), vi_add(b0, e1), vi_add(b1, e1)
        a20, a21, a30, a31 = vi_add(b0, e2), vi_add(b1, e2), vi_add(b0, e3), vi_add(b1, e3)
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
        if cv > 16 and rows == _ROWS:   # two pixels per packed vector, 32 bytes a pixel
            # column by column before any store (see _mk4)
            q = vq_load(qp, c, cpad)
            a00, a10, a20, a30 = (vi_requantqr(a00, q), vi_requantqr(a10, q),
                                  vi_requantqr(a20, q), vi_requantqr(a30, q))
            q = vq_load(qp, c + 16, cpad)
            a01, a11, a21, a31 = (vi_requantqr(a01, q), vi_requantqr(a11, q),
                                  vi_requantqr(a21, q), vi_requantqr(a31, q))
            if cv >= 32:
                vi_store2(vi_pack8q(a00, a01, a10, a11, zp, lo, hi), out, o, cout)
                vi_store2(vi_pack8q(a20, a21, a30, a31, zp, lo, hi), out, o + 2 * cout, cout)
            else:   # 17-31 channels (MobileNet v2's 24): the first cv bytes of each pixel
                vi_store2n(vi_pack8q(a00, a01, a10, a11, zp, lo, hi), out, o, cout, cv)
                vi_store2n(vi_pack8q(a20, a21, a30, a31, zp, lo, hi), out, o + 2 * cout, cout,
                           cv)
            continue
        _emit(a00, qp, c, cpad, zp, lo, hi, out, o, cv, scratch)
        _emit(a01, qp, c + 16, cpad, zp, lo, hi, out, o + 16, cv - 16, scratch)
        if rows > 1:
            o += cout
            _emit(a10, qp, c, cpad, zp, lo, hi, out, o, cv, scratch)
            _emit(a11, qp, c + 16, cpad, zp, lo, hi, out, o + 16, cv - 16, scratch)
        if rows > 2:
            o += cout
            _emit(a20, qp, c, cpad, zp, lo, hi, out, o, cv, scratch)
            _emit(a21, qp, c + 16, cpad, zp, lo, hi, out, o + 16, cv - 16, scratch)
        if rows > 3:
            o += cout
            _emit(a30, qp, c, cpad, zp, lo, hi, out, o, cv, scratch)
            _emit(a31, qp, c + 16, cpad, zp, lo, hi, out, o + 16, cv - 16, scratch)


@njit(_nrt=False, inner=True)
def _mk1(src, rb, n, dy, kh, gpr, wp, wo, ws, qp, c, cpad, ex, zp, lo, hi,
         out, o0, cout, cv, scratch):
    """:func:`_mk4` for 16 channels: 8 pixels at a time while 8 remain (8 chains of sums,
    each weight vector loaded once for 8 pixels: a 4-pixel group's 4 chains left the sums'
    latency exposed: MobileNet v2's 112x112x32 -> 16 layer 52.7 -> 44.6 us, Zen 5), then
    4."""
    m = vi_load(scratch, _MASK)   # the input XOR mask (see _MASK)
    b0 = vi_load(qp, c)
    j = 0
    if cv >= 16:
        q = vq_load(qp, c, cpad)
        while j + 8 <= n:
            r0, r1, r2, r3 = rb[j], rb[j + 1], rb[j + 2], rb[j + 3]
            r4, r5, r6, r7 = rb[j + 4], rb[j + 5], rb[j + 6], rb[j + 7]
            a0, a1 = vi_add(b0, vi_splat(ex[j])), vi_add(b0, vi_splat(ex[j + 1]))
            a2, a3 = vi_add(b0, vi_splat(ex[j + 2])), vi_add(b0, vi_splat(ex[j + 3]))
            a4, a5 = vi_add(b0, vi_splat(ex[j + 4])), vi_add(b0, vi_splat(ex[j + 5]))
            a6, a7 = vi_add(b0, vi_splat(ex[j + 6])), vi_add(b0, vi_splat(ex[j + 7]))
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
                    a4 = vi_dpbusd(a4, vi_xor(vi_bcast4(src, r4 + t), m), w0)
                    a5 = vi_dpbusd(a5, vi_xor(vi_bcast4(src, r5 + t), m), w0)
                    a6 = vi_dpbusd(a6, vi_xor(vi_bcast4(src, r6 + t), m), w0)
                    a7 = vi_dpbusd(a7, vi_xor(vi_bcast4(src, r7 + t), m), w0)
                    t += 4
            o = o0 + j * cout
            vi_store4(vi_pack8q(vi_requantqr(a0, q), vi_requantqr(a1, q), vi_requantqr(a2, q),
                                vi_requantqr(a3, q), zp, lo, hi), out, o, cout)
            vi_store4(vi_pack8q(vi_requantqr(a4, q), vi_requantqr(a5, q), vi_requantqr(a6, q),
                                vi_requantqr(a7, q), zp, lo, hi), out, o + 4 * cout, cout)
            j += 8
    for j in range(j, n, _ROWS):
        rows = lesser(_ROWS, n - j)
        r0, r1, r2, r3 = rb[j], rb[j + 1], rb[j + 2], rb[j + 3]
        o = o0 + j * cout
        e0, e1, e2, e3 = _extras(ex, j, rows)
        a0, a1, a2, a3 = vi_add(b0, e0), vi_add(b0, e1), vi_add(b0, e2), vi_add(b0, e3)
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
        if cv >= 16 and rows == _ROWS:   # the 16 bytes of 4 pixels packed in one vector
            vi_store4(vi_pack8q(vi_requantr(a0, qp, c, cpad), vi_requantr(a1, qp, c, cpad),
                                vi_requantr(a2, qp, c, cpad), vi_requantr(a3, qp, c, cpad),
                                zp, lo, hi), out, o, cout)
            continue
        _emit(a0, qp, c, cpad, zp, lo, hi, out, o, cv, scratch)
        if rows > 1:
            _emit(a1, qp, c, cpad, zp, lo, hi, out, o + cout, cv, scratch)
        if rows > 2:
            _emit(a2, qp, c, cpad, zp, lo, hi, out, o + 2 * cout, cv, scratch)
        if rows > 3:
            _emit(a3, qp, c, cpad, zp, lo, hi, out, o + 3 * cout, cv, scratch)



@njit
def _requantize_core(acc, qp, zp, lo, hi, out):
    """``out[r, c] = clamp(MBQM(acc[r, c] + bias[c]) + zp)`` with ``qp`` from
    :func:`requant_params` (``acc`` int32 [rows, C], ``out`` uint8 [rows, C])."""
    rows, cout = acc.shape
    cpad = qp.size // QP_ROWS
    aflat = flat(acc)
    oflat = flat(out)
    scratch = empty(16, np.uint8)
    buf = zeros(16, np.int32)
    for r in range(rows):
        for c in range(0, cout, 16):
            n = lesser(16, cout - c)
            for j in range(n):   # not a slice assignment (see elementwise._quant_range)
                buf[j] = aflat[r * cout + c + j]
            _emit(vi_add(vi_load(buf, 0), vi_load(qp, c)), qp, c, cpad, zp, lo, hi, oflat,
                  r * cout + c, n, scratch)
    return out
