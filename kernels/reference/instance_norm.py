"""Reference INSTANCE_NORMALIZATION (numpy arrays of the tensor's own type): the oracle for
:mod:`nnsim.kernels.instance_norm`.

numpy computes float16 (and float32) array operations one at a time, each result rounded to the
array's type, which is the AOSP kernel's arithmetic in ``T``; the planes of every (batch,
channel) pair are processed side by side, their ``H * W`` values in order.
"""

from __future__ import annotations

import numpy as np


def instance_normalization(x, gamma, beta, epsilon):
    """Reference; see :func:`nnsim.kernels.instance_norm.instance_normalization`."""
    x = np.asarray(x)
    t = x.dtype.type
    n, h, w, c = x.shape
    planes = x.reshape(n, h * w, c)
    count = t(h * w)
    with np.errstate(all="ignore"):
        mean = np.zeros((n, c), x.dtype)
        for i in range(h * w):
            mean = mean + planes[:, i]
        mean = mean / count
        total = np.zeros((n, c), x.dtype)
        for i in range(h * w):
            v = planes[:, i] - mean
            total = total + v * v
        variance = (total / count).astype(np.float32) + np.float32(t(epsilon))
        sigma = np.sqrt(variance).astype(x.dtype)
        out = (planes - mean[:, None]) * t(gamma) / sigma[:, None] + t(beta)
    return out.astype(x.dtype).reshape(x.shape)
