"""Reference SQUARED_DIFFERENCE (numpy, vectorised): the oracle for
:mod:`nnsim.kernels.squared_difference`."""

from __future__ import annotations

import numpy as np

from nnsim.kernels.reference import _fixed_point as fx
from nnsim.kernels.squared_difference import squared_difference_params


def squared_difference(a, b, *, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0,
                       out_scale=None, out_zp=0):
    """See :func:`nnsim.kernels.squared_difference.squared_difference`."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != np.int8:
        d = (a - b).astype(a.dtype)
        return (d * d).astype(a.dtype)
    m1, e1, m2, e2, mo, eo = squared_difference_params(in1_scale, in2_scale, out_scale)
    v1 = fx.rdbpot(fx.srdhm((a.astype(np.int64) - int(in1_zp)) * 128, m1), -e1)
    v2 = fx.rdbpot(fx.srdhm((b.astype(np.int64) - int(in2_zp)) * 128, m2), -e2)
    d = v1 - v2
    out = fx.rdbpot(fx.srdhm(d * d, mo), -eo) + int(out_zp)
    return np.clip(out, -128, 127).astype(np.int8)
