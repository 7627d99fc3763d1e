"""SPLIT (OperationCode 87).

Inputs: 0 input, 1 axis (INT32 in [-rank, rank)), 2 num_splits (INT32, equal to the number of
outputs and dividing dims[axis]). Outputs: num_splits equal slices along the axis, same
quantization as the input.

Types: float32, float16, int32, quant8-asymm FL3; quant8-signed FL4 (T13 validateOperation
SPLIT; shapes from splitPrepare).
"""
from __future__ import annotations

from nnsim.kernels.split import split
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.require(ctx.num_inputs == 3, f"expected 3 inputs, got {ctx.num_inputs}")
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_INT32,
                                    T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED))
    ctx.check_input_types((t, T.INT32, T.INT32))
    ctx.check_output_types((t,) * ctx.num_outputs)
    return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def _axis(ctx) -> int:
    rank = ctx.input(0).ndim
    axis = int(ctx.scalar(1))
    cm.check(ctx, -rank <= axis < rank, f"axis {axis} out of range for rank {rank}")
    return axis % rank


def prepare(ctx):
    shape = ctx.input(0).shape
    axis, n = _axis(ctx), int(ctx.scalar(2))
    cm.check(ctx, n == ctx.num_outputs, f"num_splits {n} != {ctx.num_outputs} outputs")
    cm.check(ctx, shape[axis] % n == 0, f"dimension {shape[axis]} is not divisible by {n}")
    for i in range(n):
        ctx.set_output_shape(i, shape[:axis] + (shape[axis] // n,) + shape[axis + 1:])


def execute(ctx):
    for i, part in enumerate(split(ctx.input(0), _axis(ctx), ctx.num_outputs)):
        ctx.set_output(i, part)


SPEC = OperationSpec(OperationCode.SPLIT, validate, prepare, execute)
