"""UNIDIRECTIONAL_SEQUENCE_RNN (93) and BIDIRECTIONAL_SEQUENCE_RNN (43).

UNIDIRECTIONAL: 0 input [T, B, I] (time_major) or [B, T, I], 1 weights [U, I], 2 recurrent
weights [U, U], 3 bias [U], 4 hidden state [B, U], 5 activation, 6 time_major (INT32, 0 or 1).
Outputs: 0 output [.., .., U], from FL4 optionally 1 final hidden state.

BIDIRECTIONAL: 0 input; 1-4 fw weights, recurrent weights, bias, hidden state; 5-8 the same
for bw; 9 aux input, 10 fw and 11 bw aux weights (optional); 12 activation; 13 time_major and
14 merge_outputs (BOOL). Outputs: fw output (fw and bw concatenated when merged), bw output
unless merged, from FL4 optionally fw and bw final hidden states. Aux input without aux
weights feeds the bw cell (parallel linking); with both aux weights, both cells add the aux
term (cross linking). float32 / float16, FL3 (FL4 with state outputs). (T13 common/types/
operations/src and common/cpu_operations/{Uni,Bi}directionalSequenceRNN.cpp.)
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.rnn import rnn_sequence
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.ops.rnn import check_activation
from nnsim.types import FL3, FL4, OperandType, OperationCode

T = OperandType


def _tm(x, time_major):
    return x if time_major else np.swapaxes(x, 0, 1)


def _check_cell(ctx, first, in_size, batch):
    w, rw, b, h = (ctx.input_shape(first + k) for k in range(4))
    cm.check(ctx, len(w) == 2 and len(rw) == 2 and len(b) == 1 and len(h) == 2,
             "weights, recurrent weights and hidden state must have rank 2, bias rank 1")
    units = w[0]
    cm.check(ctx, (in_size is None or w[1] == in_size) and b[0] == units and
             rw == (units, units) and h == (batch, units),
             f"inconsistent shapes: weights {w}, recurrent {rw}, bias {b}, state {h}")
    return units


# -- UNIDIRECTIONAL_SEQUENCE_RNN -------------------------------------------------------------
def validate_uni(ctx):
    ctx.check_counts(7, (1, 2))
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16))
    ctx.check_input_types((t, t, t, t, t, T.INT32, T.INT32))
    ctx.check_output_types([t] * ctx.num_outputs)
    return FL4 if ctx.num_outputs == 2 else FL3


def _uni(ctx):
    time_major = int(ctx.scalar(6))
    cm.check(ctx, time_major in (0, 1), f"time_major must be 0 or 1, got {time_major}")
    x = ctx.input_shape(0)
    cm.check(ctx, len(x) == 3, f"input has rank {len(x)}, expected 3")
    units = _check_cell(ctx, 1, x[2], x[1] if time_major else x[0])
    return bool(time_major), x, units


def prepare_uni(ctx):
    _, x, units = _uni(ctx)
    check_activation(ctx, 5)
    ctx.set_output_shape(0, x[:2] + (units,))
    if ctx.num_outputs == 2:
        ctx.set_output_shape(1, ctx.input_shape(4))


def execute_uni(ctx):
    time_major, _, _ = _uni(ctx)
    act = check_activation(ctx, 5)
    out, h = rnn_sequence(_tm(ctx.input(0), time_major), ctx.input(1), ctx.input(2),
                          ctx.input(3), ctx.input(4), act)
    ctx.set_output(0, _tm(out, time_major))
    if ctx.num_outputs == 2:
        ctx.set_output(1, h)


# -- BIDIRECTIONAL_SEQUENCE_RNN --------------------------------------------------------------
def validate_bi(ctx):
    ctx.check_counts(15, (1, 2, 3, 4))
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16))
    ctx.check_input_types([t] * 12 + [T.INT32, T.BOOL, T.BOOL])
    ctx.check_output_types([t] * ctx.num_outputs)
    return FL4 if ctx.num_outputs in (3, 4) else FL3


def _bi(ctx):
    for i in (0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 14):
        cm.check(ctx, ctx.has_input(i), f"required input {i} is omitted")
    time_major, merge = bool(ctx.scalar(13)), bool(ctx.scalar(14))
    cm.check(ctx, ctx.num_outputs in ((1, 3) if merge else (2, 4)),
             f"{ctx.num_outputs} outputs do not fit merge_outputs={merge}")
    has_aux, fw_aux, bw_aux = (ctx.has_input(i) for i in (9, 10, 11))
    cm.check(ctx, (has_aux, fw_aux, bw_aux) in ((False,) * 3, (True, False, False), (True,) * 3),
             "unsupported auxiliary tensors configuration")
    x = ctx.input_shape(0)
    cm.check(ctx, len(x) == 3, f"input has rank {len(x)}, expected 3")
    batch = x[1] if time_major else x[0]
    parallel = has_aux and not fw_aux
    fw_units = _check_cell(ctx, 1, x[2], batch)
    bw_units = _check_cell(ctx, 5, None if parallel else x[2], batch)
    if has_aux:
        aux = ctx.input_shape(9)
        cm.check(ctx, len(aux) == 3 and aux[:2] == x[:2], f"aux input shape {aux} mismatch")
        if parallel:
            cm.check(ctx, aux[2] == ctx.input_shape(5)[1], "aux input size != bw input size")
        else:
            cm.check(ctx, ctx.input_shape(10) == (fw_units, aux[2]) and
                     ctx.input_shape(11) == (bw_units, aux[2]), "aux weights shape mismatch")
    return time_major, merge, parallel, has_aux and not parallel, x, fw_units, bw_units


def prepare_bi(ctx):
    _, merge, _, _, x, fw_units, bw_units = _bi(ctx)
    check_activation(ctx, 12)
    ctx.set_output_shape(0, x[:2] + ((fw_units + bw_units) if merge else fw_units,))
    k = 1
    if not merge:
        ctx.set_output_shape(1, x[:2] + (bw_units,))
        k = 2
    if ctx.num_outputs > k:
        ctx.set_output_shape(k, ctx.input_shape(4))
        ctx.set_output_shape(k + 1, ctx.input_shape(8))


def execute_bi(ctx):
    time_major, merge, parallel, cross, _, _, _ = _bi(ctx)
    act = check_activation(ctx, 12)
    x = _tm(ctx.input(0), time_major)
    aux = _tm(ctx.input(9), time_major) if (parallel or cross) else None
    fw = rnn_sequence(x, ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4), act,
                      aux=aux if cross else None, aux_w=ctx.input(10) if cross else None)
    bw = rnn_sequence(aux if parallel else x, ctx.input(5), ctx.input(6), ctx.input(7),
                      ctx.input(8), act, aux=aux if cross else None,
                      aux_w=ctx.input(11) if cross else None, reverse=True)
    outs = [_tm(fw[0], time_major), _tm(bw[0], time_major)]
    k = 1
    if merge:
        ctx.set_output(0, np.concatenate(outs, axis=2))
    else:
        ctx.set_output(0, outs[0])
        ctx.set_output(1, outs[1])
        k = 2
    if ctx.num_outputs > k:
        ctx.set_output(k, fw[1])
        ctx.set_output(k + 1, bw[1])


UNIDIRECTIONAL_SEQUENCE_RNN = OperationSpec(OperationCode.UNIDIRECTIONAL_SEQUENCE_RNN,
                                            validate_uni, prepare_uni, execute_uni)
BIDIRECTIONAL_SEQUENCE_RNN = OperationSpec(OperationCode.BIDIRECTIONAL_SEQUENCE_RNN,
                                           validate_bi, prepare_bi, execute_bi,
                                           allow_omitted_operand=True)
