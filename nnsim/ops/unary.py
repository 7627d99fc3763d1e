"""Elementwise unary math: ABS (38), EXP (49), FLOOR (8), LOG (60), NEG (67), RSQRT (83),
SIN (85), SQRT (88).

Inputs: 0 input. Output 0: same shape and type. Float types compute in float32 (float16 is
rounded back); ABS and NEG also take TENSOR_INT32.

Feature levels (T13 common/types/operations/src/Elementwise.cpp, Neg.cpp): FLOOR float32 FL1
(rank <= 4), float16 FL3; EXP, LOG, SIN, SQRT float32 / float16 FL3; ABS float FL3, int32 FL4;
NEG float32 / float16 / int32 FL3; RSQRT float FL3, quant8 (asymm or signed) FL7, which this
runtime (FL5) refuses at finish.
"""
from __future__ import annotations

from nnsim.kernels import unary
from nnsim.kernels.float_math import sin
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL1, FL3, FL4, FL7, OperandType, OperationCode

T = OperandType
C = OperationCode
_FLOATS = (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16)
_KERNELS = {C.ABS: unary.absolute, C.EXP: unary.exp, C.FLOOR: unary.floor, C.LOG: unary.log,
            C.NEG: unary.neg, C.RSQRT: unary.rsqrt, C.SIN: sin, C.SQRT: unary.sqrt}


def validate(ctx):
    ctx.check_counts(1, 1)
    allowed = _FLOATS
    if ctx.code in (C.ABS, C.NEG):
        allowed = _FLOATS + (T.TENSOR_INT32,)
    elif ctx.code == C.RSQRT:
        allowed = _FLOATS + cm.QUANT8_TYPES
    t = ctx.check_input_type_in(0, allowed)
    ctx.check_output_types((t,))
    if ctx.code == C.FLOOR:
        ctx.check_rank(0, range(0, 5))
        return FL1 if t == T.TENSOR_FLOAT32 else FL3
    if ctx.code == C.ABS and t == T.TENSOR_INT32:
        return FL4
    if ctx.code == C.RSQRT and cm.is_quant8(t):
        return FL7
    return FL3


def prepare(ctx):
    x = ctx.input(0)
    if ctx.code == C.FLOOR:
        cm.check(ctx, x.ndim <= 4, f"input has rank {x.ndim}, expected <= 4")
    ctx.set_output_shape(0, x.shape)


def execute(ctx):
    cm.check(ctx, not cm.is_quant8(ctx.input_operand(0).type),
             "quantized RSQRT (feature level 7) is not implemented")
    ctx.set_output(0, _KERNELS[ctx.code](ctx.input(0)))


ABS = OperationSpec(C.ABS, validate, prepare, execute)
EXP = OperationSpec(C.EXP, validate, prepare, execute)
FLOOR = OperationSpec(C.FLOOR, validate, prepare, execute)
LOG = OperationSpec(C.LOG, validate, prepare, execute)
NEG = OperationSpec(C.NEG, validate, prepare, execute)
RSQRT = OperationSpec(C.RSQRT, validate, prepare, execute)
SIN = OperationSpec(C.SIN, validate, prepare, execute)
SQRT = OperationSpec(C.SQRT, validate, prepare, execute)
