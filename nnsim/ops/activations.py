"""RELU (19), RELU1 (20), RELU6 (21) and LOGISTIC (14): elementwise activations.

Inputs: 0 input (rank <= 4). Output 0: same shape and type. RELU: max(0, x);
RELU1: clamp(x, -1, 1); RELU6: clamp(x, 0, 6); LOGISTIC: 1 / (1 + exp(-x)), whose quantized
output must have scale 1/256 and zero point 0 (quant8-asymm) or -128 (quant8-signed).

Types: float32 / quant8-asymm FL1; float16 FL3; quant8-signed FL4
(T13 common/types/operations/src/Activation.cpp).
"""
from __future__ import annotations

from nnsim.kernels import activations
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, type_feature_level
from nnsim.types import OperandType, OperationCode

T = OperandType
C = OperationCode
_KERNELS = {C.RELU: activations.relu, C.RELU1: activations.relu1, C.RELU6: activations.relu6,
            C.LOGISTIC: activations.logistic}


def validate(ctx):
    ctx.check_counts(1, 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM,
                                    T.TENSOR_QUANT8_ASYMM_SIGNED))
    ctx.require(ctx.input_rank(0) <= 4, f"input has rank {ctx.input_rank(0)}, expected <= 4")
    ctx.check_output_types((t,))
    return type_feature_level(t)


def prepare(ctx):
    t = ctx.input_operand(0).type
    if ctx.code == C.LOGISTIC and cm.is_quant8(t):
        out = ctx.output_operand(0)
        zp = 0 if t == T.TENSOR_QUANT8_ASYMM else -128
        cm.check(ctx, out.scale == 1.0 / 256 and out.zero_point == zp,
                 f"output must have scale 1/256 and zero point {zp}")
    ctx.set_output_shape(0, ctx.input(0).shape)


def execute(ctx):
    ctx.set_output(0, _KERNELS[ctx.code](ctx.input(0), **cm.io_quant(ctx)))


RELU = OperationSpec(C.RELU, validate, prepare, execute, allow_zero_sized_input=True)
RELU1 = OperationSpec(C.RELU1, validate, prepare, execute, allow_zero_sized_input=True)
RELU6 = OperationSpec(C.RELU6, validate, prepare, execute, allow_zero_sized_input=True)
LOGISTIC = OperationSpec(C.LOGISTIC, validate, prepare, execute, allow_zero_sized_input=True)
