"""Reference BATCH_MATMUL (numpy): the oracle for :mod:`nnsim.kernels.batch_matmul`.

Written independently of the numba cores: batch broadcasting by ``np.broadcast_arrays``, float
sums vectorised over every output with a loop over the contracted axis (the same float32 order),
integer sums exact in int64 (``einsum``) then wrapped to int32.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels.batch_matmul import batch_matmul_multiplier
from nnsim.kernels.reference import _fixed_point as fx


def batch_matmul(lhs, rhs, adj_x=False, adj_y=False, *, lhs_scale=None, lhs_zp=0,
                 rhs_scale=None, rhs_zp=0, out_scale=None, out_zp=0, rounding="double"):
    """Reference; see :func:`nnsim.kernels.batch_matmul.batch_matmul`."""
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    a = np.swapaxes(lhs, -1, -2) if adj_x else lhs
    b = np.swapaxes(rhs, -1, -2) if adj_y else rhs
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    if lhs.dtype.kind == "f":
        acc = np.zeros(batch + (a.shape[-2], b.shape[-1]), dtype=lhs.dtype)
        for k in range(a.shape[-1]):
            product = a[..., :, k, None].astype(np.float32) * b[..., None, k, :].astype(np.float32)
            if lhs.dtype == np.float16:
                product = product.astype(np.float16)
            acc = (acc.astype(np.float32) + product.astype(np.float32)).astype(lhs.dtype)
        return acc
    if lhs.dtype == np.int32:
        total = np.einsum("...ik,...kj->...ij", a.astype(np.int64), b.astype(np.int64))
        return fx.wrap32(total).astype(np.int32)
    total = np.einsum("...ik,...kj->...ij", a.astype(np.int64) - int(lhs_zp),
                      b.astype(np.int64) - int(rhs_zp))
    m, s = batch_matmul_multiplier(lhs_scale, rhs_scale, out_scale)
    acc = fx.wrap32(total)
    if rounding == "single":
        scaled = fx.wrap32((acc * m + (np.int64(1) << (30 - s))) >> (31 - s))
    else:
        scaled = fx.mbqm(acc, m, s)
    return fx.clamp_cast(scaled + int(out_zp), -128, 127, np.int8)
