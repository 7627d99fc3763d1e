"""LOGICAL_AND (61), LOGICAL_OR (63), LOGICAL_NOT (62).

LOGICAL_AND / LOGICAL_OR: inputs 0 input1, 1 input2 (TENSOR_BOOL8; shapes broadcast); output 0
TENSOR_BOOL8 of the broadcast shape. LOGICAL_NOT: input 0 TENSOR_BOOL8; output 0 the same shape.
A byte is true when non-zero; outputs are 0 / 1.

Feature level FL3 (T13 common/types/operations/src/LogicalAndOr.cpp, LogicalNot.cpp).
"""
from __future__ import annotations

from nnsim.kernels import logical
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, OperandType, OperationCode

T = OperandType
C = OperationCode


def validate(ctx):
    n = 1 if ctx.code == C.LOGICAL_NOT else 2
    ctx.check_counts(n, 1)
    ctx.check_input_type_in(0, (T.TENSOR_BOOL8,))
    ctx.check_input_types((T.TENSOR_BOOL8,) * n)
    ctx.check_output_types((T.TENSOR_BOOL8,))
    return FL3


def prepare(ctx):
    if ctx.code == C.LOGICAL_NOT:
        ctx.set_output_shape(0, ctx.input_shape(0))
        return
    cm.set_broadcast_output_shape(ctx)


def execute(ctx):
    if ctx.code == C.LOGICAL_NOT:
        out = logical.logical_not(ctx.input(0))
    elif ctx.code == C.LOGICAL_AND:
        out = logical.logical_and(ctx.input(0), ctx.input(1))
    else:
        out = logical.logical_or(ctx.input(0), ctx.input(1))
    ctx.set_output(0, out)


LOGICAL_AND = OperationSpec(C.LOGICAL_AND, validate, prepare, execute)
LOGICAL_OR = OperationSpec(C.LOGICAL_OR, validate, prepare, execute)
LOGICAL_NOT = OperationSpec(C.LOGICAL_NOT, validate, prepare, execute)
