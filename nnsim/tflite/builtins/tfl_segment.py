"""TFLite-only builtins that group or select: SEGMENT_SUM, UNSORTED_SEGMENT_SUM / MAX / MIN /
PROD, UNIQUE and NON_MAX_SUPPRESSION_V4 / V5 (LiteRT's kernels, BUILTIN_REF).

Segment reductions accumulate in input order, one C++ operation per element (``ufunc.at``
is sequential), so float32 sums and products round as LiteRT's loops do; int32 wraps. Output
shapes that depend on tensor values (segment ids, a run-time ``num_segments`` or
``max_output_size``, UNIQUE's count) are known in prepare only when those inputs are
constant, as in LiteRT; otherwise prepare returns None for them.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.non_max_suppression import non_max_suppression
from nnsim.tflite.builtins._base import BuiltinOp
from nnsim.tflite.options import UniqueOptions
from nnsim.tflite.schema import TensorType

_F32, _I32, _I64 = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.int64)
_U8, _I8, _I16 = np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16)


class _Segment(BuiltinOp):
    """Data float32 / int32, int32 segment ids; ``num_inputs`` inputs."""

    num_inputs = 2

    def __init__(self, node):
        super().__init__(node)
        self.dtype = node.dtype_in(0)
        if self.dtype not in (_F32, _I32):
            raise node.error(f"type {self.dtype.name} is not supported", unsupported=True)
        if any(node.dtype_in(k) != _I32 for k in range(1, self.num_inputs)):
            raise node.error("segment ids (and num_segments) must be int32", unsupported=True)
        if node.dtype_out(0) != self.dtype:
            raise node.error("output type differs from the data type")

    def prepare(self, shapes):
        values = [self.node.const_input(k) for k in range(1, self.num_inputs)]
        if any(v is None for v in values):
            return [None]
        return [self.out_shape(tuple(shapes[0]), *values)]


class SegmentSum(_Segment):
    """SEGMENT_SUM(data, segment_ids): sorted ids starting at 0, each the same as or one more
    than the previous; ``output[s] = sum of data[i] with ids[i] == s``."""

    def out_shape(self, shape, ids):
        ids = np.asarray(ids)
        if len(shape) < 1 or ids.ndim != 1 or ids.size != shape[0]:
            raise self.error(f"segment ids of shape {ids.shape} for data of shape {shape}")
        if ids.size and (ids[0] != 0 or np.any(np.diff(ids.astype(np.int64)) > 1)
                         or np.any(np.diff(ids.astype(np.int64)) < 0)):
            raise self.error("segment ids must start at 0 and grow by 0 or 1")
        return (int(ids[-1]) + 1 if ids.size else 0,) + shape[1:]

    def eval(self, inputs):
        x, ids = inputs[0], np.asarray(inputs[1])
        out = np.zeros(self.out_shape(x.shape, ids), self.dtype)
        np.add.at(out, ids, x)
        return [out]


class _UnsortedSegment(_Segment):
    """UNSORTED_SEGMENT_*(data, segment_ids, num_segments): ids shaped like a prefix of the
    data's shape; negative ids are skipped; empty segments hold the reduction's identity."""

    num_inputs = 3
    ufunc = None
    initial = None

    def out_shape(self, shape, ids, num):
        ids, num = np.asarray(ids), np.asarray(num)
        if ids.ndim > len(shape) or ids.shape != shape[:ids.ndim]:
            raise self.error(f"segment ids of shape {ids.shape} for data of shape {shape}")
        if num.size != 1 or num.ndim > 1:
            raise self.error(f"num_segments must be a scalar or a single value, got {num.shape}")
        n = int(num.reshape(-1)[0])
        if n < 0 or (ids.size and int(ids.max()) >= n):
            raise self.error(f"segment ids up to {int(ids.max()) if ids.size else -1} "
                             f"for num_segments {n}")
        return (n,) + shape[ids.ndim:]

    def eval(self, inputs):
        x, ids = inputs[0], np.asarray(inputs[1])
        shape = self.out_shape(x.shape, ids, inputs[2])
        init = self.initial(self.dtype) if callable(self.initial) else self.initial
        out = np.full(shape, init, self.dtype)
        keep = ids.reshape(-1) >= 0
        rows = x.reshape((ids.size,) + shape[1:])[keep]
        type(self).ufunc.at(out, ids.reshape(-1)[keep], rows)
        return [out]


def _lowest(dtype):
    return -np.finfo(dtype).max if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    return np.finfo(dtype).max if dtype.kind == "f" else np.iinfo(dtype).max


class UnsortedSegmentSum(_UnsortedSegment):
    ufunc, initial = np.add, 0


class UnsortedSegmentProd(_UnsortedSegment):
    ufunc, initial = np.multiply, 1


class UnsortedSegmentMax(_UnsortedSegment):
    # std::max(acc, x) keeps acc when x is NaN, as fmax does (acc is never NaN)
    ufunc, initial = np.fmax, staticmethod(_lowest)


class UnsortedSegmentMin(_UnsortedSegment):
    ufunc, initial = np.fmin, staticmethod(_highest)


class Unique(BuiltinOp):
    """UNIQUE(x) -> (values, idx): the distinct values of a 1-D tensor in order of first
    appearance, and each element's position among them (``idx_out_type`` int32 / int64).
    Types int8, int16, int32, int64, float32, uint8. Float keys compare as ``std::map``
    does (-0.0 equals 0.0, the first seen is kept); NaN keys are not supported there."""

    def __init__(self, node):
        super().__init__(node)
        self.dtype = node.dtype_in(0)
        if self.dtype not in (_I8, _I16, _I32, _I64, _F32, _U8):
            raise node.error(f"type {self.dtype.name} is not supported", unsupported=True)
        idx_type = node.options(UniqueOptions).idx_out_type
        if idx_type not in (TensorType.INT32, TensorType.INT64):
            raise node.error(f"idx_out_type {TensorType(idx_type).name} is not INT32 or INT64",
                             unsupported=True)
        self.idx_dtype = _I32 if idx_type == TensorType.INT32 else _I64
        if node.dtype_out(0) != self.dtype or node.dtype_out(1) != self.idx_dtype:
            raise node.error("output types must be the input's and idx_out_type")

    def prepare(self, shapes):
        if len(shapes[0]) != 1:
            raise self.error(f"input must be 1-D, got shape {tuple(shapes[0])}")
        return [None, tuple(shapes[0])]

    def eval(self, inputs):
        x = inputs[0]
        if self.dtype.kind == "f" and np.isnan(x).any():
            raise self.error("NaN values are not supported (std::map keys)")
        _, first, inverse = np.unique(x, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")   # sorted groups -> order of appearance
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        return [x[first[order]], rank[inverse.reshape(-1)].astype(self.idx_dtype)]


class _NonMaxSuppression(BuiltinOp):
    """NON_MAX_SUPPRESSION_V4 / V5: float32 boxes (n, 4) and scores (n,), scalar int32
    max_output_size and float32 thresholds (and sigma for V5)."""

    soft = False

    def __init__(self, node):
        super().__init__(node)
        n_in = 6 if self.soft else 5
        if len(node.op.inputs) != n_in or len(node.op.outputs) != n_in - 3:
            raise node.error(f"expects {n_in} inputs and {n_in - 3} outputs")
        want = [_F32, _F32, _I32, _F32, _F32] + ([_F32] if self.soft else [])
        for k, dt in enumerate(want):
            if node.dtype_in(k) != dt:
                raise node.error(f"input {k} must be {dt.name}, got {node.dtype_in(k).name}",
                                 unsupported=True)
        outs = [_I32, _F32, _I32] if self.soft else [_I32, _I32]
        for k, dt in enumerate(outs):
            if node.dtype_out(k) != dt:
                raise node.error(f"output {k} must be {dt.name}")

    def prepare(self, shapes):
        boxes, scores = tuple(shapes[0]), tuple(shapes[1])
        if len(boxes) != 2 or boxes[1] != 4 or scores != boxes[:1]:
            raise self.error(f"boxes {boxes} and scores {scores}: want (n, 4) and (n,)")
        if any(len(shapes[k]) != 0 for k in range(2, len(shapes))):
            raise self.error("max_output_size, thresholds and sigma must be scalars")
        size = self.node.const_input(2)
        sel = None
        if size is not None:
            sel = (self._max_size(size),)
        return [sel, sel, ()] if self.soft else [sel, ()]

    def _max_size(self, value):
        m = int(np.asarray(value).reshape(-1)[0])
        if m < 0:
            raise self.error(f"max_output_size {m} is negative")
        return m

    def eval(self, inputs):
        sigma = np.asarray(inputs[5], _F32).reshape(()) if self.soft else 0.0
        try:
            idx, scores, n = non_max_suppression(
                inputs[0], inputs[1], self._max_size(inputs[2]),
                np.asarray(inputs[3], _F32).reshape(()),
                np.asarray(inputs[4], _F32).reshape(()), sigma)
        except ValueError as e:
            raise self.error(str(e)) from None
        count = np.array(n, np.int32)
        return [idx, scores, count] if self.soft else [idx, count]


class NonMaxSuppressionV4(_NonMaxSuppression):
    soft = False


class NonMaxSuppressionV5(_NonMaxSuppression):
    soft = True
