"""SOFTMAX (OperationCode 25).

Inputs: 0 input (rank <= 4), 1 beta (FLOAT32; FLOAT16 for float16 inputs; must be > 0),
[2 axis (INT32, default -1, range [-rank, rank)), FL3]. Output 0: same shape; quantized outputs
must have scale 1/256 and zero point 0 (quant8-asymm) or -128 (quant8-signed).

Types: float32 / quant8-asymm FL1 with rank 2 or 4 (or unknown rank); other ranks, float16 or
an explicit axis FL3; quant8-signed FL4 (T13 common/types/operations/src/Softmax.cpp).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.softmax import prepare_softmax
from nnsim.kernels.softmax import softmax as softmax_kernel
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, context_runner, type_feature_level
from nnsim.types import FL3, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.check_counts((2, 3), 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM,
                                    T.TENSOR_QUANT8_ASYMM_SIGNED))
    expected = [t, T.FLOAT16 if t == T.TENSOR_FLOAT16 else T.FLOAT32]
    level = type_feature_level(t)
    rank = ctx.input_rank(0)
    ctx.require(rank <= 4, f"input has rank {rank}, expected <= 4")
    if ctx.num_inputs == 3:
        expected.append(T.INT32)
        level = max(level, FL3)
    elif rank not in (0, 2, 4):
        level = max(level, FL3)
    ctx.check_input_types(expected)
    ctx.check_output_types((t,))
    return level


def _axis(ctx) -> int:
    rank = ctx.input(0).ndim
    axis = int(ctx.scalar(2, -1))
    cm.check(ctx, -rank <= axis < rank, f"axis {axis} out of range for rank {rank}")
    return axis % rank


def prepare(ctx):
    x = ctx.input(0)
    cm.check(ctx, x.ndim <= 4, f"input has rank {x.ndim}, expected <= 4")
    cm.check(ctx, float(ctx.scalar(1)) > 0.0, "beta must be positive")
    _axis(ctx)
    t = ctx.input_operand(0).type
    if cm.is_quant8(t):
        out = ctx.output_operand(0)
        zp = 0 if t == T.TENSOR_QUANT8_ASYMM else -128
        cm.check(ctx, out.scale == 1.0 / 256 and out.zero_point == zp,
                 f"output must have scale 1/256 and zero point {zp}")
    ctx.set_output_shape(0, x.shape)


def execute(ctx):
    kwargs = cm.io_quant(ctx)
    y = softmax_kernel(ctx.input(0), float(ctx.scalar(1)), axis=_axis(ctx), **kwargs)
    ctx.set_output(0, y)


def plan(ctx):
    """Softmax along the last axis of a float32 or quant8 input: its scaling computed once."""
    x = ctx.input(0)
    if x.size == 0 or _axis(ctx) != x.ndim - 1 or x.dtype == np.float16:
        return context_runner(SPEC, ctx)
    beta, quant = float(ctx.scalar(1)), cm.io_quant(ctx)
    kernel_plan = prepare_softmax(x.shape, x.dtype, beta, **quant)
    return cm.bound_runner(
        lambda x: kernel_plan.bind(x) if x.flags.c_contiguous else None,
        lambda values: [softmax_kernel(values[0], beta, axis=-1, **quant)],
        [kernel_plan.out])


SPEC = OperationSpec(OperationCode.SOFTMAX, validate, prepare, execute,
                     allow_zero_sized_input=True, plan=plan)
