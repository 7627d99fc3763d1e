"""HARD_SWISH ``x * relu6(x + 3) / 6``, float and 8-bit quantized; numba fast path.

Float: TFLite ``reference_ops::HardSwish``: ``in * min(6, max(0, in + 3)) / 6`` in float32.
Quantized: the 16-bit fixed-point ``reference_ops::HardSwish`` (``kernels/activations.cc``
HardSwishPrepare)::

    hires_in = in_scale / 128                       # float32
    M_out, E_out = QuantizeMultiplier(float32(hires_in / out_scale)) -> int16 (DownScale)
    M_rel, E_rel = QuantizeMultiplier(float32(hires_in / (3 / 32768))) -> int16
    v = int16((x - in_zp) * 128)
    pre = SRDHM16(v, M_out)
    r = v; if E_rel > 0: r = sat_shl16(r, E_rel - 1)
    r = SRDHM16(r, M_rel); if E_rel > 0: r = sat_shl16(r, 1)
    if E_rel < 0: r = RDBPOT(r, -E_rel)
    r = (r + 32768) >> 1                            # [-1, 1] -> [0, 1]
    out = clamp(RDBPOT(SDHM16(r, pre), -E_out) + out_zp)   # SDHM rounds toward zero
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import greater, lesser
from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import qrange, quantize_multiplier, rounding_divide_by_pot

__all__ = ["hard_swish", "hard_swish_params"]


def hard_swish(x, *, in_scale=None, in_zp=0, out_scale=None, out_zp=0):
    """Hard swish.

    Parameters
    ----------
    x : ndarray
        float32 / float16 / uint8 / int8.
    in_scale, in_zp, out_scale, out_zp
        Quantization (quantized input only).

    Returns
    -------
    ndarray
        Same shape and dtype as ``x``.
    """
    x = np.asarray(x)
    if not cm.is_quantized(x.dtype):
        cm.check_dtype("input", x, cm.FLOAT_DTYPES)
        x32, dtype = cm.to_float32(x)
        out = x32 * np.minimum(np.float32(6), np.maximum(np.float32(0), x32 + np.float32(3)))
        return (out / np.float32(6)).astype(dtype, copy=False)
    params = hard_swish_params(cm.require(in_scale, "in_scale"), cm.require(out_scale, "out_scale"))
    qmin, qmax = qrange(x.dtype)
    out = np.empty(x.size, dtype=x.dtype)
    _hard_swish_core(np.ascontiguousarray(x).reshape(-1), int(in_zp), int(out_zp), *params,
                     qmin, qmax, out)
    return out.reshape(x.shape)


def _downscale_to_int16(m: int) -> int:
    """TFLite ``DownScaleInt32ToInt16Multiplier``."""
    if m >= 2**31 - 1 - (1 << 15):
        return 2**15 - 1
    return (m + (1 << 15)) >> 16


def hard_swish_params(in_scale, out_scale):
    """``(M_out16, E_out, M_relu16, E_relu)`` as HardSwishPrepare computes them."""
    hires = np.float32(np.float32(1.0 / 128.0) * np.float32(in_scale))
    reluish_scale = np.float32(3.0 / 32768.0)
    m_out, e_out = quantize_multiplier(float(np.float32(hires / np.float32(out_scale))))
    m_rel, e_rel = quantize_multiplier(float(np.float32(hires / reluish_scale)))
    if e_out > 0:
        raise ValueError("hard_swish: output multiplier exponent must be <= 0 "
                         "(output scale too small for the input scale)")
    return _downscale_to_int16(m_out), int(e_out), _downscale_to_int16(m_rel), int(e_rel)


@njit
def _wrap16(v):
    return ((np.int64(v) + 32768) & 0xFFFF) - 32768


@njit(inner=True)
def _srdhm16(a, b):
    if a == b and a == -32768:
        return np.int64(32767)
    ab = np.int64(a) * np.int64(b)
    nudge = 16384 if ab >= 0 else 1 - 16384
    v = ab + nudge
    q = v // 32768 if v >= 0 else -((-v) // 32768)  # C++ '/' truncates
    return _wrap16(q)


@njit(inner=True)
def _sdhm16(a, b):
    if a == b and a == -32768:
        return np.int64(32767)
    ab = np.int64(a) * np.int64(b)
    q = ab // 32768 if ab >= 0 else -((-ab) // 32768)
    return _wrap16(q)


@njit(inner=True)
def _sat_shl16(v, amount):
    r = np.int64(v) * (np.int64(1) << amount)
    return lesser(greater(r, -32768), 32767)


@njit
def _hard_swish_core(x, in_zp, out_zp, m_out, e_out, m_rel, e_rel, qmin, qmax, out):
    for i in range(x.size):
        v = _wrap16(np.int64(x[i]) - in_zp)
        hires = _wrap16(v * 128)
        pre = _srdhm16(hires, m_out)
        r = hires
        if e_rel > 0:
            r = _sat_shl16(r, e_rel - 1)
        r = _srdhm16(r, m_rel)
        if e_rel > 0:
            r = _sat_shl16(r, 1)
        if e_rel < 0:
            r = rounding_divide_by_pot(r, -e_rel)
        r = (r + 32768) >> 1
        o = _sdhm16(r, pre)
        o = _wrap16(rounding_divide_by_pot(o, -e_out) + out_zp)
        out[i] = lesser(greater(o, qmin), qmax)
    return out
