"""LEAKY_RELU, float32 and quantized (uint8 / int8 / int16); numba fast path.

Float (``reference_ops::LeakyRelu``): ``x > 0 ? x : x * alpha`` in float32 (alpha may be
negative or above one, so it is not a max).

Quantized (``activations.cc`` LeakyReluPrepare, ``reference_ops::QuantizeLeakyRelu``): two
multipliers, each from a float32 quotient widened to double::

    M_id, S_id = QuantizeMultiplier(float32(in_scale / out_scale))
    M_a,  S_a  = QuantizeMultiplier(float32(float32(in_scale * alpha) / out_scale))
    d = x - in_zp
    out = out_zp + (d >= 0 ? MBQM(d, M_id, S_id) : sign(M_a) * MBQM(d, |M_a|, S_a))
    saturated to the type

A negative alpha multiplies by ``|M_a|`` and negates the product (LiteRT 2.3 does; rounding
ties then go the other way than with a negative multiplier). int16 needs zero points of 0.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels._builtins import greater, lesser

from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import multiply_by_quantized_multiplier, qrange, quantize_multiplier

__all__ = ["leaky_relu", "leaky_relu_params"]

_QUANT = (np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16))


def leaky_relu_params(in_scale, alpha, out_scale):
    """``(M_id, S_id, M_alpha, S_alpha)`` as LeakyReluPrepare computes them."""
    s_in, s_out = np.float32(in_scale), np.float32(out_scale)
    m_id, s_id = quantize_multiplier(float(np.float32(s_in / s_out)))
    m_a, s_a = quantize_multiplier(float(np.float32(np.float32(s_in * np.float32(alpha)) / s_out)))
    return m_id, s_id, m_a, s_a


def leaky_relu(x, alpha, *, in_scale=None, in_zp=0, out_scale=None, out_zp=0):
    """Leaky ReLU of ``x``.

    Parameters
    ----------
    x : ndarray
        float32, uint8, int8 or int16.
    alpha : float
        Slope for ``x <= 0`` (float32).
    in_scale, in_zp, out_scale, out_zp
        Quantization (integer types only).

    Returns
    -------
    ndarray
        Same shape and dtype as ``x``.
    """
    x = np.asarray(x)
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty(flat.size, x.dtype)
    if x.dtype == np.float32:
        _leaky_float_core(flat, np.float32(alpha), out)
        return out.reshape(x.shape)
    if x.dtype not in _QUANT:
        raise TypeError(f"leaky_relu: dtype {x.dtype.name} not supported")
    if in_scale is None or out_scale is None:
        raise ValueError("in_scale and out_scale are required for quantized tensors")
    m_id, s_id, m_a, s_a = leaky_relu_params(in_scale, alpha, out_scale)
    _leaky_quant_core(flat, int(in_zp), int(out_zp), m_id, s_id, abs(m_a), s_a, m_a < 0,
                      *qrange(x.dtype), out)
    return out.reshape(x.shape)


@njit
def _leaky_float_core(x, alpha, out):
    for i in range(x.size):
        v = x[i]
        out[i] = v if v > np.float32(0.0) else v * alpha
    return out


@njit
def _leaky_quant_core(x, in_zp, out_zp, m_id, s_id, m_a, s_a, negate, qmin, qmax, out):
    for i in range(x.size):
        d = np.int64(x[i]) - in_zp
        if d >= 0:
            v = out_zp + multiply_by_quantized_multiplier(d, m_id, s_id)
        else:
            scaled = multiply_by_quantized_multiplier(d, m_a, s_a)
            v = out_zp - scaled if negate else out_zp + scaled
        out[i] = lesser(greater(v, qmin), qmax)
    return out
