"""SVDF (OperationCode 27).

Inputs: 0 input [B, I], 1 weights_feature [F, I], 2 weights_time [F, M], 3 bias [U]
(optional), 4 state in [B, F * M], 5 rank (INT32), 6 fused activation (INT32); F = U * rank.
Outputs: 0 state out [B, F * M], 1 output [B, U]. float32 FL1, float16 FL3 (T13 common/types/
operations/src/SVDF.cpp); shapes checked at prepare (SVDF::Prepare): OP_FAILED.
"""
from __future__ import annotations

from nnsim.kernels.svdf import svdf
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.ops.lstm import LSTM_ACTIVATIONS
from nnsim.types import FL1, FL3, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.check_counts(7, 2)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16))
    ctx.check_input_types((t, t, t, t, t, T.INT32, T.INT32))
    ctx.check_output_types((t, t))
    return FL1 if t == T.TENSOR_FLOAT32 else FL3


def _geometry(ctx):
    for i in (0, 1, 2, 4, 5, 6):
        cm.check(ctx, ctx.has_input(i), f"required input {i} is omitted")
    rank, act = int(ctx.scalar(5)), int(ctx.scalar(6))
    x, wf, wt = ctx.input_shape(0), ctx.input_shape(1), ctx.input_shape(2)
    cm.check(ctx, len(x) == 2 and len(wf) == 2 and len(wt) == 2, "tensors must have rank 2")
    filters = wf[0]
    cm.check(ctx, rank > 0 and filters % rank == 0, f"rank {rank} does not divide {filters}")
    units, memory = filters // rank, wt[1]
    cm.check(ctx, x[1] == wf[1] and wt[0] == filters, f"shape mismatch: {x}, {wf}, {wt}")
    if ctx.has_input(3):
        cm.check(ctx, ctx.input_shape(3) == (units,), "bias must have num_units values")
    cm.check(ctx, ctx.input_shape(4) == (x[0], filters * memory), "state shape mismatch")
    cm.check(ctx, act in LSTM_ACTIVATIONS, f"unsupported activation {act}")
    return x[0], units, memory, filters, rank, act


def prepare(ctx):
    batch, units, memory, filters, _, _ = _geometry(ctx)
    ctx.set_output_shape(0, (batch, memory * filters))
    ctx.set_output_shape(1, (batch, units))


def execute(ctx):
    _, _, _, _, rank, act = _geometry(ctx)
    state, out = svdf(ctx.input(0), ctx.input(4), ctx.input(1), ctx.input(2), ctx.input(3),
                      rank, act)
    ctx.set_output(0, state)
    ctx.set_output(1, out)


SPEC = OperationSpec(OperationCode.SVDF, validate, prepare, execute, allow_omitted_operand=True)
