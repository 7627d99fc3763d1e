"""BATCH_MATMUL (OperationCode 102).

Inputs: 0 lhs, 1 rhs (same type and rank, 2..4), 2 adj_x, 3 adj_y (BOOL: transpose the last
two dimensions of lhs / rhs first). Output 0: lhs's dimensions with the last two replaced by
(rows of lhs, columns of rhs); ``out[..., i, j] = sum_k lhs[..., i, k] * rhs[..., k, j]``.
Arithmetic in ``nnsim.kernels.batch_matmul`` (TFLite's reference kernel: float32 accumulates in
float32, int8 requantizes with ``double(float32(lhs_scale * rhs_scale)) / out_scale`` and
clamps to [-128, 127]).

Types (T13 common/types/operations/src/BatchMatmul.cpp): float16, float32, quant8-signed,
int32 (no quant8-asymm); the output of the input type. FL6 for every type, which this runtime
(FL5) refuses at finish.

AOSP sizes the output from lhs's batch dimensions while TFLite's kernel broadcasts them, so a
batch dimension where rhs is larger than lhs would be written past the output buffer; nnsim
fails the operation (OP_FAILED) unless every rhs batch dimension equals lhs's or is 1.
"""
from __future__ import annotations

from nnsim.kernels.batch_matmul import batch_matmul
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL6, OperandType, OperationCode

T = OperandType
_TYPES = (T.TENSOR_FLOAT16, T.TENSOR_FLOAT32, T.TENSOR_QUANT8_ASYMM_SIGNED, T.TENSOR_INT32)


def validate(ctx):
    ctx.check_counts(4, 1)
    t = ctx.input_type(0)
    ctx.check_input_types((t, t))
    ctx.check_input_type_in(0, _TYPES)
    ctx.check_input_types((T.BOOL, T.BOOL), start=2)
    ctx.check_output_types((t,))
    return FL6


def _args(ctx) -> tuple[bool, bool]:
    lhs, rhs = ctx.input(0), ctx.input(1)
    adj_x, adj_y = bool(ctx.scalar(2)), bool(ctx.scalar(3))
    cm.check(ctx, lhs.ndim == rhs.ndim, f"input ranks {lhs.ndim} and {rhs.ndim} differ")
    cm.check(ctx, 2 <= lhs.ndim <= 4, f"input rank {lhs.ndim} must be in [2, 4]")
    cm.check(ctx, min(lhs.shape[-2:] + rhs.shape[-2:]) > 0, "matrices must not be empty")
    depth = lhs.shape[-2] if adj_x else lhs.shape[-1]
    rdepth = rhs.shape[-1] if adj_y else rhs.shape[-2]
    cm.check(ctx, depth == rdepth, f"cannot multiply {lhs.shape} (adj_x {adj_x}) by "
             f"{rhs.shape} (adj_y {adj_y})")
    for a, b in zip(lhs.shape[:-2], rhs.shape[:-2]):
        cm.check(ctx, b in (a, 1), f"rhs batch dimensions {rhs.shape[:-2]} must equal lhs's "
                 f"{lhs.shape[:-2]} or be 1")
    return adj_x, adj_y


def prepare(ctx):
    adj_x, adj_y = _args(ctx)
    lhs, rhs = ctx.input(0).shape, ctx.input(1).shape
    rows = lhs[-1] if adj_x else lhs[-2]
    cols = rhs[-2] if adj_y else rhs[-1]
    ctx.set_output_shape(0, lhs[:-2] + (rows, cols))


def execute(ctx):
    adj_x, adj_y = _args(ctx)
    kwargs = {}
    if ctx.input_operand(0).type == T.TENSOR_QUANT8_ASYMM_SIGNED:
        lhs, rhs, out = ctx.input_operand(0), ctx.input_operand(1), ctx.output_operand(0)
        kwargs = dict(lhs_scale=lhs.scale, lhs_zp=lhs.zero_point, rhs_scale=rhs.scale,
                      rhs_zp=rhs.zero_point, out_scale=out.scale, out_zp=out.zero_point)
    ctx.set_output(0, batch_matmul(ctx.input(0), ctx.input(1), adj_x, adj_y, **kwargs))


SPEC = OperationSpec(OperationCode.BATCH_MATMUL, validate, prepare, execute)
