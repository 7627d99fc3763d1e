"""Reference L2_POOL_2D (numpy, float64 per window): the oracle for :mod:`nnsim.kernels.l2_pool`."""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm


def l2_pool_2d(x, *, filter_h, filter_w, stride_h, stride_w, pad_top, pad_bottom, pad_left,
               pad_right, fuse=0):
    """Reference; see :func:`nnsim.kernels.l2_pool.l2_pool_2d`."""
    x = np.asarray(x)
    n, h, w, c = x.shape
    oh = (h + pad_top + pad_bottom - filter_h) // stride_h + 1
    ow = (w + pad_left + pad_right - filter_w) // stride_w + 1
    f = x.astype(np.float64)
    out = np.empty((n, oh, ow, c))
    for oy in range(oh):
        ys = slice(max(0, oy * stride_h - pad_top), min(h, oy * stride_h - pad_top + filter_h))
        for ox in range(ow):
            xs = slice(max(0, ox * stride_w - pad_left),
                       min(w, ox * stride_w - pad_left + filter_w))
            window = f[:, ys, xs, :]
            out[:, oy, ox, :] = np.sqrt((window ** 2).mean(axis=(1, 2)))
    lo, hi = cm.float_activation_range(fuse)
    return np.clip(out, lo, hi).astype(np.float32).astype(x.dtype)
