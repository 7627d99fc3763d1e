"""TANH (28), HARD_SWISH (99) and ELU (98).

TANH / HARD_SWISH inputs: 0 input. ELU inputs: 0 input, 1 alpha (FLOAT32, or FLOAT16 for a
float16 input). Output 0: same shape and type.

TANH: float32 FL1, float16 / quant8-asymm FL3, quant8-signed FL4, rank <= 4 (T13
Activation.cpp). The quantized output must have scale 1/128 and zero point 128 (uint8) or 0
(int8); NNAPI computes it in gemmlowp fixed point (``nnsim.kernels.unary.tanh_quantized``).
HARD_SWISH: float32, float16, quant8 (asymm and signed) FL4, any output quantization
(TFLite's 16-bit fixed-point ``reference_ops::HardSwish``). ELU: float32 / float16 FL4
(T13 Elu.cpp). Float16 computes in float32.
"""
from __future__ import annotations

from nnsim.kernels import hard_swish as hard_swish_kernel
from nnsim.kernels import tanh as tanh_kernel
from nnsim.kernels import unary
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, type_feature_level
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType
C = OperationCode
_TYPES = (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_ASYMM_SIGNED)


def validate(ctx):
    if ctx.code == C.ELU:
        ctx.check_counts(2, 1)
        t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16))
        ctx.check_input_types((t, T.FLOAT16 if t == T.TENSOR_FLOAT16 else T.FLOAT32))
        ctx.check_output_types((t,))
        return FL4
    ctx.check_counts(1, 1)
    t = ctx.check_input_type_in(0, _TYPES)
    ctx.check_output_types((t,))
    if ctx.code == C.HARD_SWISH:
        return FL4
    ctx.check_rank(0, range(0, 5))
    return type_feature_level(t, quant8_fl=FL3)


def prepare(ctx):
    x = ctx.input(0)
    t = ctx.input_operand(0).type
    if ctx.code == C.TANH:
        cm.check(ctx, x.ndim <= 4, f"input has rank {x.ndim}, expected <= 4")
        if cm.is_quant8(t):
            zp = 128 if t == T.TENSOR_QUANT8_ASYMM else 0
            out = ctx.output_operand(0)
            cm.check(ctx, out.scale == 1.0 / 128 and out.zero_point == zp,
                     f"output must have scale 1/128 and zero point {zp}")
    ctx.set_output_shape(0, x.shape)


def execute(ctx):
    x = ctx.input(0)
    if ctx.code == C.ELU:
        y = unary.elu(x, float(ctx.scalar(1)))
    elif ctx.code == C.HARD_SWISH:
        y = hard_swish_kernel.hard_swish(x, **cm.io_quant(ctx))
    elif cm.is_quant8(ctx.input_operand(0).type):
        y = unary.tanh_quantized(x, in_scale=ctx.input_operand(0).scale,
                                 in_zp=ctx.input_operand(0).zero_point)
    else:
        y = tanh_kernel.tanh(x)
    ctx.set_output(0, y)


TANH = OperationSpec(C.TANH, validate, prepare, execute, allow_zero_sized_input=True)
HARD_SWISH = OperationSpec(C.HARD_SWISH, validate, prepare, execute, allow_zero_sized_input=True)
ELU = OperationSpec(C.ELU, validate, prepare, execute)
