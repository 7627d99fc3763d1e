"""Reference quantized SUM (numpy): the oracle for :mod:`nnsim.kernels.reduce_sum_quant`."""

from __future__ import annotations

import numpy as np

from nnsim.kernels.fixed_point import qrange
from nnsim.kernels.reduce_sum_quant import sum_params
from nnsim.kernels.reference import _fixed_point as fx


def sum_quantized(x, axes, keep_dims, *, in_scale, in_zp, out_scale, out_zp):
    """Reference; see :func:`nnsim.kernels.reduce_sum_quant.sum_quantized`."""
    x = np.asarray(x)
    reduced = tuple(sorted({int(a) % x.ndim for a in np.asarray(axes).reshape(-1)}))
    total = fx.i64(x).sum(axis=reduced, keepdims=keep_dims)
    if x.size == 0:
        return np.zeros(total.shape, x.dtype)
    count = int(np.prod([x.shape[d] for d in reduced]))
    m, s = sum_params(in_scale, out_scale)
    qmin, qmax = qrange(x.dtype)
    scaled = fx.mbqm(fx.wrap32(total - int(in_zp) * count), m, s) + int(out_zp)
    return fx.clamp_cast(scaled, qmin, qmax, x.dtype)
