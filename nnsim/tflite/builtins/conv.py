"""CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED on the CPU (TFLite reference semantics).

TFLite SAME/VALID padding becomes explicit (before, after) padding for the kernels; the fused
activation clamps in the output domain; uint8 uses per-tensor quantization, int8 per-channel
(or per-tensor) symmetric filters. A CONV_2D whose input depth is a multiple of the filter depth
is a grouped convolution (TFLite's reference Conv / ConvPerChannel: ``nnsim.kernels.grouped_conv``
with TFLite's multipliers). Hybrid CONV_2D (float input, per-tensor int8 weights) runs
TFLite's HybridConv; other hybrid variants are refused. Quantized FULLY_CONNECTED uses
LiteRT's single-rounding requantization (``nnsim.kernels.fc_quant``).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels._common import aligned_empty
from nnsim.kernels.conv import conv_2d, pack_filter, prepare_conv_2d
from nnsim.kernels.depthwise import depthwise_conv_2d, prepare_depthwise_conv_2d
from nnsim.kernels.fc_quant import fully_connected_quant
from nnsim.kernels.fully_connected import fully_connected
from nnsim.kernels.grouped_conv import grouped_conv_2d, prepare_grouped_conv_2d
from nnsim.kernels.hybrid_conv import hybrid_conv_2d, pack_hybrid_filter
from nnsim.tflite.builtins._base import BuiltinOp, fuse_code, tflite_padding
from nnsim.tflite.options import (Conv2DOptions, DepthwiseConv2DOptions,
                                  FullyConnectedOptions)
from nnsim.tflite.schema import FullyConnectedOptionsWeightsFormat

_QUANT = (np.dtype(np.uint8), np.dtype(np.int8))


class _Weighted(BuiltinOp):
    """Shared set-up of the three weighted ops: quantization of input, weights and output."""

    def _setup_quant(self, allow_hybrid=False):
        node = self.node
        x_t, w_t = node.require_input(0), node.require_input(1)
        self.x_dtype, self.w_dtype = node.dtype_in(0), node.dtype_in(1)
        self.plan = None
        self.quantized = self.x_dtype in _QUANT
        self.hybrid = (allow_hybrid and self.x_dtype == np.float32
                       and self.w_dtype == np.int8)
        if self.hybrid:
            wq = w_t.quantization
            if wq is None or wq.scales.size == 0 or np.any(wq.zero_points != 0):
                raise node.error("hybrid int8 weights need symmetric quantization")
            if np.any(wq.scales != wq.scales[0]):
                raise node.error("hybrid convolution with per-channel weight scales is not "
                                 "supported", unsupported=True)
            self.q = dict(w_scale=float(wq.scales[0]))
            self.bias = node.const_input(2)
            return
        if not self.quantized and self.w_dtype != self.x_dtype:
            raise node.error(f"hybrid {self.x_dtype.name} input with {self.w_dtype.name} "
                             f"weights is not supported", unsupported=True)
        if self.x_dtype not in _QUANT + (np.dtype(np.float32),):
            raise node.error(f"input type {self.x_dtype.name} is not supported",
                             unsupported=True)
        self.q = {}
        if self.quantized:
            wq = w_t.quantization
            if wq is None or wq.scales.size == 0:
                raise node.error("quantized weights without quantization parameters")
            in_scale, in_zp = node.require_quant(x_t)
            out_scale, out_zp = node.require_quant(node.output(0))
            self.q = dict(in_scale=in_scale, in_zp=in_zp, w_scales=np.asarray(wq.scales),
                          w_zp=int(wq.zero_points[0]), out_scale=out_scale, out_zp=out_zp,
                          out_dtype=node.dtype_out(0))
        self.bias = node.const_input(2)

    def _plan(self, x_shape, prepare, **kwargs):
        """Record the kernel's plan for this input shape (TFLite's Prepare work: multipliers,
        packed filter, folded bias, buffers). It is built once, at the first Eval, so a pass
        that only needs shapes (``graph``, ``explain``, the delegate's preview of a node it
        then takes) packs no filter and allocates no buffer."""
        self.plan = self.out = None
        self.plan_x_shape = tuple(x_shape)
        self._pending = (prepare, kwargs)

    def _ensure_plan(self, x_shape) -> None:
        """Build the recorded plan when ``x_shape`` is the prepared one; none (the kernel is
        called at each Eval) when filter or bias are computed at run time."""
        pending, self._pending = getattr(self, "_pending", None), None
        if pending is None or tuple(x_shape) != self.plan_x_shape:
            return
        prepare, kwargs = pending
        w = self.node.const_input(1)
        if w is None or (self.node.input(2) is not None and self.bias is None):
            return
        try:
            plan, out_shape = prepare(self.plan_x_shape, self.x_dtype, w, self.bias, **kwargs,
                                      **self.q)
        except (ValueError, TypeError):
            return  # Eval calls the kernel, which raises the same error at invoke time
        # aligned as TFLite's arena (kDefaultTensorAlignment): whole-line vector stores
        self.plan, self.out = plan, aligned_empty(out_shape, plan.out_dtype)

    def bind(self, inputs, outputs):
        x = inputs[0]
        self._ensure_plan(x.shape)
        if self.plan is None or x.shape != self.plan_x_shape or not x.flags.c_contiguous \
                or outputs[0] is not self.out:
            return None
        return self.plan.bind(x, self.out)

    def _run_plan(self, x):
        """The output from the prepared plan (into the same buffer at every Eval, as TFLite's
        arena), or None when there is no plan for this input."""
        self._ensure_plan(x.shape)
        if self.plan is None or x.shape != self.plan_x_shape:
            return None
        return self.plan.run(np.ascontiguousarray(x), self.out)


class Conv2D(_Weighted):
    def __init__(self, node):
        super().__init__(node)
        self.opts = node.options(Conv2DOptions)
        if node.input(2) is None:
            raise node.error("a bias input is required (TFLite conv.cc: has_bias)")
        self.fuse = fuse_code(node, self.opts.fused_activation_function)
        self._setup_quant(allow_hybrid=True)
        w = node.const_input(1)
        self.packed = None
        if w is not None:
            if self.hybrid:
                self.packed = pack_hybrid_filter(w)
            else:
                self.packed = pack_filter(w)

    def _geometry(self, x_shape, w_shape):
        o = self.opts
        if len(x_shape) != 4 or len(w_shape) != 4:
            raise self.error(f"input {x_shape} and filter {w_shape} must be 4-D")
        # TFLite conv.cc: the input depth is a multiple of the filter depth (groups), and the
        # output channels a multiple of the groups; only the reference kernels run groups.
        cin, fcin = x_shape[3], w_shape[3]
        if fcin <= 0 or cin % fcin or w_shape[0] % max(cin // fcin, 1):
            raise self.error(f"input depth {cin} is not a multiple of filter depth {fcin} "
                             f"with {w_shape[0]} output channels a multiple of the groups")
        self.groups = cin // fcin
        if self.groups != 1 and self.hybrid:
            raise self.error("grouped hybrid convolution is not supported (TFLite conv.cc)")
        oh, pt, pb = tflite_padding(o.padding, x_shape[1], w_shape[1], o.stride_h,
                                    o.dilation_h_factor)
        ow, pl, pr = tflite_padding(o.padding, x_shape[2], w_shape[2], o.stride_w,
                                    o.dilation_w_factor)
        return (x_shape[0], oh, ow, w_shape[0]), dict(
            stride_h=o.stride_h, stride_w=o.stride_w, pad_top=pt, pad_bottom=pb,
            pad_left=pl, pad_right=pr, dilation_h=o.dilation_h_factor,
            dilation_w=o.dilation_w_factor)

    def prepare(self, shapes):
        out_shape, self.geo = self._geometry(shapes[0], shapes[1])
        self.plan = None
        if self.groups != 1:
            self._plan(shapes[0], prepare_grouped_conv_2d, groups=self.groups, fuse=self.fuse,
                       **self.geo)
        elif not self.hybrid:
            self._plan(shapes[0], prepare_conv_2d, fuse=self.fuse, packed_filter=self.packed,
                       **self.geo)
        return [out_shape]

    def eval(self, inputs):
        x, w, bias = inputs[0], inputs[1], inputs[2] if len(inputs) > 2 else None
        out = None if self.hybrid else self._run_plan(x)
        if out is not None:
            return [out]
        if self.groups != 1:
            return [grouped_conv_2d(x, w, bias, groups=self.groups, fuse=self.fuse, **self.geo,
                                    **self.q)]
        kernel = hybrid_conv_2d if self.hybrid else conv_2d
        return [kernel(x, w, bias, fuse=self.fuse, packed_filter=self.packed, **self.geo,
                       **self.q)]


class DepthwiseConv2D(_Weighted):
    def __init__(self, node):
        super().__init__(node)
        self.opts = node.options(DepthwiseConv2DOptions)
        self.fuse = fuse_code(node, self.opts.fused_activation_function)
        self._setup_quant()

    def prepare(self, shapes):
        x_shape, w_shape = shapes[0], shapes[1]
        o = self.opts
        if len(x_shape) != 4 or len(w_shape) != 4 or w_shape[0] != 1:
            raise self.error(f"input {x_shape} must be 4-D and filter {w_shape} [1,H,W,C]")
        if x_shape[3] == 0 or w_shape[3] % x_shape[3]:
            raise self.error(f"filter depth {w_shape[3]} is not a multiple of input depth "
                             f"{x_shape[3]}")
        # TFLite computes the multiplier from the shapes (ComputeDepthMultiplier).
        self.multiplier = w_shape[3] // x_shape[3]
        oh, pt, pb = tflite_padding(o.padding, x_shape[1], w_shape[1], o.stride_h,
                                    o.dilation_h_factor)
        ow, pl, pr = tflite_padding(o.padding, x_shape[2], w_shape[2], o.stride_w,
                                    o.dilation_w_factor)
        self.geo = dict(stride_h=o.stride_h, stride_w=o.stride_w, pad_top=pt, pad_bottom=pb,
                        pad_left=pl, pad_right=pr, dilation_h=o.dilation_h_factor,
                        dilation_w=o.dilation_w_factor)
        self._plan(x_shape, prepare_depthwise_conv_2d, depth_multiplier=self.multiplier,
                   fuse=self.fuse, **self.geo)
        return [(x_shape[0], oh, ow, w_shape[3])]

    def eval(self, inputs):
        x, w, bias = inputs[0], inputs[1], inputs[2] if len(inputs) > 2 else None
        out = self._run_plan(x)
        if out is not None:
            return [out]
        return [depthwise_conv_2d(x, w, bias, depth_multiplier=self.multiplier, fuse=self.fuse,
                                  **self.geo, **self.q)]


class FullyConnected(_Weighted):
    def __init__(self, node):
        super().__init__(node)
        self.opts = node.options(FullyConnectedOptions)
        if self.opts.weights_format != FullyConnectedOptionsWeightsFormat.DEFAULT:
            raise node.error(f"weights format {self.opts.weights_format.name} is not "
                             f"supported", unsupported=True)
        self.fuse = fuse_code(node, self.opts.fused_activation_function)
        self._setup_quant()

    def prepare(self, shapes):
        x_shape, w_shape = shapes[0], shapes[1]
        if len(w_shape) != 2:
            raise self.error(f"weights must be 2-D, got {w_shape}")
        units, size = w_shape
        total = int(np.prod(x_shape, dtype=np.int64))
        if size == 0 or total % size:
            raise self.error(f"input {x_shape} does not flatten to rows of {size}")
        self.batches = total // size
        if self.opts.keep_num_dims:
            if x_shape[-1] != size:
                raise self.error(f"keep_num_dims needs the last input dim {x_shape[-1]} to "
                                 f"equal the weights' input size {size}")
            self.out_shape = tuple(x_shape[:-1]) + (units,)
        else:
            self.out_shape = (self.batches, units)
        return [self.out_shape]

    def eval(self, inputs):
        x, w, bias = inputs[0], inputs[1], inputs[2] if len(inputs) > 2 else None
        kernel = fully_connected_quant if self.quantized else fully_connected
        out = kernel(np.reshape(x, (self.batches, w.shape[1])), w, bias, fuse=self.fuse,
                     **self.q)
        return [out.reshape(self.out_shape)]
