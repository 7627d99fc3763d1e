"""Reference LOG_SOFTMAX (numpy, float64): the oracle for :mod:`nnsim.kernels.log_softmax`."""

from __future__ import annotations

import numpy as np


def log_softmax(x, beta=1.0, axis=-1):
    """Reference; see :func:`nnsim.kernels.log_softmax.log_softmax`."""
    x = np.asarray(x)
    f = x.astype(np.float64) * float(beta)
    f = f - f.max(axis=axis, keepdims=True)
    out = f - np.log(np.exp(f).sum(axis=axis, keepdims=True))
    return out.astype(np.float32).astype(x.dtype)
