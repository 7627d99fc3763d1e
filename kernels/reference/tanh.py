"""Reference TANH (numpy, element by element): the oracle for :mod:`nnsim.kernels.tanh`."""

from __future__ import annotations

import math

import numpy as np


def tanh(x, *, in_scale=None, in_zp=0, out_scale=None, out_zp=None):
    """See :func:`nnsim.kernels.tanh.tanh`; the table is built one entry at a time."""
    x = np.asarray(x)
    if x.dtype.kind == "f":
        return np.tanh(x.astype(np.float32)).astype(x.dtype)
    info = np.iinfo(x.dtype)
    out_scale = 1.0 / 128 if out_scale is None else out_scale
    out_zp = (128 if info.min == 0 else 0) if out_zp is None else out_zp
    inv = np.float32(1.0) / np.float32(out_scale)
    table = {}
    for v in range(info.min, info.max + 1):
        real = np.float32(np.float32(in_scale) * np.float32(v - int(in_zp)))
        y = np.float32(math.tanh(float(real)))
        p = float(np.float32(y * inv))
        r = math.floor(abs(p) + 0.5) * (1 if p >= 0 else -1)
        q = int(np.float32(np.float32(r) + np.float32(out_zp)))
        table[v] = min(max(q, info.min), info.max)
    return np.vectorize(table.__getitem__, otypes=[x.dtype])(x)
