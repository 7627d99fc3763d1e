"""POW (78): ``output = base ** exponent`` elementwise, with broadcasting.

Inputs: 0 base, 1 exponent (same type). Output 0: the broadcast shape (CpuExecutor's
``pow::prepare``: input shapes if equal, else calculateBroadcastedShape). Computed as
``std::pow(float, float)``; float16 is rounded back.

Feature level (T13 common/types/operations/src/Pow.cpp): FLOAT16 / FLOAT32 FL3.
"""
from __future__ import annotations

from nnsim.kernels.float_math import power
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.check_counts(2, 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT16, T.TENSOR_FLOAT32))
    ctx.check_input_types((t, t))
    ctx.check_output_types((t,))
    return FL3


def prepare(ctx):
    cm.set_broadcast_output_shape(ctx)


def execute(ctx):
    ctx.set_output(0, power(ctx.input(0), ctx.input(1)))


SPEC = OperationSpec(OperationCode.POW, validate, prepare, execute)
