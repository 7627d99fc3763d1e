"""ADD, SUB, MUL and FLOOR_DIV on the CPU, with numpy broadcasting (TFLite reference semantics).

float32 and 8-bit quantized types go to ``nnsim.kernels.elementwise``; int32 / int64 are plain
integer arithmetic with the fused activation clamp (TFLite ``CalculateActivationRange<int>``).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels import elementwise as ew
from nnsim.kernels._common import aligned_empty
from nnsim.kernels._common import broadcast_shape as kernel_broadcast_shape
from nnsim.kernels.floor_div import floor_div
from nnsim.tflite.builtins._base import BuiltinOp, fuse_code
from nnsim.tflite.options import AddOptions, MulOptions, SubOptions

_QUANT = (np.dtype(np.uint8), np.dtype(np.int8))
_INT = (np.dtype(np.int32), np.dtype(np.int64))
_INT_CLAMP = {0: (None, None), 1: (0, None), 2: (-1, 1), 3: (0, 6)}


def broadcast_shape(node, a, b):
    """``kernels._common.broadcast_shape`` with the node named in the error."""
    try:
        return kernel_broadcast_shape(a, b)
    except ValueError:
        raise node.error(f"shapes {tuple(a)} and {tuple(b)} do not broadcast") from None


class _Binary(BuiltinOp):
    options_cls = None
    kernel = None
    int_op = None

    def __init__(self, node):
        super().__init__(node)
        opts = node.options(self.options_cls)
        self.fuse = fuse_code(node, opts.fused_activation_function)
        self.dtype = node.dtype_in(0)
        if node.dtype_in(1) != self.dtype:
            raise node.error(f"input types {self.dtype.name} and {node.dtype_in(1).name} "
                             f"differ")
        if self.dtype not in _QUANT + _INT + (np.dtype(np.float32),):
            raise node.error(f"type {self.dtype.name} is not supported", unsupported=True)
        self.q = {}
        self.plan = None
        if self.dtype in _QUANT:
            s1, z1 = node.require_quant(node.input(0))
            s2, z2 = node.require_quant(node.input(1))
            so, zo = node.require_quant(node.output(0))
            self.q = dict(in1_scale=s1, in1_zp=z1, in2_scale=s2, in2_zp=z2, out_scale=so,
                          out_zp=zo, out_dtype=node.dtype_out(0))

    def prepare(self, shapes):
        shape = broadcast_shape(self.node, shapes[0], shapes[1])
        self.plan = None
        if self.dtype not in _INT:
            try:    # TFLite's Prepare: multipliers, clamp and the output buffer once
                self.plan = ew.prepare_binary(type(self).op_code, shapes[0], shapes[1],
                                              self.dtype, self.node.dtype_in(1), fuse=self.fuse,
                                              **self.q)
                self.shapes = (tuple(shapes[0]), tuple(shapes[1]))
                self.out = aligned_empty(self.plan.shape, self.plan.out_dtype)
            except (ValueError, TypeError):
                self.plan = None    # Eval calls the kernel, which raises at invoke time
        return [shape]

    def bind(self, inputs, outputs):
        a, b = inputs[0], inputs[1]
        if self.plan is None or (a.shape, b.shape) != self.shapes or outputs[0] is not self.out:
            return None
        return self.plan.bind(a, b, self.out)

    def eval(self, inputs):
        a, b = inputs[0], inputs[1]
        if self.plan is not None and (a.shape, b.shape) == self.shapes:
            return [self.plan.run(a, b, self.out)]
        if self.dtype in _INT:
            out = type(self).int_op(a, b).astype(self.dtype)
            lo, hi = _INT_CLAMP[self.fuse]
            if lo is not None or hi is not None:
                out = np.clip(out, lo, hi).astype(self.dtype)
            return [out]
        return [type(self).kernel(a, b, fuse=self.fuse, **self.q)]


class Add(_Binary):
    options_cls, kernel, int_op = AddOptions, staticmethod(ew.add), staticmethod(np.add)
    op_code = 0


class Sub(_Binary):
    options_cls, kernel, int_op = SubOptions, staticmethod(ew.sub), staticmethod(np.subtract)
    op_code = 1


class Mul(_Binary):
    options_cls, kernel, int_op = MulOptions, staticmethod(ew.mul), staticmethod(np.multiply)
    op_code = 2


class FloorDiv(BuiltinOp):
    """``floor(double(a) / double(b))`` on raw values (no quantization); b == 0 is an error."""

    _TYPES = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.int16), np.dtype(np.int8))

    def __init__(self, node):
        super().__init__(node)
        self.dtype = node.dtype_in(0)
        if node.dtype_in(1) != self.dtype or self.dtype not in self._TYPES:
            raise node.error(f"types {self.dtype.name}/{node.dtype_in(1).name} are not "
                             f"supported", unsupported=True)

    def prepare(self, shapes):
        return [broadcast_shape(self.node, shapes[0], shapes[1])]

    def eval(self, inputs):
        try:
            return [floor_div(inputs[0], inputs[1])]
        except ZeroDivisionError as e:
            raise self.error(str(e)) from None
