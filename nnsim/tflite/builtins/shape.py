"""Shape and data-movement ops on the CPU: RESHAPE, SQUEEZE, CONCATENATION, PAD, TRANSPOSE,
SLICE, STRIDED_SLICE, GATHER, GATHER_ND and CAST.

Parameter inputs (a shape, a permutation, begin/end ...) are usually constants: the output
shape is then known at prepare time. When one is computed at run time the output is dynamic
(prepare returns None and the interpreter prepares the node again before running it).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels import transform as tr
from nnsim.kernels.cast import cast
from nnsim.kernels.pad import pad
from nnsim.kernels.reshape import concatenation
from nnsim.tflite.builtins._base import BuiltinOp, dummy, fuse_code, is_view_of, nothing
from nnsim.tflite.options import (ConcatenationOptions, GatherOptions, ReshapeOptions,
                                  SqueezeOptions, StridedSliceOptions)

_QUANT = (np.dtype(np.uint8), np.dtype(np.int8))


class _Movement(BuiltinOp):
    """An op whose output shape follows from running it on zero-strided dummies once the
    parameter inputs (``params``) are constant."""

    params: tuple = ()

    def prepare(self, shapes):
        args = []
        for k, shape in enumerate(shapes):
            const = self.node.const_input(k)
            if const is not None:
                args.append(const)
            elif k in self.params:
                return [None] * len(self.node.op.outputs)
            else:
                args.append(dummy(shape, self.node.dtype_in(k)))
        return [tuple(out.shape) for out in self.eval(args)]

    def run(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (IndexError, ValueError, TypeError) as e:
            raise self.error(str(e)) from None


class Reshape(BuiltinOp):
    def __init__(self, node):
        super().__init__(node)
        shape_t = node.input(1)
        self.from_tensor = shape_t is not None and len(shape_t.shape) == 1 \
            and node.dtype_in(1) in (np.dtype(np.int32), np.dtype(np.int64))
        opts = node.op.options
        self.new_shape = self.in_shape = None
        if not self.from_tensor:
            if not isinstance(opts, ReshapeOptions) or opts.new_shape is None:
                raise node.error("no shape input and no new_shape option")
            self.new_shape = list(opts.new_shape)
            if self.new_shape == [0]:
                self.new_shape = []  # legacy scalar spelling

    def _resolve(self, in_shape, spec):
        spec = [int(d) for d in spec]
        total = int(np.prod(in_shape, dtype=np.int64))
        if spec.count(-1) > 1:
            raise self.error(f"shape {spec} has more than one -1")
        known = int(np.prod([d for d in spec if d != -1], dtype=np.int64))
        if -1 in spec:
            if known == 0 or total % known:
                raise self.error(f"cannot reshape {tuple(in_shape)} to {spec}")
            spec = [total // known if d == -1 else d for d in spec]
        if int(np.prod(spec, dtype=np.int64)) != total:
            raise self.error(f"cannot reshape {tuple(in_shape)} ({total} elements) to "
                             f"{tuple(spec)}")
        return tuple(spec)

    def _spec(self, value=None):
        if not self.from_tensor:
            return self.new_shape
        return np.asarray(value if value is not None else self.node.const_input(1)).reshape(-1)

    def prepare(self, shapes):
        self.in_shape = None
        if self.from_tensor and self.node.const_input(1) is None:
            return [None]
        self.out_shape = self._resolve(shapes[0], self._spec())
        self.in_shape = tuple(shapes[0])
        return [self.out_shape]

    def bind(self, inputs, outputs):
        return nothing if is_view_of(outputs[0], inputs[0]) else None

    def eval(self, inputs):
        if inputs[0].shape == self.in_shape:   # constant shape, resolved in prepare
            return [inputs[0].reshape(self.out_shape)]
        spec = self._spec(inputs[1] if self.from_tensor else None)
        return [np.reshape(inputs[0], self._resolve(inputs[0].shape, spec))]


class Squeeze(BuiltinOp):
    def __init__(self, node):
        super().__init__(node)
        self.axes = list(node.options(SqueezeOptions).squeeze_dims or ())

    def prepare(self, shapes):
        return [self.eval([dummy(shapes[0], np.int8)])[0].shape]

    def bind(self, inputs, outputs):
        return nothing if is_view_of(outputs[0], inputs[0]) else None

    def eval(self, inputs):
        try:
            return [tr.squeeze(inputs[0], self.axes)]
        except ValueError as e:
            raise self.error(str(e)) from None


class Concatenation(BuiltinOp):
    def __init__(self, node):
        super().__init__(node)
        opts = node.options(ConcatenationOptions)
        if fuse_code(node, opts.fused_activation_function):
            raise node.error("a fused activation on CONCATENATION is not supported",
                             unsupported=True)
        self.axis = opts.axis
        self.dtype = node.dtype_out(0)
        self.q = {}
        if self.dtype in _QUANT:
            out = node.require_quant(node.output(0))
            ins = [node.require_quant(node.tensor(i)) for i in node.op.inputs]
            if self.dtype == np.int8 and any(q != out for q in ins):
                raise node.error("int8 inputs must share the output's scale and zero point")
            self.q = dict(in_scales=[s for s, _ in ins], in_zps=[z for _, z in ins],
                          out_scale=out[0], out_zp=out[1])

    def prepare(self, shapes):
        rank = len(shapes[0])
        if not -rank <= self.axis < rank:
            raise self.error(f"axis {self.axis} out of range for rank {rank}")
        axis = self.axis % rank
        out = list(shapes[0])
        for s in shapes[1:]:
            if len(s) != rank or any(a != b for d, (a, b) in enumerate(zip(s, shapes[0]))
                                     if d != axis):
                raise self.error(f"input shapes {shapes} do not concatenate on axis {axis}")
            out[axis] += s[axis]
        return [tuple(out)]

    def eval(self, inputs):
        return [concatenation(inputs, self.axis, **self.q)]


class Pad(BuiltinOp):
    def __init__(self, node):
        super().__init__(node)
        self.value = 0
        if node.dtype_in(0) in _QUANT:
            self.value = node.require_quant(node.output(0))[1]

    def _paddings(self, value, rank):
        p = np.asarray(value).reshape(-1, 2) if np.asarray(value).size else np.zeros((0, 2))
        if p.shape[0] != rank or (p < 0).any():
            raise self.error(f"paddings {p.tolist()} invalid for rank {rank}")
        return p

    def prepare(self, shapes):
        value = self.node.const_input(1)
        if value is None:
            return [None]
        p = self._paddings(value, len(shapes[0]))
        return [tuple(int(d + a + b) for d, (a, b) in zip(shapes[0], p))]

    def eval(self, inputs):
        return [pad(inputs[0], self._paddings(inputs[1], inputs[0].ndim),
                    pad_value=self.value)]


class Transpose(_Movement):
    params = (1,)

    def eval(self, inputs):
        return [self.run(tr.transpose, inputs[0], inputs[1])]


class Slice(_Movement):
    params = (1, 2)

    def eval(self, inputs):
        return [self.run(tr.slice_, inputs[0], inputs[1], inputs[2])]


class StridedSlice(_Movement):
    params = (1, 2, 3)

    def __init__(self, node):
        super().__init__(node)
        o = node.options(StridedSliceOptions)
        self.masks = dict(begin_mask=o.begin_mask, end_mask=o.end_mask,
                          ellipsis_mask=o.ellipsis_mask, new_axis_mask=o.new_axis_mask,
                          shrink_axis_mask=o.shrink_axis_mask, offset=bool(o.offset))

    def eval(self, inputs):
        strides = inputs[3] if len(inputs) > 3 and inputs[3] is not None \
            else np.ones(np.asarray(inputs[1]).size, np.int32)
        return [self.run(tr.strided_slice, inputs[0], inputs[1], inputs[2], strides,
                         **self.masks)]


class Gather(_Movement):
    params = ()

    def __init__(self, node):
        super().__init__(node)
        o = node.options(GatherOptions)
        self.axis, self.batch_dims = o.axis, o.batch_dims

    def eval(self, inputs):
        return [self.run(tr.gather, inputs[0], inputs[1], self.axis, self.batch_dims)]


class GatherNd(_Movement):
    params = ()

    def eval(self, inputs):
        return [self.run(tr.gather_nd, inputs[0], inputs[1])]


class Cast(BuiltinOp):
    def __init__(self, node):
        super().__init__(node)
        self.out_dtype = node.dtype_out(0)

    def prepare(self, shapes):
        return [tuple(shapes[0])]

    def eval(self, inputs):
        try:
            return [cast(inputs[0], self.out_dtype)]
        except TypeError as e:
            raise self.error(str(e)) from None
