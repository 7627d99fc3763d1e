"""More TFLite-only builtins (LiteRT's kernels of the same names, BUILTIN_REF): ADD_N, CEIL,
ROUND, SIGN, FLOOR_MOD, RELU_0_TO_1, REDUCE_ALL, ONE_HOT, REVERSE_SEQUENCE, MATRIX_DIAG,
MATRIX_SET_DIAG and DYNAMIC_UPDATE_SLICE.

The NNAPI delegate maps none of these, so a node using one always stays on the CPU. Types are
the ones LiteRT's Prepare / Eval accept; any other is refused with UnsupportedOperatorError.
Data-movement builtins copy raw values (quantization parameters pass through unchanged, and
MATRIX_DIAG fills with a raw 0, as LiteRT does). The segment reductions, UNIQUE and the
NON_MAX_SUPPRESSION builtins live in ``tfl_segment``.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels import activations as act
from nnsim.kernels.fixed_point import qrange, round_half_away
from nnsim.tflite.builtins._base import BuiltinOp
from nnsim.tflite.builtins.elementwise import broadcast_shape
from nnsim.tflite.builtins.tfl_math import _SameShape
from nnsim.tflite.options import OneHotOptions, ReducerOptions, ReverseSequenceOptions

_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
_U8, _I8, _I16 = np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16)
_I32, _I64, _BOOL = np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.bool_)
_FLT_MAX = np.finfo(np.float32).max


def _check_type(node, dtype, types, what="type"):
    if dtype not in types:
        raise node.error(f"{what} {dtype.name} is not supported", unsupported=True)


class AddN(BuiltinOp):
    """ADD_N: the sum of two or more same-shaped float32 / int32 tensors.

    LiteRT's only ADD_N kernel is the optimized one: with one thread it copies input 0, then
    adds the others in input order, each addition clamped to the type's finite range (so a
    float32 infinity becomes +-FLT_MAX); int32 sums wrap."""

    def __init__(self, node):
        super().__init__(node)
        self.n = len(node.op.inputs)
        if self.n < 2:
            raise node.error("ADD_N needs at least two inputs")
        self.dtype = node.dtype_in(0)
        _check_type(node, self.dtype, (_F32, _I32))
        if any(node.dtype_in(k) != self.dtype for k in range(self.n)):
            raise node.error("all inputs must have the same type")

    def prepare(self, shapes):
        if any(tuple(s) != tuple(shapes[0]) for s in shapes):
            raise self.error(f"inputs must have the same shape, got {shapes}")
        return [tuple(shapes[0])]

    def eval(self, inputs):
        acc = np.array(inputs[0], dtype=self.dtype, copy=True)
        with np.errstate(over="ignore", invalid="ignore"):
            for x in inputs[1:]:
                np.add(acc, x, out=acc)     # int32 wraps, as the C++ addition
                if self.dtype == _F32:
                    np.clip(acc, -_FLT_MAX, _FLT_MAX, out=acc)
        return [acc]


class Ceil(_SameShape):
    types, quantized = (_F32,), False

    def eval(self, inputs):
        return [np.ceil(inputs[0])]


class Round(_SameShape):
    """ROUND: TFLite's ``RoundToNearest`` (half to even, computed as ``floor`` plus a step;
    NaN and infinities pass through) on float32, and float16 through float32."""

    types, quantized = (_F32, _F16), False

    def eval(self, inputs):
        x = np.asarray(inputs[0], _F32)
        f = np.floor(x)
        with np.errstate(invalid="ignore"):     # infinities and NaN end up as f + 1
            d = x - f       # exact in float32
            even = np.fmod(f, np.float32(2)) == 0
            keep = (d < 0.5) | ((d == 0.5) & even)
        return [np.where(keep, f, f + np.float32(1)).astype(self.dtype)]


class Sign(_SameShape):
    """SIGN: -1, 0 or 1 (NaN stays NaN; -0.0 gives +0) for float32, float64 and int32."""

    types, quantized = (_F32, _F64, _I32), False

    def eval(self, inputs):
        x = inputs[0]
        out = ((x > 0).astype(self.dtype) - (x < 0).astype(self.dtype))
        if self.dtype.kind == "f":
            out = np.where(np.isnan(x), x, out)
        return [out.astype(self.dtype, copy=False)]


class FloorMod(BuiltinOp):
    """FLOOR_MOD: the remainder with the divisor's sign, for int8 / int16 / int32 / int64
    (a zero divisor is an error) and float32 (``fmod`` then one correcting addition).
    Broadcasting goes through LiteRT's 4-D broadcast, so ranks above 4 are refused there."""

    def __init__(self, node):
        super().__init__(node)
        self.dtype = node.dtype_in(0)
        _check_type(node, self.dtype, (_I8, _I16, _I32, _I64, _F32))
        if node.dtype_in(1) != self.dtype or node.dtype_out(0) != self.dtype:
            raise node.error("inputs and output must have the same type")

    def prepare(self, shapes):
        a, b = tuple(shapes[0]), tuple(shapes[1])
        if a != b and max(len(a), len(b)) > 4:
            raise self.error(f"broadcasting FLOOR_MOD supports rank <= 4, got {a} and {b}")
        return [a if a == b else broadcast_shape(self.node, a, b)]

    def eval(self, inputs):
        x, y = inputs[0], inputs[1]
        if self.dtype.kind == "i" and np.any(y == 0):
            raise self.error("division by 0")
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.fmod(x, y)       # C's truncating % / std::fmod
            fix = (r != 0) & ((y < 0) != (r < 0))
            return [np.where(fix, r + y, r).astype(self.dtype, copy=False)]


class Relu0To1(_SameShape):
    """RELU_0_TO_1: ``min(max(x, 0), 1)``; uint8 / int8 rescale as TFLite's QuantizedReluX
    (bounds ``zp`` and ``zp + round(1 / scale)``), here as a table over the 256 inputs."""

    types = (_F32, _U8, _I8)

    def __init__(self, node):
        super().__init__(node)
        self.table = None
        if self.q:
            qmin, qmax = qrange(self.dtype)
            hi = min(qmax, self.q["out_zp"] + round_half_away(
                float(np.float32(1.0) / np.float32(self.q["out_scale"]))))
            values = np.arange(qmin, qmax + 1).astype(self.dtype)
            # RELU's lower bound is TFLite's max(qmin, zp + round(0 / scale)), the same here
            self.table = np.minimum(act.relu(values, **self.q), hi).astype(self.dtype)
            self.qmin = qmin

    def eval(self, inputs):
        x = inputs[0]
        if self.table is not None:
            return [self.table[x.astype(np.int32) - self.qmin]]
        return [np.where(x > 1, np.float32(1), np.where(x < 0, np.float32(0), x))
                .astype(_F32, copy=False)]


def _resolve_axes(node, value, rank):
    """LiteRT ``ResolveAxis``: each axis in [-rank, rank), negatives wrapped, repeats dropped."""
    axes = []
    for a in np.asarray(value).reshape(-1):
        a = int(a)
        if not -rank <= a < max(rank, 1):
            raise node.error(f"axis {a} out of range for rank {rank}")
        a = a + rank if a < 0 else a
        if a not in axes:
            axes.append(a)
    return tuple(sorted(axes))


class ReduceAll(BuiltinOp):
    """REDUCE_ALL: logical AND over the int32 axes of a bool tensor (``keep_dims`` option)."""

    def __init__(self, node):
        super().__init__(node)
        _check_type(node, node.dtype_in(0), (_BOOL,))
        if node.dtype_in(1) != _I32:
            raise node.error("the axis input must be int32", unsupported=True)
        self.keep_dims = bool(node.options(ReducerOptions).keep_dims)

    def _shape(self, shape, axes):
        if len(shape) == 0:
            return ()
        if self.keep_dims:
            return tuple(1 if d in axes else s for d, s in enumerate(shape))
        return tuple(s for d, s in enumerate(shape) if d not in axes)

    def prepare(self, shapes):
        value = self.node.const_input(1)
        if value is None:
            return [None]
        return [self._shape(shapes[0], _resolve_axes(self.node, value, len(shapes[0])))]

    def eval(self, inputs):
        x = inputs[0]
        axes = _resolve_axes(self.node, inputs[1], x.ndim)
        out = np.all(x, axis=axes if x.ndim else None, keepdims=self.keep_dims and x.ndim > 0)
        return [np.asarray(out, _BOOL).reshape(self._shape(x.shape, axes))]


class OneHot(BuiltinOp):
    """ONE_HOT(indices, depth, on_value, off_value): int32 / int64 indices (compared as C
    ``int``), an int32 depth, on / off of the output type (float32, int32, int64, int8,
    uint8, bool); ``axis`` -1 is the last."""

    def __init__(self, node):
        super().__init__(node)
        self.dtype = node.dtype_in(2)
        _check_type(node, self.dtype, (_F32, _I32, _I64, _I8, _U8, _BOOL))
        _check_type(node, node.dtype_in(0), (_I32, _I64), "indices type")
        if node.dtype_in(1) != _I32:
            raise node.error("depth must be int32", unsupported=True)
        if node.dtype_in(3) != self.dtype or node.dtype_out(0) != self.dtype:
            raise node.error("on_value, off_value and output must have the same type")
        self.axis_option = int(node.options(OneHotOptions).axis)

    def _axis(self, rank):
        axis = rank if self.axis_option == -1 else self.axis_option
        if not 0 <= axis <= rank:
            raise self.error(f"axis {self.axis_option} out of range for indices of rank {rank}")
        return axis

    def _depth(self, value):
        depth = int(np.asarray(value).reshape(-1)[0])
        if depth < 0:
            raise self.error(f"depth {depth} is negative")
        return depth

    def prepare(self, shapes):
        if any(int(np.prod(shapes[k])) != 1 for k in (1, 2, 3)):
            raise self.error("depth, on_value and off_value must hold one value each")
        shape = tuple(shapes[0])
        axis = self._axis(len(shape))
        depth = self.node.const_input(1)
        if depth is None:
            return [None]
        return [shape[:axis] + (self._depth(depth),) + shape[axis:]]

    def eval(self, inputs):
        idx = np.asarray(inputs[0]).astype(np.int32)     # static_cast<int>
        axis, depth = self._axis(idx.ndim), self._depth(inputs[1])
        on = np.asarray(inputs[2], self.dtype).reshape(-1)[0]
        off = np.asarray(inputs[3], self.dtype).reshape(-1)[0]
        positions = np.arange(depth, dtype=np.int32).reshape((depth,) + (1,) * (idx.ndim - axis))
        hit = np.expand_dims(idx, axis) == positions
        return [np.where(hit, on, off).astype(self.dtype, copy=False)]


class ReverseSequence(BuiltinOp):
    """REVERSE_SEQUENCE(input, seq_lengths): per batch entry ``b`` (along ``batch_dim``), the
    first ``seq_lengths[b]`` elements along ``seq_dim`` reversed. Types float32, uint8, int16,
    int32, int64; lengths int32 / int64. A length <= 0 leaves the batch entry unchanged (as
    LiteRT's loop); one beyond the dimension is an error (LiteRT checks only the first)."""

    def __init__(self, node):
        super().__init__(node)
        self.dtype = node.dtype_in(0)
        _check_type(node, self.dtype, (_F32, _U8, _I16, _I32, _I64))
        _check_type(node, node.dtype_in(1), (_I32, _I64), "seq_lengths type")
        if node.dtype_out(0) != self.dtype:
            raise node.error("output type differs from the input's")
        opts = node.options(ReverseSequenceOptions)
        self.seq_dim, self.batch_dim = int(opts.seq_dim), int(opts.batch_dim)

    def prepare(self, shapes):
        shape, lengths = tuple(shapes[0]), tuple(shapes[1])
        s, b, rank = self.seq_dim, self.batch_dim, len(shape)
        if len(lengths) != 1:
            raise self.error(f"seq_lengths must be 1-D, got shape {lengths}")
        if not (0 <= s < rank and 0 <= b < rank and s != b):
            raise self.error(f"seq_dim {s} / batch_dim {b} invalid for rank {rank}")
        if lengths[0] != shape[b]:
            raise self.error(f"{lengths[0]} seq_lengths for a batch dimension of {shape[b]}")
        return [shape]

    def eval(self, inputs):
        x, lengths = inputs[0], np.asarray(inputs[1]).astype(np.int64)
        n = x.shape[self.seq_dim]
        if np.any(lengths > n):
            raise self.error(f"seq_lengths {lengths.tolist()} exceed the dimension {n}")
        j = np.arange(n)
        last = lengths[:, None] - 1
        src = np.where(j[None, :] <= last, last - j[None, :], j[None, :])   # (batch, seq)
        moved = np.moveaxis(x, (self.batch_dim, self.seq_dim), (0, 1))
        out = moved[np.arange(len(lengths))[:, None], src]
        return [np.ascontiguousarray(np.moveaxis(out, (0, 1), (self.batch_dim, self.seq_dim)))]


_DIAG_TYPES = (_F32, _I64, _I32, _I16, _I8, _U8)


class MatrixDiag(BuiltinOp):
    """MATRIX_DIAG: ``(..., n) -> (..., n, n)`` with the input on the diagonal, 0 elsewhere."""

    def __init__(self, node):
        super().__init__(node)
        self.dtype = node.dtype_in(0)
        # LiteRT copies any other type as if it were float32 (4-byte elements): refused
        _check_type(node, self.dtype, _DIAG_TYPES)
        if node.dtype_out(0) != self.dtype:
            raise node.error("output type differs from the input's")

    def prepare(self, shapes):
        shape = tuple(shapes[0])
        if len(shape) < 1:
            raise self.error("input needs rank >= 1")
        return [shape + shape[-1:]]

    def eval(self, inputs):
        x = inputs[0]
        n = x.shape[-1]
        out = np.zeros(x.shape + (n,), self.dtype)
        i = np.arange(n)
        out[..., i, i] = x
        return [out]


class MatrixSetDiag(BuiltinOp):
    """MATRIX_SET_DIAG(input, diagonal): the input with its main diagonals (``min(rows, cols)``
    long, one per matrix, read in order) replaced."""

    def __init__(self, node):
        super().__init__(node)
        self.dtype = node.dtype_in(0)
        _check_type(node, self.dtype, _DIAG_TYPES)
        if node.dtype_in(1) != self.dtype or node.dtype_out(0) != self.dtype:
            raise node.error("input, diagonal and output must have the same type")

    def prepare(self, shapes):
        shape = tuple(shapes[0])
        if len(shape) < 2:
            raise self.error("input needs rank >= 2")
        need = int(np.prod(shape[:-2], dtype=np.int64)) * min(shape[-2:])
        if int(np.prod(shapes[1], dtype=np.int64)) != need:   # LiteRT would read past it
            raise self.error(f"diagonal of shape {tuple(shapes[1])} for input {shape}")
        return [shape]

    def eval(self, inputs):
        x, diag = inputs[0], inputs[1]
        k = min(x.shape[-2:])
        out = np.array(x, copy=True)
        i = np.arange(k)
        out[..., i, i] = np.asarray(diag).reshape(x.shape[:-2] + (k,))
        return [out]


class DynamicUpdateSlice(BuiltinOp):
    """DYNAMIC_UPDATE_SLICE(operand, update, start): the operand with ``update`` written at
    ``start`` (int32 / int64), each start clamped to ``[0, dim - update_dim]``; rank <= 8."""

    def __init__(self, node):
        super().__init__(node)
        self.dtype = node.dtype_in(0)
        if node.dtype_in(1) != self.dtype or node.dtype_out(0) != self.dtype:
            raise node.error("operand, update and output must have the same type")
        _check_type(node, node.dtype_in(2), (_I32, _I64), "start index type")

    def prepare(self, shapes):
        shape, upd, start = tuple(shapes[0]), tuple(shapes[1]), tuple(shapes[2])
        if len(start) != 1 or start[0] != len(shape):
            raise self.error(f"start indices of shape {start} for rank {len(shape)}")
        if len(upd) != len(shape) or any(u > d for u, d in zip(upd, shape)):
            raise self.error(f"update of shape {upd} does not fit operand {shape}")
        if len(shape) > 8:
            raise self.error(f"rank {len(shape)} above 8")
        return [shape]

    def eval(self, inputs):
        x, upd = inputs[0], inputs[1]
        start = np.asarray(inputs[2]).astype(np.int64).reshape(-1)
        out = np.array(x, copy=True)
        if upd.size == x.size:
            return [np.array(upd, copy=True).reshape(x.shape)]
        lo = [int(min(max(0, s), d - u)) for s, d, u in zip(start, x.shape, upd.shape)]
        out[tuple(slice(a, a + u) for a, u in zip(lo, upd.shape))] = upd
        return [out]
