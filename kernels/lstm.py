"""Float LSTM cell over a sequence (NNAPI LSTM, UNIDIRECTIONAL_ and BIDIRECTIONAL_SEQUENCE_LSTM).

Semantics of AOSP common/cpu_operations/LSTM.cpp ``LSTMCell::LSTMStep`` (itself TFLite's float
LSTM), evaluated in float32 with the time loop inside the jitted core:

* gates i, f, c, o = bias + W x + W_aux aux + R h_prev (each product summed per row, then added,
  as tensor_utils::MatrixBatchVectorMultiplyAccumulate); with layer normalization the gate
  starts at 0 and ``bias`` is added after ``normalize(gate) * ln_weight``;
* peephole: i += w_ci * c_prev, f += w_cf * c_prev, o += w_co * c_new;
* CIFG (no input gate): i = 1 - f;
* c_new = f * c_prev + i * act(c), clipped to +-cell_clip when cell_clip > 0;
* h = o * act(c_new); with projection out = proj_bias + P h, clipped to +-proj_clip when > 0.

float16 operands are converted to float32 first and the results rounded back, as AOSP's
``LSTMEvalFloat16`` does.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nnsim.kernels._builtins import empty, greater, lesser, zeros

from nnsim.kernels._jit import njit
from nnsim.kernels.rnn import _apply_activation

GATE_INPUT, GATE_FORGET, GATE_CELL, GATE_OUTPUT = 0, 1, 2, 3


@njit(inner=True)
def _sigmoid(v):
    return np.float32(np.float32(1.0) / (np.float32(1.0) + np.float32(np.exp(-v))))


@njit(inner=True)
def _mean_stddev_normalize(g, n_cell):
    """tensor_utils::MeanStddevNormalization of one row (variance + 1e-8 under the root)."""
    total = np.float32(0.0)
    for k in range(n_cell):
        total += g[k]
    mean = total / np.float32(n_cell)
    sq = np.float32(0.0)
    for k in range(n_cell):
        d = g[k] - mean
        sq += d * d
    variance = sq / np.float32(n_cell)
    inv = np.float32(1.0) / np.float32(np.sqrt(variance + np.float32(1e-8)))
    for k in range(n_cell):
        g[k] = (g[k] - mean) * inv


@njit(inner=True)
def _gate_row(g, gate, x_row, aux_row, h_row, w_in, w_aux, w_rec, bias, layer_norm):
    n_cell = g.shape[0]
    for k in range(n_cell):
        acc = np.float32(0.0) if layer_norm else bias[gate, k]
        dot = np.float32(0.0)
        for i in range(x_row.shape[0]):
            dot += w_in[gate, k, i] * x_row[i]
        acc += dot
        if aux_row.shape[0] > 0:
            dot = np.float32(0.0)
            for i in range(aux_row.shape[0]):
                dot += w_aux[gate, k, i] * aux_row[i]
            acc += dot
        dot = np.float32(0.0)
        for i in range(h_row.shape[0]):
            dot += w_rec[gate, k, i] * h_row[i]
        g[k] = acc + dot


@njit(inner=True)
def _finish_gate(g, gate, c_row, peep, ln, bias, peephole, layer_norm):
    n_cell = g.shape[0]
    if peephole:
        for k in range(n_cell):
            g[k] += peep[gate, k] * c_row[k]
    if layer_norm:
        _mean_stddev_normalize(g, n_cell)
        for k in range(n_cell):
            g[k] = g[k] * ln[gate, k] + bias[gate, k]


@njit
def _lstm_core(x, aux, w_in, w_aux, w_rec, peep, bias, ln, proj_w, proj_b, flags, clips,
               h, c, out, scratch):
    """flags: cifg, peephole, layer_norm, projection, activation, reverse.
    x [T, B, I], aux [T, B, A], w_in [4, C, I], w_aux [4, C, A], w_rec [4, C, O],
    peep/bias/ln [4, C], proj_w [O, C], proj_b [O]; h [B, O] and c [B, C] hold the state in
    and out; out [T, B, O]; scratch [4, B, C] gets the last step's gate buffers."""
    cifg, peephole, layer_norm, projection, act, reverse = (flags[0] != 0, flags[1] != 0,
                                                          flags[2] != 0, flags[3] != 0,
                                                          flags[4], flags[5] != 0)
    cell_clip, proj_clip = clips[0], clips[1]
    steps, batches, _ = x.shape
    n_cell = w_in.shape[1]
    n_out = w_rec.shape[2]
    gi = zeros(n_cell, np.float32)
    gf = empty(n_cell, np.float32)
    gc = empty(n_cell, np.float32)
    go = empty(n_cell, np.float32)
    c_new = empty(n_cell, np.float32)
    h_new = empty((batches, n_out), np.float32)
    for s in range(steps):
        t = steps - 1 - s if reverse else s
        for b in range(batches):
            x_row, aux_row, h_row, c_row = x[t, b], aux[t, b], h[b], c[b]
            if not cifg:
                _gate_row(gi, GATE_INPUT, x_row, aux_row, h_row, w_in, w_aux, w_rec, bias,
                          layer_norm)
            _gate_row(gf, GATE_FORGET, x_row, aux_row, h_row, w_in, w_aux, w_rec, bias,
                      layer_norm)
            _gate_row(gc, GATE_CELL, x_row, aux_row, h_row, w_in, w_aux, w_rec, bias,
                      layer_norm)
            _gate_row(go, GATE_OUTPUT, x_row, aux_row, h_row, w_in, w_aux, w_rec, bias,
                      layer_norm)
            if not cifg:
                _finish_gate(gi, GATE_INPUT, c_row, peep, ln, bias, peephole, layer_norm)
                for k in range(n_cell):
                    gi[k] = _sigmoid(gi[k])
            _finish_gate(gf, GATE_FORGET, c_row, peep, ln, bias, peephole, layer_norm)
            for k in range(n_cell):
                gf[k] = _sigmoid(gf[k])
            _finish_gate(gc, GATE_CELL, c_row, peep, ln, bias, False, layer_norm)
            for k in range(n_cell):
                gc[k] = _apply_activation(gc[k], act)
                if cifg:
                    gi[k] = np.float32(1.0) - gf[k]
                c_new[k] = gf[k] * c_row[k] + gc[k] * gi[k]
                if cell_clip > 0:
                    c_new[k] = lesser(greater(c_new[k], -cell_clip), cell_clip)
            _finish_gate(go, GATE_OUTPUT, c_new, peep, ln, bias, peephole, layer_norm)
            for k in range(n_cell):
                go[k] = _sigmoid(go[k]) * _apply_activation(c_new[k], act)
                c[b, k] = c_new[k]
            if projection:
                for o in range(n_out):
                    dot = np.float32(0.0)
                    for k in range(n_cell):
                        dot += proj_w[o, k] * go[k]
                    v = proj_b[o] + dot
                    if proj_clip > 0:
                        v = lesser(greater(v, -proj_clip), proj_clip)
                    h_new[b, o] = v
            else:
                for o in range(lesser(n_out, n_cell)):   # AOSP copies n_output values
                    h_new[b, o] = go[o]
            for k in range(n_cell):
                scratch[0, b, k] = gi[k]
                scratch[1, b, k] = gi[k] if cifg else gf[k]   # Sub1Vector overwrote f
                scratch[2, b, k] = _apply_activation(c_new[k], act)
                scratch[3, b, k] = go[k]
        for b in range(batches):
            for o in range(n_out):
                h[b, o] = h_new[b, o]
                out[t, b, o] = h_new[b, o]


@dataclass
class LstmWeights:
    """One direction's parameters; None marks an omitted optional operand."""
    input_to: list            # [input, forget, cell, output] weights [C, I] (input may be None)
    recurrent_to: list        # [input, forget, cell, output] weights [C, O]
    bias: list                # [input, forget, cell, output] [C]
    cell_to: list             # [input, forget, output] peephole weights [C] or None
    projection: np.ndarray | None = None
    projection_bias: np.ndarray | None = None
    layer_norm: list | None = None   # [input, forget, cell, output] [C] or None
    aux_to: list | None = None       # [input, forget, cell, output] aux weights [C, A]


def _stack(parts, shape):
    out = np.zeros(shape, np.float32)
    for g, p in enumerate(parts):
        if p is not None:
            out[g] = np.asarray(p, np.float32).reshape(shape[1:])
    return out


def lstm_sequence(x, weights: LstmWeights, h0, c0, activation, cell_clip, proj_clip,
                  aux=None, reverse=False):
    """Run one LSTM direction over time-major ``x`` [T, B, I]. Returns float32
    (outputs [T, B, O], h [B, O], c [B, C], scratch [4, B, C] of the last step, gate order
    input, forget, cell, output)."""
    f32 = np.float32
    x = np.ascontiguousarray(x, f32)
    steps, batches, n_in = x.shape
    n_cell, n_out = np.shape(weights.recurrent_to[3])
    cifg = weights.input_to[0] is None
    peephole = weights.cell_to[2] is not None
    layer_norm = weights.layer_norm is not None and weights.layer_norm[3] is not None
    projection = weights.projection is not None
    use_aux = aux is not None and weights.aux_to is not None and weights.aux_to[1] is not None
    n_aux = np.shape(aux)[2] if use_aux else 0
    aux_arr = np.ascontiguousarray(aux, f32) if use_aux else np.zeros((steps, batches, 0), f32)
    w_aux = _stack(weights.aux_to, (4, n_cell, n_aux)) if use_aux else \
        np.zeros((4, n_cell, 0), f32)
    peep_parts = [weights.cell_to[0], weights.cell_to[1], None, weights.cell_to[2]]
    ln = _stack(weights.layer_norm, (4, n_cell)) if layer_norm else np.zeros((4, n_cell), f32)
    proj_w = np.asarray(weights.projection, f32) if projection else np.zeros((n_out, n_cell), f32)
    proj_b = np.zeros(n_out, f32) if weights.projection_bias is None else \
        np.asarray(weights.projection_bias, f32)
    flags = np.array([cifg, peephole, layer_norm, projection, int(activation), reverse], np.int64)
    clips = np.array([cell_clip, proj_clip], f32)
    h = np.array(h0, f32).reshape(batches, n_out)
    c = np.array(c0, f32).reshape(batches, n_cell)
    out = np.empty((steps, batches, n_out), f32)
    scratch = np.zeros((4, batches, n_cell), f32)
    _lstm_core(x, aux_arr, _stack(weights.input_to, (4, n_cell, n_in)), w_aux,
               _stack(weights.recurrent_to, (4, n_cell, n_out)), _stack(peep_parts, (4, n_cell)),
               _stack(weights.bias, (4, n_cell)), ln, np.ascontiguousarray(proj_w),
               proj_b, flags, clips, h, c, out, scratch)
    return out, h, c, scratch


def scratch_layout(scratch, cifg):
    """The LSTM scratch output [B, 3C or 4C] as AOSP lays it out: gate blocks of B*C values,
    (input,) cell, forget, output."""
    blocks = [scratch[2], scratch[1], scratch[3]] if cifg else \
        [scratch[0], scratch[2], scratch[1], scratch[3]]
    flat = np.concatenate([blk.ravel() for blk in blocks])
    return flat.reshape(scratch.shape[1], -1)
