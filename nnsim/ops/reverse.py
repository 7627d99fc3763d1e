"""REVERSE (OperationCode 105).

Inputs: 0 input (rank 1..8), 1 axis (TENSOR_INT32 of shape [1], in [0, rank); no negative
values). Output 0: the input reversed along that one dimension, same shape, type and
quantization.

Types (T13 common/types/operations/src/Reverse.cpp): float16, float32, quant8-asymm,
quant8-signed, int32; the output of the input's type, scale and zero point; axis of rank 1 with
one element (when known); input and output of one rank when both are known. FL7 for every type,
which this runtime (FL5) refuses at finish.
"""
from __future__ import annotations

from nnsim.kernels import movement
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL7, OperandType, OperationCode

T = OperandType
_TYPES = (T.TENSOR_FLOAT16, T.TENSOR_FLOAT32, T.TENSOR_QUANT8_ASYMM,
          T.TENSOR_QUANT8_ASYMM_SIGNED, T.TENSOR_INT32)


def validate(ctx):
    ctx.check_counts(2, 1)
    t = ctx.check_input_type_in(0, _TYPES)
    ctx.check_input_types((T.TENSOR_INT32,), start=1)
    axis_dims = ctx.input_shape(1)
    if axis_dims:
        ctx.require(len(axis_dims) == 1, f"axis must have rank 1, got {len(axis_dims)}")
        ctx.require(axis_dims[0] in (0, 1), f"axis must have 1 element, got {axis_dims[0]}")
    ctx.check_output_types((t,))
    src, dst = ctx.input(0), ctx.output(0)
    if cm.is_quant8(t):
        ctx.require(ctx.same_quant(src, dst), "output quantization differs from the input's")
    in_rank, out_rank = len(src.dimensions), len(dst.dimensions)
    ctx.require(not in_rank or not out_rank or in_rank == out_rank,
                f"input rank {in_rank} does not match output rank {out_rank}")
    return FL7


def _axis(ctx) -> int:
    x, axis = ctx.input(0), ctx.input(1)
    cm.check(ctx, 1 <= x.ndim <= 8, f"input has rank {x.ndim}, expected 1..8")
    cm.check(ctx, axis.shape == (1,), f"axis must have shape [1], got {list(axis.shape)}")
    value = int(axis[0])
    cm.check(ctx, 0 <= value < x.ndim, f"axis {value} out of range [0, {x.ndim})")
    return value


def prepare(ctx):
    _axis(ctx)
    ctx.set_output_shape(0, ctx.input(0).shape)


def execute(ctx):
    ctx.set_output(0, movement.reverse(ctx.input(0), _axis(ctx)))


SPEC = OperationSpec(OperationCode.REVERSE, validate, prepare, execute)
