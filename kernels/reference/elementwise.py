"""Reference ADD / SUB / MUL (numpy): the oracle for :mod:`nnsim.kernels.elementwise`."""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.elementwise import add_sub_params, mul_params
from nnsim.kernels.reference import _fixed_point as fx


def _quantized_add_sub(a, b, sign, fuse, s1, zp1, s2, zp2, so, zpo, out_dtype):
    (m1, sh1), (m2, sh2), (mo, sho) = add_sub_params(s1, s2, so)
    va = fx.mbqm((a.astype(np.int64) - int(zp1)) << 20, m1, sh1)
    vb = fx.mbqm((b.astype(np.int64) - int(zp2)) << 20, m2, sh2)
    raw = fx.mbqm(va + sign * vb, mo, sho) + int(zpo)
    odt = cm.output_dtype(out_dtype, a.dtype)
    lo, hi = cm.quant_clamp(fuse, so, zpo, odt)
    return fx.clamp_cast(raw, lo, hi, odt)


def _float(op, a, b, fuse):
    result = op(a.astype(np.float32), b.astype(np.float32))
    lo, hi = cm.float_activation_range(fuse)
    return np.clip(result, lo, hi).astype(np.float32).astype(a.dtype)


def add(a, b, *, fuse=0, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0, out_scale=None,
        out_zp=0, out_dtype=None):
    """Reference ADD; see :func:`nnsim.kernels.elementwise.add`."""
    a, b = np.asarray(a), np.asarray(b)
    if not cm.is_quantized(a.dtype):
        return _float(np.add, a, b, fuse)
    return _quantized_add_sub(a, b, 1, fuse, in1_scale, in1_zp, in2_scale, in2_zp, out_scale,
                              out_zp, out_dtype)


def sub(a, b, *, fuse=0, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0, out_scale=None,
        out_zp=0, out_dtype=None):
    """Reference SUB; see :func:`nnsim.kernels.elementwise.sub`."""
    a, b = np.asarray(a), np.asarray(b)
    if not cm.is_quantized(a.dtype):
        return _float(np.subtract, a, b, fuse)
    return _quantized_add_sub(a, b, -1, fuse, in1_scale, in1_zp, in2_scale, in2_zp, out_scale,
                              out_zp, out_dtype)


def mul(a, b, *, fuse=0, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0, out_scale=None,
        out_zp=0, out_dtype=None):
    """Reference MUL; see :func:`nnsim.kernels.elementwise.mul`."""
    a, b = np.asarray(a), np.asarray(b)
    if not cm.is_quantized(a.dtype):
        return _float(np.multiply, a, b, fuse)
    m, s = mul_params(in1_scale, in2_scale, out_scale)
    prod = (a.astype(np.int64) - int(in1_zp)) * (b.astype(np.int64) - int(in2_zp))
    raw = fx.mbqm(prod, m, s) + int(out_zp)
    odt = cm.output_dtype(out_dtype, a.dtype)
    lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, odt)
    return fx.clamp_cast(raw, lo, hi, odt)
