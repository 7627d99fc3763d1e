"""Reference RELU / RELU1 / RELU6 / LOGISTIC (numpy): the oracle for
:mod:`nnsim.kernels.activations`.

The quantized logistic evaluates the same float32 formula per element instead of through a
table, so it checks the table indexing of the fast kernel.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.activations import relu_params
from nnsim.kernels.fixed_point import qrange, quantized_activation_range
from nnsim.kernels.reference import _fixed_point as fx


def _relu_x(fuse, x, in_scale, in_zp, out_scale, out_zp):
    x = np.asarray(x)
    if not cm.is_quantized(x.dtype):
        lo, hi = cm.float_activation_range(fuse)
        return np.clip(x.astype(np.float32), lo, hi).astype(x.dtype)
    if out_scale is None:
        out_scale, out_zp = in_scale, in_zp
    m, s = relu_params(in_scale, out_scale)
    lo, hi = quantized_activation_range(fuse, out_scale, out_zp, *qrange(x.dtype))
    raw = int(out_zp) + fx.mbqm(x.astype(np.int64) - int(in_zp), m, s)
    return fx.clamp_cast(raw, lo, hi, x.dtype)


def relu(x, *, in_scale=None, in_zp=0, out_scale=None, out_zp=0):
    """Reference RELU; see :func:`nnsim.kernels.activations.relu`."""
    return _relu_x(1, x, in_scale, in_zp, out_scale, out_zp)


def relu1(x, *, in_scale=None, in_zp=0, out_scale=None, out_zp=0):
    """Reference RELU1; see :func:`nnsim.kernels.activations.relu1`."""
    return _relu_x(2, x, in_scale, in_zp, out_scale, out_zp)


def relu6(x, *, in_scale=None, in_zp=0, out_scale=None, out_zp=0):
    """Reference RELU6; see :func:`nnsim.kernels.activations.relu6`."""
    return _relu_x(3, x, in_scale, in_zp, out_scale, out_zp)


def logistic(x, *, in_scale=None, in_zp=0, out_scale=None, out_zp=None):
    """Reference LOGISTIC; see :func:`nnsim.kernels.activations.logistic`."""
    x = np.asarray(x)
    if not cm.is_quantized(x.dtype):
        v = x.astype(np.float64)
        with np.errstate(over="ignore"):
            y = np.where(v > 16.619047164916992, 1.0,
                         np.where(v < -9.0, np.exp(v), 1.0 / (1.0 + np.exp(-v))))
        return y.astype(np.float32).astype(x.dtype)
    qmin, qmax = qrange(x.dtype)
    out_scale = 1.0 / 256 if out_scale is None else out_scale
    out_zp = qmin if out_zp is None else out_zp
    real = np.float32(in_scale) * (x.astype(np.int64) - int(in_zp)).astype(np.float32)
    with np.errstate(over="ignore"):
        e = np.exp(-real.astype(np.float64)).astype(np.float32)
    y = np.float32(1.0) / (np.float32(1.0) + e)
    scaled = y * (np.float32(1.0) / np.float32(out_scale))
    q = fx.round_half_away(scaled).astype(np.int64) + int(out_zp)
    return fx.clamp_cast(q, qmin, qmax, x.dtype)
