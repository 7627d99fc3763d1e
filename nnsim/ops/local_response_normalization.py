"""LOCAL_RESPONSE_NORMALIZATION (OperationCode 13).

Inputs: 0 input (rank <= 4), 1 radius (INT32 >= 0), 2 bias, 3 alpha, 4 beta (FLOAT32, or FLOAT16
for a float16 input), [5 axis (INT32 in [-rank, rank), default -1, FL3)]. Output 0: same shape,
``x * (bias + alpha * sum(x**2 over [i - radius, i + radius])) ** -beta`` along the axis.

Types (T13 LocalResponseNormalization.cpp): float32 FL1 when declared 4-D without the axis
argument, else FL3 (an unknown rank included); float16 FL3.
"""
from __future__ import annotations

from nnsim.kernels.local_response_norm import local_response_normalization
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL1, FL3, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.check_counts((5, 6), 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16))
    scalar = T.FLOAT16 if t == T.TENSOR_FLOAT16 else T.FLOAT32
    level = FL1 if t == T.TENSOR_FLOAT32 else FL3
    # AOSP compares the declared rank with 4, so an unknown rank (0) also needs FL3
    if ctx.num_inputs == 6 or ctx.input_rank(0) != 4:
        level = FL3
    ctx.check_rank(0, range(0, 5))
    ctx.check_input_types((t, T.INT32, scalar, scalar, scalar))
    if ctx.num_inputs == 6:
        ctx.check_input_types((T.INT32,), start=5)
    ctx.check_output_types((t,))
    return level


def _axis(ctx) -> int:
    rank = ctx.input(0).ndim
    axis = int(ctx.scalar(5)) if ctx.num_inputs == 6 else -1
    cm.check(ctx, rank <= 4, f"input rank {rank} is larger than 4")
    cm.check(ctx, -rank <= axis < rank, f"axis {axis} out of range for rank {rank}")
    return axis


def prepare(ctx):
    _axis(ctx)
    cm.check(ctx, int(ctx.scalar(1)) >= 0, f"radius {ctx.scalar(1)} is negative")
    ctx.set_output_shape(0, ctx.input(0).shape)


def execute(ctx):
    radius, bias, alpha, beta = (ctx.scalar(i) for i in range(1, 5))
    ctx.set_output(0, local_response_normalization(ctx.input(0), int(radius), float(bias),
                                                   float(alpha), float(beta), _axis(ctx)))


SPEC = OperationSpec(OperationCode.LOCAL_RESPONSE_NORMALIZATION, validate, prepare, execute)
