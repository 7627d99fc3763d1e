"""CHANNEL_SHUFFLE (OperationCode 46).

Inputs: 0 input (rank <= 4), 1 num_groups (INT32 > 0, dividing the shuffled dimension), 2 axis
(INT32 in [-rank, rank)). Output 0: same shape; dimension ``axis`` (``G * n`` channels) is
split into ``G`` groups of ``n`` and interleaved: ``out[i * G + j] = in[j * n + i]``. The
output takes the input's quantization (``prepare`` sets the input's shape, scale and zero
point, so a model output must declare the same ones).

Types (T13 common/types/operations/src/ChannelShuffle.cpp): float16, float32, quant8-asymm
FL3; quant8-signed FL4.
"""
from __future__ import annotations

from nnsim.kernels import movement
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType
_TYPES = (T.TENSOR_FLOAT16, T.TENSOR_FLOAT32, T.TENSOR_QUANT8_ASYMM,
          T.TENSOR_QUANT8_ASYMM_SIGNED)


def validate(ctx):
    ctx.check_counts(3, 1)
    t = ctx.check_input_type_in(0, _TYPES)
    ctx.check_rank(0, range(0, 5))
    ctx.check_input_types((t, T.INT32, T.INT32))
    ctx.check_output_types((t,))
    return FL4 if t == T.TENSOR_QUANT8_ASYMM_SIGNED else FL3


def _args(ctx) -> tuple[int, int]:
    x = ctx.input(0)
    groups, axis = int(ctx.scalar(1)), int(ctx.scalar(2))
    cm.check(ctx, -x.ndim <= axis < x.ndim, f"axis {axis} out of range for rank {x.ndim}")
    axis %= x.ndim
    cm.check(ctx, groups > 0, f"num_groups {groups} must be > 0")
    cm.check(ctx, x.shape[axis] % groups == 0,
             f"num_groups {groups} does not divide dimension {axis} of size {x.shape[axis]}")
    return groups, axis


def prepare(ctx):
    _args(ctx)
    ctx.set_output_shape(0, ctx.input(0).shape)
    src = ctx.input_operand(0)
    cm.check_model_output_quant(ctx, 0, src.scale, src.zero_point)


def execute(ctx):
    groups, axis = _args(ctx)
    ctx.set_output(0, movement.channel_shuffle(ctx.input(0), groups, axis))


SPEC = OperationSpec(OperationCode.CHANNEL_SHUFFLE, validate, prepare, execute)
