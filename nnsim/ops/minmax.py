"""MAXIMUM (65), MINIMUM (66) and PRELU (71): elementwise binary ops with broadcasting.

Inputs: 0 input1 (PRELU: input), 1 input2 (PRELU: alpha), same type. Output 0: the broadcast
shape. Quantized MAXIMUM / MINIMUM requantize both inputs to the output's scale and zero point
first; quantized PRELU uses its own input, alpha and output parameters.

MAXIMUM / MINIMUM: float32, float16, int32, quant8-asymm FL3; quant8-signed FL4 (T13
validateOperation MAXIMUM / MINIMUM). PRELU: float32, float16, quant8-asymm FL3; quant8-signed
FL4 (T13 PRelu.cpp).
"""
from __future__ import annotations

from nnsim.kernels import minmax
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType
C = OperationCode
_TYPES = (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED)


def validate(ctx):
    ctx.check_counts(2, 1)
    allowed = _TYPES if ctx.code == C.PRELU else _TYPES + (T.TENSOR_INT32,)
    t = ctx.check_input_type_in(0, allowed)
    ctx.check_input_types((t, t))
    ctx.check_output_types((t,))
    return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def prepare(ctx):
    cm.set_broadcast_output_shape(ctx)


def execute(ctx):
    a, b = ctx.input(0), ctx.input(1)
    kwargs = {}
    if cm.is_quant8(ctx.input_operand(0).type):
        i1, i2, o = ctx.input_operand(0), ctx.input_operand(1), ctx.output_operand(0)
        if ctx.code == C.PRELU:
            kwargs = dict(in_scale=i1.scale, in_zp=i1.zero_point, alpha_scale=i2.scale,
                          alpha_zp=i2.zero_point, out_scale=o.scale, out_zp=o.zero_point)
        else:
            kwargs = dict(in1_scale=i1.scale, in1_zp=i1.zero_point, in2_scale=i2.scale,
                          in2_zp=i2.zero_point, out_scale=o.scale, out_zp=o.zero_point)
    kernel = {C.MAXIMUM: minmax.maximum, C.MINIMUM: minmax.minimum, C.PRELU: minmax.prelu}
    ctx.set_output(0, kernel[ctx.code](a, b, **kwargs))


MAXIMUM = OperationSpec(C.MAXIMUM, validate, prepare, execute)
MINIMUM = OperationSpec(C.MINIMUM, validate, prepare, execute)
PRELU = OperationSpec(C.PRELU, validate, prepare, execute)
