"""TFLite-only arithmetic builtins: SQUARE, SQUARED_DIFFERENCE, CUMSUM, GELU, LEAKY_RELU, COS.

The NNAPI delegate maps none of these one-to-one (GELU and CUMSUM have no NNAPI op; SQUARE,
SQUARED_DIFFERENCE and LEAKY_RELU become MUL / SUB + MUL / PRELU, whose quantized rounding
differs; COS becomes SIN(pi/2 - x), which loses precision near the zeros of cos), so a node left on the CPU must compute what LiteRT's own kernels compute.
Quantized parameters (multipliers, tables) are made once, as LiteRT's Prepare makes them.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.cumsum import cumsum
from nnsim.kernels.gelu import gelu, gelu_table
from nnsim.kernels.leaky_relu import leaky_relu
from nnsim.kernels.squared_difference import squared_difference, squared_difference_params
from nnsim.tflite.builtins._base import BuiltinOp
from nnsim.tflite.builtins.elementwise import broadcast_shape
from nnsim.tflite.options import CumsumOptions, GeluOptions, LeakyReluOptions

_F32, _I32, _I64 = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.int64)
_U8, _I8, _I16 = np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16)


class _SameShape(BuiltinOp):
    """One input, one output of the same type and shape; ``types`` are LiteRT's."""

    types: tuple = ()
    quantized = True    # integer types carry input and output quantization

    def __init__(self, node):
        super().__init__(node)
        self.dtype = node.dtype_in(0)
        if self.dtype not in self.types:
            raise node.error(f"type {self.dtype.name} is not supported", unsupported=True)
        if node.dtype_out(0) != self.dtype:
            raise node.error(f"output type {node.dtype_out(0).name} differs from the input's")
        self.q = {}
        if self.dtype.kind in "iu" and self.quantized:
            in_scale, in_zp = node.require_quant(node.input(0))
            out_scale, out_zp = node.require_quant(node.output(0))
            self.q = dict(in_scale=in_scale, in_zp=in_zp, out_scale=out_scale, out_zp=out_zp)

    def prepare(self, shapes):
        return [tuple(shapes[0])]


class Square(_SameShape):
    """``x * x``; LiteRT's SQUARE takes float32 only."""

    types, quantized = (_F32,), False

    def eval(self, inputs):
        x = inputs[0]
        return [np.multiply(x, x, dtype=_F32)]


class Cos(_SameShape):
    """``std::cos`` per element, float32 (LiteRT's COS kernel)."""

    types, quantized = (_F32,), False

    def eval(self, inputs):
        return [np.cos(inputs[0], dtype=_F32)]


class SquaredDifference(BuiltinOp):
    """``(a - b)**2`` with broadcasting: float32, int32, and int8 with TFLite's own rescaling."""

    def __init__(self, node):
        super().__init__(node)
        self.dtype = node.dtype_in(0)
        if self.dtype not in (_F32, _I32, _I8):
            raise node.error(f"type {self.dtype.name} is not supported", unsupported=True)
        if node.dtype_in(1) != self.dtype or node.dtype_out(0) != self.dtype:
            raise node.error("inputs and output must have the same type")
        self.q = {}
        if self.dtype == _I8:
            s1, z1 = node.require_quant(node.input(0))
            s2, z2 = node.require_quant(node.input(1))
            so, zo = node.require_quant(node.output(0))
            self.q = dict(in1_scale=s1, in1_zp=z1, in2_scale=s2, in2_zp=z2, out_scale=so,
                          out_zp=zo)
            try:    # LiteRT aborts (TFLITE_CHECK) where these multipliers are out of range
                squared_difference_params(s1, s2, so)
            except ValueError as e:
                raise node.error(str(e)) from None

    def prepare(self, shapes):
        return [broadcast_shape(self.node, shapes[0], shapes[1])]

    def eval(self, inputs):
        return [squared_difference(inputs[0], inputs[1], **self.q)]


class Cumsum(BuiltinOp):
    """CUMSUM(input, axis): int32 / int64 / float32, the axis an int32 tensor of one value."""

    def __init__(self, node):
        super().__init__(node)
        self.dtype = node.dtype_in(0)
        if self.dtype not in (_F32, _I32, _I64):
            raise node.error(f"type {self.dtype.name} is not supported", unsupported=True)
        if node.dtype_in(1) != _I32:
            raise node.error("the axis input must be int32")
        opts = node.options(CumsumOptions)
        self.exclusive, self.reverse = bool(opts.exclusive), bool(opts.reverse)

    def prepare(self, shapes):
        if len(shapes[0]) < 1 or int(np.prod(shapes[1])) != 1:
            raise self.error(f"input needs rank >= 1 and axis one value, got shapes {shapes}")
        return [tuple(shapes[0])]

    def eval(self, inputs):
        axis = int(np.asarray(inputs[1]).reshape(-1)[0])
        try:
            return [cumsum(inputs[0], axis, exclusive=self.exclusive, reverse=self.reverse)]
        except ValueError as e:
            raise self.error(str(e)) from None


class Gelu(_SameShape):
    """GELU: float32 / float16 computed; uint8 / int8 / int16 through LiteRT's tables (built
    once)."""

    types = (_F32, np.dtype(np.float16), _U8, _I8, _I16)

    def __init__(self, node):
        super().__init__(node)
        self.approximate = bool(node.options(GeluOptions).approximate)
        self.table = None
        if self.q:
            self.table = gelu_table(self.dtype, self.approximate, **self.q)

    def eval(self, inputs):
        return [gelu(inputs[0], approximate=self.approximate, table=self.table)]


class LeakyRelu(_SameShape):
    """LEAKY_RELU: float32, and uint8 / int8 / int16 with TFLite's two-multiplier kernel."""

    types = (_F32, _U8, _I8, _I16)

    def __init__(self, node):
        super().__init__(node)
        self.alpha = float(np.float32(node.options(LeakyReluOptions).alpha))
        if self.dtype == _I16 and (self.q["in_zp"] or self.q["out_zp"]):
            raise node.error("int16 LEAKY_RELU needs zero points of 0")

    def eval(self, inputs):
        return [leaky_relu(inputs[0], self.alpha, **self.q)]
