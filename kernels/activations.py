"""RELU, RELU1, RELU6 and LOGISTIC, float and 8-bit quantized; numba fast path.

Quantized RELU family = TFLite ``QuantizedReluX`` / ``optimized_ops::ReluX``::

    M, S = QuantizeMultiplier(double(float32(in_scale / out_scale)))
    lo = max(qmin, out_zp + round(float32(act_min / out_scale)))   # hi likewise (qmax for RELU)
    out = clamp(out_zp + MBQM(x - in_zp, M, S), lo, hi)

With equal input/output parameters (NNAPI's rule) this is an exact clamp in the quantized domain.

Quantized LOGISTIC = TFLite's 256-entry table (``LUTPopulate``, used by both the reference and
the optimized kernel): ``lut[v] = clamp(round(1 / (1 + exp(-in_scale * (v - in_zp))) / out_scale)
+ out_zp)`` in float32. Float LOGISTIC follows ``reference_ops::Logistic`` (cut-offs at -9 and
16.619047).
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import greater, lesser
from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import (
    FUSE_RELU,
    FUSE_RELU1,
    FUSE_RELU6,
    multiply_by_quantized_multiplier,
    qrange,
    quantize_multiplier,
    quantized_activation_range,
)

__all__ = ["relu", "relu1", "relu6", "logistic", "logistic_table"]

_LOGISTIC_CUTOFF_UPPER = np.float32(16.619047164916992188)
_LOGISTIC_CUTOFF_LOWER = np.float32(-9.0)


def relu(x, *, in_scale=None, in_zp=0, out_scale=None, out_zp=0):
    """``max(0, x)``.

    Parameters
    ----------
    x : ndarray
        float32 / float16 / uint8 / int8.
    in_scale, in_zp : float, int
        Input quantization.
    out_scale, out_zp : float, int, optional
        Output quantization; when ``out_scale`` is None the output reuses the input's
        parameters (NNAPI requires them equal).

    Returns
    -------
    ndarray
        Same shape and dtype as ``x``.
    """
    return _relu_x(FUSE_RELU, x, in_scale, in_zp, out_scale, out_zp)


def relu1(x, *, in_scale=None, in_zp=0, out_scale=None, out_zp=0):
    """``min(max(-1, x), 1)``; arguments as :func:`relu`."""
    return _relu_x(FUSE_RELU1, x, in_scale, in_zp, out_scale, out_zp)


def relu6(x, *, in_scale=None, in_zp=0, out_scale=None, out_zp=0):
    """``min(max(0, x), 6)``; arguments as :func:`relu`."""
    return _relu_x(FUSE_RELU6, x, in_scale, in_zp, out_scale, out_zp)


def _relu_x(fuse, x, in_scale, in_zp, out_scale, out_zp):
    x = np.asarray(x)
    if not cm.is_quantized(x.dtype):
        cm.check_dtype("input", x, cm.FLOAT_DTYPES)
        lo, hi = cm.float_clamp(fuse)
        x32, dtype = cm.to_float32(x)
        out = np.empty(x32.size, dtype=np.float32)
        _clamp_float_core(x32.reshape(-1), lo, hi, out)
        return out.reshape(x.shape).astype(dtype, copy=False)
    in_scale = cm.require(in_scale, "in_scale")
    if out_scale is None:
        out_scale, out_zp = in_scale, in_zp
    m, s = relu_params(in_scale, out_scale)
    lo, hi = quantized_activation_range(fuse, out_scale, out_zp, *qrange(x.dtype))
    out = np.empty(x.size, dtype=x.dtype)
    _relu_quant_core(np.ascontiguousarray(x).reshape(-1), int(in_zp), m, s, int(out_zp),
                     int(lo), int(hi), out)
    return out.reshape(x.shape)


def relu_params(in_scale, out_scale):
    """``(M, S)`` for TFLite ReluX: the ratio is a float32 division widened to double."""
    return quantize_multiplier(float(np.float32(in_scale) / np.float32(out_scale)))


def logistic(x, *, in_scale=None, in_zp=0, out_scale=None, out_zp=None):
    """``1 / (1 + exp(-x))``.

    Parameters
    ----------
    x : ndarray
        float32 / float16 / uint8 / int8.
    in_scale, in_zp
        Input quantization.
    out_scale, out_zp : optional
        Output quantization; default 1/256 and 0 (uint8) or -128 (int8), as NNAPI requires.

    Returns
    -------
    ndarray
        Same shape and dtype as ``x``.
    """
    x = np.asarray(x)
    if not cm.is_quantized(x.dtype):
        cm.check_dtype("input", x, cm.FLOAT_DTYPES)
        x32, dtype = cm.to_float32(x)
        out = np.empty(x32.size, dtype=np.float32)
        _logistic_float_core(x32.reshape(-1), _LOGISTIC_CUTOFF_UPPER, _LOGISTIC_CUTOFF_LOWER, out)
        return out.reshape(x.shape).astype(dtype, copy=False)
    qmin, _ = qrange(x.dtype)
    out_scale = 1.0 / 256 if out_scale is None else out_scale
    out_zp = qmin if out_zp is None else out_zp
    table = logistic_table(x.dtype, cm.require(in_scale, "in_scale"), in_zp, out_scale, out_zp)
    out = np.empty(x.size, dtype=x.dtype)
    _lookup_core(np.ascontiguousarray(x).reshape(-1), table, qmin, out)
    return out.reshape(x.shape)


def logistic_table(dtype, in_scale, in_zp, out_scale, out_zp):
    """TFLite ``LUTPopulate`` for the logistic function: entry ``v - qmin`` for every value v.

    All arithmetic in float32; ``exp`` is evaluated in double and rounded to float32 (the
    correctly rounded ``expf``).
    """
    qmin, qmax = qrange(dtype)
    values = np.arange(qmin, qmax + 1, dtype=np.int64)
    dequantized = np.float32(in_scale) * (values - int(in_zp)).astype(np.float32)
    with np.errstate(over="ignore"):  # expf overflows to inf, and 1 / (1 + inf) = 0
        e = np.exp(-dequantized.astype(np.float64)).astype(np.float32)
    transformed = np.float32(1.0) / (np.float32(1.0) + e)
    inverse_scale = np.float32(1.0) / np.float32(out_scale)
    scaled = (transformed * inverse_scale).astype(np.float64)
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)
    quantized = rounded.astype(np.int64) + int(out_zp)
    return np.clip(quantized, qmin, qmax).astype(dtype)


@njit
def _clamp_float_core(x, lo, hi, out):
    for i in range(x.size):
        out[i] = lesser(greater(x[i], lo), hi)
    return out


@njit
def _relu_quant_core(x, in_zp, m, s, out_zp, lo, hi, out):
    for i in range(x.size):
        v = out_zp + multiply_by_quantized_multiplier(np.int64(x[i]) - in_zp, m, s)
        out[i] = lesser(greater(v, lo), hi)
    return out


@njit
def _lookup_core(x, table, qmin, out):
    for i in range(x.size):
        out[i] = table[np.int64(x[i]) - qmin]
    return out


@njit
def _logistic_float_core(x, cutoff_upper, cutoff_lower, out):
    one = np.float32(1.0)
    for i in range(x.size):
        v = x[i]
        if v > cutoff_upper:
            out[i] = one
        elif v < cutoff_lower:
            out[i] = np.exp(v)
        else:
            out[i] = one / (one + np.exp(-v))
    return out

