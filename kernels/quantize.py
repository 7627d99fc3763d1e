"""QUANTIZE, DEQUANTIZE and quantized-to-quantized requantization; numba fast path.

* float -> q (TFLite ``reference_ops::AffineQuantize``): ``clamp(round(float32(x) / float32(scale))
  + zp)`` with ``round`` half away from zero.
* q -> float (``reference_ops::Dequantize``): ``float32(double(scale) * (q - zp))``; per-channel
  (``PerChannelDequantize``): ``float32(q - zp) * float32(scale[c])``.
* q -> q (``kernels/quantize.cc`` Requantize): ``M, S = QuantizeMultiplier(double(s_in) /
  double(s_out))``; ``clamp(MBQM(q - zp_in, M, S) + zp_out)``.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._builtins import greater, lesser, zeros
from nnsim.kernels._jit import njit, vi_add, vi_load8, vi_requant, vi_splat, vi_store8
from nnsim.kernels.fixed_point import qrange, quantize_multiplier
from nnsim.kernels.gemm import requant_params

__all__ = ["quantize", "dequantize", "requantize", "prepare_requantize", "quantize_into",
           "dequantize_into"]


def quantize(x_float, *, out_scale, out_zp, out_dtype):
    """Quantize float32/float16 values to uint8/int8.

    Parameters
    ----------
    x_float : ndarray
        float32 or float16.
    out_scale, out_zp, out_dtype
        Target quantization and type (np.uint8 or np.int8).

    Returns
    -------
    ndarray of ``out_dtype``
    """
    x = np.asarray(x_float)
    cm.check_dtype("input", x, cm.FLOAT_DTYPES)
    odt = cm.output_dtype(out_dtype, out_dtype)
    qmin, qmax = qrange(odt)
    out = np.empty(x.size, dtype=odt)
    _quantize_core(np.ascontiguousarray(x, dtype=np.float32).reshape(-1), np.float32(out_scale),
                   int(out_zp), qmin, qmax, out.view(np.uint8))
    return out.reshape(x.shape)


def quantize_into(x, out, *, out_scale, out_zp) -> bool:
    """:func:`quantize` of float32 ``x`` written into ``out`` (uint8 / int8, same shape, both
    C-contiguous), for a plan's fixed buffer; False (nothing written) when the arrays do not
    allow it."""
    if not (x.dtype == np.float32 and out.dtype in (np.uint8, np.int8) and x.shape == out.shape
            and x.flags.c_contiguous and out.flags.c_contiguous):
        return False
    qmin, qmax = qrange(out.dtype)
    _quantize_core(x.reshape(-1), np.float32(out_scale), int(out_zp), qmin, qmax,
                   out.reshape(-1).view(np.uint8))
    return True


def bind_quantize(x, out, *, out_scale, out_zp):
    """:func:`quantize_into` bound to fixed ``x`` and ``out``: a call of no arguments (a
    compiled core's partial, which a compiled program runs without Python), or None when
    the arrays do not allow it."""
    if not (x.dtype == np.float32 and out.dtype in (np.uint8, np.int8) and x.shape == out.shape
            and x.flags.c_contiguous and out.flags.c_contiguous):
        return None
    qmin, qmax = qrange(out.dtype)
    return partial(_quantize_core, x.reshape(-1), np.float32(out_scale), int(out_zp), qmin,
                   qmax, out.reshape(-1).view(np.uint8))


def bind_dequantize(x, out, *, in_scale, in_zp):
    """:func:`dequantize_into` bound to fixed ``x`` and ``out`` (as :func:`bind_quantize`),
    or None when the arrays or the zero point do not allow it."""
    if not (x.dtype in (np.uint8, np.int8) and out.dtype == np.float32 and x.shape == out.shape
            and x.flags.c_contiguous and out.flags.c_contiguous and abs(int(in_zp)) < 1 << 20):
        return None
    xb, flip, zp = x.reshape(-1), x.dtype.type(0), int(in_zp)
    if x.dtype == np.int8:   # read as uint8 + 128 (as _dequantize_flat)
        xb, flip, zp = xb.view(np.uint8), np.uint8(128), zp + 128
    return partial(_dequantize_small_core, _read_only(xb), flip, np.int32(zp),
                   np.float32(in_scale), out.reshape(-1))


def _read_only(x):
    """A read-only view of ``x``: :func:`_dequantize_small_core` always gets one (a model's
    constants are read-only arrays), so numba compiles one variant of it, not a second one
    for writable inputs (0.1-0.16 s of a cold start, issue 13)."""
    view = x.view()
    view.flags.writeable = False
    return view


def dequantize_into(x, out, *, in_scale, in_zp) -> bool:
    """Per-tensor :func:`dequantize` of 8-bit ``x`` written into float32 ``out`` (same shape,
    both C-contiguous); False (nothing written) when the arrays do not allow it."""
    if not (x.dtype in (np.uint8, np.int8) and out.dtype == np.float32 and x.shape == out.shape
            and x.flags.c_contiguous and out.flags.c_contiguous):
        return False
    _dequantize_flat(x.reshape(-1), in_scale, in_zp, out.reshape(-1))
    return True


def dequantize(x_q, *, in_scale=None, in_zp=0, channel_scales=None, channel_axis=None,
               out_dtype=np.float32):
    """Dequantize integer values to float.

    Parameters
    ----------
    x_q : ndarray
        uint8 / int8 (any integer dtype works).
    in_scale, in_zp
        Per-tensor quantization (ignored when ``channel_scales`` is given).
    channel_scales : sequence of float, optional
        Per-channel scales along ``channel_axis`` (symmetric, zero point 0).
    channel_axis : int, optional
        The quantized dimension for ``channel_scales``.
    out_dtype : np.float32 or np.float16
        Result type (float16 is the float32 result rounded).

    Returns
    -------
    ndarray of ``out_dtype``
    """
    x = np.asarray(x_q)
    if x.dtype.kind not in "iu":
        raise TypeError(f"dequantize: integer input expected, got {x.dtype.name}")
    out = np.empty(x.size, dtype=np.float32)
    if channel_scales is None:
        _dequantize_flat(np.ascontiguousarray(x).reshape(-1), cm.require(in_scale, "in_scale"),
                         in_zp, out)
        return out.reshape(x.shape).astype(out_dtype, copy=False)
    axis = cm.normalize_axis(cm.require(channel_axis, "channel_axis"), x.ndim)
    scales = np.asarray(channel_scales, dtype=np.float32).ravel()
    if scales.size != x.shape[axis]:
        raise ValueError(f"{scales.size} channel scales for dimension of size {x.shape[axis]}")
    inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
    _dequantize_per_channel_core(np.ascontiguousarray(x).reshape(-1), scales, inner, out)
    return out.reshape(x.shape).astype(out_dtype, copy=False)


def requantize(x_q, *, in_scale, in_zp, out_scale, out_zp, out_dtype):
    """Requantize uint8/int8 values to new parameters and/or type.

    Returns
    -------
    ndarray of ``out_dtype``
    """
    x = np.asarray(x_q)
    cm.check_dtype("input", x, (np.uint8, np.int8))
    plan = prepare_requantize(in_scale=in_scale, in_zp=in_zp, out_scale=out_scale,
                              out_zp=out_zp, out_dtype=out_dtype)
    return plan.run(x, np.empty(x.shape, cm.output_dtype(out_dtype, out_dtype)))


def prepare_requantize(*, in_scale, in_zp, out_scale, out_zp, out_dtype):
    """The constants of :func:`requantize` once (TFLite's Prepare): a plan whose
    ``run(x, out)`` requantizes uint8/int8 ``x`` into ``out`` (``out_dtype``, same shape)."""
    return _RequantizePlan(in_scale, in_zp, out_scale, out_zp, out_dtype)


class _RequantizePlan:
    def __init__(self, in_scale, in_zp, out_scale, out_zp, out_dtype):
        odt = cm.output_dtype(out_dtype, out_dtype)
        m, s = quantize_multiplier(float(np.float32(in_scale)) / float(np.float32(out_scale)))
        self.qmin, self.qmax = qrange(odt)
        self.table = requant_params(np.zeros(16, np.int64), np.full(16, m), np.full(16, s))
        self.in_zp, self.out_zp = int(in_zp), int(out_zp)
        # Equal scales (a uint8 <-> int8 QUANTIZE keeping the scale, as the input QUANTIZE of
        # TF2 int8 models): the ratio 1.0 gives M = 2**30, S = 1, and MBQM(x, 2**30, 1) =
        # (2x * 2**30 + 2**30) >> 31 = x for every |x| < 2**30, so the result is
        # clamp(q - in_zp + out_zp): a byte loop that vectorises, not 16-lane requantization.
        self.same_scale = (m, s) == (1 << 30, 1)

    def bind(self, x, out):
        """A function of no arguments requantizing the current contents of ``x`` into
        ``out`` (both fixed, C-contiguous)."""
        xf, of = x.reshape(-1), out.reshape(-1).view(np.uint8)
        if self.same_scale:   # int8 bytes read as uint8 ^ 0x80, i.e. q + 128
            flip = 128 if x.dtype == np.int8 else 0
            return partial(_shift_core, xf.view(np.uint8), np.uint8(flip),
                           np.int16(self.out_zp - self.in_zp - flip), np.int16(self.qmin),
                           np.int16(self.qmax), of)
        return partial(_requantize_core, xf, self.in_zp, self.table, self.out_zp,
                       self.qmin, self.qmax, of)

    def run(self, x, out):
        self.bind(np.ascontiguousarray(x), out)()
        return out


@njit(error_model="numpy")
def _quantize_core(x, scale, zp, qmin, qmax, out):
    """``clamp(round(x / scale) + zp, qmin, qmax)`` into ``out``: the division in float32 as
    TFLite's, ``round`` half away from zero; NaN gives ``qmin``, out-of-range values their
    bound. ``out``: the bytes of the uint8 or int8 result (one compiled variant). Rounding
    by the exact fraction ``v - trunc(v)`` (no float64, no ``v + 0.5``, which rounds
    0.49999997 up) keeps the loop in single-precision lanes: 16 values per vector division
    on AVX-512 (224x224x3: 29 -> 19 us, Zen 5)."""
    low, high = np.float32(qmin - zp), np.float32(qmax - zp)
    half, one, zero = np.float32(0.5), np.float32(1.0), np.float32(0.0)
    for i in range(x.size):
        v = x[i] / scale
        r = np.trunc(v)
        f = v - r                                   # exact: |f| < 1, same sign as v
        r = r + (one if f >= half else zero) - (one if f <= -half else zero)
        r = r if r >= low else low                  # also catches NaN
        r = r if r <= high else high
        out[i] = np.int32(np.int32(r) + zp)     # int32 lanes (an int64 sum: 29 us, not 19)
    return out


def _dequantize_flat(x, in_scale, in_zp, out):
    """Per-tensor dequantization of the flat integer array ``x`` into float32 ``out``."""
    scale = np.float32(in_scale)
    if x.dtype.itemsize <= 2 and abs(int(in_zp)) < 1 << 20:   # |q - zp| < 2**24
        if x.dtype == np.int8:   # read as uint8 + 128: the uint8 variant serves both
            x, flip, in_zp = x.view(np.uint8), np.uint8(128), int(in_zp) + 128
        else:
            flip = x.dtype.type(0)
        _dequantize_small_core(_read_only(x), flip, np.int32(in_zp), scale, out)
    else:
        _dequantize_core(x, float(scale), int(in_zp), out)


@njit
def _dequantize_core(x, scale, zp, out):
    """``float(scale * (q - zp))`` with the product in float64, as TFLite (any integers)."""
    for i in range(x.size):
        out[i] = np.float32(scale * np.float64(np.int64(x[i]) - zp))
    return out


@njit
def _dequantize_small_core(x, flip, zp, scale, out):
    """:func:`_dequantize_core` for ``|q - zp| < 2**24`` (8- and 16-bit inputs, each ``q`` as
    ``x ^ flip``) and a float32 ``scale``: ``q - zp`` is then exact as a float32 and the
    float32 product is the exact product rounded once, as the float64 product (exact: 48
    bits) rounded to float32.
    Single-precision lanes: 15 us instead of 60 us for a 224x224x3 input."""
    for i in range(x.size):
        out[i] = np.float32(np.int32(x[i] ^ flip) - zp) * scale
    return out


@njit
def _dequantize_per_channel_core(x, scales, inner, out):
    channels = scales.size
    for i in range(x.size):
        c = (i // inner) % channels
        out[i] = np.float32(np.int64(x[i])) * scales[c]
    return out


@njit
def _requantize_core(x, in_zp, table, out_zp, qmin, qmax, out):
    """``clamp(MBQM(q - in_zp, M, S) + out_zp)``, 16 values at a time (bytes in and out)."""
    n = x.size
    full = n - n % 16
    for i in range(0, full, 16):
        _requantize16(x, i, in_zp, table, out_zp, qmin, qmax, out, i)
    if full < n:
        tin, tout = zeros(16, x.dtype), zeros(16, np.uint8)
        for j in range(n - full):   # not slice assignments (see elementwise._quant_range)
            tin[j] = x[full + j]
        zero = np.int64(0)   # (not the literal: numba would compile a variant for it)
        _requantize16(tin, zero, in_zp, table, out_zp, qmin, qmax, tout, zero)
        for j in range(n - full):
            out[full + j] = tout[j]
    return out


@njit(_nrt=False)
def _shift_core(xb, flip, delta, qmin, qmax, out):
    """``out = clamp((xb ^ flip) + delta, qmin, qmax)`` as bytes (the requantization of equal
    scales, see ``_RequantizePlan``); one compiled variant for int8 and uint8. int16 lanes
    (every value is in [-510, 510]; numba would widen int32 sums to int64)."""
    for i in range(xb.size):
        v = np.int16(np.int16(xb[i] ^ flip) + delta)
        out[i] = lesser(greater(v, qmin), qmax)


@njit(_nrt=False, inner=True)
def _requantize16(x, i, in_zp, table, out_zp, qmin, qmax, out, o):
    v = vi_add(vi_load8(x, i), vi_splat(-in_zp))   # sign- or zero-extended by dtype
    vi_store8(vi_requant(v, table, 0, 16, 0, out_zp, qmin, qmax), out, o)
