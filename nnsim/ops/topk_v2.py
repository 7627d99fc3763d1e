"""TOPK_V2 (OperationCode 90).

Inputs: 0 input (rank >= 1), 1 k (INT32 scalar, in [1, last dimension]). Outputs: 0 values
(input type, input quantization: ``topk_v2::prepare`` copies the input's shape, so a model
output must declare the same scale and zero point), 1 indices (TENSOR_INT32); both of shape
``dims[:-1] + [k]``. Each innermost row gives its ``k`` largest values in descending order;
equal values come out highest index first (AOSP sorts (value, index) pairs, see
``nnsim.kernels.topk``).

Types (T13 common/types/operations/src/TopK_V2.cpp): float16, float32, int32, quant8-asymm FL3;
quant8-signed FL4.
"""
from __future__ import annotations

from nnsim.kernels.topk import topk
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType
_TYPES = (T.TENSOR_FLOAT16, T.TENSOR_FLOAT32, T.TENSOR_INT32, T.TENSOR_QUANT8_ASYMM,
          T.TENSOR_QUANT8_ASYMM_SIGNED)


def validate(ctx):
    ctx.check_counts(2, 2)
    t = ctx.check_input_type_in(0, _TYPES)
    ctx.check_input_types((t, T.INT32))
    ctx.check_output_types((t, T.TENSOR_INT32))
    return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def _k(ctx) -> int:
    x, k = ctx.input(0), int(ctx.scalar(1))
    cm.check(ctx, x.ndim >= 1, "input must have rank >= 1")
    cm.check(ctx, 0 < k <= x.shape[-1], f"k = {k} must be in [1, {x.shape[-1]}]")
    return k


def prepare(ctx):
    shape = ctx.input(0).shape[:-1] + (_k(ctx),)
    ctx.set_output_shape(0, shape)
    ctx.set_output_shape(1, shape)
    src = ctx.input_operand(0)
    cm.check_model_output_quant(ctx, 0, src.scale, src.zero_point)


def execute(ctx):
    values, indices = topk(ctx.input(0), _k(ctx), ties="nnapi")
    ctx.set_output(0, values)
    ctx.set_output(1, indices)


SPEC = OperationSpec(OperationCode.TOPK_V2, validate, prepare, execute)
