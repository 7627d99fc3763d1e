"""MAXIMUM, MINIMUM and PRELU with numpy broadcasting, float / int32 / 8-bit quantized; numba.

MAXIMUM / MINIMUM (``MaximumMinimumExecution.cpp``): float and int32 compare directly (float16
compares its own values). Quantized inputs are first requantized to the output's parameters
with NNAPI's ``requantize``::

    v = double(float32(x - zp_in) * float32(s_in)) / double(s_out) + zp_out
    v < qmin -> qmin;  v > qmax -> qmax;  else std::round(v)   (half away from zero)

then the min / max of the two requantized values is taken.

PRELU (``PRelu.cpp``): float ``x >= 0 ? x : x * alpha``; quantized::

    M_pos, S_pos = QuantizeMultiplier(double(float32(s_x / s_out)))
    M_neg, S_neg = QuantizeMultiplier(double(float32(s_x * s_alpha)) / double(s_out))
    d = x - zp_x
    out = zp_out + (d >= 0 ? MBQM(d, M_pos, S_pos) : MBQM(d * (alpha - zp_alpha), M_neg, S_neg))
    saturated to the type
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import greater, lesser
from nnsim.kernels._jit import njit
from nnsim.kernels._common import broadcast_flat
from nnsim.kernels.fixed_point import multiply_by_quantized_multiplier, qrange, quantize_multiplier

__all__ = ["maximum", "minimum", "prelu", "requantize_table", "prelu_params"]


def maximum(a, b, *, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0, out_scale=None,
            out_zp=0):
    """Elementwise maximum with broadcasting.

    Parameters
    ----------
    a, b : ndarray
        Same dtype: float32, float16, int32, uint8 or int8.
    in1_scale, in1_zp, in2_scale, in2_zp, out_scale, out_zp
        Quantization (8-bit inputs only); inputs are requantized to the output's parameters.

    Returns
    -------
    ndarray
        Broadcast shape, dtype of ``a``.
    """
    return _minmax(True, a, b, in1_scale, in1_zp, in2_scale, in2_zp, out_scale, out_zp)


def minimum(a, b, *, in1_scale=None, in1_zp=0, in2_scale=None, in2_zp=0, out_scale=None,
            out_zp=0):
    """Elementwise minimum; arguments as :func:`maximum`."""
    return _minmax(False, a, b, in1_scale, in1_zp, in2_scale, in2_zp, out_scale, out_zp)


def requantize_table(dtype, in_scale, in_zp, out_scale, out_zp) -> np.ndarray:
    """NNAPI ``requantize`` of every value of ``dtype`` (entry ``v - qmin``)."""
    qmin, qmax = qrange(dtype)
    v = np.arange(qmin, qmax + 1, dtype=np.int64)
    real = ((v - int(in_zp)).astype(np.float32) * np.float32(in_scale)).astype(np.float64)
    ret = real / float(np.float32(out_scale)) + float(out_zp)
    rounded = np.sign(ret) * np.floor(np.abs(ret) + 0.5)
    return np.clip(rounded, qmin, qmax).astype(dtype)


def _minmax(is_max, a, b, s1, zp1, s2, zp2, so, zpo):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype:
        raise TypeError(f"input dtypes differ: {a.dtype.name} and {b.dtype.name}")
    shape, fa, fb = broadcast_flat(a, b)
    if cm.is_quantized(a.dtype):
        qmin, _ = qrange(a.dtype)
        so = cm.require(so, "out_scale")
        t1 = requantize_table(a.dtype, cm.require(s1, "in1_scale"), zp1, so, zpo)
        t2 = requantize_table(a.dtype, cm.require(s2, "in2_scale"), zp2, so, zpo)
        out = np.empty(fa.size, dtype=a.dtype)
        _minmax_quant_core(is_max, fa, fb, t1, t2, qmin, out)
        return out.reshape(shape)
    cm.check_dtype("input", a, cm.FLOAT_DTYPES + (np.dtype(np.int32),))
    if a.dtype == np.float16:  # float32 compares float16 values exactly
        fa, fb = fa.astype(np.float32), fb.astype(np.float32)
    out = np.empty(fa.size, dtype=fa.dtype)
    _minmax_core(is_max, fa, fb, out)
    return out.reshape(shape).astype(a.dtype, copy=False)


def prelu_params(x_scale, alpha_scale, out_scale):
    """``((M_pos, S_pos), (M_neg, S_neg))`` of NNAPI's quantized PRELU."""
    sx, sa, so = np.float32(x_scale), np.float32(alpha_scale), np.float32(out_scale)
    pos = quantize_multiplier(float(np.float32(sx / so)))
    neg = quantize_multiplier(float(np.float32(sx * sa)) / float(so))
    return pos, neg


def prelu(x, alpha, *, in_scale=None, in_zp=0, alpha_scale=None, alpha_zp=0, out_scale=None,
          out_zp=0):
    """Parametric ReLU ``x >= 0 ? x : alpha * x`` with broadcasting of ``alpha``.

    Parameters
    ----------
    x, alpha : ndarray
        Same dtype: float32, float16, uint8 or int8.
    in_scale, in_zp, alpha_scale, alpha_zp, out_scale, out_zp
        Quantization (8-bit only).

    Returns
    -------
    ndarray
        Broadcast shape, dtype of ``x``.
    """
    x, alpha = np.asarray(x), np.asarray(alpha)
    if x.dtype != alpha.dtype:
        raise TypeError(f"input and alpha dtypes differ: {x.dtype.name} and {alpha.dtype.name}")
    shape, fx_, fa = broadcast_flat(x, alpha)
    if cm.is_quantized(x.dtype):
        (mp, sp), (mn, sn) = prelu_params(cm.require(in_scale, "in_scale"),
                                          cm.require(alpha_scale, "alpha_scale"),
                                          cm.require(out_scale, "out_scale"))
        out = np.empty(fx_.size, dtype=x.dtype)
        _prelu_quant_core(fx_, fa, int(in_zp), int(alpha_zp), int(out_zp), mp, sp, mn, sn,
                          *qrange(x.dtype), out)
        return out.reshape(shape)
    cm.check_dtype("input", x, cm.FLOAT_DTYPES)
    out = np.empty(fx_.size, dtype=np.float32)
    _prelu_float_core(fx_.astype(np.float32), fa.astype(np.float32), out)
    return out.reshape(shape).astype(x.dtype, copy=False)


@njit
def _minmax_core(is_max, a, b, out):
    for i in range(out.size):
        if is_max:  # std::max / std::min: the first argument unless the second wins
            out[i] = b[i] if a[i] < b[i] else a[i]
        else:
            out[i] = b[i] if b[i] < a[i] else a[i]
    return out


@njit
def _minmax_quant_core(is_max, a, b, t1, t2, qmin, out):
    for i in range(out.size):
        va = t1[np.int64(a[i]) - qmin]
        vb = t2[np.int64(b[i]) - qmin]
        if is_max:
            out[i] = vb if va < vb else va
        else:
            out[i] = vb if vb < va else va
    return out


@njit
def _prelu_float_core(x, alpha, out):
    for i in range(out.size):
        v = x[i]
        out[i] = v if v >= np.float32(0.0) else v * alpha[i]
    return out


@njit
def _prelu_quant_core(x, alpha, x_zp, alpha_zp, out_zp, mp, sp, mn, sn, qmin, qmax, out):
    for i in range(out.size):
        d = np.int64(x[i]) - x_zp
        if d >= 0:
            v = out_zp + multiply_by_quantized_multiplier(d, mp, sp)
        else:
            v = out_zp + multiply_by_quantized_multiplier(d * (np.int64(alpha[i]) - alpha_zp),
                                                          mn, sn)
        out[i] = lesser(greater(v, qmin), qmax)
    return out
