"""MEAN and ARG_MAX / ARG_MIN on the CPU (TFLite reference semantics)."""
from __future__ import annotations

import numpy as np

from nnsim.kernels.argminmax import arg_max, arg_min
from nnsim.kernels.reduce import mean, prepare_mean
from nnsim.tflite.builtins._base import BuiltinOp, is_view_of
from nnsim.tflite.options import ReducerOptions

_QUANT = (np.dtype(np.uint8), np.dtype(np.int8))


def _axes(node, value, rank):
    axes = [int(a) for a in np.asarray(value).reshape(-1)]
    for a in axes:
        if not -rank <= a < rank:
            raise node.error(f"axis {a} out of range for rank {rank}")
    return sorted({a % rank for a in axes}), axes


class Mean(BuiltinOp):
    def __init__(self, node):
        super().__init__(node)
        self.keep_dims = bool(node.options(ReducerOptions).keep_dims)
        self.dtype = node.dtype_in(0)
        if self.dtype not in _QUANT + (np.dtype(np.float32),):
            raise node.error(f"type {self.dtype.name} is not supported", unsupported=True)
        self.q = {}
        self.plan = None
        if self.dtype in _QUANT:
            in_scale, in_zp = node.require_quant(node.input(0))
            out_scale, out_zp = node.require_quant(node.output(0))
            self.q = dict(in_scale=in_scale, in_zp=in_zp, out_scale=out_scale, out_zp=out_zp)

    def _out_shape(self, shape, axes_value):
        reduced, _ = _axes(self.node, axes_value, len(shape))
        if self.keep_dims:
            return tuple(1 if d in reduced else s for d, s in enumerate(shape))
        return tuple(s for d, s in enumerate(shape) if d not in reduced)

    def prepare(self, shapes):
        axes = self.node.const_input(1)
        self.plan = None
        if axes is None:
            return [None]
        out_shape = self._out_shape(shapes[0], axes)
        try:    # TFLite's Prepare: multipliers and buffers once
            self.plan = prepare_mean(shapes[0], self.dtype, _axes(self.node, axes,
                                                                  len(shapes[0]))[1],
                                     self.keep_dims, variant="reference", **self.q)
            self.x_shape = tuple(shapes[0])
        except (ValueError, TypeError):
            self.plan = None    # Eval calls the kernel, which raises at invoke time
        return [out_shape]

    def bind(self, inputs, outputs):
        x = inputs[0]
        if self.plan is None or x.shape != self.x_shape or \
                not is_view_of(outputs[0], self.plan.out):
            return None
        return self.plan.bind(x)

    def eval(self, inputs):
        x, axes = inputs[0], inputs[1]
        if self.plan is not None and x.shape == self.x_shape:
            return [self.plan.run(x)]
        _, raw = _axes(self.node, axes, x.ndim)
        return [mean(x, raw, self.keep_dims, variant="reference", **self.q)]


class _ArgMinMax(BuiltinOp):
    kernel = None

    def __init__(self, node):
        super().__init__(node)
        self.out_dtype = node.dtype_out(0)
        if self.out_dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
            raise node.error(f"output type {self.out_dtype.name} is not supported",
                             unsupported=True)

    def _axis(self, value, rank):
        value = np.asarray(value).reshape(-1)
        if value.size != 1:
            raise self.error(f"axis must hold one value, got {value.size}")
        axis = int(value[0])
        if not -rank <= axis < rank:
            raise self.error(f"axis {axis} out of range for rank {rank}")
        return axis % rank

    def prepare(self, shapes):
        value = self.node.const_input(1)
        if value is None:
            return [None]
        axis = self._axis(value, len(shapes[0]))
        return [tuple(s for d, s in enumerate(shapes[0]) if d != axis)]

    def eval(self, inputs):
        x = inputs[0]
        axis = self._axis(inputs[1], x.ndim)
        return [type(self).kernel(x, axis, out_dtype=self.out_dtype)]


class ArgMax(_ArgMinMax):
    kernel = staticmethod(arg_max)


class ArgMin(_ArgMinMax):
    kernel = staticmethod(arg_min)
