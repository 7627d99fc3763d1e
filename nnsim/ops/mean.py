"""MEAN (OperationCode 31).

Inputs: 0 input (rank <= 4), 1 axes (TENSOR_INT32 1-D, each in [-rank, rank); duplicates
allowed), 2 keep_dims (INT32, > 0 keeps reduced dimensions as 1). Output 0: the reduced
shape; [1] when every dimension is reduced without keep_dims.

Types: float32 / quant8-asymm FL2; float16 FL3; quant8-signed FL4
(T13 common/types/operations/src/SimpleMath.cpp; shape rules from meanPrepare).
Quantized: AOSP's truncating integer mean, output scale / zero point unused
(``nnsim.kernels.reduce``, variant "aosp"; docs/numerics.md).
"""
from __future__ import annotations

from nnsim.kernels.reduce import mean as mean_kernel
from nnsim.kernels.reduce import prepare_mean
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, context_runner, type_feature_level
from nnsim.types import FL2, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.check_counts(3, 1)
    ctx.require(ctx.input_rank(0) <= 4, f"input has rank {ctx.input_rank(0)}, expected <= 4")
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM,
                                    T.TENSOR_QUANT8_ASYMM_SIGNED))
    ctx.check_input_types((t, T.TENSOR_INT32, T.INT32))
    ctx.check_output_types((t,))
    return max(FL2, type_feature_level(t))


def _reduction(ctx) -> tuple[tuple, bool, tuple]:
    """(normalised axes, keep_dims, output shape)."""
    shape, axes = ctx.input(0).shape, ctx.input(1)
    cm.check(ctx, axes.ndim == 1, "axes must be a 1-D tensor")
    rank = len(shape)
    norm = []
    for a in (int(v) for v in axes):
        cm.check(ctx, -rank <= a < rank, f"axis {a} out of range for rank {rank}")
        if a % rank not in norm:
            norm.append(a % rank)
    keep = int(ctx.scalar(2)) > 0
    if keep:
        out = tuple(1 if d in norm else s for d, s in enumerate(shape))
    else:
        out = tuple(s for d, s in enumerate(shape) if d not in norm) or (1,)
    return tuple(sorted(norm)), keep, out


def prepare(ctx):
    ctx.set_output_shape(0, _reduction(ctx)[2])


def execute(ctx):
    axes, keep, out = _reduction(ctx)
    y = mean_kernel(ctx.input(0), axes, keep, variant="aosp")   # CpuExecutor's truncating mean
    ctx.set_output(0, y.reshape(out))


def plan(ctx):
    """The reduction's multipliers and buffers computed once per input shape."""
    x = ctx.input(0)
    if x.size == 0:
        return context_runner(SPEC, ctx)
    axes, keep, out = _reduction(ctx)
    kernel_plan = prepare_mean(x.shape, x.dtype, axes, keep, variant="aosp")

    def general(values):
        return [kernel_plan.run(values[0]).reshape(out)]
    # quantized, one block of axes: bound to the input buffer, the same outputs each time
    return cm.bound_runner(kernel_plan.bind, general, [kernel_plan.out.reshape(out)])


SPEC = OperationSpec(OperationCode.MEAN, validate, prepare, execute, plan=plan)
