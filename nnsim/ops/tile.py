"""TILE (OperationCode 89).

Inputs: 0 input (any rank), 1 multiples (TENSOR_INT32 1-D, one entry per input dimension).
Output 0: ``dims[i] * multiples[i]``, the input repeated block by block; it takes the input's
quantization (``tile::prepare`` copies the input's scale and zero point, so a model output must
declare the same ones).

Types (T13 common/types/operations/src/Tile.cpp): float16, float32, int32, quant8-asymm FL3;
quant8-signed FL4.

AOSP reads ``multiples[i]`` for every input dimension without checking the multiples tensor;
nnsim fails the operation (OP_FAILED) when it is not 1-D of that length, and when an entry is
negative (AOSP's output size then overflows its uint32 check).
"""
from __future__ import annotations

from nnsim.kernels import movement
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType
_TYPES = (T.TENSOR_FLOAT16, T.TENSOR_FLOAT32, T.TENSOR_INT32, T.TENSOR_QUANT8_ASYMM,
          T.TENSOR_QUANT8_ASYMM_SIGNED)


def validate(ctx):
    ctx.check_counts(2, 1)
    t = ctx.check_input_type_in(0, _TYPES)
    ctx.check_input_types((t, T.TENSOR_INT32))
    ctx.check_output_types((t,))
    return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def _multiples(ctx) -> list:
    x, m = ctx.input(0), ctx.input(1)
    cm.check(ctx, m.shape == (x.ndim,), f"multiples must be a 1-D tensor of {x.ndim} values, "
             f"got shape {m.shape}")
    values = [int(v) for v in m]
    cm.check(ctx, min(values, default=0) >= 0, f"multiples {values} must be >= 0")
    return values


def prepare(ctx):
    x = ctx.input(0)
    ctx.set_output_shape(0, [d * m for d, m in zip(x.shape, _multiples(ctx))])
    src = ctx.input_operand(0)
    cm.check_model_output_quant(ctx, 0, src.scale, src.zero_point)


def execute(ctx):
    ctx.set_output(0, movement.tile(ctx.input(0), _multiples(ctx)))


SPEC = OperationSpec(OperationCode.TILE, validate, prepare, execute)
