"""LSTM (OperationCode 16), and the LSTM operand reading the sequence LSTMs share.

Inputs: 0 input [B, I]; 1-4 input-to-{input, forget, cell, output} weights [C, I] (input
optional: CIFG); 5-8 recurrent-to-* weights [C, O] (input optional); 9-11 cell-to-{input,
forget, output} peephole weights [C] (optional); 12-15 {input, forget, cell, output} gate bias
[C] (input omitted with CIFG); 16 projection weights [O, C] and 17 projection bias [O]
(optional); 18 output state in [B, O]; 19 cell state in [B, C]; 20 activation (INT32); 21 cell
clip; 22 projection clip (FLOAT32, FLOAT16 for float16); 23-26 layer-norm weights [C] (FL3,
27-input form). Outputs: 0 scratch [B, 4C] (3C with CIFG), 1 output state, 2 cell state,
3 output [B, O].

Validation (T13 common/types/operations/src/LSTM.cpp) checks counts and types: float32 FL1,
float16 FL3, 27 inputs FL3. Shapes and the optional-operand combinations are checked at
prepare (LSTMCell::Prepare / CheckInputTensorDimensions): OP_FAILED.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels.lstm import LstmWeights, lstm_sequence, scratch_layout
from nnsim.ops import _common as cm
from nnsim.ops.base import OperationSpec
from nnsim.types import FL1, FL3, OperandType, OperationCode

T = OperandType
FLOAT_SCALAR = {T.TENSOR_FLOAT32: T.FLOAT32, T.TENSOR_FLOAT16: T.FLOAT16}
LSTM_ACTIVATIONS = (0, 1, 2, 3, 4, 6)   # TFLite ApplyActivationToVector (no sign bit)


def _dims(ctx, i):
    return ctx.input_shape(i) if ctx.has_input(i) else None


def _need(ctx, i, shape, what):
    dims = _dims(ctx, i)
    cm.check(ctx, dims is not None and tuple(dims) == tuple(shape),
             f"{what} (input {i}) has shape {dims}, expected {tuple(shape)}")


def read_weights(ctx, first, layer_norm, n_input, n_output, n_cell, aux=None, n_aux=0):
    """Check (CheckInputTensorDimensions) and read one direction's operands. ``first`` is the
    input-to-input weights' index (the 17 tensors follow in LSTM order), ``layer_norm`` the
    index of the 4 layer-norm weights or None, ``aux`` the 4 aux weights' first index."""
    idx = dict(i2i=first, i2f=first + 1, i2c=first + 2, i2o=first + 3, r2i=first + 4,
               r2f=first + 5, r2c=first + 6, r2o=first + 7, c2i=first + 8, c2f=first + 9,
               c2o=first + 10, bi=first + 11, bf=first + 12, bc=first + 13, bo=first + 14,
               proj=first + 15, proj_b=first + 16)
    has = {k: ctx.has_input(i) for k, i in idx.items()}
    for k in ("i2f", "i2c", "i2o", "r2f", "r2c", "r2o", "bf", "bc", "bo"):
        cm.check(ctx, has[k], f"required input {idx[k]} is omitted")
    for k in ("i2i", "i2f", "i2c", "i2o"):
        if has[k]:
            _need(ctx, idx[k], (n_cell, n_input), "input weights")
    for k in ("r2i", "r2f", "r2c", "r2o"):
        if has[k]:
            _need(ctx, idx[k], (n_cell, n_output), "recurrent weights")
    cm.check(ctx, has["i2i"] == has["r2i"], "CIFG weights must be all present or all omitted")
    cifg = not has["i2i"]
    for k in ("c2i", "c2f", "c2o", "bf", "bc", "bo"):
        if has[k]:
            _need(ctx, idx[k], (n_cell,), "peephole weights / gate bias")
    peep = [has["c2i"], has["c2f"], has["c2o"]]
    cm.check(ctx, ((peep[0] or cifg) and peep[1] and peep[2]) or not any(peep),
             "peephole weights must be all present or all omitted")
    if cifg:
        cm.check(ctx, not has["bi"], "input gate bias is present while CIFG is used")
    else:
        _need(ctx, idx["bi"], (n_cell,), "input gate bias")
    if has["proj"]:
        _need(ctx, idx["proj"], (n_output, n_cell), "projection weights")
    if has["proj_b"]:
        _need(ctx, idx["proj_b"], (n_output,), "projection bias")
    cm.check(ctx, has["proj"] or not has["proj_b"], "projection bias without projection weights")
    ln = [ctx.has_input(layer_norm + g) if layer_norm is not None else False for g in range(4)]
    for g in range(4):
        if ln[g]:
            _need(ctx, layer_norm + g, (n_cell,), "layer norm weights")
    if cifg:
        cm.check(ctx, not ln[0], "input layer norm weights are provided while CIFG is used")
        cm.check(ctx, all(ln[1:]) or not any(ln[1:]), "layer norm weights: all or none")
    else:
        cm.check(ctx, all(ln) or not any(ln), "layer norm weights: all or none")
    get = ctx.input
    aux_to = None
    if aux is not None and ctx.has_input(aux + 1):
        aux_to = [get(aux + g) for g in range(4)]
        for g in range(4):
            if aux_to[g] is not None or g > 0:
                _need(ctx, aux + g, (n_cell, n_aux), "aux input weights")
    return LstmWeights(
        input_to=[get(idx[k]) for k in ("i2i", "i2f", "i2c", "i2o")],
        recurrent_to=[get(idx[k]) for k in ("r2i", "r2f", "r2c", "r2o")],
        bias=[get(idx[k]) for k in ("bi", "bf", "bc", "bo")],
        cell_to=[get(idx["c2i"]), get(idx["c2f"]), get(idx["c2o"])] if peep[2]
        else [None, None, None],
        projection=get(idx["proj"]), projection_bias=get(idx["proj_b"]),
        layer_norm=[get(layer_norm + g) for g in range(4)] if ln[3] else None,
        aux_to=aux_to)


def clip_values(ctx, act_index):
    """(activation, cell clip, projection clip) read at ``act_index`` and the next two."""
    act = int(ctx.scalar(act_index))
    cell_clip, proj_clip = float(ctx.scalar(act_index + 1)), float(ctx.scalar(act_index + 2))
    cm.check(ctx, cell_clip >= 0 and proj_clip >= 0, "clip values must be non-negative")
    cm.check(ctx, act in LSTM_ACTIVATIONS, f"unsupported activation {act}")
    return act, cell_clip, proj_clip


def validate(ctx):
    ctx.check_counts((23, 27), 4)
    t = ctx.check_input_type_in(0, (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16))
    scalar = FLOAT_SCALAR[t]
    expected = [t] * 20 + [T.INT32, scalar, scalar] + [t] * (ctx.num_inputs - 23)
    ctx.check_input_types(expected)
    ctx.check_output_types((t, t, t, t))
    return FL3 if (t == T.TENSOR_FLOAT16 or ctx.num_inputs == 27) else FL1


def _geometry(ctx):
    cm.check(ctx, all(ctx.has_input(i) for i in (0, 18, 19, 20, 21, 22)),
             "a required input is omitted")
    x = ctx.input(0)
    cm.check(ctx, x.ndim == 2, f"input has rank {x.ndim}, expected 2")
    cm.check(ctx, ctx.has_input(4) and ctx.has_input(8), "required weights are omitted")
    n_cell, n_output = ctx.input_shape(8)
    return x.shape[0], x.shape[1], n_cell, n_output


def prepare(ctx):
    batch, n_input, n_cell, n_output = _geometry(ctx)
    weights = read_weights(ctx, 1, 23 if ctx.num_inputs == 27 else None, n_input, n_output,
                           n_cell)
    clip_values(ctx, 20)
    gates = 3 if weights.input_to[0] is None else 4
    for i, shape in enumerate(((batch, gates * n_cell), (batch, n_output), (batch, n_cell),
                               (batch, n_output))):
        ctx.set_output_shape(i, shape)


def execute(ctx):
    batch, n_input, n_cell, n_output = _geometry(ctx)
    weights = read_weights(ctx, 1, 23 if ctx.num_inputs == 27 else None, n_input, n_output,
                           n_cell)
    act, cell_clip, proj_clip = clip_values(ctx, 20)
    out, h, c, scratch = lstm_sequence(ctx.input(0)[np.newaxis], weights, ctx.input(18),
                                       ctx.input(19), act, cell_clip, proj_clip)
    ctx.set_output(0, scratch_layout(scratch, weights.input_to[0] is None))
    ctx.set_output(1, h)
    ctx.set_output(2, c)
    ctx.set_output(3, out[0])


SPEC = OperationSpec(OperationCode.LSTM, validate, prepare, execute, allow_omitted_operand=True)
