"""CONV_2D of a single output pixel with a 1x1 filter (MobileNet's classifier, 1x1x1024 or
1280 -> 1001: a matrix-vector product): the sums of :mod:`nnsim.kernels.gemm`'s micro-kernels,
one pixel at a time. Integer on AVX2: a 64-channel tile per pass,
:func:`nnsim.kernels._gemm_avx2._gemv_tile` (on AVX-512 VNNI the micro-kernel's one-pixel pass
serves, see ``gemm._Plan``). Float on AVX-512 and AVX2: 8 columns of 16 channels per pass (on
AVX2 from eight 1-column tiles, each 16-lane vector two 8-lane halves).

The 4-pixel micro-kernels would compute three unused pixels here, with one chain of
multiply-adds per 16 channels. These loops take more chains per pass over the taps (float: two
64-channel tiles, 8 chains; integer, AVX2: a whole tile, four 16-channel columns); the weights
(1.3 MB for MobileNet v2, mostly not in cache) stream by once. Integer sums are exact, so the
result is the same; float sums keep TFLite's order (each output's taps one at a time in k order
from 0.0, then the bias).
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels._builtins import empty, lesser
from nnsim.kernels._gemm_avx2 import _gemv_cols, _gemv_tile
from nnsim.kernels._gemm_common import _FLOAT_COLS, _TILE
from nnsim.kernels._gemm_float import _emit_f
from nnsim.kernels._gemm_int import _row_sums
from nnsim.kernels._claims import Claimed
from nnsim.kernels._jit import njit, vf_bcast, vf_load, vf_muladd, vf_zero
from nnsim.kernels._native import call_native, native_address


#: The argument types of :func:`nnsim.kernels._gemm_avx2._gemv_tile` and ``_gemv_cols``
#: (codes of :func:`nnsim.kernels._native.native_types`; the requantization table uint32 or
#: int32): :func:`_quant_gemv` calls them through their addresses (:func:`micro_kernels`).
_TILE_CODES = "u8 i i8 i i u32|i32 i i i i i i u8 i"
_COLS_CODES = "u8 i i8 i i i i u32|i32 i i i i i i u8 i"


def micro_kernels(qp_dtype) -> np.ndarray:
    """int64 [2]: the addresses of :func:`nnsim.kernels._gemm_avx2._gemv_tile` and
    ``_gemv_cols`` for a requantization table of ``qp_dtype`` (uint32 or int32), compiled (or
    loaded from numba's cache) here. Called through their addresses, they compile once, apart
    from :func:`_quant_gemv` (whose compilation optimised and compiled their code again: 1.1 s
    of a first run of ad01_int8, issue 13), and the cold start's compiling child compiles them
    while the invoke compiles the core (:func:`compile_micro_kernels`)."""
    table = "u32" if np.dtype(qp_dtype) == np.uint32 else "i32"
    return np.array([native_address(_gemv_tile, _TILE_CODES.replace("u32|i32", table)),
                     native_address(_gemv_cols, _COLS_CODES.replace("u32|i32", table))],
                    np.int64)


def compile_micro_kernels(qp_dtype=np.uint32) -> int:
    """Compile (or load) :func:`micro_kernels`, skipping one the other process is compiling
    (:class:`nnsim.kernels._claims.Claimed`): 1 when both were compiled or loaded here."""
    try:
        micro_kernels(qp_dtype)
    except Claimed:
        return 0
    return 1


@njit(_nrt=False)
def _quant_gemv_step(x, geo, prm, wp, qp, out, mks, rb, sx, parts, t):
    """Part ``t`` of :func:`_quant_gemv` in parts (:mod:`nnsim.kernels.team`): channels
    ``parts[t, 2:4]`` (multiples of 64, or the end) with its own ``rb[t]``, ``sx[t]``."""
    _quant_gemv(x, geo, prm, wp, qp, out, mks, rb[t], sx[t], parts[t, 2], parts[t, 3])


@njit(_nrt=False)
def _quant_gemv(x, geo, prm, wp, qp, out, mks, rb, sx, c_lo, c_hi):
    """Channels ``c_lo:c_hi`` of the one output pixel of a direct (1x1) quantized plan on
    AVX2 (``prm`` as :func:`nnsim.kernels._gemm_int._quant_conv_part` reads it; ``out`` its
    bytes); ``mks``: the addresses of :func:`micro_kernels`."""
    rowcoef, kfill, zp, lo, hi = prm[1], prm[2], prm[3], prm[4], prm[5]
    cpad, xflip = prm[6], prm[7]
    groups = geo[10] * geo[11] // 4
    cout = out.size
    extra = 0
    if rowcoef != 0:   # uint8 weights: minus w_zp times the sum of the inputs
        rb[0] = 0
        # (an int64, not the literal 1: numba compiles a variant per literal)
        _row_sums(x, rb, np.int64(1), geo[10], geo[11], geo[12], sx, xflip)
        extra = np.int32(rowcoef * (sx[0] - kfill))
    signed = np.int64(xflip != 0)   # (ints: the calls through an address take no bool)
    c = c_lo   # 16 ymm registers: vd accumulators (kernels/_gemm_avx2.py)
    while c < c_hi:
        ncol = lesser(4, (cout - c + 15) // 16)
        p = (c // _TILE) * groups * 256
        if ncol == 4:
            call_native(mks[0], (x, groups, wp, p, signed, qp, c, cpad, extra, zp, lo, hi, out,
                                 cout), _TILE_CODES)
        else:
            for col in range(0, ncol, 2):
                call_native(mks[1], (x, groups, wp, p + 64 * col, 64 * ncol,
                                     np.int64(col + 1 < ncol), signed, qp, c + 16 * col, cpad,
                                     extra, zp, lo, hi, out, cout), _COLS_CODES)
        c += _TILE


@njit
def _float_gemv_step(x, geo, wp, bias, clamp, out, parts, t):
    """Part ``t`` of :func:`_float_gemv` in parts: channels ``parts[t, 2:4]``."""
    _float_gemv(x, geo, wp, bias, clamp, out, parts[t, 2], parts[t, 3])


@njit
def _float_gemv(x, geo, wp, bias, clamp, out, c_lo, c_hi):
    """Channels ``c_lo:c_hi`` of the one output pixel of a direct (1x1) float plan."""
    k = geo[10] * geo[11]
    lo, hi = clamp[0], clamp[1]
    cout = out.size
    scratch = empty(16, np.float32)
    c = c_lo
    while c < c_hi:
        if c + 2 * _TILE <= c_hi:   # 128 channels: 8 chains
            _fpair(x, k, wp, c * k, bias, c, lo, hi, out, scratch)
            c += 2 * _TILE
        else:   # one tile of _FLOAT_COLS columns (gemm.pack_weights)
            ncol = lesser(_FLOAT_COLS, (cout - c + 15) // 16)
            for col in range(ncol):
                a = vf_zero()
                p = c * k + 16 * col
                for t in range(k):
                    a = vf_muladd(a, vf_bcast(x, t), vf_load(wp, p))
                    p += 16 * ncol
                _emit_f(a, bias, c + 16 * col, lo, hi, out, c + 16 * col,
                        cout - c - 16 * col, scratch)
            c += 16 * _FLOAT_COLS


@njit(_nrt=False, inner=True)
def _fpair(x, k, wp, p, bias, c, lo, hi, out, scratch):
    """Channels c..c + 128 (8 columns, weights from ``wp[p]``: two 4-column tiles, or on AVX2
    eight 1-column ones, see gemm.pack_weights), float."""
    a0, a1, a2, a3 = vf_zero(), vf_zero(), vf_zero(), vf_zero()
    a4, a5, a6, a7 = vf_zero(), vf_zero(), vf_zero(), vf_zero()
    # columns 4-7 start 64 K floats on in both layouts (_FLOAT_COLS 4 or 1); the next column
    # is 16 floats on in a 4-column tile's rows, a whole K x 16 tile on with 1-column tiles
    q = p + k * _TILE
    cs, row = (16, _TILE) if _FLOAT_COLS == 4 else (16 * k, 16)
    for t in range(k):
        b = vf_bcast(x, t)
        a0, a1 = vf_muladd(a0, b, vf_load(wp, p)), vf_muladd(a1, b, vf_load(wp, p + cs))
        a2 = vf_muladd(a2, b, vf_load(wp, p + 2 * cs))
        a3 = vf_muladd(a3, b, vf_load(wp, p + 3 * cs))
        a4, a5 = vf_muladd(a4, b, vf_load(wp, q)), vf_muladd(a5, b, vf_load(wp, q + cs))
        a6 = vf_muladd(a6, b, vf_load(wp, q + 2 * cs))
        a7 = vf_muladd(a7, b, vf_load(wp, q + 3 * cs))
        p += row
        q += row
    full = np.int64(16)   # (not the literal: numba would compile _emit_f again)
    _emit_f(a0, bias, c, lo, hi, out, c, full, scratch)
    _emit_f(a1, bias, c + 16, lo, hi, out, c + 16, full, scratch)
    _emit_f(a2, bias, c + 32, lo, hi, out, c + 32, full, scratch)
    _emit_f(a3, bias, c + 48, lo, hi, out, c + 48, full, scratch)
    _emit_f(a4, bias, c + 64, lo, hi, out, c + 64, full, scratch)
    _emit_f(a5, bias, c + 80, lo, hi, out, c + 80, full, scratch)
    _emit_f(a6, bias, c + 96, lo, hi, out, c + 96, full, scratch)
    _emit_f(a7, bias, c + 112, lo, hi, out, c + 112, full, scratch)
