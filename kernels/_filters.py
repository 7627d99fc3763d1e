"""Filter packing for the convolution cores, with a cache for constant weights.

The GEMM-style cores want an NNAPI filter ``[Cout, KH, KW, Cin]`` as a ``[KH * KW * Cin, Cout]``
matrix (output channels contiguous), integer filters as int32 with the zero point subtracted.
Re-packing a large filter on every call costs as much as a small layer, so packed filters are
cached per filter array:

* an entry lives as long as the filter ndarray (weak reference), so ``id`` reuse is impossible;
* it is reused only while the array's shape, strides, data pointer and zero point are unchanged
  and its contents are unchanged: arrays that cannot change (read-only views of ``bytes``) are
  trusted, any other array is checked with a CRC32 of its bytes (~0.25 ms per MB).
"""

from __future__ import annotations

import weakref
import zlib

import numpy as np

from nnsim.kernels._jit import njit

__all__ = ["pack_filter", "cached_pack_filter"]

_CACHE: dict = {}
_BLOCK = 32


def pack_filter(w, w_zp=0):
    """``[Cout, ...]`` filter -> ``[prod(...), Cout]`` matrix (int32 minus zp, or float32)."""
    w = np.asarray(w)
    matrix = np.ascontiguousarray(w.reshape(w.shape[0], -1))
    if w.dtype.kind == "f":
        packed = np.empty((matrix.shape[1], matrix.shape[0]), dtype=np.float32)
        _transpose_float_core(matrix.astype(np.float32, copy=False), packed)
        return packed
    packed = np.empty((matrix.shape[1], matrix.shape[0]), dtype=np.int32)
    _transpose_int_core(matrix, int(w_zp), packed)
    return packed


def cached_pack_filter(w, w_zp=0):
    """:func:`pack_filter`, memoised per filter array (see the module docstring)."""
    key = id(w)
    signature = (w.shape, w.strides, w.dtype.str, w.__array_interface__["data"][0], int(w_zp))
    checksum = None if _immutable(w) else zlib.crc32(np.ascontiguousarray(w).data)
    entry = _CACHE.get(key)
    if entry is not None and entry[0]() is w and entry[1] == signature and entry[2] == checksum:
        return entry[3]
    packed = pack_filter(w, w_zp)
    _CACHE[key] = (weakref.ref(w, lambda _ref, k=key: _CACHE.pop(k, None)), signature, checksum,
                   packed)
    return packed


def _immutable(array) -> bool:
    """True when nothing can write to the array's memory (read-only view of ``bytes``)."""
    base = array
    while isinstance(base, np.ndarray):
        if base.flags.writeable:
            return False
        base = base.base
    return isinstance(base, bytes)


@njit
def _transpose_int_core(matrix, zp, packed):
    rows, cols = matrix.shape
    for r0 in range(0, rows, _BLOCK):
        for c0 in range(0, cols, _BLOCK):
            for c in range(c0, min(c0 + _BLOCK, cols)):
                for r in range(r0, min(r0 + _BLOCK, rows)):
                    packed[c, r] = np.int32(matrix[r, c]) - zp
    return packed


@njit
def _transpose_float_core(matrix, packed):
    rows, cols = matrix.shape
    for r0 in range(0, rows, _BLOCK):
        for c0 in range(0, cols, _BLOCK):
            for c in range(c0, min(c0 + _BLOCK, cols)):
                for r in range(r0, min(r0 + _BLOCK, rows)):
                    packed[c, r] = matrix[r, c]
    return packed
