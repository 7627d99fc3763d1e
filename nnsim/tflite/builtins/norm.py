"""LOCAL_RESPONSE_NORMALIZATION, and the quantized SUM and LOG_SOFTMAX, on the CPU.

These builtins compute what LiteRT's reference kernels compute where NNAPI cannot:

* LOCAL_RESPONSE_NORMALIZATION (float32, 4-D): TFLite's reference kernel sums the squares over
  ``[c - radius, c + radius)``, one element fewer than NNAPI's ``[c - radius, c + radius]``,
  so it cannot run through its NNAPI lowering. (LiteRT's default optimized kernel uses NNAPI's
  window: listing the builtin in ``NNAPI_BACKED`` instead would match that kernel.)
* SUM of uint8 / int8 / int16: NNAPI's REDUCE_SUM is float only. ``reference_ops::
  QuantizedMeanOrSum`` typed for the tensor. LiteRT's ``BUILTIN_REF`` resolver hands int8 and
  int16 tensors to that kernel as uint8 (``reduce.cc``: ``GetTensorData<uint8_t>`` whatever the
  type), so its int8 / int16 outputs are garbage; nnsim computes the typed reference arithmetic
  (for int8, exactly LiteRT's uint8 result on the data shifted by 128).
* LOG_SOFTMAX of uint8 / int8: NNAPI's LOG_SOFTMAX is float only; TFLite's fixed-point
  reference kernel (output scale 16/256, zero point 255 / 127, checked as TFLite's Prepare).

Float SUM and LOG_SOFTMAX keep running through their NNAPI lowering (``NnapiBacked``).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.local_response_norm import local_response_normalization
from nnsim.kernels.log_softmax_quant import (OUTPUT_SCALE, log_softmax_params,
                                              log_softmax_quantized)
from nnsim.kernels.reduce_sum_quant import sum_quantized
from nnsim.tflite.builtins._base import BuiltinOp
from nnsim.tflite.builtins.nnapi_backed import NnapiBacked
from nnsim.tflite.options import LocalResponseNormalizationOptions, ReducerOptions
from nnsim.tflite.schema import BuiltinOperator as B

__all__ = ["BUILTINS", "LocalResponseNorm", "Sum", "LogSoftmax"]

_FLOAT = np.dtype(np.float32)
_QUANT8 = (np.dtype(np.uint8), np.dtype(np.int8))
_SUM_QUANT = _QUANT8 + (np.dtype(np.int16),)


class LocalResponseNorm(BuiltinOp):
    """TFLite ``reference_ops::LocalResponseNormalization`` (float32, 4-D, last axis)."""

    def __init__(self, node):
        super().__init__(node)
        self.opts = node.options(LocalResponseNormalizationOptions)
        if node.dtype_in(0) != _FLOAT or node.dtype_out(0) != _FLOAT:
            raise node.error(f"type {node.dtype_in(0).name} is not supported (float32 only)",
                             unsupported=True)

    def prepare(self, shapes):
        if len(shapes[0]) != 4:
            raise self.error(f"input must be 4-D, got shape {tuple(shapes[0])}")
        return [tuple(shapes[0])]

    def eval(self, inputs):
        o = self.opts
        return [local_response_normalization(inputs[0], o.radius, o.bias, o.alpha, o.beta, -1,
                                             variant="tflite")]


class _QuantizedOrNnapi(BuiltinOp):
    """A builtin whose float forms run through NNAPI (``self.nnapi``) and whose quantized
    forms (``quant_types``) have their own kernel."""

    quant_types: tuple = ()

    def __init__(self, node):
        super().__init__(node)
        self.dtype = node.dtype_in(0)
        self.nnapi = None
        if self.dtype not in self.quant_types:
            self.nnapi = NnapiBacked(node)   # UnsupportedOperatorError if NNAPI cannot
            return
        if node.dtype_out(0) != self.dtype:
            raise node.error(f"output type {node.dtype_out(0).name} differs from the input's")
        self.in_scale, self.in_zp = node.require_quant(node.input(0))
        self.out_scale, self.out_zp = node.require_quant(node.output(0))

    def prepare(self, shapes):
        if self.nnapi is not None:
            return self.nnapi.prepare(shapes)
        return self.prepare_quantized(shapes)

    def eval(self, inputs):
        if self.nnapi is not None:
            return self.nnapi.eval(inputs)
        return self.eval_quantized(inputs)


class Sum(_QuantizedOrNnapi):
    """SUM: quantized ``QuantizedMeanOrSum`` (uint8 / int8 / int16), float via NNAPI."""

    quant_types = _SUM_QUANT

    def __init__(self, node):
        super().__init__(node)
        self.keep_dims = bool(node.options(ReducerOptions).keep_dims)
        if self.nnapi is None and self.dtype == np.int16 and (self.in_zp or self.out_zp):
            raise node.error("int16 SUM needs zero points 0 (TFLite reduce.cc)")

    def _reduced(self, axes, rank):
        axes = [int(a) for a in np.asarray(axes).reshape(-1)]
        for a in axes:
            if not -rank <= a < rank:
                raise self.error(f"invalid axis {a} for rank {rank}")
        return axes, {a % rank for a in axes}

    def prepare_quantized(self, shapes):
        axes = self.node.const_input(1)
        if axes is None:
            return [None]    # the output shape depends on the axes' values
        shape = tuple(shapes[0])
        _, reduced = self._reduced(axes, len(shape))
        if self.keep_dims:
            return [tuple(1 if d in reduced else s for d, s in enumerate(shape))]
        return [tuple(s for d, s in enumerate(shape) if d not in reduced)]

    def eval_quantized(self, inputs):
        x, axes = inputs[0], inputs[1]
        axes, _ = self._reduced(axes, x.ndim)
        return [sum_quantized(x, axes, self.keep_dims, in_scale=self.in_scale,
                              in_zp=self.in_zp, out_scale=self.out_scale, out_zp=self.out_zp)]


class LogSoftmax(_QuantizedOrNnapi):
    """LOG_SOFTMAX: the fixed-point reference kernel (uint8 / int8), float via NNAPI."""

    quant_types = _QUANT8

    def __init__(self, node):
        super().__init__(node)
        if self.nnapi is None:
            zp = 255 if self.dtype == np.uint8 else 127
            if np.float32(self.out_scale) != np.float32(OUTPUT_SCALE) or self.out_zp != zp:
                raise node.error(f"output quantization must be scale 16/256 and zero point "
                                 f"{zp}, got {self.out_scale} and {self.out_zp}")
            try:    # TFLite's Prepare (a TFLITE_CHECK there)
                log_softmax_params(self.in_scale)
            except ValueError as e:
                raise node.error(str(e)) from None

    def prepare_quantized(self, shapes):
        if len(shapes[0]) < 1:
            raise self.error("input must have rank >= 1")
        return [tuple(shapes[0])]

    def eval_quantized(self, inputs):
        return [log_softmax_quantized(inputs[0], self.in_scale)]


BUILTINS = {
    B.LOCAL_RESPONSE_NORMALIZATION: LocalResponseNorm,
    B.SUM: Sum,
    B.LOG_SOFTMAX: LogSoftmax,
}
