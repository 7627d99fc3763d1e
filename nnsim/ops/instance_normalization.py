"""INSTANCE_NORMALIZATION (OperationCode 71).

Inputs: 0 input (4-D), 1 gamma, 2 beta, 3 epsilon (FLOAT32, or FLOAT16 for a float16 input),
4 layout (BOOL, true = NCHW). Output 0: same shape, each channel of each batch normalised over
its H x W plane: ``(x - mean) * gamma / sqrt(var + epsilon) + beta``.

Types (T13 InstanceNormalization.cpp): float32 / float16 FL3; float16 computes in float16.
"""
from __future__ import annotations

from nnsim.kernels.instance_norm import instance_normalization
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.check_counts(5, 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16))
    scalar = T.FLOAT16 if t == T.TENSOR_FLOAT16 else T.FLOAT32
    ctx.check_input_types((t, scalar, scalar, scalar, T.BOOL))
    ctx.check_output_types((t,))
    return FL3


def prepare(ctx):
    x = ctx.input(0)
    cm.check(ctx, x.ndim == 4, f"input must be 4-D, got rank {x.ndim}")
    ctx.set_output_shape(0, x.shape)


def execute(ctx):
    nchw = bool(ctx.scalar(4))
    gamma, beta, epsilon = (ctx.scalar(i) for i in (1, 2, 3))
    out = instance_normalization(cm.to_nhwc(ctx.input(0), nchw), gamma, beta, epsilon)
    ctx.set_output(0, cm.from_nhwc(out, nchw))


SPEC = OperationSpec(OperationCode.INSTANCE_NORMALIZATION, validate, prepare, execute)
