"""Basic recurrent cell (NNAPI RNN, UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN).

``h_t = activation(bias + W x_t [+ W_aux aux_t] + R h_{t-1})`` per batch row, the sum
accumulated in float32 in AOSP's order (bias, then input, aux input, recurrent terms; common/
cpu_operations/RNN.cpp ``RNNStep``). The time loop runs inside the jitted core.

float16 operands are computed in float32 and rounded once at the end (AOSP evaluates
``RNNStep<_Float16>`` in half precision; the float32 result is the closer one to the exact
value and within the float16 conformance tolerance).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels._builtins import empty, greater, lesser

from nnsim.kernels._jit import njit

# ActivationFn of AOSP's ActivationFunctor (RNN family): 0 none, 1 relu, 3 relu6, 4 tanh,
# 6 sigmoid. 2 (relu1) and 5 (sign bit) make ActivationFunctor abort.
RNN_ACTIVATIONS = (0, 1, 3, 4, 6)


@njit(inner=True)
def _apply_activation(v, act):
    """One float32 value through ActivationFunctor / TFLite ApplyActivationToVector
    (0 none, 1 relu, 2 relu_n1_to_1, 3 relu6, 4 tanh, 6 sigmoid)."""
    one = np.float32(1.0)
    if act == 1:
        return v if v > 0 else np.float32(0.0)
    if act == 2:
        return lesser(greater(v, -one), one)
    if act == 3:
        return lesser(greater(v, np.float32(0.0)), np.float32(6.0))
    if act == 4:
        return np.float32(np.tanh(v))
    if act == 6:
        return np.float32(one / (one + np.float32(np.exp(-v))))
    return v


@njit
def _rnn_core(x, aux, w, aux_w, rw, bias, h, act, reverse, out):
    """x [T, B, I], aux [T, B, A] (A = 0: no aux term), w [U, I], aux_w [U, A], rw [U, U],
    bias [U], h [B, U] (initial state in, final state out), out [T, B, U]."""
    steps, batches, in_size = x.shape
    aux_size = aux.shape[2]
    units = w.shape[0]
    row = empty(units, np.float32)
    for s in range(steps):
        t = steps - 1 - s if reverse else s
        for b in range(batches):
            for o in range(units):
                acc = bias[o]
                for i in range(in_size):
                    acc += x[t, b, i] * w[o, i]
                for i in range(aux_size):
                    acc += aux[t, b, i] * aux_w[o, i]
                for k in range(units):
                    acc += h[b, k] * rw[o, k]
                row[o] = _apply_activation(acc, act)
            for o in range(units):
                h[b, o] = row[o]
                out[t, b, o] = row[o]


def rnn_sequence(x, w, rw, bias, h0, activation, aux=None, aux_w=None, reverse=False):
    """Run the cell over time-major ``x`` [T, B, I]: returns (outputs [T, B, U], final state
    [B, U]) in float32. ``aux``/``aux_w`` add the auxiliary input term; ``reverse`` walks
    time backwards (outputs stay at their time index)."""
    f32 = np.float32
    x = np.ascontiguousarray(x, f32)
    steps, batches, _ = x.shape
    units = w.shape[0]
    if aux is None or aux_w is None:
        aux = np.zeros((steps, batches, 0), f32)
        aux_w = np.zeros((units, 0), f32)
    h = np.array(h0, f32).reshape(batches, units)
    out = np.empty((steps, batches, units), f32)
    _rnn_core(x, np.ascontiguousarray(aux, f32), np.ascontiguousarray(w, f32),
              np.ascontiguousarray(aux_w, f32), np.ascontiguousarray(rw, f32),
              np.ascontiguousarray(bias, f32), h, int(activation), bool(reverse), out)
    return out, h
