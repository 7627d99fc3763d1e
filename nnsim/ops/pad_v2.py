"""PAD_V2 (OperationCode 69): PAD with an explicit pad value.

Inputs: 0 input (rank <= 4), 1 paddings (TENSOR_INT32 [rank, 2], >= 0), 2 pad value (FLOAT32
for float32, FLOAT16 for float16, INT32 holding the quantized value for quant8: its low byte
is used, as ``getScalarData<uint8_t>``). Output 0: dims[i] + before[i] + after[i], same
quantization as the input.

Types: float32, float16, quant8-asymm FL3; quant8-signed FL4 (T13 validateOperation PAD_V2).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.pad import pad
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.check_counts(3, 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM,
                                    T.TENSOR_QUANT8_ASYMM_SIGNED))
    value = {T.TENSOR_FLOAT32: T.FLOAT32, T.TENSOR_FLOAT16: T.FLOAT16}.get(t, T.INT32)
    ctx.check_input_types((t, T.TENSOR_INT32, value))
    ctx.check_output_types((t,))
    ctx.check_rank(0, range(0, 5))
    return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def _paddings(ctx) -> np.ndarray:
    x, p = ctx.input(0), ctx.input(1)
    cm.check(ctx, x.ndim <= 4, f"input has rank {x.ndim}, expected <= 4")
    cm.check(ctx, p.shape == (x.ndim, 2), f"paddings must have shape [{x.ndim}, 2]")
    cm.check(ctx, bool((p >= 0).all()), "paddings must be non-negative")
    return np.asarray(p, dtype=np.int64)


def prepare(ctx):
    ctx.set_output_shape(0, np.asarray(ctx.input(0).shape, dtype=np.int64) + _paddings(ctx).sum(1))


def execute(ctx):
    x = ctx.input(0)
    value = ctx.scalar(2)
    if cm.is_quant8(ctx.input_operand(0).type):
        value = np.int32(value).astype(x.dtype)   # two's-complement low byte
    ctx.set_output(0, pad(x, _paddings(ctx), pad_value=value))


SPEC = OperationSpec(OperationCode.PAD_V2, validate, prepare, execute)
