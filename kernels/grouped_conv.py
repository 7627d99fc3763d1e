"""GROUPED_CONV_2D (NHWC), float and 8-bit quantized; numba fast path (CONV_2D's GEMM cores).

With ``G`` groups, input ``[N, H, W, G * Cg]`` and filter ``[G * Og, KH, KW, Cg]``, output
channel ``c`` of group ``g = c // Og`` convolves input channels ``[g * Cg, (g + 1) * Cg)``
with filter row ``c``: each group is one :mod:`nnsim.kernels.conv` convolution (same integer
rule, float accumulation order and fused clamp), run on a copy of its input channels.

The quantized multipliers depend on who computes (``multipliers``):

* ``"aosp"`` -- AOSP ``GroupedConv2D.cpp``, every quantized form (uint8 / int8 filter,
  per-channel or not) through ``GetQuantizedConvolutionMultiplier``:
  ``double(float32(in_scale * w_scale[c])) / double(out_scale)``;
* ``"tflite"`` -- TFLite's reference ``Conv`` / ``ConvPerChannel`` (as :func:`conv_2d`): that
  float product for uint8 input with a per-tensor uint8 filter, else
  ``double(in_scale) * double(w_scale[c]) / double(out_scale)``.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm
from nnsim.kernels.gemm import FloatGemmPlan, QuantGemmPlan

__all__ = ["grouped_conv_2d", "prepare_grouped_conv_2d", "GroupedConvPlan"]


def grouped_conv_2d(x, w, bias, *, groups, stride_h, stride_w, pad_top, pad_bottom, pad_left,
                    pad_right, dilation_h=1, dilation_w=1, fuse=0, in_scale=None, in_zp=0,
                    w_scales=None, w_zp=0, out_scale=None, out_zp=0, out_dtype=None,
                    multipliers="tflite"):
    """Grouped 2-D convolution, NHWC.

    Parameters
    ----------
    x : ndarray [N, H, W, groups * Cg]
        float32 / float16, or uint8 / int8 (quantized with ``in_scale``, ``in_zp``).
    w : ndarray [Cout, KH, KW, Cg]
        ``Cout`` a multiple of ``groups``; float of ``x``'s type, or uint8 / int8 (per-tensor
        with any ``w_zp``, or per-channel symmetric int8).
    bias : ndarray [Cout] or None
        float32 (float input) or int32 (quantized input).
    groups : int
        Number of groups, >= 1.
    stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right, dilation_h, dilation_w, fuse
        As :func:`nnsim.kernels.conv.conv_2d`.
    in_scale, in_zp, w_scales, w_zp, out_scale, out_zp, out_dtype
        Quantization, as :func:`nnsim.kernels.conv.conv_2d`.
    multipliers : {"tflite", "aosp"}
        The requantization rule (see the module docstring).

    Returns
    -------
    ndarray [N, OH, OW, Cout]
        float32 (float16 for float16 input) or the quantized output type.
    """
    x, w = np.asarray(x), np.asarray(w)
    plan, out_shape = prepare_grouped_conv_2d(
        x.shape, x.dtype, w, bias, groups=groups, stride_h=stride_h, stride_w=stride_w,
        pad_top=pad_top, pad_bottom=pad_bottom, pad_left=pad_left, pad_right=pad_right,
        dilation_h=dilation_h, dilation_w=dilation_w, fuse=fuse, in_scale=in_scale, in_zp=in_zp,
        w_scales=w_scales, w_zp=w_zp, out_scale=out_scale, out_zp=out_zp, out_dtype=out_dtype,
        multipliers=multipliers)
    if cm.is_quantized(x.dtype):
        return plan.run(x, np.empty(out_shape, plan.out_dtype))
    out = plan.run(np.asarray(x, np.float32), np.empty(out_shape, np.float32))
    return out.astype(x.dtype, copy=False)


def prepare_grouped_conv_2d(x_shape, x_dtype, w, bias, *, groups, stride_h, stride_w, pad_top,
                            pad_bottom, pad_left, pad_right, dilation_h=1, dilation_w=1, fuse=0,
                            in_scale=None, in_zp=0, w_scales=None, w_zp=0, out_scale=None,
                            out_zp=0, out_dtype=None, multipliers="tflite", packed_filter=None):
    """Check the arguments of :func:`grouped_conv_2d` and build one GEMM plan per group
    (TFLite's Prepare): returns ``(plan, out_shape)``; ``plan.run(x, out)`` computes the
    convolution of ``x`` (float16 as float32) into ``out`` (``plan.out_dtype``, or float32).
    ``packed_filter`` is accepted for the CONV_2D builtins' interface and ignored."""
    w = np.asarray(w)
    x_dtype = np.dtype(x_dtype)
    groups = int(groups)
    if len(x_shape) != 4:
        raise ValueError(f"input: expected rank 4, got shape {tuple(x_shape)}")
    cm.check_rank("filter", w, 4)
    cout, kh, kw, cg = w.shape
    if groups < 1 or cg * groups != x_shape[3] or cout % groups:
        raise ValueError(f"{groups} groups do not fit input depth {x_shape[3]}, filter depth "
                         f"{cg} and {cout} output channels")
    if multipliers not in ("tflite", "aosp"):
        raise ValueError(f"unknown multiplier rule {multipliers!r}")
    pads = (pad_top, pad_bottom, pad_left, pad_right)
    cm.check_conv_geometry(stride_h, stride_w, dilation_h, dilation_w, pads)
    oh = cm.conv_out_size(x_shape[1], kh, stride_h, dilation_h, pad_top, pad_bottom)
    ow = cm.conv_out_size(x_shape[2], kw, stride_w, dilation_w, pad_left, pad_right)
    og = cout // groups
    out_shape = (x_shape[0], oh, ow, cout)
    x_group = (x_shape[0], x_shape[1], x_shape[2], cg)
    out_group = (x_shape[0], oh, ow, og)
    geometry = (stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w)
    rows = [slice(g * og, (g + 1) * og) for g in range(groups)]

    if cm.is_quantized(x_dtype):
        cm.check_dtype("filter", w, (np.uint8, np.int8))
        scales = cm.filter_scales(w_scales, cout)
        float_product = multipliers == "aosp" or (
            x_dtype == np.uint8 and w.dtype == np.uint8 and scales.size == 1)
        mults, shifts = cm.conv_multipliers(in_scale, scales, out_scale, cout, float_product)
        odt = cm.output_dtype(out_dtype, x_dtype)
        lo, hi = cm.quant_clamp(fuse, out_scale, out_zp, odt)
        b = cm.bias_int32(bias, cout)
        plans = [QuantGemmPlan(x_group, out_group, x_dtype, in_zp, np.ascontiguousarray(w[r]),
                               w_zp, b[r], mults[r], shifts[r], out_zp, lo, hi, geometry)
                 for r in rows]
        return GroupedConvPlan(plans, cg, og, odt), out_shape

    if x_dtype not in cm.FLOAT_DTYPES:
        names = ", ".join(np.dtype(a).name for a in cm.FLOAT_DTYPES)
        raise TypeError(f"input: dtype {x_dtype.name} not supported (expected {names})")
    lo, hi = cm.float_clamp(fuse)
    b = cm.bias_float32(bias, cout)
    w32 = np.asarray(w, np.float32)
    plans = [FloatGemmPlan(x_group, out_group, np.ascontiguousarray(w32[r]), b[r], lo, hi,
                           geometry) for r in rows]
    return GroupedConvPlan(plans, cg, og, np.dtype(np.float32)), out_shape


class GroupedConvPlan:
    """One CONV_2D GEMM plan per group, with the buffers the groups' channels are copied
    through (``run(x, out)``; ``bind(x, out)`` as the CONV_2D plans)."""

    def __init__(self, plans, in_depth, out_depth, out_dtype):
        self.plans = plans
        self.in_depth, self.out_depth = in_depth, out_depth
        self.out_dtype = np.dtype(out_dtype)
        self._xg = self._og = None

    def run(self, x, out):
        groups = len(self.plans)
        if groups == 1:
            return self.plans[0].run(np.ascontiguousarray(x), out)
        x = np.asarray(x)
        if self._xg is None or self._xg.shape[:3] != x.shape[:3] \
                or self._xg.dtype != x.dtype:
            self._xg = np.empty(x.shape[:3] + (self.in_depth,), x.dtype)
            self._og = np.empty(out.shape[:3] + (self.out_depth,), out.dtype)
        for g, plan in enumerate(self.plans):
            np.copyto(self._xg, x[..., g * self.in_depth:(g + 1) * self.in_depth])
            plan.run(self._xg, self._og)
            out[..., g * self.out_depth:(g + 1) * self.out_depth] = self._og
        return out

    def bind(self, x, out):
        """A function of no arguments computing ``out`` from the current ``x``."""
        return lambda: self.run(x, out)
