"""Reference MEAN (numpy): the oracle for :mod:`nnsim.kernels.reduce`."""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.fixed_point import qrange
from nnsim.kernels.reduce import is_mean_4d_fast_path, mean_fast_4d_params, mean_params
from nnsim.kernels.reference import _fixed_point as fx


def mean(x, axes, keep_dims, *, in_scale=None, in_zp=0, out_scale=None, out_zp=0,
         variant="reference"):
    """Reference mean; see :func:`nnsim.kernels.reduce.mean`."""
    x = np.asarray(x)
    raw_axes = [int(a) for a in np.atleast_1d(np.asarray(axes, dtype=np.int64))]
    reduced = tuple(sorted({cm.normalize_axis(a, x.ndim) for a in raw_axes}))
    count = int(np.prod([x.shape[d] for d in reduced], dtype=np.int64))
    if not cm.is_quantized(x.dtype):
        result = x.astype(np.float64).sum(axis=reduced, keepdims=bool(keep_dims)) / max(count, 1)
        return result.astype(np.float32).astype(x.dtype)
    if out_scale is None:
        out_scale, out_zp = in_scale, in_zp
    total = fx.wrap32(x.astype(np.int64).sum(axis=reduced, keepdims=bool(keep_dims)))
    if variant == "aosp":   # C++ '/' truncates toward zero; static_cast<T> wraps
        quotient = np.abs(total) // max(count, 1)
        return np.where(total < 0, -quotient, quotient).astype(x.dtype)
    if variant == "optimized" and is_mean_4d_fast_path(x.ndim, raw_axes, keep_dims):
        m, s, bias = mean_fast_4d_params(in_scale, in_zp, out_scale, out_zp, count)
        raw = fx.mbqm(total, m, s) + bias
    else:
        m, s = mean_params(in_scale, out_scale, count)
        raw = fx.mbqm(fx.wrap32(total - int(in_zp) * count), m, s) + int(out_zp)
    return fx.clamp_cast(raw, *qrange(x.dtype), x.dtype)
