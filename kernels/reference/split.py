"""Reference SPLIT (explicit index slices): the oracle for :mod:`nnsim.kernels.split`."""

from __future__ import annotations

import numpy as np


def split(x, axis, num_splits):
    """Reference; see :func:`nnsim.kernels.split.split`."""
    x = np.asarray(x)
    axis = int(axis) % x.ndim
    size = x.shape[axis] // int(num_splits)
    parts = []
    for k in range(int(num_splits)):
        index = [slice(None)] * x.ndim
        index[axis] = slice(k * size, (k + 1) * size)
        parts.append(x[tuple(index)].copy())
    return parts
