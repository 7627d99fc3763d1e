"""SELECT (84): ``output = condition ? input1 : input2`` elementwise, without broadcasting.

Inputs: 0 condition (TENSOR_BOOL8), 1 input1, 2 input2 (same type). Output 0: input1's type
and shape. The condition must have input1's dimensions and input2 input1's (``Select.cpp``
prepare); quantized inputs are requantized to the output's scale and zero point.

Types (T13 common/types/operations/src/Select.cpp): FLOAT16, FLOAT32, INT32, QUANT8_ASYMM,
QUANT8_ASYMM_SIGNED. AOSP's validator returns FL3 for all of them; the signed operand type
itself needs FL4 (validateOperandType), which AOSP's per-device slicing also checks
(validateOperationAndAnythingItDependsOn), so the operation's level here is FL4 for it.
"""
from __future__ import annotations

from nnsim.kernels import logical
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType
_TYPES = (T.TENSOR_FLOAT16, T.TENSOR_FLOAT32, T.TENSOR_INT32, T.TENSOR_QUANT8_ASYMM,
          T.TENSOR_QUANT8_ASYMM_SIGNED)


def validate(ctx):
    ctx.check_counts(3, 1)
    t = ctx.check_input_type_in(1, _TYPES)
    ctx.check_input_types((T.TENSOR_BOOL8, t, t))
    ctx.check_output_types((t,))
    return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def prepare(ctx):
    cond, x, y = ctx.input_shape(0), ctx.input_shape(1), ctx.input_shape(2)
    cm.check(ctx, cond == x, f"condition dimensions {cond} differ from input1's {x}")
    cm.check(ctx, y == x, f"input2 dimensions {y} differ from input1's {x}")
    ctx.set_output_shape(0, x)


def execute(ctx):
    kwargs = {}
    if cm.is_quant8(ctx.input_operand(1).type):
        a, b, o = ctx.input_operand(1), ctx.input_operand(2), ctx.output_operand(0)
        kwargs = dict(in1_scale=a.scale, in1_zp=a.zero_point, in2_scale=b.scale,
                      in2_zp=b.zero_point, out_scale=o.scale, out_zp=o.zero_point)
    ctx.set_output(0, logical.select(ctx.input(0), ctx.input(1), ctx.input(2), **kwargs))


SPEC = OperationSpec(OperationCode.SELECT, validate, prepare, execute)
