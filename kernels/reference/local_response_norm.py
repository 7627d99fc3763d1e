"""Reference LOCAL_RESPONSE_NORMALIZATION (numpy, float64): the oracle for
:mod:`nnsim.kernels.local_response_norm` (same windows, real arithmetic)."""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm


def local_response_normalization(x, radius, bias, alpha, beta, axis=-1, *, variant="nnapi"):
    """Reference; see :func:`nnsim.kernels.local_response_norm.local_response_normalization`."""
    x = np.asarray(x)
    axis = cm.normalize_axis(axis, x.ndim)
    v = np.moveaxis(x.astype(np.float64), axis, -1)
    depth = v.shape[-1]
    squares = np.concatenate([np.zeros(v.shape[:-1] + (1,)), np.cumsum(v * v, axis=-1)], -1)
    index = np.arange(depth)
    if variant == "tflite":
        lo, hi = np.maximum(index - radius, 0), np.minimum(index + radius, depth)
    else:
        r = min(radius, depth)
        lo, hi = np.maximum(index - r, 0), np.minimum(index + r + 1, depth)
    window = squares[..., np.maximum(hi, lo)] - squares[..., lo]
    params = np.float32([bias, alpha, beta]).astype(np.float64)
    out = v * (params[0] + params[1] * window) ** -params[2]
    return np.moveaxis(out, -1, axis).astype(np.float32).astype(x.dtype)
