"""CONCATENATION (OperationCode 2).

Inputs: 0 .. n-1 tensors (n >= 1, same type and rank <= 4, equal dimensions except along
the axis), n axis (INT32, range [0, rank)). Output 0: the sizes along the axis summed.

Types: float32 / quant8-asymm FL1 (quant8 inputs whose scale or zero point differ from the
output's need FL3, and are requantized); float16 FL3; quant8-signed FL4
(T13 common/types/operations/src/Concatenation.cpp).
"""
from __future__ import annotations

from nnsim.kernels.reshape import concatenation as concat_kernel
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec, type_feature_level
from nnsim.types import FL3, OperandType, OperationCode

T = OperandType


def validate(ctx):
    n = ctx.num_inputs
    ctx.require(n >= 2, f"expected at least 2 inputs, got {n}")
    ctx.check_counts(n, 1)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_QUANT8_ASYMM,
                                    T.TENSOR_QUANT8_ASYMM_SIGNED))
    level = type_feature_level(t)
    if t == T.TENSOR_QUANT8_ASYMM:
        out = ctx.output(0)
        if any(not ctx.same_quant(ctx.input(i), out) for i in range(n - 1)):
            level = max(level, FL3)
    for i in range(n - 1):
        ctx.require(ctx.input_rank(i) <= 4, f"input {i} has rank {ctx.input_rank(i)}, "
                                            f"expected <= 4")
    ctx.check_input_types([t] * (n - 1) + [T.INT32])
    ctx.check_output_types((t,))
    return level


def _out_shape(ctx) -> tuple[int, tuple]:
    k = ctx.num_inputs - 1
    first = ctx.input(0).shape
    axis = int(ctx.scalar(k))
    cm.check(ctx, 0 <= axis < len(first), f"axis {axis} out of range for rank {len(first)}")
    total = first[axis]
    for i in range(1, k):
        s = ctx.input(i).shape
        cm.check(ctx, len(s) == len(first) and all(
            a == b for d, (a, b) in enumerate(zip(s, first)) if d != axis),
            f"input {i} shape {s} does not match input 0 shape {first} off axis {axis}")
        total += s[axis]
    return axis, first[:axis] + (total,) + first[axis + 1:]


def prepare(ctx):
    ctx.set_output_shape(0, _out_shape(ctx)[1])


def execute(ctx):
    axis, _ = _out_shape(ctx)
    k = ctx.num_inputs - 1
    arrays = [ctx.input(i) for i in range(k)]
    kwargs = {}
    if cm.is_quant8(ctx.input_operand(0).type):
        ops = [ctx.input_operand(i) for i in range(k)]
        out = ctx.output_operand(0)
        kwargs = dict(in_scales=[o.scale for o in ops], in_zps=[o.zero_point for o in ops],
                      out_scale=out.scale, out_zp=out.zero_point)
    ctx.set_output(0, concat_kernel(arrays, axis, **kwargs))


SPEC = OperationSpec(OperationCode.CONCATENATION, validate, prepare, execute,
                     allow_zero_sized_input=True)
