"""Reference SOFTMAX (numpy): the oracle for :mod:`nnsim.kernels.softmax`.

The quantized path runs the gemmlowp fixed-point pipeline on whole arrays; the float path
computes in float64.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.fixed_point import qrange
from nnsim.kernels.reference import _fixed_point as fx
from nnsim.kernels.softmax import softmax_params


def softmax(x, beta, *, axis=-1, in_scale=None, in_zp=0, out_scale=None, out_zp=0):
    """Reference softmax; see :func:`nnsim.kernels.softmax.softmax`."""
    x = np.asarray(x)
    axis = cm.normalize_axis(axis, x.ndim)
    if not cm.is_quantized(x.dtype):
        v = x.astype(np.float64) * float(np.float32(beta))
        e = np.exp(v - v.max(axis=axis, keepdims=True))
        return (e / e.sum(axis=axis, keepdims=True)).astype(np.float32).astype(x.dtype)

    m, left_shift, diff_min = softmax_params(beta, in_scale)
    qmin, qmax = qrange(x.dtype)
    diff = x.astype(np.int64) - x.astype(np.int64).max(axis=axis, keepdims=True)
    used = diff >= diff_min
    scaled = fx.srdhm(fx.wrap32(np.where(used, diff, 0) << left_shift), m)
    e = fx.exp_on_negative_values(scaled, 5)
    sum_of_exps = fx.wrap32(np.where(used, fx.rdbpot(e, 12), 0).sum(axis=axis, keepdims=True))
    recip, bits_over_unit = fx.get_reciprocal(sum_of_exps, 12)
    unsat = fx.rdbpot(fx.srdhm(recip, e), bits_over_unit + 31 - 8)
    result = np.where(used, np.clip(unsat + qmin, qmin, qmax), qmin)
    return result.astype(x.dtype)
