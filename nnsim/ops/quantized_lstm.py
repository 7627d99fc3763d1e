"""QUANTIZED_16BIT_LSTM (OperationCode 73).

Inputs: 0 input [B, I] (quant8 asymm, scale 1/128, zero point 128); 1-4 input-to-{input,
forget, cell, output} weights [O, I] and 5-8 recurrent-to-* weights [O, O] (quant8 asymm, all
with the same scale and zero point); 9-12 gate biases [O] (int32, scale weights_scale / 128,
zero point 0); 13 previous cell state [B, O] (quant16 symm, scale 2**-11, zero point 0);
14 previous output [B, O] (quant8 asymm, scale 1/128, zero point 128). Outputs: 0 cell state
out (quant16 symm), 1 output (quant8 asymm). FL3 (T13 common/types/operations/src/
QuantizedLSTM.cpp); the quantization parameters and shapes are checked at prepare
(QuantizedLSTMCell::prepare): OP_FAILED.
"""
from __future__ import annotations

import math

from nnsim.kernels.quantized_lstm import quantized_16bit_lstm
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL3, OperandType, OperationCode

T = OperandType
Q8 = T.TENSOR_QUANT8_ASYMM


def validate(ctx):
    ctx.check_counts(15, 2)
    ctx.check_input_types([Q8] * 9 + [T.TENSOR_INT32] * 4 + [T.TENSOR_QUANT16_SYMM, Q8])
    ctx.check_output_types((T.TENSOR_QUANT16_SYMM, Q8))
    return FL3


def _check(ctx):
    x, prev_out, prev_cell = (ctx.input_operand(i) for i in (0, 14, 13))
    xs, ps = ctx.input_shape(0), ctx.input_shape(14)
    cm.check(ctx, len(xs) == 2 and len(ps) == 2 and ps[0] == xs[0], "input / output shapes")
    for o in (x, prev_out):
        cm.check(ctx, o.scale == 1.0 / 128.0 and o.zero_point == 128,
                 "input and previous output need scale 1/128 and zero point 128")
    batch, n_in = xs
    n_out = ps[1]
    w0 = ctx.input_operand(1)
    cm.check(ctx, w0.scale != 0, "weights scale must not be 0")
    for i in range(1, 9):
        w = ctx.input_operand(i)
        cols = n_in if i <= 4 else n_out
        cm.check(ctx, ctx.input_shape(i) == (n_out, cols), f"weights {i} shape")
        cm.check(ctx, w.scale == w0.scale and w.zero_point == w0.zero_point,
                 "all weights need the same quantization")
    b0 = ctx.input_operand(9)
    cm.check(ctx, b0.scale == w0.scale / 128.0 and b0.zero_point == 0,
             "bias scale must be weights_scale / 128, zero point 0")
    for i in range(9, 13):
        b = ctx.input_operand(i)
        cm.check(ctx, ctx.input_shape(i) == (n_out,) and b.scale == b0.scale and
                 b.zero_point == 0, f"bias {i} shape / quantization")
    cm.check(ctx, ctx.input_shape(13) == (batch, n_out) and prev_cell.zero_point == 0,
             "previous cell state shape / zero point")
    log2 = math.log2(prev_cell.scale) if prev_cell.scale > 0 else 0.5
    cm.check(ctx, abs(log2 - round(log2)) < 1e-3 and 15 + round(log2) == 4,
             "cell state scale must be 2**-11")
    return batch, n_out


def prepare(ctx):
    batch, n_out = _check(ctx)
    ctx.set_output_shape(0, (batch, n_out))
    ctx.set_output_shape(1, (batch, n_out))


def execute(ctx):
    _check(ctx)
    cell, out = quantized_16bit_lstm(
        ctx.input(0), ctx.input(14), [ctx.input(i) for i in range(1, 5)],
        [ctx.input(i) for i in range(5, 9)], [ctx.input(i) for i in range(9, 13)],
        ctx.input(13), ctx.input_operand(1).zero_point, ctx.input_operand(9).scale)
    ctx.set_output(0, cell)
    ctx.set_output(1, out)


QUANTIZED_16BIT_LSTM = OperationSpec(OperationCode.QUANTIZED_16BIT_LSTM, validate, prepare,
                                     execute)
