"""Filter packing for the convolution cores, with a cache for constant weights.

The GEMM cores (:mod:`nnsim.kernels.gemm`) want an NNAPI filter ``[Cout, KH, KW, Cin]`` in tiles
of output channels (:func:`~nnsim.kernels.gemm.pack_quant_weights`,
:func:`~nnsim.kernels.gemm.pack_float_weights`). Re-packing a large filter on every call costs
as much as a small layer, so packed filters are cached per filter array:

* an entry lives as long as the filter ndarray (weak reference), so ``id`` reuse is impossible;
* it is reused only while the array's shape, strides, dtype and data pointer are unchanged
  and its contents are unchanged: arrays that cannot change (read-only views of ``bytes``) are
  trusted, any other array is checked with a CRC32 of its bytes (~0.25 ms per MB).
"""

from __future__ import annotations

import weakref
import zlib

import numpy as np

from nnsim.kernels.gemm import pack_weights

__all__ = ["pack_filter", "cached_pack_filter"]

_CACHE: dict = {}


def pack_filter(w):
    """``[Cout, ...]`` filter -> a :class:`~nnsim.kernels.gemm.PackedFilter`."""
    w = np.asarray(w)
    return pack_weights(w.reshape(w.shape[0], -1))


def cached_pack_filter(w):
    """:func:`pack_filter`, memoised per filter array (see the module docstring)."""
    key = id(w)
    signature = (w.shape, w.strides, w.dtype.str, w.__array_interface__["data"][0])
    checksum = None if _immutable(w) else zlib.crc32(np.ascontiguousarray(w).data)
    entry = _CACHE.get(key)
    if entry is not None and entry[0]() is w and entry[1] == signature and entry[2] == checksum:
        return entry[3]
    packed = pack_filter(w)
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
