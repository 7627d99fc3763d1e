"""Quantized 3x3 stride-1 and stride-2 DEPTHWISE_CONV_2D on AVX2: window rows widened to int16
pairs once, two ``vpmaddwd`` per window row.

AVX2 has no byte dot product, and the generic core (:mod:`nnsim.kernels.depthwise`) widens
the 16 bytes of every tap of every window to int32 lanes (two ``vpmovzxbd`` on port 5) for a
``vpmaddwd`` with the weight in the low half of the lane: 9 widenings per output vector. Here
each input row is widened once, into a ring row whose lane position ``p`` of a channel holds
the int16 pair ``[x(s * p - pl), x(s * p - pl + 1)]`` (stride ``s``; uint8 values: int8 bytes
XOR 0x80, padding ``x_zp``). Window start ``ox`` of window row ``ky`` is then position ``ox``
times ``[w(ky, 0), w(ky, 1)]`` plus position ``ox + 2 / s`` (whose low half is pixel ``s * ox
- pl + 2``) times ``[w(ky, 2), 0]``: the same integer sum ``sum x * w`` from the same bias
(folded with ``- x_zp * sum w``) as the generic core, so the same results bit for bit.
Weights minus their zero point fit int16 whatever their type (uint8 or int8).

The loops take 16 channels at a time, outermost, and keep a ring of 3 widened rows of those
channels (64 bytes per lane position: 7 KB a row for 112 window starts, in L1), as
:mod:`nnsim.kernels._dw_widened` does for AVX-512 VNNI; each output row widens the input rows
it adds (one at stride 1, two at stride 2).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels._common import aligned_zeros
from nnsim.kernels._gemm_common import _store8
from nnsim.kernels._jit import (njit, vi_add, vi_dpwssd, vi_load, vi_load8, vi_or,
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
    """Bytes of one ring: 3 rows of (at most) ``out_w + 2`` lane positions of 64 bytes."""
    return 3 * 64 * (out_w + 2)


@njit(_nrt=False, inner=True)
def _widen_row(xb, base, iy, h, w, pl, cout, stride, positions, flip, xzp, ring, d):
    """Ring row at ``ring[d]``: lane position ``p`` (0 .. positions - 1) holds the pairs
    ``[x(stride * p - pl), x(stride * p - pl + 1)]`` of input row ``iy`` (of the image whose
    first byte is ``xb[base]``: 16 channels; ``x_zp`` outside the image, a whole padding row
    outside ``0:h``). Each pixel is read once: at stride 1 it is the high half of one position
    and the low half of the next."""
    z = vi_splat(xzp)
    sixteen = vi_splat(16)
    if iy < 0 or iy >= h:
        v = vi_or(z, vi_shl(z, sixteen))
        for p in range(positions):
            vi_store(v, ring, d + 64 * p)
        return
    row = base + iy * w * cout
    fl = vi_splat(flip)
    if stride == 1:
        ix = -pl
        low = z if ix < 0 or ix >= w else vi_xor(vi_load8(xb, row + ix * cout), fl)
        for p in range(positions):
            ix = p - pl + 1
            high = z if ix < 0 or ix >= w else vi_xor(vi_load8(xb, row + ix * cout), fl)
            vi_store(vi_or(low, vi_shl(high, sixteen)), ring, d + 64 * p)
            low = high
        return
    for p in range(positions):
        ix = stride * p - pl
        low = z if ix < 0 or ix >= w else vi_xor(vi_load8(xb, row + ix * cout), fl)
        ix += 1
        high = z if ix < 0 or ix >= w else vi_xor(vi_load8(xb, row + ix * cout), fl)
        vi_store(vi_or(low, vi_shl(high, sixteen)), ring, d + 64 * p)


@njit(_nrt=False, inner=True)
def _window(ring, r0, r1, r2, i, k, bias, a0, b0, a1, b1, a2, b2):
    """The sum of the window whose widened rows are at ``ring[r0 + i]``, ``ring[r1 + i]``,
    ``ring[r2 + i]`` (pairs ``a``, third taps ``b`` at ``k`` bytes on: two positions at stride
    1, one at stride 2), from the bias, in two chains."""
    s = vi_dpwssd(bias, vi_load(ring, r0 + i), a0)
    t = vi_dpwssd(vi_zero(), vi_load(ring, r0 + i + k), b0)
    s = vi_dpwssd(s, vi_load(ring, r1 + i), a1)
    t = vi_dpwssd(t, vi_load(ring, r1 + i + k), b1)
    s = vi_dpwssd(s, vi_load(ring, r2 + i), a2)
    t = vi_dpwssd(t, vi_load(ring, r2 + i + k), b2)
    return vi_add(s, t)


@njit(_nrt=False)
def _dw_pairs_part(xb, dims, w6, qp, prm, out, out_shape, cpad, ring, r_lo, r_hi, c_lo, c_hi):
    """Output rows ``r_lo:r_hi`` (row ``b * OH + oy``) x channels ``c_lo:c_hi`` (multiples of
    16, or the end) of the layer, with the ring ``ring`` (:func:`pair_ring_bytes`); arguments
    as :func:`nnsim.kernels._dw_widened._dw_widened_part` (``dims``: h, w, pad_top, pad_left,
    stride), ``w6`` from :func:`pair_weights`."""
    h, w, pt, pl, stride = dims[0], dims[1], dims[2], dims[3], dims[4]
    zp, lo, hi, xzp, flip = prm[0], prm[1], prm[2], prm[3], prm[4]
    out_h, out_w, cout = out_shape[1], out_shape[2], out_shape[3]
    positions = out_w + 2 // stride   # the last window start reads position out_w - 1 + 2 / s
    rl = 64 * positions
    k = 128 // stride
    for c in range(c_lo, c_hi, 16):
        a0, b0 = vi_load(w6, c), vi_load(w6, cpad + c)
        a1, b1 = vi_load(w6, 2 * cpad + c), vi_load(w6, 3 * cpad + c)
        a2, b2 = vi_load(w6, 4 * cpad + c), vi_load(w6, 5 * cpad + c)
        q = vq_load(qp, c, cpad)
        bias = vi_load(qp, c)   # the sums start at it (row 0 of the requantization table)
        for r in range(r_lo, r_hi):
            b, oy = r // out_h, r % out_h
            base = b * h * w * cout + c
            # window row ky is input row stride * oy - pt + ky, in slot (stride * oy + ky) % 3;
            # the next output row keeps the last 3 - stride of them, a new run or image widens
            # all three
            first = 0 if r == r_lo or oy == 0 else 3 - stride
            for ky in range(first, 3):
                _widen_row(xb, base, stride * oy - pt + ky, h, w, pl, cout, stride, positions,
                           flip, xzp, ring, (stride * oy + ky) % 3 * rl)
            r0, r1, r2 = ((stride * oy) % 3 * rl, (stride * oy + 1) % 3 * rl,
                          (stride * oy + 2) % 3 * rl)
            o0 = r * out_w * cout + c
            for ox in range(out_w):
                v = _window(ring, r0, r1, r2, 64 * ox, k, bias, a0, b0, a1, b1, a2, b2)
                _store8(vi_requantqb(v, q, zp, lo, hi), out, o0 + ox * cout, cout - c)


@njit(_nrt=False)
def _dw_pairs_step(xb, dims, w6, qp, prm, out, out_shape, cpad, rings, parts, t):
    """Part ``t`` of :func:`_dw_pairs_part` in parts (:mod:`nnsim.kernels.team`): output rows
    ``parts[t, 0:2]`` x channels ``parts[t, 2:4]`` with its own ring ``rings[t]``."""
    _dw_pairs_part(xb, dims, w6, qp, prm, out, out_shape, cpad, rings[t], parts[t, 0],
                   parts[t, 1], parts[t, 2], parts[t, 3])
