"""QUANTIZED_16BIT_LSTM (NNAPI 73): one fixed-point LSTM step, bit-exact with AOSP.

AOSP common/cpu_operations/QuantizedLSTM.cpp (TFLite's legacy ``LstmCell<4>`` uint8 kernel):

1. the input [B, I] and previous output [B, O] (uint8, scale 1/128, zero point 128) are
   concatenated as ``[input, prev_output]``; the four gates' weights are packed into one
   [4 * O, O + I] matrix as AOSP's ``concatenateWeights`` lays it out (rows: input, cell,
   forget, output gate; columns: recurrent weights first, then input weights) and the int32
   accumulator ``bias + sum((x - 128) * (w - w_zp))`` is rescaled by
   ``4096 * bias_scale`` (MultiplyByQuantizedMultiplier) and saturated to int16 (Q3.12);
2. gemmlowp int16 fixed point: i, f, o = logistic, g = tanh of the Q3.12 gates (Q0.15
   results); new cell (Q4.11) = SaturatingAdd(Rescale<4>(i * g), f * prev_cell);
   output = o * tanh(Rescale<3>(new cell)), divided by 2**8 with rounding, clamped to int8
   and offset by 128.

The int16 gemmlowp primitives below follow gemmlowp/fixedpoint/fixedpoint.h for a 16-bit raw
type (sums wrap to int16 except the saturating ones; 32-bit constants are rounding-shifted right
by 16).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels._builtins import empty, greater, lesser

from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import multiply_by_quantized_multiplier, quantize_multiplier
from nnsim.kernels.fixed_point16 import (logistic16, rdbpot16, sat_add16, srdhm16, srmpot16,
                                         tanh16)


@njit
def _quantized_lstm_core(concat, weights, w_zp, bias, multiplier, shift, prev_cell,
                         cell_out, out):
    batches, depth = concat.shape
    rows = weights.shape[0]
    units = rows // 4
    act = empty(rows, np.int64)
    for b in range(batches):
        for r in range(rows):
            acc = np.int64(bias[r])
            for d in range(depth):
                acc += (np.int64(concat[b, d]) - 128) * (np.int64(weights[r, d]) - w_zp)
            acc = multiply_by_quantized_multiplier(acc, multiplier, shift)
            act[r] = lesser(greater(acc, -32768), 32767)
        for c in range(units):
            input_gate = logistic16(act[c], 3)
            modulation = tanh16(act[units + c], 3)
            forget_gate = logistic16(act[2 * units + c], 3)
            output_gate = logistic16(act[3 * units + c], 3)
            new_state = sat_add16(srmpot16(srdhm16(input_gate, modulation), -4),
                                  srdhm16(forget_gate, prev_cell[b, c]))
            activ = srdhm16(output_gate, tanh16(srmpot16(new_state, 1), 3))
            cell_out[b, c] = new_state
            out[b, c] = 128 + lesser(greater(rdbpot16(activ, 8), -128), 127)


def quantized_16bit_lstm(x, prev_output, input_to, recurrent_to, biases, prev_cell,
                         weights_zero_point, bias_scale):
    """One step. ``input_to`` / ``recurrent_to`` / ``biases``: the four gates in NNAPI order
    (input, forget, cell, output). Returns (cell state out int16 [B, O], output uint8 [B, O])."""
    batches, n_in = x.shape
    n_out = prev_output.shape[1]
    order = (0, 2, 1, 3)    # AOSP packs the rows as input, cell, forget, output
    weights = np.empty((4 * n_out, n_out + n_in), np.uint8)
    for row, g in enumerate(order):
        weights[row * n_out:(row + 1) * n_out, :n_out] = recurrent_to[g]
        weights[row * n_out:(row + 1) * n_out, n_out:] = input_to[g]
    bias = np.concatenate([np.asarray(biases[g], np.int32) for g in order])
    concat = np.ascontiguousarray(np.concatenate([x, prev_output], axis=1), np.uint8)
    multiplier, shift = quantize_multiplier(4096.0 * float(bias_scale))
    cell_out = np.empty((batches, n_out), np.int16)
    out = np.empty((batches, n_out), np.uint8)
    _quantized_lstm_core(concat, weights, int(weights_zero_point), bias, multiplier, shift,
                         np.asarray(prev_cell, np.int16), cell_out, out)
    return cell_out, out
