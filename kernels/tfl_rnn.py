"""TFLite's basic RNN cell over a whole sequence (float32), and the SVDF step (float, int8).

LiteRT ``kernels/internal/kernel_utils.cc`` ``RnnBatchStep``, used by the RNN,
UNIDIRECTIONAL_SEQUENCE_RNN and BIDIRECTIONAL_SEQUENCE_RNN builtins:
``h = act(bias + W x + R h)`` (each product a row dot product summed in order and added to the
running value, as ``PortableMatrixBatchVectorMultiplyAccumulate``), written to the output and
kept as the new hidden state. Each batch row is independent, so the core walks one row at a
time through the whole sequence (the time loop is inside the core).
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels._builtins import empty, greater, lesser

from nnsim.kernels._jit import njit
from nnsim.kernels.fixed_point import multiply_by_quantized_multiplier as mbqm
from nnsim.kernels.fixed_point import quantize_multiplier, wrap_int32
from nnsim.kernels.tfl_lstm import _act

__all__ = ["rnn_float", "svdf", "svdf_multipliers"]


@njit
def _rnn_float_core(x, w, r, bias, act, reverse, h, out):
    n_batch, n_time, n_input = x.shape
    units = w.shape[0]
    row = empty(units, np.float32)
    for b in range(n_batch):
        for step in range(n_time):
            t = n_time - 1 - step if reverse else step
            for u in range(units):
                dot = np.float32(0)
                for k in range(n_input):
                    dot += w[u, k] * x[b, t, k]
                v = np.float32(bias[u] + dot)
                dot = np.float32(0)
                for k in range(units):
                    dot += r[u, k] * h[b, k]
                row[u] = _act(np.float32(v + dot), act)
            for u in range(units):
                h[b, u] = row[u]
                out[b, t, u] = row[u]


def rnn_float(x, w, r, bias, *, act, reverse, h, out):
    """Run the RNN over ``x`` [batch, time, input]; ``h`` [batch, units] is updated in place
    and ``out`` [batch, time, units] written. ``act``: 0 none, 1 relu, 2 relu1, 3 relu6,
    4 tanh."""
    _rnn_float_core(x, w, r, bias, int(act), bool(reverse), h, out)
    return out


# -- SVDF ---------------------------------------------------------------------------------------
@njit
def _svdf_core(x, wf, wt, bias, has_bias, rank, act, state, out, integer, in_zp, m1, s1, m2, s2,
               out_zp):
    """LiteRT ``reference_ops::EvalFloatSVDF`` / ``EvalIntegerSVDF`` for one step.

    ``state`` [batch, filters, memory] shifts one slot left and takes the new feature
    activation in its last slot; the output sums, per unit, the ``rank`` filters' dot products
    of weights_time with the state, adds the bias and applies the activation (float) or
    requantizes to int8 (integer: the RELU the converter asks for is not applied, as LiteRT).
    """
    n_batch, n_input = x.shape
    n_filter, n_memory = wt.shape
    n_unit = n_filter // rank
    for b in range(n_batch):
        for f in range(n_filter):
            for m in range(n_memory - 1):
                state[b, f, m] = state[b, f, m + 1]
            if integer:
                acc = np.int64(0)
                for k in range(n_input):
                    acc += np.int64(wf[f, k]) * (np.int64(x[b, k]) - in_zp)
                v = mbqm(wrap_int32(acc), m1, s1)
                state[b, f, n_memory - 1] = lesser(greater(v, -32768), 32767)
            else:
                dot = np.float32(0)
                for k in range(n_input):
                    dot += wf[f, k] * x[b, k]
                state[b, f, n_memory - 1] = dot
        for u in range(n_unit):
            if integer:
                total = np.int64(0)
                for r in range(rank):
                    f = u * rank + r
                    dot = np.int64(0)
                    for m in range(n_memory):
                        dot += np.int64(wt[f, m]) * np.int64(state[b, f, m])
                    total += wrap_int32(dot)
                if has_bias:
                    total += np.int64(bias[u])
                v = mbqm(wrap_int32(total), m2, s2) + out_zp
                out[b, u] = lesser(greater(v, -128), 127)
            else:
                total = np.float32(0)
                for r in range(rank):
                    f = u * rank + r
                    dot = np.float32(0)
                    for m in range(n_memory):
                        dot += wt[f, m] * state[b, f, m]
                    total += dot
                if has_bias:
                    total = np.float32(total + bias[u])
                out[b, u] = _act(total, act)


def svdf(x, wf, wt, bias, *, rank, act, state, out, in_zp=0, m1=0, s1=0, m2=0, s2=0,
         out_zp=0):
    """One SVDF step: ``x`` [batch, input], ``state`` [batch, filters, memory] updated in
    place, ``out`` [batch, units] written. Integer when ``x`` is int8 (multipliers from
    ``svdf_multipliers``)."""
    integer = x.dtype == np.int8
    has_bias = bias is not None
    if bias is None:
        bias = np.zeros(1, np.int32 if integer else np.float32)
    _svdf_core(x, wf, wt, bias, has_bias, int(rank), int(act), state, out, integer,
               int(in_zp), int(m1), int(s1), int(m2), int(s2), int(out_zp))
    return out


def svdf_multipliers(input_scale, feature_scale, state_scale, time_scale, output_scale):
    """svdf.cc Prepare: the two effective scales, computed in float32 as the C++ does."""
    f32 = np.float32
    e1 = f32(f32(f32(input_scale) * f32(feature_scale)) / f32(state_scale))
    e2 = f32(f32(f32(state_scale) * f32(time_scale)) / f32(output_scale))
    return (*quantize_multiplier(float(e1)), *quantize_multiplier(float(e2)))
