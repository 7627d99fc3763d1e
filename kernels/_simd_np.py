"""The SIMD operations of :mod:`nnsim.kernels._jit` on numpy arrays of lanes (16 int32 /
float32, 8 float32 for ``vh``, 32 int32 for ``vd``): what the cores call when they run as
plain Python (``NNSIM_DISABLE_JIT=1``). Same results as the compiled operations (numba
intrinsics there, whose LLVM IR :mod:`nnsim.kernels._simd_ir` builds), slowly.

The operations and their contracts (``_jit`` exports them by these names):

Value types: ``vi`` (16 int32 lanes; also seen as 64 bytes), ``vf`` (16 float32 lanes) and
``vh`` (8 float32 lanes: half the work on CPUs that split 512-bit operations in two; the
``vf_`` arithmetic, clamp and masked store take either float type).
Cores keep them in local variables, so a micro-kernel's accumulators stay in registers, which
numba's auto-vectoriser cannot be made to do. Arrays passed to these functions must be 1-D and
C-contiguous; ``idx`` counts elements of that array; nothing is bounds-checked.

  vi_zero() / vf_zero()            all lanes 0
  vi_splat(v) / vf_bcast(a, i)     every lane = int32 v / float32 a[i]
  vi_load(a, i) / vf_load(a, i)    the 64 bytes from &a[i] (any dtype) / 16 floats from a[i]
  vi_bcast4(a, i)                  every lane = the 4 bytes at &a[i] (as an int32)
  vi_load_t4(a, i)                 the 64 bytes at &a[i] as 4 rows of 16 bytes transposed:
                                   lane j = bytes a[i + j], a[i + 16 + j], a[i + 32 + j],
                                   a[i + 48 + j] (low to high; a: a byte array)
  vi_load8(a, i)                   the 16 bytes a[i:i + 16] as int32 lanes, sign-extended for
                                   an int8 array, zero-extended for a uint8 one
  vi_dpbusd(acc, u, s)             acc + sum of 4 products uint8(u) * int8(s) per lane
                                   (AVX-512 VNNI vpdpbusd; int32 wrap-around, no saturation)
  vi_dpwssd(acc, a, b)             acc + a.lo * b.lo + a.hi * b.hi per lane (int16 halves;
                                   AVX-512 VNNI vpdpwssd; wraps); with b.hi == 0 it is
                                   acc + a * b for a and b.lo in the int16 range
  vi_xor, vi_add, vi_mul(a, b)     lane-wise (int32 add and mul wrap)
  vi_or, vi_and(a, b); vi_shl, vi_lshr, vi_ashr(a, n)  lane-wise; shifts by the lanes of n
                                   (0..31), lshr filling with zeros, ashr with the sign
  vf_muladd(acc, a, b)             acc + a * b: one fused multiply-add when ``_jit.FMA``,
                                   else rounded twice (fastmath stays off either way)
  vi_requant(acc, qp, c, cpad, e, zp, lo, hi)  lane j (channel c + j, c even): clamp(MBQM(acc
                                   + bias + e, m, shift) + zp, lo, hi), TFLite's double-
                                   rounding MultiplyByQuantizedMultiplier (m in [0, 2**31));
                                   qp: the 13 rows of cpad int32 of requant_params, read in
                                   one 64-bit floor division on AVX-512, in two steps
                                   (rows 0-6) elsewhere (see ``_jit._QP_ROWS``); a uint32 view
                                   of it (gemm.shift_free: no left shifts) compiles
                                   without the left shift
  vq_load(qp, c, cpad)             the rows of channels c.. of qp that vi_requant reads, as a
                                   ``vq`` value (vi in registers), for a loop that
                                   requantizes many vectors of the same channels: loads from
                                   qp inside a loop that stores are repeated every iteration
                                   (arrays may alias)
  vi_requantq(acc, q, e, zp, lo, hi)  vi_requant with the rows of vq_load
  vi_requantb(acc, qp, c, cpad, zp, lo, hi), vi_requantqb(acc, q, zp, lo, hi)  the same for
                                   an accumulator that already holds bias (and extra): a
                                   core that starts its sums at vi_load(qp, c) (row 0, the
                                   bias) saves an addition per vector
  vi_requantr(acc, qp, c, cpad)    MBQM(acc) alone (acc holding bias and extra): no zero
                                   point, no clamp, for vi_pack8q; vi_requantqr(acc, q) with
                                   the rows of vq_load
  vf_add(a, b); vf_clamp(v, lo, hi)  lane-wise; clamp = std::min(std::max(v, lo), hi)
  vh_zero, vh_load, vh_bcast, vh_store  as the vf_ ones, 8 lanes
  vi_store(v, a, i) / vf_store     16 int32 / float32 lanes to a[i:i + 16]
  vi_store8(v, a, i)               the low byte of each lane to a[i:i + 16] (a: uint8/int8)
  vi_pack8q(a, b, c, d, zp, lo, hi)  vi_pack8 of clamp(v + zp, lo, hi) for v = a, b, c, d
                                   (lo >= -128, hi <= 255, lo <= hi): on AVX-512 with
                                   saturating packs, the zero point added to 16-bit lanes
                                   and the clamp on bytes
  vi_store2(v, a, i, s) / vi_store4  the 64 bytes of v in 2 / 4 equal pieces, piece k to
                                   a[i + k * s:] (a: a byte array), for packed pixels
  vi_store2n(v, a, i, s, n)        vi_store2 of the first n (< 32) bytes of each piece
  vb_prefetch(a, i)                a hint: the cache line of a[i] fetched for reading (no
                                   effect on any result; nothing without the JIT)
  vi_pack8(a, b, c, d)             the low bytes of the lanes of a, b, c, d as one 64-byte
                                   vector (a's 16 bytes first), for one vi_store
  vi_store8n(v, a, i, n) / vf_storen(v, a, i, n)   vi_store8 / vf_store of the first n lanes
                                   only (masked: nothing else is read or written)
  vd_zero()                        a ``vd``: 32 int32 lanes of pair sums awaiting a final
                                   horizontal add (the AVX2 GEMM accumulates so)
  vd_dpbusd(acc, u, s)             acc + u.b[2k] * s.b[2k] + u.b[2k+1] * s.b[2k+1] in lane k
                                   (bytes of u unsigned, of s signed; exact int16 products:
                                   one vpmaddwd per 16 lanes on AVX2)
  vd_dpbssd(acc, u, s)             the same with the bytes of u signed
  vd_sum(acc)                      a vi: lane j = acc[2j] + acc[2j + 1], so that
                                   vd_sum(vd_dpbusd(vd_zero(), u, s)) == vi_dpbusd(0, u, s)
  vb_sum64(a, i, f, n)             the sum of the first n (0..64) of the 64 bytes at &a[i],
                                   each XOR the byte f, unsigned (int64; vpsadbw); all 64
                                   bytes are read
  vb_copy(src, s, dst, d, n, f)    copy n <= 64 bytes from &src[s] to &dst[d], each XOR the
                                   byte f (masked: nothing else is read or written; byte
                                   masks are cheap with AVX-512 only, see ``_jit.MASKED_BYTES``)
  vb_copy16(src, s, dst, d, f)     vb_copy of 16 bytes, as one plain 16-byte load and store
"""

from __future__ import annotations

import numpy as np

__all__ = ["SIMD_OPS"]


def _np_vi_load(a, i):
    return a.view(np.uint8)[i * a.itemsize:i * a.itemsize + 64].view(np.int32).copy()


def _np_vi_dpbusd(acc, u, s):
    products = u.view(np.uint8).astype(np.int32) * s.view(np.int8).astype(np.int32)
    return acc + products.reshape(16, 4).sum(axis=1, dtype=np.int32)


def _np_vi_dpwssd(acc, a, b):
    products = a.view(np.int16).astype(np.int32) * b.view(np.int16).astype(np.int32)
    return acc + products.reshape(16, 2).sum(axis=1, dtype=np.int32)


def _np_vd_dp(acc, u, s, signed):
    a = u.view(np.int8 if signed else np.uint8).astype(np.int32)
    products = a * s.view(np.int8).astype(np.int32)
    return acc + products.reshape(32, 2).sum(axis=1, dtype=np.int32)


def _np_vi_store(v, a, i):
    a.view(np.uint8)[i * a.itemsize:i * a.itemsize + 64] = v.view(np.uint8)


def _np_vf_muladd(acc, a, b):
    return acc + a * b


def _np_vq_load(qp, c, cpad):
    rows = qp.view(np.int32)   # (a shift-free table is a uint32 view: nnsim.kernels.gemm)
    return tuple(rows[k * cpad + c:k * cpad + c + 16].astype(np.int64) for k in range(7))


def _np_vi_requant(acc, qp, c, cpad, extra, zp, lo, hi):
    return _np_vi_requantq(acc, _np_vq_load(qp, c, cpad), extra, zp, lo, hi)


def _np_vi_requantq(acc, rows, extra, zp, lo, hi):
    return _np_vi_requantqb(acc.astype(np.int64) + rows[0] + extra, rows, zp, lo, hi)


def _np_vi_requantb(acc, qp, c, cpad, zp, lo, hi):
    return _np_vi_requantqb(acc, _np_vq_load(qp, c, cpad), zp, lo, hi)


def _np_vi_requantqb(acc, rows, zp, lo, hi):
    _, mult, _, left, right = rows[:5]
    x = acc.astype(np.int64)
    x = (x << (32 + left)) >> 32                                  # int32 wrap of x << left
    q = (x * mult + (1 << 30)) >> 31                               # SRDHM for mult >= 0
    mask = (np.int64(1) << right) - 1
    q = (q >> right) + ((q & mask) > (mask >> 1) + (q < 0))
    return np.clip(q + zp, lo, hi).astype(np.int32)


def _np_vi_requantr(acc, qp, c, cpad):
    return _np_vi_requantqb(acc, _np_vq_load(qp, c, cpad), 0, -(1 << 31), (1 << 31) - 1)


def _np_vi_requantqr(acc, rows):
    return _np_vi_requantqb(acc, rows, 0, -(1 << 31), (1 << 31) - 1)


def _np_vi_pack8q(a, b, c, d, zp, lo, hi):
    return _np_vi_pack8(*(np.clip(v.astype(np.int64) + zp, lo, hi) for v in (a, b, c, d)))


def _np_vi_store_parts(v, a, i, stride, parts):
    size, b = 64 // parts, v.view(np.uint8)
    for k in range(parts):
        a[i + k * stride:i + k * stride + size] = b[k * size:(k + 1) * size]


def _np_vi_store2n(v, a, i, stride, n):
    n, b = min(max(n, 0), 32), v.view(np.uint8)
    a[i:i + n] = b[:n]
    a[i + stride:i + stride + n] = b[32:32 + n]


def _np_vi_pack8(a, b, c, d):
    return np.concatenate([v.astype(np.uint8) for v in (a, b, c, d)]).view(np.int32)


def _np_vb_copy(src, s, dst, d, n, f):
    n = min(max(n, 0), 64)
    b, e = src.view(np.uint8), dst.view(np.uint8)
    e[d * dst.itemsize:d * dst.itemsize + n] = b[s * src.itemsize:s * src.itemsize + n] ^ \
        np.uint8(f)


def _np_vi_store8(v, a, i):
    a[i:i + v.size] = (v & 255).astype(np.uint8).view(a.dtype)


def _np_vf_clamp(v, lo, hi):
    v = np.where(v < lo, np.float32(lo), v)
    return np.where(hi < v, np.float32(hi), v).astype(np.float32)


SIMD_OPS = {
    "vi_zero": lambda: np.zeros(16, np.int32),
    "vi_splat": lambda v: np.full(16, v, np.int32),
    "vi_load": _np_vi_load,
    "vi_bcast4": lambda a, i: np.repeat(a.view(np.uint8)[i * a.itemsize:][:4].view(np.int32), 16),
    "vi_dpbusd": _np_vi_dpbusd,
    "vi_dpwssd": _np_vi_dpwssd,
    "vi_load8": lambda a, i: a[i:i + 16].astype(np.int32),
    "vi_load_t4": lambda a, i: a[i:i + 64].reshape(4, 16).T.copy().reshape(-1).view(np.int32),
    "vi_mul": lambda a, b: (a.astype(np.int64) * b).astype(np.int32),
    "vi_xor": lambda a, b: a ^ b,
    "vi_add": lambda a, b: a + b,
    "vi_or": lambda a, b: a | b,
    "vi_and": lambda a, b: a & b,
    "vi_shl": lambda a, n: (a.astype(np.int64) << n).astype(np.uint32).view(np.int32),
    "vi_lshr": lambda a, n: (a.view(np.uint32) >> n.astype(np.uint32)).view(np.int32),
    "vi_ashr": lambda a, n: a >> n,
    "vi_store": _np_vi_store,
    "vf_zero": lambda: np.zeros(16, np.float32),
    "vf_load": lambda a, i: a[i:i + 16].astype(np.float32),
    "vf_bcast": lambda a, i: np.full(16, a[i], np.float32),
    "vf_muladd": _np_vf_muladd,
    "vf_store": lambda v, a, i: a.__setitem__(slice(i, i + v.size), v),
    "vh_zero": lambda: np.zeros(8, np.float32),
    "vh_load": lambda a, i: a[i:i + 8].astype(np.float32),
    "vh_bcast": lambda a, i: np.full(8, a[i], np.float32),
    "vi_requant": _np_vi_requant,
    "vq_load": _np_vq_load,
    "vi_requantq": _np_vi_requantq,
    "vi_requantb": _np_vi_requantb,
    "vi_requantqb": _np_vi_requantqb,
    "vi_store8": _np_vi_store8,
    "vi_pack8": _np_vi_pack8,
    "vi_requantr": _np_vi_requantr,
    "vi_pack8q": _np_vi_pack8q,
    "vi_requantqr": _np_vi_requantqr,
    "vi_store2": lambda v, a, i, s: _np_vi_store_parts(v, a, i, s, 2),
    "vi_store4": lambda v, a, i, s: _np_vi_store_parts(v, a, i, s, 4),
    "vi_store2n": _np_vi_store2n,
    "vi_store8n": lambda v, a, i, n: _np_vi_store8(v[:min(max(n, 0), 16)], a, i),
    "vf_storen": lambda v, a, i, n: a.__setitem__(slice(i, i + min(max(n, 0), v.size)),
                                                  v[:min(max(n, 0), v.size)]),
    "vb_copy": _np_vb_copy,
    "vb_prefetch": lambda a, i: None,
    "vb_copy16": lambda src, s, dst, d, f: _np_vb_copy(src, s, dst, d, 16, f),
    "vf_add": lambda a, b: a + b,
    "vf_clamp": _np_vf_clamp,
    "vd_zero": lambda: np.zeros(32, np.int32),
    "vb_sum64": lambda a, i, f, n: np.int64((a.view(np.uint8)[i * a.itemsize:i * a.itemsize + n]
                                             ^ np.uint8(f)).sum(dtype=np.int64)),
    "vd_dpbusd": lambda acc, u, s: _np_vd_dp(acc, u, s, False),
    "vd_dpbssd": lambda acc, u, s: _np_vd_dp(acc, u, s, True),
    "vd_sum": lambda acc: acc.reshape(16, 2).sum(axis=1, dtype=np.int32),
}
