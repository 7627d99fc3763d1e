"""RELU, RELU_N1_TO_1, RELU6, LOGISTIC, TANH, HARD_SWISH and SOFTMAX on the CPU.

Quantized RELUs rescale (TFLite ``QuantizedReluX``); LOGISTIC and TANH use TFLite's 256-entry
tables; SOFTMAX uses the fixed-point reference kernel (``BUILTIN_REF``) on the last axis.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels import activations as act
from nnsim.kernels.hard_swish import hard_swish
from nnsim.kernels.softmax import prepare_softmax, softmax
from nnsim.kernels.tanh import tanh
from nnsim.tflite.builtins._base import BuiltinOp
from nnsim.tflite.options import SoftmaxOptions

_QUANT = (np.dtype(np.uint8), np.dtype(np.int8))
_FLOAT = np.dtype(np.float32)


class _Unary(BuiltinOp):
    """Same-shape elementwise op on float32 / uint8 / int8 with in/out quantization."""

    kernel = None

    def __init__(self, node):
        super().__init__(node)
        self.dtype = node.dtype_in(0)
        if self.dtype not in _QUANT + (_FLOAT,):
            raise node.error(f"type {self.dtype.name} is not supported", unsupported=True)
        if node.dtype_out(0) != self.dtype:
            raise node.error(f"output type {node.dtype_out(0).name} differs from the input's")
        self.q = {}
        if self.dtype in _QUANT:
            in_scale, in_zp = node.require_quant(node.input(0))
            out_scale, out_zp = node.require_quant(node.output(0))
            self.q = dict(in_scale=in_scale, in_zp=in_zp, out_scale=out_scale, out_zp=out_zp)

    def prepare(self, shapes):
        return [tuple(shapes[0])]

    def eval(self, inputs):
        return [type(self).kernel(inputs[0], **self.q)]


class Relu(_Unary):
    kernel = staticmethod(act.relu)


class Relu1(_Unary):
    kernel = staticmethod(act.relu1)


class Relu6(_Unary):
    kernel = staticmethod(act.relu6)


class Logistic(_Unary):
    kernel = staticmethod(act.logistic)

    def __init__(self, node):
        super().__init__(node)
        if self.q and abs(self.q["out_scale"] - 1.0 / 256) > 0:
            raise node.error(f"quantized LOGISTIC needs output scale 1/256, got "
                             f"{self.q['out_scale']}")


class Tanh(_Unary):
    kernel = staticmethod(tanh)


class HardSwish(_Unary):
    kernel = staticmethod(hard_swish)


class Softmax(_Unary):
    def __init__(self, node):
        super().__init__(node)
        self.beta = float(node.options(SoftmaxOptions).beta)
        self.plan = None

    def prepare(self, shapes):
        if len(shapes[0]) < 1:
            raise self.error("input must have rank >= 1")
        self.plan = None
        try:    # TFLite's Prepare: parameters and the output buffer once
            self.plan = prepare_softmax(shapes[0], self.dtype, self.beta, **self.q)
        except (ValueError, TypeError):
            self.plan = None    # Eval calls the kernel, which raises at invoke time
        return [tuple(shapes[0])]

    def adopt_output(self, old, new):
        """As BuiltinOp's, for the buffer of the prepared plan."""
        if self.plan is None or self.plan.out is not old:
            return False
        self.plan.out = new
        return True

    def bind(self, inputs, outputs):
        x = inputs[0]
        if self.plan is None or x.shape != self.plan.out.shape or outputs[0] is not self.plan.out:
            return None
        return self.plan.bind(x)

    def eval(self, inputs):
        x = inputs[0]
        if self.plan is not None and x.shape == self.plan.out.shape:
            run = self.plan.bind(np.ascontiguousarray(x))
            if run is not None:
                run()
                return [self.plan.out]
        return [softmax(x, self.beta, axis=-1, **self.q)]
