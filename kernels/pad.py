"""PAD with a constant value (NNAPI PAD / PAD_V2, TFLite ``reference_ops::Pad``).

Pure data movement, done with numpy (no per-element Python code). For quantized tensors the
caller passes the zero point as ``pad_value`` (PAD) or the quantized pad value (PAD_V2).
"""

from __future__ import annotations

import numpy as np

__all__ = ["pad"]


def pad(x, paddings, *, pad_value=0):
    """Pad ``x`` with ``pad_value``.

    Parameters
    ----------
    x : ndarray
        Any dtype and rank.
    paddings : array-like [rank, 2]
        Non-negative (before, after) amounts per dimension.
    pad_value : scalar
        Fill value, cast to ``x.dtype``.

    Returns
    -------
    ndarray
        A new array of ``x.dtype``.
    """
    x = np.asarray(x)
    paddings = np.asarray(paddings, dtype=np.int64).reshape(-1, 2)
    if paddings.shape[0] != x.ndim:
        raise ValueError(f"paddings has {paddings.shape[0]} rows for a rank-{x.ndim} input")
    if (paddings < 0).any():
        raise ValueError("paddings must be >= 0")
    out_shape = tuple(int(d + p.sum()) for d, p in zip(x.shape, paddings))
    out = np.full(out_shape, pad_value, dtype=x.dtype)
    region = tuple(slice(int(p[0]), int(p[0]) + d) for d, p in zip(x.shape, paddings))
    out[region] = x
    return out
