"""Quantized 3x3 stride-1 DEPTHWISE_CONV_2D with int8 weights on AVX-512 VNNI: window rows
widened, one ``vpdpbusd`` per window row.

For a window start ``ox`` and a channel, the int32 lane of bytes ``[x(ox - pl), x(ox - pl + 1),
x(ox - pl + 2), 0]`` (the three pixels one window row covers, as uint8: int8 bytes XOR 0x80,
padding ``x_zp``) times the lane ``[w(ky, 0), w(ky, 1), w(ky, 2), 0]`` of the int8 weights is
one ``vpdpbusd`` lane: uint8 x int8 products summed exactly in int32. Three per output vector
instead of 9 widening loads and 9 ``vpdpwssd`` (:mod:`nnsim.kernels.depthwise`), and the same
integer sum ``sum x * w`` to which the bias (folded with ``- x_zp * sum w``) is added: the
same results, bit for bit.

The loops take 16 channels at a time, outermost, and keep a ring of 3 widened rows of those
channels (64 bytes per window start: a row of 112 starts is 7 KB, so the ring stays in L1);
each output row widens the one input row it adds. The input is read in place: no padded copy.

Stride 2 (with AVX-512 VBMI, :data:`nnsim.kernels._jit.VBMI`) uses the same weights and sums,
but widening there cost what it saved (each output row adds two input rows, each window start
two pixels). Its ring keeps the input rows compact instead, per group of 16 channels 16 bytes
per pixel (flipped, padding included), and one ``vpermb`` (``vi_load_t4``) turns the 64 bytes
of the 4 pixels from a window start into the widened lanes (the fourth pixel meets the zero
weight byte).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels._common import aligned_zeros
from nnsim.kernels._gemm_common import _store8
from nnsim.kernels._builtins import lesser
from nnsim.kernels._jit import (njit, vb_copy, vb_copy16, vi_dpbusd, vi_load, vi_load8, vi_load_t4,
                                vi_lshr, vi_or, vi_pack8q, vi_requantqb, vi_requantqr, vi_shl,
                                vi_splat, vi_store, vi_store4, vi_xor, vq_load)

__all__ = ["widened_weights", "ring_bytes", "compact_ring_bytes"]


def widened_weights(wq, cpad):
    """``wq`` [3, 3, Cout] int8 values (int64) -> 3 rows of ``cpad`` int32 lanes of bytes
    ``[w(ky, 0), w(ky, 1), w(ky, 2), 0]``."""
    b = wq.astype(np.int64) & 0xFF
    lanes = b[:, 0] | b[:, 1] << 8 | b[:, 2] << 16
    out = aligned_zeros((3, cpad), np.int32)
    out[:, :lanes.shape[1]] = lanes.astype(np.int32)
    return out.reshape(-1)


def ring_bytes(out_w):
    """Bytes of one ring: 3 widened rows of ``out_w`` window starts (+ one vector of slack)."""
    return 3 * 64 * (out_w + 1)


def compact_ring_bytes(out_w, cout):
    """Bytes of one stride-2 ring: 64 bytes of padding values, then 3 slots of compact rows,
    one per group of 16 channels, of ``2 * out_w + 2`` pixels (window start 2 * ox reads
    pixels 2 * ox .. 2 * ox + 3): 33 KB for MobileNet v2's 112x112x96 input."""
    return 64 + 3 * -(-cout // 16) * 16 * (2 * out_w + 2)


@njit(_nrt=False, inner=True)
def _widen(xb, base, iy, h, w, pl, cout, out_w, flip, xzp, ring, d):
    """Ring row at ``ring[d]``: the widened lanes of input row ``iy`` (of the image whose first
    byte is ``xb[base]``; a padding row when outside ``0:h``) for every window start, 16
    channels (``xb`` offset of the first included).

    Each pixel is read once: the lanes of window start ``ox`` are those of ``ox - 1`` moved
    down a byte, with the pixel ``ox - pl + 2`` entering in byte 2 (flipped by XOR there)."""
    z = vi_splat(xzp)
    if iy < 0 or iy >= h:
        v = vi_or(vi_or(z, vi_shl(z, vi_splat(8))), vi_shl(z, vi_splat(16)))
        for ox in range(out_w):
            vi_store(v, ring, d + 64 * ox)
        return
    row = base + iy * w * cout
    top, eight = vi_splat(16), vi_splat(8)
    fl, pad = vi_splat(flip << 16), vi_splat(xzp << 16)
    lanes = vi_splat(0)
    for ix in range(-pl, -pl + 2):   # the first two pixels of the first window
        new = pad if ix < 0 or ix >= w else vi_xor(vi_shl(vi_load8(xb, row + ix * cout), top), fl)
        lanes = vi_or(vi_lshr(lanes, eight), new)
    for ox in range(out_w):
        ix = ox - pl + 2
        new = pad if ix < 0 or ix >= w else vi_xor(vi_shl(vi_load8(xb, row + ix * cout), top), fl)
        lanes = vi_or(vi_lshr(lanes, eight), new)
        vi_store(lanes, ring, d + 64 * ox)


@njit(_nrt=False, inner=True)
def _window(ring, r0, r1, r2, i, bias, w0, w1, w2):
    """The sum of the window whose widened rows are at ``ring[r0 + i]``, ``ring[r1 + i]``,
    ``ring[r2 + i]``, from the bias."""
    a = vi_dpbusd(bias, vi_load(ring, r0 + i), w0)
    a = vi_dpbusd(a, vi_load(ring, r1 + i), w1)
    return vi_dpbusd(a, vi_load(ring, r2 + i), w2)


@njit(_nrt=False)
def _dw_widened_part(xb, dims, w3, qp, prm, out, out_shape, cpad, ring, r_lo, r_hi, c_lo,
                    c_hi):
    """Output rows ``r_lo:r_hi`` (row ``b * OH + oy``) x channels ``c_lo:c_hi`` (multiples of
    16, or the end) of the layer, with the ring ``ring`` (:func:`ring_bytes`). ``xb``: the
    input's bytes; ``dims``: h, w, pad_top, pad_left; ``prm``: out_zp, lo, hi, x_zp (uint8
    domain), flip (0x80 for int8 input, else 0); ``out``: the output's bytes."""
    h, w, pt, pl = dims[0], dims[1], dims[2], dims[3]
    zp, lo, hi, xzp, flip = prm[0], prm[1], prm[2], prm[3], prm[4]
    out_h, out_w, cout = out_shape[1], out_shape[2], out_shape[3]
    rl = 64 * (out_w + 1)
    for c in range(c_lo, c_hi, 16):
        w0, w1, w2 = vi_load(w3, c), vi_load(w3, cpad + c), vi_load(w3, 2 * cpad + c)
        q = vq_load(qp, c, cpad)
        bias = vi_load(qp, c)   # the sums start at it (row 0 of the requantization table)
        for r in range(r_lo, r_hi):
            b, oy = r // out_h, r % out_h
            base = b * h * w * cout + c
            if r == r_lo or oy == 0:   # a new run or image: its first two window rows
                _widen(xb, base, oy - pt, h, w, pl, cout, out_w, flip, xzp, ring,
                       (oy % 3) * rl)
                _widen(xb, base, oy - pt + 1, h, w, pl, cout, out_w, flip, xzp, ring,
                       ((oy + 1) % 3) * rl)
            _widen(xb, base, oy - pt + 2, h, w, pl, cout, out_w, flip, xzp, ring,
                   ((oy + 2) % 3) * rl)
            r0, r1, r2 = (oy % 3) * rl, ((oy + 1) % 3) * rl, ((oy + 2) % 3) * rl
            o0 = r * out_w * cout + c
            ox = 0
            if cout - c >= 16:   # 4 window starts per packed vector, stored in 4 pieces
                while ox + 4 <= out_w:
                    v0 = _window(ring, r0, r1, r2, 64 * ox, bias, w0, w1, w2)
                    v1 = _window(ring, r0, r1, r2, 64 * ox + 64, bias, w0, w1, w2)
                    v2 = _window(ring, r0, r1, r2, 64 * ox + 128, bias, w0, w1, w2)
                    v3 = _window(ring, r0, r1, r2, 64 * ox + 192, bias, w0, w1, w2)
                    vi_store4(vi_pack8q(vi_requantqr(v0, q), vi_requantqr(v1, q),
                                        vi_requantqr(v2, q), vi_requantqr(v3, q), zp, lo, hi),
                              out, o0 + ox * cout, cout)
                    ox += 4
            for ox in range(ox, out_w):
                v = _window(ring, r0, r1, r2, 64 * ox, bias, w0, w1, w2)
                _store8(vi_requantqb(v, q, zp, lo, hi), out, o0 + ox * cout, cout - c)


@njit(_nrt=False)
def _dw_widened_step(xb, dims, w3, qp, prm, out, out_shape, cpad, rings, parts, t):
    """Part ``t`` of :func:`_dw_widened_part` in parts (:mod:`nnsim.kernels.team`): output
    rows ``parts[t, 0:2]`` x channels ``parts[t, 2:4]`` with its own ring ``rings[t]``."""
    _dw_widened_part(xb, dims, w3, qp, prm, out, out_shape, cpad, rings[t], parts[t, 0],
                     parts[t, 1], parts[t, 2], parts[t, 3])





@njit(_nrt=False, inner=True)
def _compact(xb, base, iy, h, w, pl, cout, c_lo, c_hi, flip, ring, d, npx, rl):
    """Ring row at ``ring[d]``: input row ``iy`` (of the image whose first byte is ``xb[base]``)
    as compact rows ``rl`` bytes apart, one per group of 16 channels from ``c_lo`` to ``c_hi``:
    ``npx`` pixels of 16 bytes from column ``-pl``, the channels XOR ``flip``, or the padding
    bytes ``ring[0:16]`` outside the image. Each pixel's channels are read in turn (the input
    row once, in order)."""
    inside = 0 <= iy < h
    start = lesser(pl, npx) if inside else npx   # pixels start:stop are the image's
    stop = lesser(pl + w, npx) if inside else npx
    row = base + (iy * w - pl) * cout
    for c in range(c_lo, c_hi, 16):
        g = d + (c - c_lo) // 16 * rl
        for px in range(start):
            vb_copy16(ring, 0, ring, g + 16 * px, 0)
        for px in range(stop, npx):
            vb_copy16(ring, 0, ring, g + 16 * px, 0)
    last = c_lo + (c_hi - c_lo) // 16 * 16   # from here, a group of fewer than 16 channels
    for px in range(start, stop):
        s, g = row + px * cout, d + 16 * px
        for c in range(c_lo, last, 16):
            vb_copy16(xb, s + c, ring, g + (c - c_lo) // 16 * rl, flip)
        if last < c_hi:   # (nothing past the input's end is read)
            vb_copy(xb, s + last, ring, g + (last - c_lo) // 16 * rl, c_hi - last, flip)


@njit(_nrt=False, inner=True)
def _window_t4(ring, r0, r1, r2, i, bias, w0, w1, w2):
    """:func:`_window` from compact rows: the widened lanes of each row by one vi_load_t4."""
    a = vi_dpbusd(bias, vi_load_t4(ring, r0 + i), w0)
    a = vi_dpbusd(a, vi_load_t4(ring, r1 + i), w1)
    return vi_dpbusd(a, vi_load_t4(ring, r2 + i), w2)


@njit(_nrt=False)
def _dw_s2_part(xb, dims, w3, qp, prm, out, out_shape, cpad, ring, r_lo, r_hi, c_lo, c_hi):
    """:func:`_dw_widened_part` for stride 2, with the ring of :func:`compact_ring_bytes`:
    output rows outermost (an input row is compacted for all the part's channels at once, the
    input read once; channel groups outermost would read it once per group, 4x the output)."""
    h, w, pt, pl = dims[0], dims[1], dims[2], dims[3]
    zp, lo, hi, xzp, flip = prm[0], prm[1], prm[2], prm[3], prm[4]
    out_h, out_w, cout = out_shape[1], out_shape[2], out_shape[3]
    npx = 2 * out_w + 2
    rl = 16 * npx
    span = (c_hi - c_lo + 15) // 16 * rl   # one slot: the compact rows of every group
    for k in range(64):
        ring[k] = xzp
    for r in range(r_lo, r_hi):
        b, oy = r // out_h, r % out_h
        base = b * h * w * cout
        iy = 2 * oy - pt   # the window's rows iy..iy + 2: input row iy + k in slot
        # (2 * oy + k) % 3 (row iy + 2 stays for the next output row as its row 0)
        s0, s1, s2 = (64 + (2 * oy) % 3 * span, 64 + (2 * oy + 1) % 3 * span,
                      64 + (2 * oy + 2) % 3 * span)
        if r == r_lo or oy == 0:
            _compact(xb, base, iy, h, w, pl, cout, c_lo, c_hi, flip, ring, s0, npx, rl)
        _compact(xb, base, iy + 1, h, w, pl, cout, c_lo, c_hi, flip, ring, s1, npx, rl)
        _compact(xb, base, iy + 2, h, w, pl, cout, c_lo, c_hi, flip, ring, s2, npx, rl)
        o0 = r * out_w * cout
        for c in range(c_lo, c_hi, 16):
            count = lesser(16, cout - c)
            w0, w1, w2 = vi_load(w3, c), vi_load(w3, cpad + c), vi_load(w3, 2 * cpad + c)
            q = vq_load(qp, c, cpad)
            bias = vi_load(qp, c)
            g = (c - c_lo) // 16 * rl
            r0, r1, r2 = s0 + g, s1 + g, s2 + g
            ox = 0
            if count == 16:   # 4 window starts per packed vector, stored in 4 pieces
                while ox + 4 <= out_w:
                    v0 = _window_t4(ring, r0, r1, r2, 32 * ox, bias, w0, w1, w2)
                    v1 = _window_t4(ring, r0, r1, r2, 32 * ox + 32, bias, w0, w1, w2)
                    v2 = _window_t4(ring, r0, r1, r2, 32 * ox + 64, bias, w0, w1, w2)
                    v3 = _window_t4(ring, r0, r1, r2, 32 * ox + 96, bias, w0, w1, w2)
                    vi_store4(vi_pack8q(vi_requantqr(v0, q), vi_requantqr(v1, q),
                                        vi_requantqr(v2, q), vi_requantqr(v3, q), zp, lo, hi),
                              out, o0 + ox * cout + c, cout)
                    ox += 4
            for ox in range(ox, out_w):
                v = _window_t4(ring, r0, r1, r2, 32 * ox, bias, w0, w1, w2)
                _store8(vi_requantqb(v, q, zp, lo, hi), out, o0 + ox * cout + c, count)


@njit(_nrt=False)
def _dw_s2_step(xb, dims, w3, qp, prm, out, out_shape, cpad, rings, parts, t):
    """Part ``t`` of :func:`_dw_s2_part` in parts, as :func:`_dw_widened_step`."""
    _dw_s2_part(xb, dims, w3, qp, prm, out, out_shape, cpad, rings[t], parts[t, 0],
                parts[t, 1], parts[t, 2], parts[t, 3])
