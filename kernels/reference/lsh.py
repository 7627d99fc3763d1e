"""Reference LSH_PROJECTION and Fingerprint64 (Python integers and bytes): the oracle for
:mod:`nnsim.kernels.lsh`.

Written for reading: every 64-bit operation is a Python int masked to 64 bits, keys are
``bytes``, and the projection loops over seeds and rows literally.
"""
from __future__ import annotations

import struct

import numpy as np

M64 = (1 << 64) - 1
K0, K1, K2 = 0xC3A5C85C97CB3127, 0xB492B66FBE98F273, 0x9AE16A3B2F90404F
KMUL = 0x9DDFEA08EB382D69


def _u64(b: bytes, i: int) -> int:
    return int.from_bytes(b[i:i + 8], "little")


def _u32(b: bytes, i: int) -> int:
    return int.from_bytes(b[i:i + 4], "little")


def _rot(v: int, r: int) -> int:
    return ((v >> r) | (v << (64 - r))) & M64


def _smix(v: int) -> int:
    return v ^ (v >> 47)


def _h16(u: int, v: int, mul: int = KMUL) -> int:
    a = _smix(((u ^ v) * mul) & M64)
    b = _smix(((v ^ a) * mul) & M64)
    return (b * mul) & M64


def _weak(b: bytes, i: int, a: int, c: int) -> tuple[int, int]:
    w, x, y, z = (_u64(b, i + 8 * k) for k in range(4))
    a = (a + w) & M64
    c = _rot((c + a + z) & M64, 21)
    keep = a
    a = (a + x + y) & M64
    c = (c + _rot(a, 44)) & M64
    return (a + z) & M64, (c + keep) & M64


def fingerprint64(key: bytes) -> int:
    """farmhashna::Hash64 of ``key``, unsigned."""
    key, n = bytes(key), len(key)
    mul = (K2 + 2 * n) & M64
    if n == 0:
        return K2
    if n < 4:
        y = key[0] + (key[n >> 1] << 8)
        z = n + (key[n - 1] << 2)
        return (_smix(((y * K2) ^ (z * K0)) & M64) * K2) & M64
    if n < 8:
        return _h16((n + (_u32(key, 0) << 3)) & M64, _u32(key, n - 4), mul)
    if n <= 16:
        a = (_u64(key, 0) + K2) & M64
        b = _u64(key, n - 8)
        return _h16((_rot(b, 37) * mul + a) & M64, ((_rot(a, 25) + b) * mul) & M64, mul)
    a, b = (_u64(key, 0) * K1) & M64, _u64(key, 8)
    c, d = (_u64(key, n - 8) * mul) & M64, (_u64(key, n - 16) * K2) & M64
    if n <= 32:
        return _h16((_rot((a + b) & M64, 43) + _rot(c, 30) + d) & M64,
                    (a + _rot((b + K2) & M64, 18) + c) & M64, mul)
    if n <= 64:
        a = (_u64(key, 0) * K2) & M64
        y = (_rot((a + b) & M64, 43) + _rot(c, 30) + d) & M64
        z = _h16(y, (a + _rot((b + K2) & M64, 18) + c) & M64, mul)
        e, f = (_u64(key, 16) * mul) & M64, _u64(key, 24)
        g = ((y + _u64(key, n - 32)) * mul) & M64
        h = ((z + _u64(key, n - 24)) * mul) & M64
        return _h16((_rot((e + f) & M64, 43) + _rot(g, 30) + h) & M64,
                    (e + _rot((f + a) & M64, 18) + g) & M64, mul)
    x = (81 * K2 + _u64(key, 0)) & M64
    y = (81 * K1 + 113) & M64
    z = (_smix((y * K2 + 113) & M64) * K2) & M64
    v, w = (0, 0), (0, 0)
    blocks = (n - 1) // 64
    for i in range(0, blocks * 64, 64):
        x = (_rot((x + y + v[0] + _u64(key, i + 8)) & M64, 37) * K1) & M64
        y = (_rot((y + v[1] + _u64(key, i + 48)) & M64, 42) * K1) & M64
        x ^= w[1]
        y = (y + v[0] + _u64(key, i + 40)) & M64
        z = (_rot((z + w[0]) & M64, 33) * K1) & M64
        v = _weak(key, i, (v[1] * K1) & M64, (x + w[0]) & M64)
        w = _weak(key, i + 32, (z + w[1]) & M64, (y + _u64(key, i + 16)) & M64)
        x, z = z, x
    mul = (K1 + ((z & 0xFF) << 1)) & M64
    i = n - 64
    w0 = (w[0] + ((n - 1) & 63)) & M64
    v0 = (v[0] + w0) & M64
    w0 = (w0 + v0) & M64
    x = (_rot((x + y + v0 + _u64(key, i + 8)) & M64, 37) * mul) & M64
    y = (_rot((y + v[1] + _u64(key, i + 48)) & M64, 42) * mul) & M64
    x ^= (w[1] * 9) & M64
    y = (y + v0 * 9 + _u64(key, i + 40)) & M64
    z = (_rot((z + w0) & M64, 33) * mul) & M64
    v = _weak(key, i, (v[1] * mul) & M64, (x + w0) & M64)
    w = _weak(key, i + 32, (z + w[1]) & M64, (y + _u64(key, i + 16)) & M64)
    x, z = z, x
    return _h16((_h16(v[0], w[0], mul) + _smix(y) * K0 + z) & M64,
                (_h16(v[1], w[1], mul) + x) & M64, mul)


def lsh_projection(hash_seeds, values, weights, projection_type: int) -> np.ndarray:
    """Reference; see :func:`nnsim.kernels.lsh.lsh_projection`."""
    hash_seeds = np.asarray(hash_seeds)
    values = np.ascontiguousarray(values)
    rows = [values[r].tobytes() for r in range(values.shape[0])]
    num_hash, num_bits = hash_seeds.shape
    dense, sparse = [], []
    for i in range(num_hash):
        signature = 0
        for j in range(num_bits):
            seed = struct.pack("<f", float(hash_seeds[i, j]))
            score = 0.0
            for r, row in enumerate(rows):
                h = fingerprint64(seed + row)
                value = float(h - (1 << 64) if h >> 63 else h)  # as int64, rounded once
                score += value if weights is None else float(weights[r]) * value
            bit = int(score > 0)
            dense.append(bit)
            signature = (signature << 1) | bit
        offset = i * (1 << (num_bits & 31)) if projection_type == 3 else 0
        sparse.append(signature + offset)
    out = dense if projection_type == 2 else sparse
    return (np.array(out, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
