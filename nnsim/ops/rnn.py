"""RNN (OperationCode 24): one step of a basic recurrent cell.

Inputs: 0 input [B, I], 1 weights [U, I], 2 recurrent weights [U, U], 3 bias [U], 4 hidden
state in [B, U], 5 fused activation (INT32). Outputs: 0 hidden state out [B, U], 1 output
[B, U] (the same values). float32 FL1, float16 FL3 (T13 common/types/operations/src/RNN.cpp).
Shapes are checked at prepare (RNN::Prepare): OP_FAILED. AOSP's ActivationFunctor aborts on
RELU1 and on the sign-bit code; nnsim fails the execution instead.
"""
from __future__ import annotations

from nnsim.kernels.rnn import RNN_ACTIVATIONS, rnn_sequence
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL1, FL3, OperandType, OperationCode

T = OperandType


def validate(ctx):
    ctx.check_counts(6, 2)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16))
    ctx.check_input_types((t, t, t, t, t, T.INT32))
    ctx.check_output_types((t, t))
    return FL1 if t == T.TENSOR_FLOAT32 else FL3


def check_activation(ctx, index):
    act = int(ctx.scalar(index))
    cm.check(ctx, act in RNN_ACTIVATIONS, f"unsupported activation {act}")
    return act


def _geometry(ctx):
    x, w, rw, b = (ctx.input_shape(i) for i in range(4))
    cm.check(ctx, len(x) == 2 and len(w) == 2 and len(rw) == 2 and len(b) == 1,
             "input, weights and recurrent weights must have rank 2, bias rank 1")
    units = w[0]
    cm.check(ctx, x[1] == w[1] and units == b[0] and rw[0] == units and rw[1] == units,
             f"inconsistent shapes: input {x}, weights {w}, recurrent {rw}, bias {b}")
    cm.check(ctx, ctx.input_shape(4) == (x[0], units), "hidden state shape mismatch")
    return x[0], units


def prepare(ctx):
    batch, units = _geometry(ctx)
    check_activation(ctx, 5)
    ctx.set_output_shape(0, (batch, units))
    ctx.set_output_shape(1, (batch, units))


def execute(ctx):
    act = check_activation(ctx, 5)
    out, h = rnn_sequence(ctx.input(0)[None], ctx.input(1), ctx.input(2), ctx.input(3),
                          ctx.input(4), act)
    ctx.set_output(0, h)
    ctx.set_output(1, out[0])


SPEC = OperationSpec(OperationCode.RNN, validate, prepare, execute)
