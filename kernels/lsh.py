"""LSH_PROJECTION: sign bits of hashed random projections, and the hash they use.

:func:`fingerprint64` is FarmHash's ``Fingerprint64`` (``farmhashna::Hash64`` of FarmHash 1.1,
the function AOSP links from libtextclassifier_hash and TFLite from its farmhash copy): a fixed,
portable 64-bit hash of a byte string, read as little-endian 64/32-bit words.

:func:`lsh_projection` follows AOSP ``LSHProjection.cpp`` (and TFLite ``lsh_projection.cc``):
for every seed ``hash[i, j]`` (converted to float32, whatever the hash type) and every row ``r``
of the input (its raw bytes: ``input.nbytes / input.shape[0]`` of them), the key is the 4 bytes
of the float32 seed followed by the row's bytes; ``Fingerprint64(key)`` read as an int64 and
converted to double is the row's value. The bit is ``1`` when ``sum_r w[r] * value_r > 0``
(``w[r] = 1`` without weights), summed in double in row order.

* DENSE (2): the bits, ``num_hash * num_bits`` int32 values.
* SPARSE (3): per hash row ``i`` the bits as a number (first bit most significant) plus
  ``i << num_bits``; SPARSE_DEPRECATED (1): without the offset. int32 arithmetic wraps, and a
  shift by 32 (``num_bits == 32``) shifts by 0, as the 32-bit shifts of x86 and ARM do.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels._builtins import empty

from nnsim.kernels._jit import njit

__all__ = ["DENSE", "SPARSE", "SPARSE_DEPRECATED", "fingerprint64", "lsh_projection"]

SPARSE_DEPRECATED, DENSE, SPARSE = 1, 2, 3

# FarmHash's primes between 2**63 and 2**64, and the multiplier of its Hash128to64.
_K0 = np.uint64(0xC3A5C85C97CB3127)
_K1 = np.uint64(0xB492B66FBE98F273)
_K2 = np.uint64(0x9AE16A3B2F90404F)
_KMUL = np.uint64(0x9DDFEA08EB382D69)
_SEED = np.uint64(81)


def fingerprint64(data) -> int:
    """Fingerprint64 of ``data`` (bytes-like or an ndarray, hashed as its raw bytes), as an
    unsigned Python int."""
    buf = np.frombuffer(bytes(data), dtype=np.uint8) if not isinstance(data, np.ndarray) \
        else np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    with np.errstate(over="ignore"):  # uint64 arithmetic wraps on purpose (plain-Python mode)
        return int(_hash64(buf, 0, buf.shape[0]))


def lsh_projection(hash_seeds, values, weights, projection_type: int) -> np.ndarray:
    """Output of LSH_PROJECTION (int32, 1-D; see the module docstring).

    ``hash_seeds``: float32 or float16, shape ``(num_hash, num_bits)``, ``num_bits <= 32``;
    ``values``: any dtype, rank >= 1, ``shape[0] > 0``; ``weights``: None or a float array of
    ``values.shape[0]`` entries; ``projection_type``: DENSE, SPARSE or SPARSE_DEPRECATED.
    """
    hash_seeds = np.asarray(hash_seeds)
    if hash_seeds.ndim != 2 or hash_seeds.shape[1] > 32:
        raise ValueError(f"hash must be 2-D with at most 32 columns, got {hash_seeds.shape}")
    values = np.ascontiguousarray(values)
    if values.ndim < 1 or values.shape[0] == 0:
        raise ValueError(f"input must have rank >= 1 and rows, got shape {values.shape}")
    if projection_type not in (SPARSE_DEPRECATED, DENSE, SPARSE):
        raise ValueError(f"unknown LSH projection type {projection_type}")
    num_hash, num_bits = hash_seeds.shape
    # Each key starts with the seed as a little-endian float32 (AOSP memcpy of a float).
    seeds = np.ascontiguousarray(hash_seeds.astype("<f4")).reshape(-1).view(np.uint8)
    rows = values.reshape(-1).view(np.uint8).reshape(values.shape[0], -1)
    use_weights = weights is not None
    w = np.ascontiguousarray(weights if use_weights else np.zeros(rows.shape[0]),
                             dtype=np.float64).reshape(-1)
    if w.shape[0] != rows.shape[0]:
        raise ValueError(f"{w.shape[0]} weights for {rows.shape[0]} input rows")
    bits = np.empty(num_hash * num_bits, dtype=np.int32)
    with np.errstate(over="ignore"):
        _lsh_bits_core(seeds.reshape(-1, 4), rows, w, use_weights, bits)
    if projection_type == DENSE:
        return bits
    place = np.left_shift(np.int64(1), np.arange(num_bits - 1, -1, -1, dtype=np.int64))
    signature = bits.reshape(num_hash, num_bits).astype(np.int64) @ place
    if projection_type == SPARSE:
        signature = signature + np.arange(num_hash, dtype=np.int64) * (1 << (num_bits & 31))
    return (signature & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


@njit
def _lsh_bits_core(seeds, rows, weights, use_weights, bits):
    # One bit per seed: the sign of the (weighted) sum of the signed fingerprints of
    # seed ++ row over the rows, accumulated in double in row order as AOSP does.
    n_rows, item = rows.shape
    key = empty(4 + item, np.uint8)
    for k in range(seeds.shape[0]):
        key[:4] = seeds[k]
        score = 0.0
        for r in range(n_rows):
            key[4:] = rows[r]
            value = _signed_double(_hash64(key, 0, key.shape[0]))
            score += weights[r] * value if use_weights else value
        bits[k] = 1 if score > 0.0 else 0


@njit(inner=True)
def _signed_double(h):
    """The uint64 ``h`` read as an int64 (two's complement), converted to double."""
    # h - 2**64 == -(~h) - 1 is computed exactly in int64, then rounded once, as the C cast.
    if h >= np.uint64(0x8000000000000000):
        return np.float64(-np.int64(~h) - np.int64(1))
    return np.float64(np.int64(h))


# ---------------------------------------------------------------------------------------------
# farmhashna::Hash64. All arithmetic is on uint64 and wraps modulo 2**64; integers from
# lengths and offsets are converted first (numba would otherwise promote uint64 op int64 to
# float64).
# ---------------------------------------------------------------------------------------------
@njit(inner=True)
def _fetch64(s, p):
    v = np.uint64(0)
    for k in range(7, -1, -1):
        v = (v << np.uint64(8)) | np.uint64(s[p + k])
    return v


@njit(inner=True)
def _fetch32(s, p):
    v = np.uint64(0)
    for k in range(3, -1, -1):
        v = (v << np.uint64(8)) | np.uint64(s[p + k])
    return v


@njit(inner=True)
def _rotate(v, shift):
    # Only called with 0 < shift < 64.
    return (v >> np.uint64(shift)) | (v << np.uint64(64 - shift))


@njit(inner=True)
def _shift_mix(v):
    return v ^ (v >> np.uint64(47))


@njit(inner=True)
def _mix16(u, v, mul):
    # HashLen16(u, v, mul); with mul = _KMUL it is Hash128to64 of (low u, high v).
    a = (u ^ v) * mul
    a ^= a >> np.uint64(47)
    b = (v ^ a) * mul
    b ^= b >> np.uint64(47)
    return b * mul


@njit(inner=True)
def _weak32(s, p, a, b):
    # WeakHashLen32WithSeeds of the 32 bytes at p: returns a pair.
    w, x, y, z = _fetch64(s, p), _fetch64(s, p + 8), _fetch64(s, p + 16), _fetch64(s, p + 24)
    a += w
    b = _rotate(b + a + z, 21)
    c = a
    a += x
    a += y
    b += _rotate(a, 44)
    return a + z, b + c


@njit(inner=True)
def _len0to16(s, p, n):
    un = np.uint64(n)
    if n >= 8:
        mul = _K2 + un * np.uint64(2)
        a = _fetch64(s, p) + _K2
        b = _fetch64(s, p + n - 8)
        c = _rotate(b, 37) * mul + a
        d = (_rotate(a, 25) + b) * mul
        return _mix16(c, d, mul)
    if n >= 4:
        mul = _K2 + un * np.uint64(2)
        a = _fetch32(s, p)
        return _mix16(un + (a << np.uint64(3)), _fetch32(s, p + n - 4), mul)
    if n > 0:
        y = np.uint64(s[p]) + (np.uint64(s[p + (n >> 1)]) << np.uint64(8))
        z = un + (np.uint64(s[p + n - 1]) << np.uint64(2))
        return _shift_mix(y * _K2 ^ z * _K0) * _K2
    return _K2


@njit(inner=True)
def _len17to32(s, p, n):
    mul = _K2 + np.uint64(n) * np.uint64(2)
    a = _fetch64(s, p) * _K1
    b = _fetch64(s, p + 8)
    c = _fetch64(s, p + n - 8) * mul
    d = _fetch64(s, p + n - 16) * _K2
    return _mix16(_rotate(a + b, 43) + _rotate(c, 30) + d, a + _rotate(b + _K2, 18) + c, mul)


@njit(inner=True)
def _len33to64(s, p, n):
    mul = _K2 + np.uint64(n) * np.uint64(2)
    a = _fetch64(s, p) * _K2
    b = _fetch64(s, p + 8)
    c = _fetch64(s, p + n - 8) * mul
    d = _fetch64(s, p + n - 16) * _K2
    y = _rotate(a + b, 43) + _rotate(c, 30) + d
    z = _mix16(y, a + _rotate(b + _K2, 18) + c, mul)
    e = _fetch64(s, p + 16) * mul
    f = _fetch64(s, p + 24)
    g = (y + _fetch64(s, p + n - 32)) * mul
    h = (z + _fetch64(s, p + n - 24)) * mul
    return _mix16(_rotate(e + f, 43) + _rotate(g, 30) + h, e + _rotate(f + a, 18) + g, mul)


@njit
def _hash64(s, p, n):
    """farmhashna::Hash64 of the ``n`` bytes ``s[p:p + n]`` (s: 1-D uint8)."""
    if n <= 16:
        return _len0to16(s, p, n)
    if n <= 32:
        return _len17to32(s, p, n)
    if n <= 64:
        return _len33to64(s, p, n)
    # Longer keys: 64-byte blocks with a 56-byte state (v, w, x, y, z), then the last 64 bytes.
    x = _SEED
    y = _SEED * _K1 + np.uint64(113)
    z = _shift_mix(y * _K2 + np.uint64(113)) * _K2
    v0, v1, w0, w1 = np.uint64(0), np.uint64(0), np.uint64(0), np.uint64(0)
    x = x * _K2 + _fetch64(s, p)
    end = p + ((n - 1) // 64) * 64
    q = p
    while True:
        x = _rotate(x + y + v0 + _fetch64(s, q + 8), 37) * _K1
        y = _rotate(y + v1 + _fetch64(s, q + 48), 42) * _K1
        x ^= w1
        y += v0 + _fetch64(s, q + 40)
        z = _rotate(z + w0, 33) * _K1
        v0, v1 = _weak32(s, q, v1 * _K1, x + w0)
        w0, w1 = _weak32(s, q + 32, z + w1, y + _fetch64(s, q + 16))
        x, z = z, x
        q += 64
        if q == end:
            break
    mul = _K1 + ((z & np.uint64(0xFF)) << np.uint64(1))
    q = p + n - 64
    w0 += np.uint64((n - 1) & 63)
    v0 += w0
    w0 += v0
    x = _rotate(x + y + v0 + _fetch64(s, q + 8), 37) * mul
    y = _rotate(y + v1 + _fetch64(s, q + 48), 42) * mul
    x ^= w1 * np.uint64(9)
    y += v0 * np.uint64(9) + _fetch64(s, q + 40)
    z = _rotate(z + w0, 33) * mul
    v0, v1 = _weak32(s, q, v1 * mul, x + w0)
    w0, w1 = _weak32(s, q + 32, z + w1, y + _fetch64(s, q + 16))
    x, z = z, x
    return _mix16(_mix16(v0, w0, mul) + _shift_mix(y) * _K0 + z,
                  _mix16(v1, w1, mul) + x, mul)
