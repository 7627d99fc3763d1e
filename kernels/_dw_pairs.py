"""Quantized 3x3 stride-1 DEPTHWISE_CONV_2D on AVX2: window rows widened to int16 pairs once,
two ``vpmaddwd`` per window row.

AVX2 has no byte dot product, and the generic core (:mod:`nnsim.kernels.depthwise`) widens
the 16 bytes of every tap of every window to int32 lanes (two ``vpmovzxbd`` on port 5) for a
``vpmaddwd`` with the weight in the low half of the lane: 9 widenings per output vector. Here
each input row is widened once, into a ring row whose lane ``p`` of a channel holds the int16
pair ``[x(p - pl), x(p - pl + 1)]`` (uint8 values: int8 bytes XOR 0x80, padding ``x_zp``).
Window start ``ox`` of window row ``ky`` is then lane ``ox`` times ``[w(ky, 0), w(ky, 1)]``
plus lane ``ox + 2`` times ``[w(ky, 2), 0]``: the same integer sum ``sum x * w`` from the same
bias (folded with ``- x_zp * sum w``) as the generic core, so the same results bit for bit.
Weights minus their zero point fit int16 whatever their type (uint8 or int8).

The loops take 16 channels at a time, outermost, and keep a ring of 3 widened rows of those
channels (64 bytes per lane position: 7 KB a row for 112 window starts, in L1), as
:mod:`nnsim.kernels._dw_widened` does for AVX-512 VNNI; each output row widens the one input
row it adds.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels._common import aligned_zeros
from nnsim.kernels._gemm_common import _store8
from nnsim.kernels._jit import (njit, prange, vi_add, vi_dpwssd, vi_load, vi_load8, vi_or,
                                vi_requantqb, vi_shl, vi_splat, vi_store, vi_xor, vi_zero,
                                vq_load)

__all__ = ["pair_ring_bytes", "pair_weights"]


def pair_weights(wq, cpad):
    """``wq`` [3, 3, Cout] (weights minus their zero point, int64) -> 6 rows of ``cpad``
    int32 lanes: per window row ``ky`` the int16 pair ``[w(ky, 0), w(ky, 1)]``, then
    ``[w(ky, 2), 0]``."""
    b = np.asarray(wq, np.int64) & 0xFFFF
    rows = np.stack([b[:, 0] | b[:, 1] << 16, b[:, 2]], axis=1).reshape(6, -1)
    out = aligned_zeros((6, cpad), np.int32)
    out[:, :rows.shape[1]] = (rows + 2**31) % 2**32 - 2**31
    return out.reshape(-1)


def pair_ring_bytes(out_w):
    """Bytes of one ring: 3 rows of ``out_w + 2`` lane positions of 64 bytes."""
    return 3 * 64 * (out_w + 2)


@njit(_nrt=False)
def _widen_row(xb, base, iy, h, w, pl, cout, out_w, flip, xzp, ring, d):
    """Ring row at ``ring[d]``: lane position ``p`` (0 .. out_w + 1) holds the pairs ``[x(p -
    pl), x(p - pl + 1)]`` of input row ``iy`` (of the image whose first byte is ``xb[base]``:
    16 channels; ``x_zp`` outside the image, a whole padding row outside ``0:h``). Each pixel
    is read once: it is the high half of one position and the low half of the next."""
    z = vi_splat(xzp)
    sixteen = vi_splat(16)
    if iy < 0 or iy >= h:
        v = vi_or(z, vi_shl(z, sixteen))
        for p in range(out_w + 2):
            vi_store(v, ring, d + 64 * p)
        return
    row = base + iy * w * cout
    fl = vi_splat(flip)
    ix = -pl
    low = z if ix < 0 or ix >= w else vi_xor(vi_load8(xb, row + ix * cout), fl)
    for p in range(out_w + 2):
        ix = p - pl + 1
        high = z if ix < 0 or ix >= w else vi_xor(vi_load8(xb, row + ix * cout), fl)
        vi_store(vi_or(low, vi_shl(high, sixteen)), ring, d + 64 * p)
        low = high


@njit(_nrt=False)
def _window(ring, r0, r1, r2, i, bias, a0, b0, a1, b1, a2, b2):
    """The sum of the window whose widened rows are at ``ring[r0 + i]``, ``ring[r1 + i]``,
    ``ring[r2 + i]`` (pairs ``a``, third taps ``b`` two positions on), from the bias, in two
    chains."""
    s = vi_dpwssd(bias, vi_load(ring, r0 + i), a0)
    t = vi_dpwssd(vi_zero(), vi_load(ring, r0 + i + 128), b0)
    s = vi_dpwssd(s, vi_load(ring, r1 + i), a1)
    t = vi_dpwssd(t, vi_load(ring, r1 + i + 128), b1)
    s = vi_dpwssd(s, vi_load(ring, r2 + i), a2)
    t = vi_dpwssd(t, vi_load(ring, r2 + i + 128), b2)
    return vi_add(s, t)


@njit
def _dw_pairs_part(xb, dims, w6, qp, prm, out, out_shape, cpad, ring, r_lo, r_hi, c_lo, c_hi):
    """Output rows ``r_lo:r_hi`` (row ``b * OH + oy``) x channels ``c_lo:c_hi`` (multiples of
    16, or the end) of the layer, with the ring ``ring`` (:func:`pair_ring_bytes`); arguments
    as :func:`nnsim.kernels._dw_widened._dw_widened_part`, ``w6`` from :func:`pair_weights`."""
    h, w, pt, pl = dims[0], dims[1], dims[2], dims[3]
    zp, lo, hi, xzp, flip = prm[0], prm[1], prm[2], prm[3], prm[4]
    out_h, out_w, cout = out_shape[1], out_shape[2], out_shape[3]
    rl = 64 * (out_w + 2)
    for c in range(c_lo, c_hi, 16):
        a0, b0 = vi_load(w6, c), vi_load(w6, cpad + c)
        a1, b1 = vi_load(w6, 2 * cpad + c), vi_load(w6, 3 * cpad + c)
        a2, b2 = vi_load(w6, 4 * cpad + c), vi_load(w6, 5 * cpad + c)
        q = vq_load(qp, c, cpad)
        bias = vi_load(qp, c)   # the sums start at it (row 0 of the requantization table)
        for r in range(r_lo, r_hi):
            b, oy = r // out_h, r % out_h
            base = b * h * w * cout + c
            if r == r_lo or oy == 0:   # a new run or image: its first two window rows
                _widen_row(xb, base, oy - pt, h, w, pl, cout, out_w, flip, xzp, ring,
                           (oy % 3) * rl)
                _widen_row(xb, base, oy - pt + 1, h, w, pl, cout, out_w, flip, xzp, ring,
                           ((oy + 1) % 3) * rl)
            _widen_row(xb, base, oy - pt + 2, h, w, pl, cout, out_w, flip, xzp, ring,
                       ((oy + 2) % 3) * rl)
            r0, r1, r2 = (oy % 3) * rl, ((oy + 1) % 3) * rl, ((oy + 2) % 3) * rl
            o0 = r * out_w * cout + c
            for ox in range(out_w):
                v = _window(ring, r0, r1, r2, 64 * ox, bias, a0, b0, a1, b1, a2, b2)
                _store8(vi_requantqb(v, q, zp, lo, hi), out, o0 + ox * cout, cout - c)


@njit(parallel=True)
def _dw_pairs_par(xb, dims, w6, qp, prm, out, out_shape, cpad, rings, parts):
    """:func:`_dw_pairs_part` in parts run by numba's threads: part ``t`` computes output rows
    ``parts[t, 0:2]`` x channels ``parts[t, 2:4]`` with its own ring ``rings[t]``."""
    for t in prange(parts.shape[0]):
        _dw_pairs_part(xb, dims, w6, qp, prm, out, out_shape, cpad, rings[t], parts[t, 0],
                       parts[t, 1], parts[t, 2], parts[t, 3])
    return out
