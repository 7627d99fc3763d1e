"""Reference DIV (numpy): the oracle for :mod:`nnsim.kernels.div`."""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.reference import _fixed_point as fx


def div(a, b, *, fuse=0):
    """Reference; see :func:`nnsim.kernels.div.div`."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == np.int32:
        x, y = np.broadcast_arrays(a.astype(np.int64), b.astype(np.int64))
        safe = np.where(y == 0, 1, y)
        q = np.floor_divide(x, safe)  # numpy // floors, as NNAPI's corrected C++ division
        return fx.wrap32(np.where(y == 0, 0, q)).astype(np.int32)
    lo, hi = cm.float_activation_range(fuse)
    with np.errstate(all="ignore"):
        q = a.astype(np.float32) / b.astype(np.float32)
    return np.clip(q, lo, hi).astype(np.float32).astype(a.dtype)
