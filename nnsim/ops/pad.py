"""PAD (OperationCode 32).

Inputs: 0 input (rank <= 4), 1 paddings (TENSOR_INT32 [rank, 2]: before and after each
dimension, >= 0). Output 0: dims[i] + before[i] + after[i], padded with 0 (float) or with the
zero point (quantized), same quantization as the input.

Types: float32 FL2; quant8-asymm FL2 with zero point 0, otherwise FL3; float16 FL3;
quant8-signed FL4 (T13 common/types/operations/src/Reshape.cpp validatePad).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.pad import pad as pad_kernel
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, type_feature_level
from nnsim.types import FL2, FL3, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.check_counts(2, 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM,
                                    T.TENSOR_QUANT8_ASYMM_SIGNED))
    ctx.require(ctx.input_rank(0) <= 4, f"input has rank {ctx.input_rank(0)}, expected <= 4")
    ctx.check_input_types((t, T.TENSOR_INT32))
    ctx.check_output_types((t,))
    if t == T.TENSOR_FLOAT32:
        return FL2
    if t == T.TENSOR_QUANT8_ASYMM:
        return FL2 if ctx.input(0).zero_point == 0 else FL3
    return type_feature_level(t)


def _paddings(ctx) -> np.ndarray:
    x, p = ctx.input(0), ctx.input(1)
    cm.check(ctx, p.shape == (x.ndim, 2), f"paddings must have shape [{x.ndim}, 2]")
    cm.check(ctx, bool((p >= 0).all()), "paddings must be non-negative")
    return np.asarray(p, dtype=np.int64)


def prepare(ctx):
    p = _paddings(ctx)
    ctx.set_output_shape(0, tuple(int(d) for d in np.asarray(ctx.input(0).shape) + p.sum(1)))


def execute(ctx):
    src = ctx.input_operand(0)
    value = src.zero_point if cm.is_quant8(src.type) else 0
    ctx.set_output(0, pad_kernel(ctx.input(0), _paddings(ctx), pad_value=value))


SPEC = OperationSpec(OperationCode.PAD, validate, prepare, execute)
