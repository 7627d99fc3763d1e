"""EMBEDDING_LOOKUP and HASHTABLE_LOOKUP: row gathers from a table (pure data movement).

Both copy whole rows (``values[r, ...]``) byte for byte, so they work for every dtype and the
quantization parameters are carried over unchanged.

* :func:`embedding_lookup`: ``out[i] = values[lookups[i]]``; an index outside
  ``[0, values.shape[0])`` is an error (AOSP ``EmbeddingLookup::Eval`` returns false, TFLite
  ``embedding_lookup.cc`` returns kTfLiteError).
* :func:`hashtable_lookup`: each lookup is searched in ``keys`` with the C library's
  ``bsearch`` and the comparator ``*key - *elem`` (AOSP ``HashtableLookup.cpp``, TFLite
  ``hashtable_lookup.cc``). A hit copies ``values[pos]`` and sets ``hits[i] = 1``; a miss
  writes zero *bytes* (raw 0, not the zero point) and ``hits[i] = 0``. The search is
  reproduced exactly (probe order and the wrapping int32 subtraction), so unsorted keys,
  duplicate keys and keys whose difference overflows give the same row as the C code.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels._jit import njit

__all__ = ["embedding_lookup", "hashtable_lookup", "bsearch_rows"]


def embedding_lookup(values, lookups) -> np.ndarray:
    """``values[lookups]`` along axis 0; IndexError when an index is out of range.

    ``values`` has rank >= 1, ``lookups`` is a 1-D integer array; the result has shape
    ``(len(lookups),) + values.shape[1:]`` and the dtype of ``values``.
    """
    values, lookups = np.asarray(values), np.asarray(lookups)
    rows = values.shape[0]
    if lookups.size and (lookups.min() < 0 or lookups.max() >= rows):
        bad = lookups[(lookups < 0) | (lookups >= rows)][0]
        raise IndexError(f"embedding lookup index {int(bad)} out of range [0, {rows})")
    return np.ascontiguousarray(values[lookups.astype(np.int64)])


def bsearch_rows(lookups, keys) -> np.ndarray:
    """Row of ``keys`` that ``bsearch`` finds for each lookup, -1 when not found (int64)."""
    lookups = np.ascontiguousarray(lookups, dtype=np.int32)
    keys = np.ascontiguousarray(keys, dtype=np.int32)
    rows = np.empty(lookups.shape[0], dtype=np.int64)
    _bsearch_rows_core(lookups, keys, rows)
    return rows


def hashtable_lookup(lookups, keys, values) -> tuple[np.ndarray, np.ndarray]:
    """``(output, hits)``: the rows of ``values`` whose key matches each lookup.

    ``keys`` is 1-D int32 with one key per row of ``values`` (rank >= 1). ``output`` has shape
    ``(len(lookups),) + values.shape[1:]`` and the dtype of ``values``; ``hits`` is uint8.
    """
    values, keys = np.asarray(values), np.asarray(keys)
    if keys.shape[0] < values.shape[0]:
        raise ValueError(f"{keys.shape[0]} keys for {values.shape[0]} value rows")
    # The C code searches num_rows = values.dims[0] keys; extra keys are never read.
    rows = bsearch_rows(lookups, keys[:values.shape[0]])
    found = rows >= 0
    out = np.zeros((rows.shape[0],) + values.shape[1:], dtype=values.dtype)
    out[found] = values[rows[found]]
    return out, found.astype(np.uint8)


@njit
def _bsearch_rows_core(lookups, keys, rows):
    # BSD/bionic bsearch (glibc's probes the same positions): halve [base, base + lim) around
    # the middle element; compare with the wrapping int32 "key - elem" of the C comparator.
    for i in range(lookups.shape[0]):
        key = np.int64(lookups[i])
        found = -1
        base = 0
        lim = keys.shape[0]
        while lim != 0:
            p = base + (lim >> 1)
            diff = key - np.int64(keys[p])
            cmp = ((diff + 2147483648) & 0xFFFFFFFF) - 2147483648
            if cmp == 0:
                found = p
                break
            if cmp > 0:
                base = p + 1
                lim -= 1
            lim >>= 1
        rows[i] = found
