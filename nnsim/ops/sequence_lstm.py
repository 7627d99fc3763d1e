"""UNIDIRECTIONAL_SEQUENCE_LSTM (92) and BIDIRECTIONAL_SEQUENCE_LSTM (42).

UNIDIRECTIONAL: LSTM's inputs 0-22 with a rank-3 input ([T, B, I] time-major or [B, T, I]),
23 time_major (BOOL), 24-27 layer-norm weights (optional). Outputs: 0 output [.., .., O], and
from FL4 optionally 1 output state and 2 cell state. float32 / float16, FL3 (FL4 with states).

BIDIRECTIONAL (61 inputs): 0 input; 1-17 forward and 18-34 backward LSTM weights (LSTM
order); 35-38 fw/bw activation and cell states; 39 aux input, 40-43 fw and 44-47 bw aux input
weights (optional); 48 activation; 49 cell clip; 50 projection clip; 51 merge_outputs; 52
time_major; 53-56 fw and 57-60 bw layer-norm weights. Outputs: fw output (both directions
concatenated on the last axis when merge_outputs), bw output unless merged, then from FL4
optionally fw/bw output and cell states. An aux input without aux weights feeds the backward
cell ("parallel linking"); with them, both cells add the aux term ("cross linking").
(T13 common/types/operations/src/{Uni,Bi}directionalSequenceLSTM.cpp, common/cpu_operations.)
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.lstm import lstm_sequence
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.ops.lstm import FLOAT_SCALAR, clip_values, read_weights
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType


def _time_major_view(x, time_major):
    return x if time_major else np.swapaxes(x, 0, 1)


# -- UNIDIRECTIONAL_SEQUENCE_LSTM ------------------------------------------------------------
def validate_uni(ctx):
    ctx.check_counts(28, (1, 3))
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16))
    s = FLOAT_SCALAR[t]
    ctx.check_input_types([t] * 20 + [T.INT32, s, s, T.BOOL] + [t] * 4)
    ctx.check_output_types([t] * ctx.num_outputs)
    return FL4 if ctx.num_outputs == 3 else FL3


def _uni(ctx):
    cm.check(ctx, all(ctx.has_input(i) for i in (0, 18, 19, 20, 21, 22, 23)),
             "a required input is omitted")
    x = ctx.input(0)
    cm.check(ctx, x.ndim == 3, f"input has rank {x.ndim}, expected 3")
    time_major = bool(ctx.scalar(23))
    batch = x.shape[1] if time_major else x.shape[0]
    cm.check(ctx, ctx.has_input(8), "required input 8 is omitted")
    n_cell, n_output = ctx.input_shape(8)
    weights = read_weights(ctx, 1, 24, x.shape[2], n_output, n_cell)
    cm.check(ctx, ctx.input_shape(18) == (batch, n_output), "output state shape mismatch")
    cm.check(ctx, ctx.input_shape(19) == (batch, n_cell), "cell state shape mismatch")
    return x, time_major, batch, n_cell, n_output, weights


def prepare_uni(ctx):
    x, _, batch, n_cell, n_output, _ = _uni(ctx)
    clip_values(ctx, 20)
    ctx.set_output_shape(0, x.shape[:2] + (n_output,))
    if ctx.num_outputs == 3:
        ctx.set_output_shape(1, (batch, n_output))
        ctx.set_output_shape(2, (batch, n_cell))


def execute_uni(ctx):
    x, time_major, _, _, _, weights = _uni(ctx)
    act, cell_clip, proj_clip = clip_values(ctx, 20)
    out, h, c, _ = lstm_sequence(_time_major_view(x, time_major), weights, ctx.input(18),
                                 ctx.input(19), act, cell_clip, proj_clip)
    ctx.set_output(0, _time_major_view(out, time_major))
    if ctx.num_outputs == 3:
        ctx.set_output(1, h)
        ctx.set_output(2, c)


# -- BIDIRECTIONAL_SEQUENCE_LSTM -------------------------------------------------------------
def validate_bi(ctx):
    ctx.check_counts(61, (1, 2, 5, 6))
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16))
    s = FLOAT_SCALAR[t]
    ctx.check_input_types([t] * 48 + [T.INT32, s, s, T.BOOL, T.BOOL] + [t] * 8)
    ctx.check_output_types([t] * ctx.num_outputs)
    return FL4 if ctx.num_outputs in (5, 6) else FL3


def _bi(ctx):
    required = (0, 35, 36, 37, 38, 48, 49, 50, 51, 52)
    cm.check(ctx, all(ctx.has_input(i) for i in required), "a required input is omitted")
    x = ctx.input(0)
    cm.check(ctx, x.ndim == 3, f"input has rank {x.ndim}, expected 3")
    merge, time_major = bool(ctx.scalar(51)), bool(ctx.scalar(52))
    outputs = ctx.num_outputs
    cm.check(ctx, outputs in ((1, 5) if merge else (2, 6)),
             f"{outputs} outputs do not fit merge_outputs={merge}")
    has_aux, has_aux_w = ctx.has_input(39), ctx.has_input(41)
    cm.check(ctx, has_aux_w == ctx.has_input(45), "fw and bw aux weights: both or neither")
    cm.check(ctx, has_aux or not has_aux_w, "aux weights without an aux input")
    aux = ctx.input(39) if has_aux else None
    if has_aux:
        cm.check(ctx, aux.ndim == 3 and aux.shape[:2] == x.shape[:2], "aux input shape mismatch")
    bw_x = aux if (has_aux and not has_aux_w) else x
    dirs = []
    for first, ln, aux_first, state, inp in ((1, 53, 40, 35, x), (18, 57, 44, 37, bw_x)):
        cm.check(ctx, ctx.has_input(first + 7), f"required input {first + 7} is omitted")
        n_cell, n_output = ctx.input_shape(first + 7)
        n_aux = x.shape[2]   # AOSP sizes aux weights by the input size
        w = read_weights(ctx, first, ln, inp.shape[2], n_output, n_cell,
                         aux=aux_first if has_aux_w else None, n_aux=n_aux)
        dirs.append((w, inp, state, n_cell, n_output))
    cm.check(ctx, (dirs[0][0].input_to[0] is None) == (dirs[1][0].input_to[0] is None),
             "fw and bw must both use CIFG or neither")
    return x, aux if has_aux_w else None, merge, time_major, dirs


def prepare_bi(ctx):
    x, _, merge, _, dirs = _bi(ctx)
    clip_values(ctx, 48)
    lead = x.shape[:2]
    (_, _, _, _, fw_out), (_, _, _, _, bw_out) = dirs
    ctx.set_output_shape(0, lead + ((fw_out + bw_out) if merge else fw_out,))
    k = 1
    if not merge:
        ctx.set_output_shape(1, lead + (bw_out,))
        k = 2
    if ctx.num_outputs > 2:
        for state in (35, 36, 37, 38):
            ctx.set_output_shape(k, ctx.input_shape(state))
            k += 1


def execute_bi(ctx):
    x, aux, merge, time_major, dirs = _bi(ctx)
    act, cell_clip, proj_clip = clip_values(ctx, 48)
    results = []
    for (w, inp, state, _, _), reverse in zip(dirs, (False, True)):
        aux_tm = None if aux is None else _time_major_view(aux, time_major)
        results.append(lstm_sequence(_time_major_view(inp, time_major), w, ctx.input(state),
                                     ctx.input(state + 1), act, cell_clip, proj_clip,
                                     aux=aux_tm, reverse=reverse))
    outs = [_time_major_view(r[0], time_major) for r in results]
    k = 0
    if merge:
        ctx.set_output(0, np.concatenate(outs, axis=2))
        k = 1
    else:
        ctx.set_output(0, outs[0])
        ctx.set_output(1, outs[1])
        k = 2
    if ctx.num_outputs > 2:
        for r in results:
            ctx.set_output(k, r[1])
            ctx.set_output(k + 1, r[2])
            k += 2


UNIDIRECTIONAL_SEQUENCE_LSTM = OperationSpec(OperationCode.UNIDIRECTIONAL_SEQUENCE_LSTM,
                                             validate_uni, prepare_uni, execute_uni,
                                             allow_omitted_operand=True)
BIDIRECTIONAL_SEQUENCE_LSTM = OperationSpec(OperationCode.BIDIRECTIONAL_SEQUENCE_LSTM,
                                            validate_bi, prepare_bi, execute_bi,
                                            allow_omitted_operand=True)
