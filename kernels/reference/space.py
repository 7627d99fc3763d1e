"""Reference SPACE_TO_DEPTH / DEPTH_TO_SPACE / SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND: the
oracle for :mod:`nnsim.kernels.space`, written as explicit index arithmetic per output element
(TFLite ``reference_ops`` loops) instead of reshapes.
"""

from __future__ import annotations

import numpy as np


def space_to_depth(x, block_size):
    """Reference; see :func:`nnsim.kernels.space.space_to_depth`."""
    x = np.asarray(x)
    bs = int(block_size)
    n, h, w, c = x.shape
    out = np.empty((n, h // bs, w // bs, c * bs * bs), dtype=x.dtype)
    for idx in np.ndindex(*x.shape):
        b, iy, ix, ic = idx
        od = ((iy % bs) * bs + ix % bs) * c + ic
        out[b, iy // bs, ix // bs, od] = x[idx]
    return out


def depth_to_space(x, block_size):
    """Reference; see :func:`nnsim.kernels.space.depth_to_space`."""
    x = np.asarray(x)
    bs = int(block_size)
    n, h, w, c = x.shape
    co = c // (bs * bs)
    out = np.empty((n, h * bs, w * bs, co), dtype=x.dtype)
    for idx in np.ndindex(*out.shape):
        b, oy, ox, oc = idx
        out[idx] = x[b, oy // bs, ox // bs, ((oy % bs) * bs + ox % bs) * co + oc]
    return out


def space_to_batch_nd(x, block_shape, paddings, *, pad_value=0):
    """Reference; see :func:`nnsim.kernels.space.space_to_batch_nd`."""
    x = np.asarray(x)
    bh, bw = (int(v) for v in np.asarray(block_shape).reshape(2))
    (pt, pb), (pl, pr) = np.asarray(paddings).reshape(2, 2).tolist()
    n, h, w, c = x.shape
    out = np.empty((n * bh * bw, (h + pt + pb) // bh, (w + pl + pr) // bw, c), dtype=x.dtype)
    for idx in np.ndindex(*out.shape):
        ob, oy, ox, oc = idx
        b, offset = ob % n, ob // n
        iy, ix = oy * bh + offset // bw - pt, ox * bw + offset % bw - pl
        inside = 0 <= iy < h and 0 <= ix < w
        out[idx] = x[b, iy, ix, oc] if inside else pad_value
    return out


def batch_to_space_nd(x, block_shape):
    """Reference; see :func:`nnsim.kernels.space.batch_to_space_nd`."""
    x = np.asarray(x)
    bh, bw = (int(v) for v in np.asarray(block_shape).reshape(2))
    n, h, w, c = x.shape
    nb = n // (bh * bw)
    out = np.empty((nb, h * bh, w * bw, c), dtype=x.dtype)
    for idx in np.ndindex(*x.shape):
        ib, iy, ix, ic = idx
        b, offset = ib % nb, ib // nb
        out[b, iy * bh + offset // bw, ix * bw + offset % bw, ic] = x[idx]
    return out
