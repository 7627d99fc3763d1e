"""CONV_2D (NHWC), float and 8-bit quantized; numba fast path.

Matches TFLite ``reference_ops::Conv`` (uint8), ``reference_integer_ops::ConvPerChannel`` (int8)
and the float reference conv (float: same accumulation order; fused multiply-adds on CPUs with
FMA, ``nnsim.kernels._jit.FMA``, which only skips the rounding of each product).

Integer rule, per output ``(b, y, x, c)``::

    acc = bias[c] + sum over in-image taps of (w - w_zp) * (x - in_zp)     # int32, wrapping
    out = clamp(MultiplyByQuantizedMultiplier(acc, M[c], S[c]) + out_zp, act_min, act_max)

Taps that fall in the padding are skipped (zero in real space). The uint8 filter form
``(w + w_off)(x + x_off)`` and the int8 form ``w * (x + x_off)`` (w_zp = 0) are both this rule.
The float path sums taps one at a time from 0.0 in (ky, kx, ci) order, then adds the bias, as
TFLite's reference kernel. The cores are in :mod:`nnsim.kernels.gemm`.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels._filters import cached_pack_filter
from nnsim.kernels._filters import pack_filter as _pack_filter
from nnsim.kernels.gemm import FloatGemmPlan, QuantGemmPlan, in_place_float_plan

__all__ = ["conv_2d", "prepare_conv_2d", "pack_filter"]


def conv_2d(
    x,
    w,
    bias,
    *,
    stride_h,
    stride_w,
    pad_top,
    pad_bottom,
    pad_left,
    pad_right,
    dilation_h=1,
    dilation_w=1,
    fuse=0,
    in_scale=None,
    in_zp=0,
    w_scales=None,
    w_zp=0,
    out_scale=None,
    out_zp=0,
    out_dtype=None,
    packed_filter=None,
):
    """2-D convolution, NHWC.

    Parameters
    ----------
    x : ndarray [N, H, W, Cin]
        float32 / float16, or uint8 / int8 (quantized with ``in_scale``, ``in_zp``).
    w : ndarray [Cout, KH, KW, Cin]
        Same float type as ``x``; for quantized ``x``: uint8 (per-tensor, any ``w_zp``) or int8
        (per-tensor or per-channel symmetric).
    bias : ndarray [Cout] or None
        float32 for float ``x``; int32 (scale ``in_scale * w_scale[c]``) for quantized. None = 0.
    stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right, dilation_h, dilation_w : int
        Explicit NNAPI geometry.
    fuse : int
        NNAPI fuse code (0 none, 1 relu, 2 relu1, 3 relu6), applied in the output domain.
    in_scale, in_zp, w_scales, w_zp, out_scale, out_zp
        Quantization. ``w_scales`` has 1 (per-tensor) or Cout (per-channel) entries.
    out_dtype : np.uint8 or np.int8, optional
        Quantized output type; defaults to ``x.dtype``.
    packed_filter : optional
        The result of :func:`pack_filter` for ``w``; by default filters are packed once per
        filter array and cached (see :mod:`nnsim.kernels._filters`).

    Returns
    -------
    ndarray [N, OH, OW, Cout]
        float32 (float16 for float16 input) or ``out_dtype``.

    Notes
    -----
    Multipliers: uint8 input with a per-tensor uint8 filter uses TFLite's per-tensor rule
    ``double(float32(in_scale * w_scale)) / out_scale``; every other quantized combination uses
    the per-channel rule ``double(in_scale) * double(w_scale[c]) / double(out_scale)``.
    """
    x, w = np.asarray(x), np.asarray(w)
    plan, out_shape = prepare_conv_2d(
        x.shape, x.dtype, w, bias, stride_h=stride_h, stride_w=stride_w, pad_top=pad_top,
        pad_bottom=pad_bottom, pad_left=pad_left, pad_right=pad_right, dilation_h=dilation_h,
        dilation_w=dilation_w, fuse=fuse, in_scale=in_scale, in_zp=in_zp, w_scales=w_scales,
        w_zp=w_zp, out_scale=out_scale, out_zp=out_zp, out_dtype=out_dtype,
        packed_filter=packed_filter)
    if cm.is_quantized(x.dtype):
        return plan.run(np.ascontiguousarray(x), np.empty(out_shape, plan.out_dtype))
    x32, dtype = cm.to_float32(x)
    out = plan.run(x32, np.empty(out_shape, np.float32))
    return out.astype(dtype, copy=False)


def prepare_conv_2d(x_shape, x_dtype, w, bias, *, stride_h, stride_w, pad_top, pad_bottom,
                    pad_left, pad_right, dilation_h=1, dilation_w=1, fuse=0, in_scale=None,
                    in_zp=0, w_scales=None, w_zp=0, out_scale=None, out_zp=0, out_dtype=None,
                    packed_filter=None):
    """Check the arguments of :func:`conv_2d` and precompute everything that does not depend
    on the input values (TFLite's Prepare): returns ``(plan, out_shape)``; ``plan.run(x, out)``
    computes the convolution of a C-contiguous ``x`` of that shape (float16 as float32) into
    ``out`` (``plan.out_dtype``, or float32)."""
    w = np.asarray(w)
    x_dtype = np.dtype(x_dtype)
    if len(x_shape) != 4:
        raise ValueError(f"input: expected rank 4, got shape {tuple(x_shape)}")
    cm.check_rank("filter", w, 4)
    if w.shape[3] != x_shape[3]:
        raise ValueError(f"filter depth {w.shape[3]} != input depth {x_shape[3]}")
    pads = (pad_top, pad_bottom, pad_left, pad_right)
    cm.check_conv_geometry(stride_h, stride_w, dilation_h, dilation_w, pads)
    cout, kh, kw, _ = w.shape
    oh = cm.conv_out_size(x_shape[1], kh, stride_h, dilation_h, pad_top, pad_bottom)
    ow = cm.conv_out_size(x_shape[2], kw, stride_w, dilation_w, pad_left, pad_right)
    out_shape = (x_shape[0], oh, ow, cout)
    geometry = (stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w)

    if cm.is_quantized(x_dtype):
        cm.check_dtype("filter", w, (np.uint8, np.int8))
        scales = cm.filter_scales(w_scales, cout)
        float_product = x_dtype == np.uint8 and w.dtype == np.uint8 and scales.size == 1
        mults, shifts = cm.conv_multipliers(in_scale, scales, out_scale, cout, float_product)
        odt = cm.output_dtype(out_dtype, x_dtype)
        lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, odt)
        packed = cached_pack_filter(w) if packed_filter is None else packed_filter
        plan = QuantGemmPlan(x_shape, out_shape, x_dtype, in_zp, w, w_zp,
                             cm.bias_int32(bias, cout), mults, shifts, out_zp, lo, hi, geometry,
                             packed)
        plan.out_dtype = odt
        return plan, out_shape

    if x_dtype not in cm.FLOAT_DTYPES:
        names = ", ".join(np.dtype(a).name for a in cm.FLOAT_DTYPES)
        raise TypeError(f"input: dtype {x_dtype.name} not supported (expected {names})")
    lo, hi = cm.float_clamp(fuse)
    packed = cached_pack_filter(w) if packed_filter is None else packed_filter
    bias = cm.bias_float32(bias, cout)
    plan = (in_place_float_plan(x_shape, out_shape, w, bias, lo, hi, geometry, packed)
            or FloatGemmPlan(x_shape, out_shape, w, bias, lo, hi, geometry, packed))
    plan.out_dtype = np.dtype(np.float32)
    return plan, out_shape


def pack_filter(w, w_zp=0):
    """The filter ``[Cout, KH, KW, Cin]`` packed for the GEMM cores (:mod:`nnsim.kernels.gemm`;
    ``w_zp`` is not needed: kept for callers of the old signature). Pass the result as
    ``packed_filter`` to skip packing (and the packed-filter cache) on later calls."""
    return _pack_filter(w)
