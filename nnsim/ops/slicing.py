"""SLICE (86) and STRIDED_SLICE (35).

SLICE inputs: 0 input, 1 begin (TENSOR_INT32 [rank]), 2 size (TENSOR_INT32 [rank], -1 = to the
end). Output: ``size`` (begin + size within the input). Types: float32, float16, int32,
quant8-asymm FL3; quant8-signed FL4 (T13 Slice.cpp).

STRIDED_SLICE inputs: 0 input (rank <= 4), 1 begin, 2 end, 3 strides (TENSOR_INT32 [rank],
strides non-zero), 4 begin_mask, 5 end_mask, 6 shrink_axis_mask (INT32). Output dimension i
is ``ceil((end - begin) / stride)`` after NNAPI's ClampedIndex (masked ends take the full
range); shrunk dimensions (positive stride, exactly one element) are removed, [1] if all are.
Types: float32 / quant8-asymm FL2; float16 FL3; quant8-signed FL4 (T13 StridedSlice.cpp).
Both keep the input's quantization.
"""
from __future__ import annotations

import math

from nnsim.kernels.transform import slice_, strided_slice
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, type_feature_level
from nnsim.types import FL2, FL3, FL4, OperandType, OperationCode

T = OperandType
C = OperationCode
_TYPES = (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED)


def validate(ctx):
    if ctx.code == C.SLICE:
        ctx.check_counts(3, 1)
        t = ctx.check_input_type_in(0, _TYPES + (T.TENSOR_INT32,))
        ctx.check_input_types((t, T.TENSOR_INT32, T.TENSOR_INT32))
        ctx.check_output_types((t,))
        return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3
    ctx.check_counts(7, 1)
    t = ctx.check_input_type_in(0, _TYPES)
    ctx.check_input_types((t,) + (T.TENSOR_INT32,) * 3 + (T.INT32,) * 3)
    ctx.check_output_types((t,))
    ctx.check_rank(0, range(0, 5))
    return max(FL2, type_feature_level(t))


def _vector(ctx, i: int, rank: int) -> list:
    v = ctx.input(i)
    cm.check(ctx, v.ndim == 1 and v.shape[0] == rank, f"input {i} must be a 1-D tensor of {rank}")
    return [int(e) for e in v]


def _clamped_index(index: int, dim: int, positive: bool) -> int:
    """NNAPI ClampedIndex (CpuOperationUtils.h)."""
    if positive:
        return dim if index >= dim else (min(max(index, -dim), dim) % dim if dim else 0)
    return -1 if index < -dim else min(max(index, -dim), dim - 1) % dim


def _strided_shape(ctx) -> tuple:
    shape = ctx.input(0).shape
    rank = len(shape)
    cm.check(ctx, rank <= 4, f"input has rank {rank}, expected <= 4")
    begin, end, strides = (_vector(ctx, i, rank) for i in (1, 2, 3))
    begin_mask, end_mask, shrink = (int(ctx.scalar(i)) for i in (4, 5, 6))
    out = []
    for d in range(rank):
        stride = strides[d]
        cm.check(ctx, stride != 0, f"stride {d} is zero")
        pos = stride > 0
        b = (0 if pos else shape[d] - 1) if begin_mask >> d & 1 else \
            _clamped_index(begin[d], shape[d], pos)
        e = (shape[d] if pos else -1) if end_mask >> d & 1 else \
            _clamped_index(end[d], shape[d], pos)
        n = max(0, math.ceil((e - b) / stride))
        if shrink >> d & 1:
            cm.check(ctx, pos and n == 1, f"shrunk dimension {d} must select one element "
                                          f"with a positive stride")
        else:
            out.append(n)
    return tuple(out) or (1,)


def _slice_shape(ctx) -> tuple:
    shape = ctx.input(0).shape
    cm.check(ctx, len(shape) > 0, "input must have rank >= 1")
    begin, size = _vector(ctx, 1, len(shape)), _vector(ctx, 2, len(shape))
    out = []
    for d, (b, s) in enumerate(zip(begin, size)):
        s = shape[d] - b if s == -1 else s
        cm.check(ctx, 0 <= b <= shape[d] and s >= 0 and b + s <= shape[d],
                 f"slice begin {b} size {s} out of range for dimension {d} of size {shape[d]}")
        out.append(s)
    return tuple(out)


def prepare(ctx):
    ctx.set_output_shape(0, _slice_shape(ctx) if ctx.code == C.SLICE else _strided_shape(ctx))


def execute(ctx):
    x = ctx.input(0)
    if ctx.code == C.SLICE:
        y = slice_(x, ctx.input(1), ctx.input(2))
    else:
        y = strided_slice(x, ctx.input(1), ctx.input(2), ctx.input(3),
                          begin_mask=int(ctx.scalar(4)), end_mask=int(ctx.scalar(5)),
                          shrink_axis_mask=int(ctx.scalar(6)))
    ctx.set_output(0, y)


SLICE = OperationSpec(C.SLICE, validate, prepare, execute, allow_zero_sized_input=True)
STRIDED_SLICE = OperationSpec(C.STRIDED_SLICE, validate, prepare, execute)
