"""Reference LEAKY_RELU (numpy, vectorised): the oracle for :mod:`nnsim.kernels.leaky_relu`."""

from __future__ import annotations

import numpy as np

from nnsim.kernels.leaky_relu import leaky_relu_params
from nnsim.kernels.reference import _fixed_point as fx


def leaky_relu(x, alpha, *, in_scale=None, in_zp=0, out_scale=None, out_zp=0):
    """See :func:`nnsim.kernels.leaky_relu.leaky_relu`."""
    x = np.asarray(x)
    if x.dtype == np.float32:
        return np.where(x > 0, x, x * np.float32(alpha)).astype(np.float32)
    m_id, s_id, m_a, s_a = leaky_relu_params(in_scale, alpha, out_scale)
    d = x.astype(np.int64) - int(in_zp)
    positive = fx.mbqm(d, m_id, s_id)
    negative = np.sign(m_a) * fx.mbqm(d, abs(m_a), s_a)   # LiteRT negates |M| * d
    info = np.iinfo(x.dtype)
    return np.clip(int(out_zp) + np.where(d >= 0, positive, negative), info.min,
                   info.max).astype(x.dtype)
