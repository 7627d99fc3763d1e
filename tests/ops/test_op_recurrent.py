"""Recurrent operations on small hand-computed cases (RNN, LSTM with CIFG, SVDF rank 1,
sequence and bidirectional forms), feature levels, and the int16 gemmlowp helpers of
QUANTIZED_16BIT_LSTM. The full AOSP vectors run in tests/conformance."""
import math
from dataclasses import replace

import numpy as np
import pytest

from nnsim.errors import NnapiError
from nnsim.kernels import fixed_point16 as qk
from nnsim.types import FL1, FL3, FL4, OperandType as T, OperationCode as C

from .ophelp import Opnd, boolean, f16, f32, feature_level, fl32, i32, run


def omitted(dims=(0,)):
    return Opnd(T.TENSOR_FLOAT32, tuple(dims), omitted=True)


def sigmoid(v):
    return 1.0 / (1.0 + math.exp(-v))


# -- RNN ---------------------------------------------------------------------------------------
RNN_INPUTS = [f32([1, 2]), f32([2, 2], [0.5, -1, 1, 1]), f32([2, 2], [1, 0, 0, 1]),
              f32([2], [0.1, -0.2]), f32([1, 2])]


def test_rnn_one_step_relu():
    # unit 0: 0.1 + 0.5*1 - 1*2 + 0.5 = -0.9 -> relu 0; unit 1: -0.2 + 1 + 2 + 0.5 = 3.3
    state, out = run(C.RNN, RNN_INPUTS + [i32(1)], [f32([1, 2]), f32([1, 2])],
                     [[1, 2], [0.5, 0.5]])
    np.testing.assert_allclose(out, [[0, 3.3]], rtol=1e-6)
    np.testing.assert_array_equal(state, out)


def test_rnn_relu1_fails_at_execution():
    with pytest.raises(NnapiError):   # AOSP's ActivationFunctor aborts on RELU1
        run(C.RNN, RNN_INPUTS + [i32(2)], [f32([1, 2]), f32([1, 2])], [[1, 2], [0.5, 0.5]])


def test_unidirectional_rnn_feeds_the_state_forward_batch_major():
    ins = [f32([1, 2, 2]), *RNN_INPUTS[1:4], f32([1, 2]), i32(1), i32(0)]
    out, state = run(C.UNIDIRECTIONAL_SEQUENCE_RNN, ins, [f32([1, 2, 2]), f32([1, 2])],
                     [[[[1, 2], [0, 0]]], [[0.5, 0.5]]])
    # step 2: x = 0, h = [0, 3.3]: unit 0: 0.1 + 0 = 0.1; unit 1: -0.2 + 3.3 = 3.1
    np.testing.assert_allclose(out, [[[0, 3.3], [0.1, 3.1]]], rtol=1e-6)
    np.testing.assert_allclose(state, [[0.1, 3.1]], rtol=1e-6)


def test_bidirectional_rnn_merged_is_forward_then_reversed_backward():
    w = RNN_INPUTS[1:4]
    ins = [f32([2, 1, 2]), *w, f32([1, 2]), *w, f32([1, 2]), omitted(), omitted(), omitted(),
           i32(1), boolean(True), boolean(True)]
    x = [[[1, 2]], [[0, 0]]]
    (merged,) = run(C.BIDIRECTIONAL_SEQUENCE_RNN, ins, [f32([2, 1, 4])],
                    [x, [[0.5, 0.5]], [[0.5, 0.5]]])
    # forward: t0 [0, 3.3], t1 [0.1, 3.1]; backward starts at t1 (x = 0, h = [.5, .5], R = I):
    # [0.1 + 0.5, -0.2 + 0.5] = [0.6, 0.3]; then t0 with h = [0.6, 0.3]:
    # [0.1 + 0.5 - 2 + 0.6, -0.2 + 1 + 2 + 0.3] -> relu [0, 3.1]
    np.testing.assert_allclose(merged[:, 0], [[0, 3.3, 0, 3.1], [0.1, 3.1, 0.6, 0.3]],
                               rtol=1e-6)


# -- LSTM --------------------------------------------------------------------------------------
def lstm_cifg_inputs(n_inputs=23):
    one = lambda: f32([1, 1], [1])           # noqa: E731
    zero = lambda: f32([1, 1], [0])          # noqa: E731
    bias0 = lambda: f32([1], [0])            # noqa: E731
    ins = [f32([1, 1]), omitted(), one(), one(), one(), omitted(), zero(), zero(), zero(),
           omitted(), omitted(), omitted(), omitted(), bias0(), bias0(), bias0(), omitted(),
           omitted(), f32([1, 1]), f32([1, 1]), i32(4), fl32(0.0), fl32(0.0)]
    return ins + [omitted()] * (n_inputs - 23)


def test_lstm_one_step_cifg():
    outs = [f32([1, 3]), f32([1, 1]), f32([1, 1]), f32([1, 1])]
    scratch, h, c, out = run(C.LSTM, lstm_cifg_inputs(), outs, [[[1]], [[0]], [[0.5]]])
    f = sigmoid(1.0)                        # forget gate: W x = 1
    cell = f * 0.5 + math.tanh(1.0) * (1 - f)   # CIFG: input gate = 1 - f
    want_h = sigmoid(1.0) * math.tanh(cell)
    np.testing.assert_allclose(c, [[cell]], rtol=1e-6)
    np.testing.assert_allclose(h, [[want_h]], rtol=1e-6)
    np.testing.assert_array_equal(out, h)
    assert scratch.shape == (1, 3)


def test_lstm_cell_clip():
    ins = lstm_cifg_inputs()
    ins[21] = fl32(0.25)
    _, _, c, _ = run(C.LSTM, ins, [f32([1, 3]), f32([1, 1]), f32([1, 1]), f32([1, 1])],
                     [[[1]], [[0]], [[0.5]]])
    np.testing.assert_allclose(c, [[0.25]])


def test_lstm_input_gate_bias_with_cifg_fails():
    ins = lstm_cifg_inputs()
    ins[12] = f32([1], [0])
    with pytest.raises(NnapiError):
        run(C.LSTM, ins, [f32([1, 3]), f32([1, 1]), f32([1, 1]), f32([1, 1])],
            [[[1]], [[0]], [[0.5]]])


def test_unidirectional_lstm_two_steps_match_two_lstm_steps():
    ins = [f32([2, 1, 1])] + lstm_cifg_inputs(23)[1:23] + [boolean(True)] + [omitted()] * 4
    out, h, c = run(C.UNIDIRECTIONAL_SEQUENCE_LSTM, ins,
                    [f32([2, 1, 1]), f32([1, 1]), f32([1, 1])], [[[[1]], [[-1]]], [[0]], [[0.5]]])
    step = lambda x, h0, c0: run(C.LSTM, lstm_cifg_inputs(),  # noqa: E731
                                 [f32([1, 3]), f32([1, 1]), f32([1, 1]), f32([1, 1])],
                                 [[[x]], h0, c0])
    _, h1, c1, _ = step(1, [[0]], [[0.5]])
    _, h2, c2, _ = step(-1, h1, c1)
    np.testing.assert_allclose(out.ravel(), [h1[0, 0], h2[0, 0]], rtol=1e-6)
    np.testing.assert_allclose(c, c2, rtol=1e-6)


def test_lstm_feature_levels():
    outs = [f32([1, 3]), f32([1, 1]), f32([1, 1]), f32([1, 1])]
    assert feature_level(C.LSTM, lstm_cifg_inputs(), outs) == FL1
    assert feature_level(C.LSTM, lstm_cifg_inputs(27), outs) == FL3
    uni = lstm_cifg_inputs()[:23] + [boolean(True)] + [omitted()] * 4
    assert feature_level(C.UNIDIRECTIONAL_SEQUENCE_LSTM, uni, [f32([2, 1, 1])]) == FL3
    three = [f32([2, 1, 1]), f32([1, 1]), f32([1, 1])]
    assert feature_level(C.UNIDIRECTIONAL_SEQUENCE_LSTM, uni, three) == FL4


# -- SVDF --------------------------------------------------------------------------------------
def test_svdf_rank1_one_step():
    ins = [f32([1, 2]), f32([1, 2], [1, 2]), f32([1, 2], [0.5, 1]), f32([1], [1]),
           f32([1, 2]), i32(1), i32(0)]
    state, out = run(C.SVDF, ins, [f32([1, 2]), f32([1, 1])], [[[1, 1]], [[3, 4]]])
    # newest slot := W_f x = 3 -> memory [3, 3]; 0.5*3 + 1*3 + bias 1 = 5.5; shifted [3, 0]
    np.testing.assert_allclose(out, [[5.5]])
    np.testing.assert_allclose(state, [[3, 0]])


def test_svdf_feature_levels():
    ins = [f16([1, 2]), f16([1, 2], [1, 2]), f16([1, 2], [0.5, 1]), f16([1], [1]),
           f16([1, 2]), i32(1), i32(0)]
    assert feature_level(C.SVDF, ins, [f16([1, 2]), f16([1, 1])]) == FL3
    ins32 = [replace(o, type=T.TENSOR_FLOAT32) if o.type == T.TENSOR_FLOAT16 else o
             for o in ins]
    assert feature_level(C.SVDF, ins32, [f32([1, 2]), f32([1, 1])]) == FL1


# -- QUANTIZED_16BIT_LSTM fixed point ---------------------------------------------------------
def test_int16_logistic_and_tanh_track_the_real_functions():
    # Q3.12 inputs over the whole range; results Q0.15 within 12 LSB (2**-11.4) of the real function
    # (gemmlowp's 16-bit division iterates in Q2.13, so its output moves in 2-LSB steps and
    # tanh's drifts up to ~10 LSB mid-range; bit-exactness is checked by the AOSP vectors)
    for raw in range(-32768, 32768, 97):
        x = raw / 4096.0
        assert abs(qk.logistic16(raw, 3) - sigmoid(x) * 32768) <= 12, raw
        assert abs(qk.tanh16(raw, 3) - math.tanh(x) * 32768) <= 12, raw
    assert qk.logistic16(0, 3) == 16384 and qk.tanh16(0, 3) == 0


def test_int16_saturating_primitives():
    assert qk.srdhm16(-32768, -32768) == 32767
    assert qk.srdhm16(16384, 16384) == 8192            # 0.5 * 0.5 in Q0.15
    assert qk.srmpot16(20000, 1) == 32767 and qk.srmpot16(-20000, 1) == -32768
    assert qk.sat_add16(30000, 30000) == 32767
    assert qk.const16(1 << 30) == 16384
