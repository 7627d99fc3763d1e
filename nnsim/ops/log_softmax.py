"""LOG_SOFTMAX (OperationCode 64).

Inputs: 0 input, 1 beta (FLOAT32, or FLOAT16 for a float16 input), 2 axis (INT32 in
[-rank, rank)). Output 0: ``(x - max) * beta - log(sum(exp((x - max) * beta)))`` along the
axis, same shape.

Types: float32 / float16 FL3 (T13 LogSoftmax.cpp); float16 computes in float16 as upstream.
"""
from __future__ import annotations

from nnsim.kernels.log_softmax import log_softmax
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.check_counts(3, 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16))
    beta = T.FLOAT16 if t == T.TENSOR_FLOAT16 else T.FLOAT32
    ctx.check_input_types((t, beta, T.INT32))
    ctx.check_output_types((t,))
    return FL3


def _axis(ctx) -> int:
    rank = ctx.input(0).ndim
    axis = int(ctx.scalar(2))
    cm.check(ctx, -rank <= axis < rank, f"axis {axis} out of range for rank {rank}")
    return axis


def prepare(ctx):
    _axis(ctx)
    ctx.set_output_shape(0, ctx.input(0).shape)


def execute(ctx):
    ctx.set_output(0, log_softmax(ctx.input(0), float(ctx.scalar(1)), _axis(ctx)))


SPEC = OperationSpec(OperationCode.LOG_SOFTMAX, validate, prepare, execute)
