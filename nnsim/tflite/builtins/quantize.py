"""QUANTIZE (float -> q, and q -> q requantization) and DEQUANTIZE on the CPU."""
from __future__ import annotations

import numpy as np

from nnsim.kernels._common import aligned_empty
from nnsim.kernels.quantize import dequantize, prepare_requantize, quantize
from nnsim.tflite.builtins._base import BuiltinOp

_QUANT = (np.dtype(np.uint8), np.dtype(np.int8))


class Quantize(BuiltinOp):
    def __init__(self, node):
        super().__init__(node)
        self.in_dtype, self.out_dtype = node.dtype_in(0), node.dtype_out(0)
        if self.out_dtype not in _QUANT:
            raise node.error(f"output type {self.out_dtype.name} is not supported",
                             unsupported=True)
        out_scale, out_zp = node.require_quant(node.output(0))
        self.out = self.plan = None
        if self.in_dtype == np.float32:
            self.fn = lambda x: quantize(x, out_scale=out_scale, out_zp=out_zp,
                                         out_dtype=self.out_dtype)
        elif self.in_dtype in _QUANT:
            in_scale, in_zp = node.require_quant(node.input(0))
            self.plan = prepare_requantize(in_scale=in_scale, in_zp=in_zp,
                                           out_scale=out_scale, out_zp=out_zp,
                                           out_dtype=self.out_dtype)
            self.fn = lambda x: self.plan.run(x, self._buffer(x.shape))
        else:
            raise node.error(f"input type {self.in_dtype.name} is not supported",
                             unsupported=True)

    def prepare(self, shapes):
        return [tuple(shapes[0])]

    def _buffer(self, shape):
        """The output array, reused at every Eval while the shape stays (TFLite's arena)."""
        if self.out is None or self.out.shape != shape:
            self.out = aligned_empty(shape, self.out_dtype)
        return self.out

    def eval(self, inputs):
        return [self.fn(inputs[0])]

    def bind(self, inputs, outputs):
        x = inputs[0]
        if self.plan is None or outputs[0] is not self.out or not x.flags.c_contiguous:
            return None
        return self.plan.bind(x, self.out)


class Dequantize(BuiltinOp):
    def __init__(self, node):
        super().__init__(node)
        self.in_dtype = node.dtype_in(0)
        if node.dtype_out(0) != np.float32:
            raise node.error(f"output type {node.dtype_out(0).name} is not supported",
                             unsupported=True)
        t = node.input(0)
        q = t.quantization
        if self.in_dtype == np.float16:
            self.fn = lambda x: np.asarray(x).astype(np.float32)
        elif self.in_dtype in _QUANT + (np.dtype(np.int16),):
            if q is None or q.scales.size == 0:
                raise node.error("quantized input without quantization parameters")
            if q.per_channel:
                if np.any(q.zero_points != 0):
                    raise node.error("per-channel dequantization with non-zero zero points "
                                     "is not supported", unsupported=True)
                scales, axis = np.asarray(q.scales), q.quantized_dimension
                self.fn = lambda x: dequantize(x, channel_scales=scales, channel_axis=axis)
            else:
                scale, zp = float(q.scales[0]), int(q.zero_points[0])
                self.fn = lambda x: dequantize(x, in_scale=scale, in_zp=zp)
        else:
            raise node.error(f"input type {self.in_dtype.name} is not supported",
                             unsupported=True)

    def prepare(self, shapes):
        return [tuple(shapes[0])]

    def eval(self, inputs):
        return [self.fn(inputs[0])]
