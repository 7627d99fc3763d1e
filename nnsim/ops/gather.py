"""GATHER (OperationCode 51).

Inputs: 0 input, 1 axis (INT32 in [-rank, rank)), 2 indices (TENSOR_INT32, each in
[0, dims[axis]), checked at execution). Output 0: ``dims[:axis] + indices.dims +
dims[axis+1:]``, same quantization as the input.

Types: float32, float16, int32, quant8-asymm FL3; quant8-signed FL4 (T13 Gather.cpp).
"""
from __future__ import annotations

from nnsim.kernels.transform import gather
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType
TYPES = (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_INT32, T.TENSOR_QUANT8_ASYMM,
         T.TENSOR_QUANT8_ASYMM_SIGNED)


def validate(ctx):
    ctx.check_counts(3, 1)
    t = ctx.check_input_type_in(0, TYPES)
    ctx.check_input_types((t, T.INT32, T.TENSOR_INT32))
    ctx.check_output_types((t,))
    return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def axis_argument(ctx, rank: int) -> int:
    """Input 1 as an axis in [0, rank) (handleNegativeAxis); OP_FAILED when out of range."""
    axis = int(ctx.scalar(1))
    cm.check(ctx, -rank <= axis < rank, f"axis {axis} out of range for rank {rank}")
    return axis % rank


def prepare(ctx):
    shape = ctx.input(0).shape
    axis = axis_argument(ctx, len(shape))
    ctx.set_output_shape(0, shape[:axis] + ctx.input(2).shape + shape[axis + 1:])


def execute(ctx):
    x = ctx.input(0)
    y = gather(x, ctx.input(2), axis=axis_argument(ctx, x.ndim))
    ctx.set_output(0, y.reshape(ctx.output_shapes[0]))


SPEC = OperationSpec(OperationCode.GATHER, validate, prepare, execute)
