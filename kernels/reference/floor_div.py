"""Reference FLOOR_DIV (numpy): the oracle for :mod:`nnsim.kernels.floor_div`."""

from __future__ import annotations

import numpy as np


def floor_div(a, b):
    """``T(floor(double(a) / double(b)))`` with broadcasting; see the fast kernel."""
    a, b = np.asarray(a), np.asarray(b)
    if (b == 0).any():
        raise ZeroDivisionError("Division by 0")
    q = np.floor(a.astype(np.float64) / b.astype(np.float64))
    return q.astype(a.dtype)
