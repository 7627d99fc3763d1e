"""TFLite-only shape, generation and data-movement builtins: SHAPE, ZEROS_LIKE, BROADCAST_TO,
RANGE, WHERE, UNPACK, SPLIT, SPLIT_V, SCATTER_ND and DENSIFY (LiteRT's kernels of the same
names).

Parameter inputs (a shape, an axis, sizes) are usually constants: the output shapes are then
known in prepare, as LiteRT knows them. When one is computed at run time, prepare returns None
(LiteRT's dynamic tensors) and the shapes come out of eval. Data movement copies raw values:
quantization parameters pass through unchanged.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.scatter_nd import scatter_nd, scatter_nd_shape_check
from nnsim.tflite.builtins._base import BuiltinOp, nothing
from nnsim.tflite.options import ShapeOptions, SplitOptions, SplitVOptions, UnpackOptions
from nnsim.tflite.schema import TensorType
from nnsim.tflite.sparsity import dense_value

_I32, _I64 = np.dtype(np.int32), np.dtype(np.int64)


def _types(*names):
    return tuple(np.dtype(n) for n in names)


class _Typed(BuiltinOp):
    """A builtin whose input 0 must have one of ``types`` (LiteRT's Prepare check)."""

    types: tuple = ()
    data_input = 0

    def __init__(self, node):
        super().__init__(node)
        self.dtype = node.dtype_in(self.data_input)
        if self.types and self.dtype not in self.types:
            raise node.error(f"type {self.dtype.name} is not supported", unsupported=True)

    def const(self, k):
        return self.node.const_input(k)

    def axis(self, value, rank):
        """An axis value from a tensor, normalised (LiteRT: ``axis < 0 ? axis + rank``)."""
        axis = int(np.asarray(value).reshape(-1)[0])
        if not -rank <= axis < rank:
            raise self.error(f"axis {axis} out of range for rank {rank}")
        return axis % rank


class Shape(BuiltinOp):
    """The input's dimensions as a 1-D int32 / int64 tensor (``out_type``)."""

    def __init__(self, node):
        super().__init__(node)
        out_type = node.options(ShapeOptions).out_type
        if out_type not in (TensorType.INT32, TensorType.INT64):
            raise node.error(f"out_type {TensorType(out_type).name} is not INT32 or INT64")
        self.out_dtype = _I32 if out_type == TensorType.INT32 else _I64
        if node.dtype_out(0) != self.out_dtype:
            raise node.error(f"output tensor type {node.dtype_out(0).name} differs from "
                             f"out_type {self.out_dtype.name}")

    def prepare(self, shapes):
        return [(len(shapes[0]),)]

    def eval(self, inputs):
        return [np.array(inputs[0].shape, self.out_dtype)]


class ZerosLike(_Typed):
    types = _types(np.int64, np.int32, np.float32)

    def prepare(self, shapes):
        return [tuple(shapes[0])]

    def eval(self, inputs):
        return [np.zeros(inputs[0].shape, self.dtype)]


class BroadcastTo(_Typed):
    def __init__(self, node):
        super().__init__(node)
        if node.dtype_in(1) not in (_I32, _I64):
            raise node.error("the shape input must be int32 or int64")
        if node.dtype_out(0) != self.dtype:
            raise node.error("input and output types differ")

    def _shape(self, in_shape, value):
        value = np.asarray(value)
        if value.ndim != 1:
            raise self.error(f"shape input must be 1-D, got shape {value.shape}")
        out = tuple(int(d) for d in value)
        extra = len(out) - len(in_shape)
        if extra < 0 or any(d != 1 and d != out[extra + k] for k, d in enumerate(in_shape)):
            raise self.error(f"output shape {out} must be broadcastable from input shape "
                             f"{tuple(in_shape)}")
        return out

    def prepare(self, shapes):
        value = self.const(1)
        return [None if value is None else self._shape(shapes[0], value)]

    def eval(self, inputs):
        shape = self._shape(inputs[0].shape, inputs[1])
        return [np.ascontiguousarray(np.broadcast_to(inputs[0], shape))]


class Range(_Typed):
    """``start, start + delta, ...`` up to ``limit`` (excluded): int32, int64 or float32
    scalars. The values are a running sum (``value += delta``), rounded at each step."""

    types = _types(np.int32, np.int64, np.float32)

    def __init__(self, node):
        super().__init__(node)
        if any(node.dtype_in(k) != self.dtype for k in (1, 2)):
            raise node.error("start, limit and delta must have the same type")

    def _size(self, start, limit, delta):
        if delta == 0 or not ((start >= limit and delta < 0) or (start <= limit and delta > 0)):
            raise self.error(f"invalid range: start {start}, limit {limit}, delta {delta}")
        if self.dtype.kind == "f":
            return int(np.ceil(np.abs((limit - start) / delta)))
        return int((abs(int(limit) - int(start)) + abs(int(delta)) - 1) // abs(int(delta)))

    def _values(self, inputs):
        start, limit, delta = (np.asarray(v, self.dtype).reshape(()) for v in inputs[:3])
        steps = np.full(self._size(start, limit, delta), delta, self.dtype)
        if steps.size:
            steps[0] = start
        return np.cumsum(steps, dtype=self.dtype)   # sequential, as the C++ loop

    def prepare(self, shapes):
        if any(len(s) != 0 for s in shapes[:3]):
            raise self.error(f"start, limit and delta must be scalars, got shapes {shapes}")
        consts = [self.const(k) for k in range(3)]
        if any(c is None for c in consts):
            return [None]
        return [(self._size(*(np.asarray(c, self.dtype).reshape(()) for c in consts)),)]

    def eval(self, inputs):
        return [self._values(inputs)]


class Where(_Typed):
    """The coordinates of the non-zero elements, row-major: an int64 ``(count, rank)``."""

    types = _types(np.bool_, np.float32, np.int64, np.int32, np.int8, np.uint8, np.uint32)

    def prepare(self, shapes):
        cond = self.const(0)
        if cond is None:
            return [None]
        return [(int(np.count_nonzero(cond)), len(shapes[0]))]

    def eval(self, inputs):
        if inputs[0].ndim == 0:
            raise self.error("WHERE requires a condition of rank > 0")
        return [np.argwhere(inputs[0]).astype(np.int64)]


class Unpack(_Typed):
    types = _types(np.int32, np.float32, np.float16, np.uint8, np.int8, np.int16, np.bool_)

    def __init__(self, node):
        super().__init__(node)
        opts = node.options(UnpackOptions)
        self.num, self.axis_value = opts.num, opts.axis
        if len(node.op.outputs) != self.num:
            raise node.error(f"{len(node.op.outputs)} outputs for num = {self.num}")
        q_in = node.quant(node.input(0))
        for k in range(self.num):
            if node.dtype_out(k) != self.dtype or node.quant(node.output(k)) != q_in:
                raise node.error(f"output {k} must have the input's type and quantization")

    def prepare(self, shapes):
        shape = tuple(shapes[0])
        axis = self.axis(self.axis_value, len(shape))
        if int(np.prod(shape)) == 0 or shape[axis] != self.num:
            raise self.error(f"cannot unpack shape {shape} into {self.num} on axis {axis}")
        return [shape[:axis] + shape[axis + 1:]] * self.num

    def eval(self, inputs):
        x = inputs[0]
        axis = self.axis(self.axis_value, x.ndim)
        return [np.ascontiguousarray(np.take(x, k, axis=axis)) for k in range(self.num)]


class _Split(_Typed):
    """SPLIT and SPLIT_V: slices of the input along an axis given by a tensor."""

    types = _types(np.float32, np.uint8, np.int8, np.int16, np.int32, np.int64)
    axis_input = 0
    params = ()

    def __init__(self, node):
        super().__init__(node)
        if len(node.op.outputs) != self.num:
            raise node.error(f"{len(node.op.outputs)} outputs for num_splits = {self.num}")
        if any(node.dtype_out(k) != self.dtype for k in range(self.num)):
            raise node.error("outputs must have the input's type")

    def sizes(self, dim, values):
        raise NotImplementedError

    def _plan(self, in_shape, values):
        axis = self.axis(values[self.axis_input], len(in_shape))
        return axis, self.sizes(in_shape[axis], values)

    def prepare(self, shapes):
        values = {k: self.const(k) for k in self.params}
        if any(v is None for v in values.values()):
            return [None] * self.num
        axis, sizes = self._plan(shapes[self.data_input], values)
        shape = list(shapes[self.data_input])
        return [tuple(shape[:axis] + [s] + shape[axis + 1:]) for s in sizes]

    def eval(self, inputs):
        x = inputs[self.data_input]
        axis, sizes = self._plan(x.shape, {k: inputs[k] for k in self.params})
        bounds = np.cumsum(sizes)[:-1]
        return [np.ascontiguousarray(p) for p in np.split(x, bounds, axis=axis)]


class Split(_Split):
    """SPLIT: ``num_splits`` equal parts; the axis is input 0 and the data input 1."""

    data_input, axis_input, params = 1, 0, (0,)

    def __init__(self, node):
        self.num = node.options(SplitOptions).num_splits
        super().__init__(node)

    def sizes(self, dim, values):
        if self.num == 0 or dim % self.num:
            raise self.error(f"cannot split a dimension of {dim} into {self.num} equal parts")
        return [dim // self.num] * self.num


class SplitV(_Split):
    """SPLIT_V: parts of the sizes in input 1 (one may be -1: the rest); the axis is input 2."""

    data_input, axis_input, params = 0, 2, (1, 2)

    def __init__(self, node):
        self.num = node.options(SplitVOptions).num_splits
        super().__init__(node)
        if node.dtype_in(1) not in (_I32, _I64):
            raise node.error("size_splits must be int32 or int64")

    def sizes(self, dim, values):
        sizes = [int(s) for s in np.asarray(values[1]).reshape(-1)]
        if len(sizes) != self.num:
            raise self.error(f"{len(sizes)} size_splits for {self.num} outputs")
        if sizes.count(-1) > 1:
            raise self.error("size_splits contains more than one -1")
        known = sum(s for s in sizes if s != -1)
        if -1 in sizes:
            if known > dim:
                raise self.error(f"size_splits {sizes} exceed the dimension {dim}")
            sizes[sizes.index(-1)] = dim - known
        elif known != dim:
            raise self.error(f"size_splits {sizes} do not sum to the dimension {dim}")
        if any(s < 0 for s in sizes):
            raise self.error(f"negative size in size_splits {sizes}")
        return sizes


class ScatterNd(BuiltinOp):
    """SCATTER_ND(indices, updates, shape): int32 indices and shape."""

    def __init__(self, node):
        super().__init__(node)
        if node.dtype_in(0) != _I32 or node.dtype_in(2) != _I32:
            raise node.error("indices and shape must be int32", unsupported=True)
        self.dtype = node.dtype_in(1)
        if self.dtype not in _types(np.float32, np.uint8, np.bool_, np.int8, np.int64,
                                    np.int32):
            raise node.error(f"updates of type {self.dtype.name} are not supported",
                             unsupported=True)

    def prepare(self, shapes):
        shape = self.node.const_input(2)
        if shape is None:
            return [None]
        try:
            scatter_nd_shape_check(shapes[0], shapes[1], np.asarray(shape).reshape(-1))
        except ValueError as e:
            raise self.error(str(e)) from None
        return [tuple(int(d) for d in np.asarray(shape).reshape(-1))]

    def eval(self, inputs):
        try:
            return [scatter_nd(inputs[0], inputs[1], np.asarray(inputs[2]).reshape(-1))]
        except (ValueError, IndexError) as e:
            raise self.error(str(e)) from None


class Densify(BuiltinOp):
    """DENSIFY: the dense value of the sparse constant input 0 (float32, float16 or int8).

    The input is constant, so the value is computed once, here; LiteRT likewise densifies on
    the first Eval into a persistent output and then returns at once."""

    def __init__(self, node):
        super().__init__(node)
        if len(node.op.inputs) != 1 or len(node.op.outputs) != 1:
            raise node.error("DENSIFY takes one input and one output")
        t = node.require_input(0)
        if t.data is None or t.sparsity is None:
            raise node.error(f"input tensor {t.index} '{t.name}' is not a sparse constant")
        if t.type not in (TensorType.FLOAT32, TensorType.FLOAT16, TensorType.INT8):
            raise node.error(f"type {t.type.name} is not supported", unsupported=True)
        if node.output(0).type != t.type:
            raise node.error(f"output type {node.output(0).type.name} differs from the input "
                             f"type {t.type.name}")
        try:
            self.value = dense_value(t)
        except ValueError as e:   # the reader checked the sparsity: a kernel bug
            raise node.error(f"cannot densify tensor {t.index} '{t.name}': {e}") from None
        self.value.flags.writeable = False

    def prepare(self, shapes):
        return [self.value.shape]

    def eval(self, inputs):
        return [self.value]

    def bind(self, inputs, outputs):
        return nothing if outputs[0] is self.value else None
