"""L2_NORMALIZATION (OperationCode 11).

Inputs: 0 input (rank <= 4), [1 axis (INT32 in [-rank, rank), default -1, FL3)]. Output 0:
same shape; quantized outputs have scale 1/128 and zero point 128 (quant8-asymm) or 0
(quant8-signed), enforced on model outputs.

Types (T13 L2Normalization.cpp): float32 FL1 when 4-D without the axis argument, else FL3;
float16 / quant8-asymm FL3; quant8-signed FL4.
"""
from __future__ import annotations

from nnsim.kernels.normalization import l2_normalization
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL1, FL3, FL4, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.check_counts((1, 2), 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM,
                                    T.TENSOR_QUANT8_ASYMM_SIGNED))
    level = {T.TENSOR_FLOAT32: FL1, T.TENSOR_QUANT8_ASYMM_SIGNED: FL4}.get(t, FL3)
    if ctx.num_inputs == 2:
        ctx.check_input_types((t, T.INT32))
        level = FL3 if level == FL1 else level
    elif ctx.input_rank(0) != 4:
        level = FL3 if level == FL1 else level
    ctx.check_rank(0, range(0, 5))
    ctx.check_output_types((t,))
    return level


def _axis(ctx) -> int:
    rank = ctx.input(0).ndim
    axis = int(ctx.scalar(1)) if ctx.num_inputs == 2 else -1
    cm.check(ctx, rank <= 4 and -rank <= axis < rank,
             f"axis {axis} out of range for rank {rank} (rank must be <= 4)")
    return axis


def prepare(ctx):
    _axis(ctx)
    t = ctx.input_operand(0).type
    if cm.is_quant8(t):
        cm.check_model_output_quant(ctx, 0, 1.0 / 128, 128 if t == T.TENSOR_QUANT8_ASYMM else 0)
    ctx.set_output_shape(0, ctx.input(0).shape)


def execute(ctx):
    src = ctx.input_operand(0)
    zp = src.zero_point if cm.is_quant8(src.type) else 0
    ctx.set_output(0, l2_normalization(ctx.input(0), _axis(ctx), in_zp=zp))


SPEC = OperationSpec(OperationCode.L2_NORMALIZATION, validate, prepare, execute)
