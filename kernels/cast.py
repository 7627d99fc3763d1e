"""CAST between TFLite element types (``static_cast`` per element, ``kernels/cast.cc``).

float -> integer truncates toward zero; integer narrowing wraps (two's complement); anything
-> bool is ``value != 0``; bool -> number is 0 / 1. Values outside the target range of a
float -> integer cast are undefined in C++ and are not specified here. One numpy conversion,
no per-element Python, so there is no numba core.
"""

from __future__ import annotations

import numpy as np

__all__ = ["cast"]

_TYPES = tuple(np.dtype(t) for t in (np.float32, np.float16, np.float64, np.int8, np.uint8,
                                     np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                     np.uint64, np.bool_))


def cast(x, out_dtype):
    """Convert ``x`` to ``out_dtype`` with C++ ``static_cast`` semantics."""
    x = np.asarray(x)
    odt = np.dtype(out_dtype)
    if x.dtype not in _TYPES or odt not in _TYPES:
        raise TypeError(f"cast from {x.dtype.name} to {odt.name} is not supported")
    if odt == np.bool_:
        return x != 0
    if x.dtype.kind == "f" and odt.kind in "iu":
        with np.errstate(invalid="ignore"):
            return np.trunc(x).astype(odt)
    return x.astype(odt)
