"""SVDF (NNAPI operation 27): rank-decomposed time convolution with a state memory.

AOSP common/cpu_operations/SVDF.cpp ``EvalFloat32`` in float32 (float16 converted to float32
and back, as AOSP does). The state [B, F * M] (F = num_units * rank filters, M = memory_size)
holds each filter's last M activations, oldest first; one step:

1. state_out = state_in with each filter's newest slot (index M - 1) replaced by
   ``weights_feature[f] . x[b]``;
2. per filter, ``weights_time[f] . state_out[b, f]``; each group of ``rank`` filters summed into
   one unit; bias added; activation (TFLite fused activation code);
3. the state shifted one slot left, the newest slot zeroed.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels._builtins import empty

from nnsim.kernels._jit import njit
from nnsim.kernels.rnn import _apply_activation


@njit
def _svdf_core(x, state, w_feature, w_time, bias, rank, act, out):
    """x [B, I]; state [B, F, M] updated in place; w_feature [F, I]; w_time [F, M];
    bias [U] (U = F / rank; zeros when omitted); out [B, U]."""
    batches, in_size = x.shape
    filters, memory = w_time.shape
    units = filters // rank
    scratch = empty(filters, np.float32)
    for b in range(batches):
        for f in range(filters):
            dot = np.float32(0.0)
            for i in range(in_size):
                dot += w_feature[f, i] * x[b, i]
            state[b, f, memory - 1] = dot
        for f in range(filters):
            acc = np.float32(0.0)
            for m in range(memory):
                acc += w_time[f, m] * state[b, f, m]
            scratch[f] = acc
        for u in range(units):
            total = np.float32(0.0)
            for r in range(rank):
                total += scratch[u * rank + r]
            out[b, u] = _apply_activation(total + bias[u], act)
        for f in range(filters):
            for m in range(memory - 1):
                state[b, f, m] = state[b, f, m + 1]
            state[b, f, memory - 1] = np.float32(0.0)


def svdf(x, state_in, w_feature, w_time, bias, rank, activation):
    """One SVDF step in float32: returns (state_out [B, F * M], output [B, U])."""
    f32 = np.float32
    x = np.ascontiguousarray(x, f32)
    batches = x.shape[0]
    filters, memory = np.shape(w_time)
    units = filters // rank
    state = np.array(state_in, f32).reshape(batches, filters, memory)
    bias = np.zeros(units, f32) if bias is None else np.ascontiguousarray(bias, f32)
    out = np.empty((batches, units), f32)
    _svdf_core(x, state, np.ascontiguousarray(w_feature, f32), np.ascontiguousarray(w_time, f32),
               bias, int(rank), int(activation), out)
    return state.reshape(batches, filters * memory), out
