"""EQUAL (48), GREATER (53), GREATER_EQUAL (54), LESS (58), LESS_EQUAL (59), NOT_EQUAL (75).

Inputs: 0 input1, 1 input2 (same type; shapes broadcast). Output 0: TENSOR_BOOL8 of the
broadcast shape. Quantized inputs may have different scales and zero points: both sides are
dequantized in float32 and compared as floats (``Comparisons.cpp``).

Feature levels (T13 common/types/operations/src/Comparisons.cpp): TENSOR_BOOL8, FLOAT16,
FLOAT32, INT32 and QUANT8_ASYMM FL3; QUANT8_ASYMM_SIGNED FL4. No rank limit.
"""
from __future__ import annotations

from nnsim.kernels import compare
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType
C = OperationCode
_TYPES = (T.TENSOR_BOOL8, T.TENSOR_FLOAT16, T.TENSOR_FLOAT32, T.TENSOR_INT32,
          T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED)
_OPS = {C.EQUAL: compare.EQUAL, C.NOT_EQUAL: compare.NOT_EQUAL, C.GREATER: compare.GREATER,
        C.GREATER_EQUAL: compare.GREATER_EQUAL, C.LESS: compare.LESS,
        C.LESS_EQUAL: compare.LESS_EQUAL}


def validate(ctx):
    ctx.check_counts(2, 1)
    t = ctx.check_input_type_in(0, _TYPES)
    ctx.check_input_types((t, t))
    ctx.check_output_types((T.TENSOR_BOOL8,))
    return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def prepare(ctx):
    cm.set_broadcast_output_shape(ctx)


def execute(ctx):
    kwargs = {}
    if cm.is_quant8(ctx.input_operand(0).type):
        a, b = ctx.input_operand(0), ctx.input_operand(1)
        kwargs = dict(in1_scale=a.scale, in1_zp=a.zero_point, in2_scale=b.scale,
                      in2_zp=b.zero_point)
    ctx.set_output(0, compare.compare(_OPS[ctx.code], ctx.input(0), ctx.input(1), **kwargs))


EQUAL = OperationSpec(C.EQUAL, validate, prepare, execute)
NOT_EQUAL = OperationSpec(C.NOT_EQUAL, validate, prepare, execute)
GREATER = OperationSpec(C.GREATER, validate, prepare, execute)
GREATER_EQUAL = OperationSpec(C.GREATER_EQUAL, validate, prepare, execute)
LESS = OperationSpec(C.LESS, validate, prepare, execute)
LESS_EQUAL = OperationSpec(C.LESS_EQUAL, validate, prepare, execute)
