"""Reference CAST (element by element, Python integers): oracle for :mod:`nnsim.kernels.cast`."""

from __future__ import annotations

import math

import numpy as np


def cast(x, out_dtype):
    x = np.asarray(x)
    odt = np.dtype(out_dtype)
    out = np.empty(x.shape, odt)
    for pos in np.ndindex(x.shape):
        v = x[pos]
        if odt == np.bool_:
            out[pos] = bool(v != 0)
        elif odt.kind in "iu":
            n = math.trunc(float(v)) if x.dtype.kind == "f" else int(v)
            bits = odt.itemsize * 8
            n %= 1 << bits
            if odt.kind == "i" and n >= 1 << (bits - 1):
                n -= 1 << bits
            out[pos] = n
        else:
            out[pos] = odt.type(v)
    return out
