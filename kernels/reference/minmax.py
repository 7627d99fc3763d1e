"""Reference MAXIMUM / MINIMUM / PRELU (numpy): the oracle for :mod:`nnsim.kernels.minmax`.

Requantization and the PRELU fixed-point path are evaluated per element with the vectorised
primitives of ``reference._fixed_point`` (no lookup table).
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.fixed_point import qrange
from nnsim.kernels.minmax import prelu_params
from nnsim.kernels.reference import _fixed_point as fx


def _requantize(x, s_in, zp_in, s_out, zp_out):
    qmin, qmax = qrange(x.dtype)
    real = (x.astype(np.int64) - int(zp_in)).astype(np.float32) * np.float32(s_in)
    ret = real.astype(np.float64) / float(np.float32(s_out)) + int(zp_out)
    return np.where(ret < qmin, qmin, np.where(ret > qmax, qmax, fx.round_half_away(ret)))


def _minmax(fn, a, b, s1, zp1, s2, zp2, so, zpo):
    a, b = np.asarray(a), np.asarray(b)
    if cm.is_quantized(a.dtype):
        va = _requantize(a, s1, zp1, so, zpo)
        vb = _requantize(b, s2, zp2, so, zpo)
        return fn(va, vb).astype(a.dtype)
    return fn(a, b).astype(a.dtype)


def maximum(a, b, *, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0, out_scale=None,
            out_zp=0):
    """Reference; see :func:`nnsim.kernels.minmax.maximum`."""
    return _minmax(lambda u, v: np.where(u < v, v, u), a, b, in1_scale, in1_zp, in2_scale,
                   in2_zp, out_scale, out_zp)


def minimum(a, b, *, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0, out_scale=None,
            out_zp=0):
    """Reference; see :func:`nnsim.kernels.minmax.minimum`."""
    return _minmax(lambda u, v: np.where(v < u, v, u), a, b, in1_scale, in1_zp, in2_scale,
                   in2_zp, out_scale, out_zp)


def prelu(x, alpha, *, in_scale=None, in_zp=0, alpha_scale=None, alpha_zp=0, out_scale=None,
          out_zp=0):
    """Reference; see :func:`nnsim.kernels.minmax.prelu`."""
    x, alpha = np.asarray(x), np.asarray(alpha)
    if not cm.is_quantized(x.dtype):
        x32, a32 = x.astype(np.float32), alpha.astype(np.float32)
        return np.where(x32 >= 0, x32, x32 * a32).astype(x.dtype)
    (mp, sp), (mn, sn) = prelu_params(in_scale, alpha_scale, out_scale)
    d = x.astype(np.int64) - int(in_zp)
    pos = fx.mbqm(d, mp, sp)
    neg = fx.mbqm(d * (alpha.astype(np.int64) - int(alpha_zp)), mn, sn)
    return fx.clamp_cast(int(out_zp) + np.where(d >= 0, pos, neg), *qrange(x.dtype), x.dtype)
