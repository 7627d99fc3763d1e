"""GELU, float32 and quantized (uint8 / int8 / int16 tables); numba fast path.

TFLite ``reference_ops::GeluTransform`` / ``GeluTransformApproximate`` (float32 throughout)::

    exact:        0.5f * x * erfc(x * float(-1/sqrt(2)))
    approximate:  0.5f * x * (1 + tanh(float(sqrt(2/pi)) * (x + 0.044715f * x * x * x)))

Each float32 step is rounded as C++ rounds it; ``erfc`` and ``tanh`` are evaluated in double and
rounded to float32 (glibc's ``erfcf`` / ``tanhf`` agree with that on every table entry checked
against LiteRT). The float32 kernel (Eigen in TFLite) computes the same expression. float16 is
Eigen's ``half`` arithmetic: every operation rounded to float16, ``erfc`` / ``tanh`` of the
float32 value rounded to float16 (numpy's float16 operations round the same way).

Quantized GELU is a table made in Prepare (``activations.cc`` GeluPrepare -> ``LUTPopulate``):

* 8-bit: ``lut[v] = clamp(round(T(in_scale * (v - in_zp)) * (1 / out_scale)) + out_zp)`` in
  float32, round half away from zero (``LUTPopulateInt8``);
* int16: 513 samples of ``T`` over the input range with a midpoint bias correction
  (``LUTPopulateInt16<float>``), read with 7-bit linear interpolation (``LUTLookup``).
"""

from __future__ import annotations

import math

import numpy as np

from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import qrange

__all__ = ["gelu", "gelu_table"]

_F32 = np.float32
_NEG_SQRT1_2 = _F32(-0.70710678118654752440)     # static_cast<float>(-M_SQRT1_2)
_SQRT_2_OVER_PI = _F32(1.12837916709551257390 * 0.70710678118654752440)  # M_2_SQRTPI*M_SQRT1_2


def gelu(x, *, approximate=False, in_scale=None, in_zp=0, out_scale=None, out_zp=0, table=None):
    """GELU of ``x``.

    Parameters
    ----------
    x : ndarray
        float32, float16, uint8, int8 or int16.
    approximate : bool
        The tanh approximation instead of the erfc form.
    in_scale, in_zp, out_scale, out_zp
        Quantization (integer inputs only), used to build the table unless ``table`` is given.
    table : ndarray, optional
        A table from :func:`gelu_table` for these parameters (built once per node).

    Returns
    -------
    ndarray
        Same shape and dtype as ``x``.
    """
    x = np.asarray(x)
    if x.dtype == np.float32:
        out = np.empty(x.size, np.float32)
        _gelu_float_core(np.ascontiguousarray(x).reshape(-1), bool(approximate), out)
        return out.reshape(x.shape)
    if x.dtype == np.float16:
        return _gelu_half(x, bool(approximate))
    if x.dtype not in (np.uint8, np.int8, np.int16):
        raise TypeError(f"gelu: dtype {x.dtype.name} not supported")
    if table is None:
        if in_scale is None or out_scale is None:
            raise ValueError("in_scale and out_scale are required for quantized tensors")
        table = gelu_table(x.dtype, approximate, in_scale, in_zp, out_scale, out_zp)
    if x.dtype == np.int16:
        return lut16_lookup(x, table)
    return table[x.astype(np.int64) - qrange(x.dtype)[0]]


def _gelu_half(x, approximate):
    """``reference_ops::Gelu<Eigen::half>``; constants are cast double -> float -> half."""
    h = np.float16
    x = np.ascontiguousarray(x).reshape(-1)
    with np.errstate(over="ignore", invalid="ignore"):
        if approximate:
            cube = (x * x) * x
            inner = h(_SQRT_2_OVER_PI) * (x + h(_F32(0.044715)) * cube)
            special = _special(inner, True)
            return ((h(0.5) * x) * (h(1.0) + special)).reshape(x.shape)
        special = _special(x * h(_NEG_SQRT1_2), False)
        return ((h(0.5) * x) * special).reshape(x.shape)


def _special(values, tanh):
    """``tanh`` or ``erfc`` of float16 values, computed in float32 and rounded to float16."""
    values = values.astype(np.float32)
    out = np.empty(values.size, np.float32)
    _special_core(values, tanh, out)
    return out.astype(np.float16)


def _round_away(v):
    """``TfLiteRound`` (std::round) of float32 values, as float64 (exact)."""
    v = np.asarray(v, np.float64)
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _transform(values, approximate):
    values = np.ascontiguousarray(values, np.float32).reshape(-1)
    out = np.empty(values.size, np.float32)
    _gelu_float_core(values, bool(approximate), out)
    return out


def gelu_table(dtype, approximate, in_scale, in_zp, out_scale, out_zp) -> np.ndarray:
    """The table GeluPrepare builds: 256 entries indexed by ``v - qmin`` for uint8 / int8, the
    513-entry interpolation table for int16."""
    dtype = np.dtype(dtype)
    if dtype == np.int16:
        return _table16(approximate, _F32(in_scale), int(in_zp), _F32(out_scale), int(out_zp))
    qmin, qmax = qrange(dtype)
    values = np.arange(qmin, qmax + 1, dtype=np.int64)
    dequantized = _F32(in_scale) * (values - int(in_zp)).astype(np.float32)
    scaled = _transform(dequantized, approximate) * (_F32(1.0) / _F32(out_scale))
    quantized = (_round_away(scaled) + int(out_zp)).astype(np.int64)
    return np.clip(quantized, qmin, qmax).astype(dtype)


def _table16(approximate, in_scale, in_zp, out_scale, out_zp):
    """``LUTPopulateInt16<float>``: every operation in float32, in the C++ order."""
    lo, hi = -32768, 32767
    in_min = in_scale * _F32(lo - in_zp)
    in_max = in_scale * _F32(hi - in_zp)
    out_min = out_scale * _F32(lo - out_zp)
    out_max = out_scale * _F32(hi - out_zp)
    steps = 512
    step = (in_max - in_min) / _F32(steps)
    half_step = step / _F32(2)
    inv = _F32(65536) / (out_max - out_min)
    i = np.arange(steps, dtype=np.float32)
    at = in_min + i * step
    val = _transform(at, approximate)
    mid = _transform(at + half_step, approximate)
    nxt = _transform(in_min + (i + _F32(1)) * step, approximate)
    sample = _round_away(val * inv).astype(np.float32)
    interp = _round_away((nxt * inv + sample) / _F32(2)).astype(np.float32)
    err = interp - _round_away(mid * inv).astype(np.float32)
    bias = _round_away(err / _F32(2)).astype(np.float32)
    table = np.empty(steps + 1, np.int16)
    table[:steps] = np.clip(sample - bias, lo, hi)
    last = _round_away(_transform(np.array([in_max], np.float32), approximate) * inv)
    table[steps] = np.clip(last, lo, hi)[0]
    return table


def lut16_lookup(x, table):
    """TFLite ``LUTLookup`` (int16): the high 9 bits pick a segment, the low 7 interpolate."""
    v = np.asarray(x).astype(np.int32)
    index = 256 + (v >> 7)
    offset = v & 0x7F
    base = table[index].astype(np.int32)
    slope = (table[index + 1] - table[index]).astype(np.int32)   # int16 arithmetic (wraps)
    return (base + ((slope * offset + 64) >> 7)).astype(np.int16)


@njit(inner=True)
def _gelu_f32(v, approximate):
    half = np.float32(0.5)
    if approximate:
        cube = np.float32(np.float32(np.float32(np.float32(0.044715) * v) * v) * v)
        inner = np.float32(_SQRT_2_OVER_PI * np.float32(v + cube))
        t = np.float32(math.tanh(np.float64(inner)))
        return np.float32(np.float32(half * v) * np.float32(np.float32(1.0) + t))
    e = np.float32(math.erfc(np.float64(np.float32(v * _NEG_SQRT1_2))))
    return np.float32(np.float32(half * v) * e)


@njit
def _special_core(x, tanh, out):
    for i in range(x.size):
        v = np.float64(x[i])
        out[i] = np.float32(math.tanh(v) if tanh else math.erfc(v))
    return out


@njit
def _gelu_float_core(x, approximate, out):
    for i in range(x.size):
        out[i] = _gelu_f32(x[i], approximate)
    return out
