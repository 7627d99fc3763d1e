"""Recurrent CPU builtins (LSTM family) against LiteRT's reference kernels (BUILTIN_REF).

Each case writes a one-node model with ``ModelWriter`` (state inputs are variable tensors, the
integer LSTM carries its five intermediate tensors), runs it on nnsim and on LiteRT with the
reference op resolver, and compares the outputs of two consecutive invokes (the second starts
from the states the first left). Integer outputs must be identical; float outputs agree to
1e-5 relative (LiteRT's float LSTM multiplies with its optimized GEMM, whose summation order
is its own).
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from nnsim.tflite import Interpreter
from nnsim.tflite import options as O
from nnsim.tflite.schema import ActivationFunctionType as Act
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import TensorType
from nnsim.tflite.writer import ModelWriter

litert = pytest.importorskip("ai_edge_litert.interpreter")

F32, I8, I16, I32 = TensorType.FLOAT32, TensorType.INT8, TensorType.INT16, TensorType.INT32


def _sym8(rng, shape, scale=None):
    w = rng.standard_normal(shape).astype(np.float32) * 0.4
    s = float(np.abs(w).max() / 127) if scale is None else scale
    return np.clip(np.round(w / s), -127, 127).astype(np.int8), s


def lstm_model(rng, *, batch, time, n_input, n_cell, n_output=None, integer=False, cifg=False,
               peephole=False, projection=False, layer_norm=False, time_major=False,
               sequence=True, cell_clip=0.0, proj_clip=0.0):
    """A one-node LSTM model; float32, or int8 activations with an int16 cell (post-training
    quantization as the TFLite converter lays it out)."""
    n_output = n_output if projection else n_cell
    w = ModelWriter()
    in_q, out_q = (0.05, 3), (0.0078125, -2)
    ln_scale = 1.0 / 4096
    gate_scales = [2.0 ** -12, 0.00037, 2.0 ** -11, 0.00029] if layer_norm else [2.0 ** -12] * 4
    hidden_q = (0.0071, 4)
    if sequence:
        shape = (time, batch, n_input) if time_major else (batch, time, n_input)
    else:
        shape = (batch, n_input)
    x = w.add_tensor("input", shape, I8 if integer else F32, quantization=in_q if integer else None)

    def weights(name, rows, cols, scale_in):
        if integer:
            q, s = _sym8(rng, (rows, cols))
            return w.add_tensor(name, (rows, cols), I8, data=q, quantization=(s, 0)), s * scale_in
        return w.add_tensor(name, (rows, cols), F32,
                            data=rng.standard_normal((rows, cols)).astype(np.float32) * 0.4), 0

    ins = [x]
    bias_scales = []
    for gate in "ifco":
        if gate == "i" and cifg:
            ins.append(-1)
            bias_scales.append(None)
            continue
        t, s = weights(f"input_to_{gate}", n_cell, n_input, in_q[0])
        ins.append(t)
        bias_scales.append(s)
    for gate in "ifco":
        if gate == "i" and cifg:
            ins.append(-1)
            continue
        ins.append(weights(f"recurrent_to_{gate}", n_cell, n_output, out_q[0])[0])
    for gate in "ifo":
        if not peephole or (gate == "i" and cifg):
            ins.append(-1)
            continue
        v = rng.standard_normal(n_cell).astype(np.float32) * 0.3
        if integer:
            s = float(np.abs(v).max() / 32767)
            ins.append(w.add_tensor(f"cell_to_{gate}", (n_cell,), I16,
                                    data=np.round(v / s).astype(np.int16), quantization=(s, 0)))
        else:
            ins.append(w.add_tensor(f"cell_to_{gate}", (n_cell,), F32, data=v))
    for g, gate in enumerate("ifco"):
        if gate == "i" and cifg:
            ins.append(-1)
            continue
        v = rng.standard_normal(n_cell).astype(np.float32) * 0.5 + (1.0 if gate == "f" else 0)
        if integer:
            s = ln_scale * 2.0 ** -10 if layer_norm else bias_scales[g]
            ins.append(w.add_tensor(f"{gate}_bias", (n_cell,), I32,
                                    data=np.round(v / s).astype(np.int32), quantization=(s, 0)))
        else:
            ins.append(w.add_tensor(f"{gate}_bias", (n_cell,), F32, data=v))
    if projection:
        ins.append(weights("projection", n_output, n_cell, hidden_q[0])[0])
        pb = rng.standard_normal(n_output).astype(np.float32) * 0.1
        if integer:
            s = w._tensors[ins[-1]].quantization.scales[0] * hidden_q[0]
            ins.append(w.add_tensor("projection_bias", (n_output,), I32,
                                    data=np.round(pb / s).astype(np.int32), quantization=(s, 0)))
        else:
            ins.append(w.add_tensor("projection_bias", (n_output,), F32, data=pb))
    else:
        ins += [-1, -1]
    ins.append(w.add_tensor("output_state", (batch, n_output), I8 if integer else F32,
                            quantization=out_q if integer else None, is_variable=True))
    ins.append(w.add_tensor("cell_state", (batch, n_cell), I16 if integer else F32,
                            quantization=(2.0 ** -11, 0) if integer else None, is_variable=True))
    if layer_norm:
        for gate in "ifco":
            if gate == "i" and cifg:
                ins.append(-1)
                continue
            v = 1.0 + rng.standard_normal(n_cell).astype(np.float32) * 0.2
            if integer:
                ins.append(w.add_tensor(f"{gate}_ln", (n_cell,), I16,
                                        data=np.round(v / ln_scale).astype(np.int16),
                                        quantization=(ln_scale, 0)))
            else:
                ins.append(w.add_tensor(f"{gate}_ln", (n_cell,), F32, data=v))
    inter = []
    if integer:
        for k, s in enumerate(gate_scales):
            inter.append(w.add_tensor(f"intermediate_{k}", (0,), I16, quantization=(s, 0)))
        inter.append(w.add_tensor("intermediate_4", (0,), I8, quantization=hidden_q))
    out_shape = shape[:-1] + (n_output,)
    out = w.add_tensor("output", out_shape, I8 if integer else F32,
                       quantization=out_q if integer else None)
    if sequence:
        op, opts = B.UNIDIRECTIONAL_SEQUENCE_LSTM, O.UnidirectionalSequenceLSTMOptions(
            fused_activation_function=Act.TANH, cell_clip=cell_clip, proj_clip=proj_clip,
            time_major=time_major)
    else:
        op, opts = B.LSTM, O.LSTMOptions(fused_activation_function=Act.TANH,
                                         cell_clip=cell_clip, proj_clip=proj_clip)
    w.add_operator(op, ins, [out], opts, intermediates=inter)
    w.set_inputs([x])
    w.set_outputs([out])
    return w.finish(), shape


def run_twice(blob, feeds):
    """Outputs of two invokes (state carried over) on nnsim and on LiteRT BUILTIN_REF."""
    ours = Interpreter(model_content=blob)
    ref = litert.Interpreter(model_content=blob, num_threads=1,
                             experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    results = []
    for ip in (ours, ref):
        ip.allocate_tensors()
        got = []
        for feed in feeds:
            ip.set_tensor(ip.get_input_details()[0]["index"], feed)
            ip.invoke()
            got.append(ip.get_tensor(ip.get_output_details()[0]["index"]))
        results.append(got)
    return results


def _feeds(rng, shape, integer, n=2):
    if integer:
        return [rng.integers(-128, 128, shape).astype(np.int8) for _ in range(n)]
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(n)]


def _compare(ours, ref, integer):
    for a, b in zip(ours, ref):
        assert a.shape == b.shape and a.dtype == b.dtype
        if integer:
            diff = int(np.count_nonzero(a != b))
            assert diff == 0, f"{diff} of {a.size} values differ"
        else:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


VARIANTS = {
    "plain": {},
    "cifg": {"cifg": True},
    "peephole": {"peephole": True},
    "projection": {"projection": True, "n_output": 5},
    "layer_norm": {"layer_norm": True},
    "cifg_peephole_ln": {"cifg": True, "peephole": True, "layer_norm": True},
    "clips": {"cell_clip": 0.8, "proj_clip": 0.3, "projection": True, "n_output": 6},
}


def _seed(request):
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.mark.parametrize("integer", [False, True], ids=["float", "int8"])
@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("time_major", [False, True], ids=["batch_major", "time_major"])
def test_unidirectional_sequence_lstm(request, integer, variant, time_major):
    rng = _seed(request)
    blob, shape = lstm_model(rng, batch=3, time=5, n_input=7, n_cell=8, integer=integer,
                             time_major=time_major, **VARIANTS[variant])
    ours, ref = run_twice(blob, _feeds(rng, shape, integer))
    _compare(ours, ref, integer)


@pytest.mark.parametrize("integer", [False, True], ids=["float", "int8"])
@pytest.mark.parametrize("variant", ["plain", "cifg_peephole_ln", "projection"])
def test_lstm_single_step(request, integer, variant):
    rng = _seed(request)
    blob, shape = lstm_model(rng, batch=2, time=1, n_input=6, n_cell=4, integer=integer,
                             sequence=False, **VARIANTS[variant])
    ours, ref = run_twice(blob, _feeds(rng, shape, integer, n=3))
    _compare(ours, ref, integer)


@pytest.mark.parametrize("batch,time,n_input,n_cell", [(1, 20, 16, 32), (4, 3, 40, 12)])
def test_keras_int8_lstm_shapes(request, batch, time, n_input, n_cell):
    rng = _seed(request)
    blob, shape = lstm_model(rng, batch=batch, time=time, n_input=n_input, n_cell=n_cell,
                             integer=True)
    ours, ref = run_twice(blob, _feeds(rng, shape, True, n=3))
    _compare(ours, ref, True)


def test_reset_all_variables_restarts_the_sequence(request):
    rng = _seed(request)
    blob, shape = lstm_model(rng, batch=2, time=4, n_input=5, n_cell=6, integer=True)
    ip = Interpreter(model_content=blob)
    ip.allocate_tensors()
    feed = _feeds(rng, shape, True, n=1)[0]
    outs = []
    for _ in range(2):
        ip.set_tensor(ip.get_input_details()[0]["index"], feed)
        ip.invoke()
        outs.append(ip.get_tensor(ip.get_output_details()[0]["index"]))
    ip.reset_all_variables()
    ip.set_tensor(ip.get_input_details()[0]["index"], feed)
    ip.invoke()
    again = ip.get_tensor(ip.get_output_details()[0]["index"])
    assert np.array_equal(again, outs[0])
    assert not np.array_equal(outs[1], outs[0])   # the state carried over between invokes


# -- RNN ----------------------------------------------------------------------------------------
def rnn_model(rng, *, batch, time, n_input, units, act, time_major=False, sequence=True):
    w = ModelWriter()
    if sequence:
        shape = (time, batch, n_input) if time_major else (batch, time, n_input)
    else:
        shape = (batch, n_input)
    x = w.add_tensor("input", shape, F32)
    ins = [x]
    for name, s in (("weights", (units, n_input)), ("recurrent", (units, units)),
                    ("bias", (units,))):
        ins.append(w.add_tensor(name, s, F32,
                                data=rng.standard_normal(s).astype(np.float32) * 0.4))
    ins.append(w.add_tensor("hidden_state", (batch, units), F32, is_variable=True))
    out = w.add_tensor("output", shape[:-1] + (units,), F32)
    if sequence:
        op, opts = B.UNIDIRECTIONAL_SEQUENCE_RNN, O.SequenceRNNOptions(
            time_major=time_major, fused_activation_function=act)
    else:
        op, opts = B.RNN, O.RNNOptions(fused_activation_function=act)
    w.add_operator(op, ins, [out], opts)
    w.set_inputs([x])
    w.set_outputs([out])
    return w.finish(), shape


@pytest.mark.parametrize("act", [Act.TANH, Act.RELU, Act.RELU6, Act.RELU_N1_TO_1, Act.NONE])
@pytest.mark.parametrize("time_major", [False, True], ids=["batch_major", "time_major"])
def test_unidirectional_sequence_rnn(request, act, time_major):
    rng = _seed(request)
    blob, shape = rnn_model(rng, batch=3, time=6, n_input=5, units=7, act=act,
                            time_major=time_major)
    ours, ref = run_twice(blob, _feeds(rng, shape, False))
    _compare(ours, ref, False)


@pytest.mark.parametrize("batch,n_input,units", [(1, 4, 3), (4, 9, 16)])
def test_rnn_single_step(request, batch, n_input, units):
    rng = _seed(request)
    blob, shape = rnn_model(rng, batch=batch, time=1, n_input=n_input, units=units,
                            act=Act.TANH, sequence=False)
    ours, ref = run_twice(blob, _feeds(rng, shape, False, n=3))
    _compare(ours, ref, False)


# -- SVDF ---------------------------------------------------------------------------------------
def svdf_model(rng, *, batch, n_input, units, rank, memory, integer, act=Act.RELU, bias=True):
    w = ModelWriter()
    filters = units * rank
    in_q, out_q, st_q = (0.03, -5), (0.02, 7), (0.0005, 0)
    x = w.add_tensor("input", (batch, n_input), I8 if integer else F32,
                     quantization=in_q if integer else None)
    wf = rng.standard_normal((filters, n_input)).astype(np.float32) * 0.3
    wt = rng.standard_normal((filters, memory)).astype(np.float32) * 0.3
    b = rng.standard_normal(units).astype(np.float32) * 0.2
    if integer:
        qf, sf = _sym8(rng, (filters, n_input))
        st = float(np.abs(wt).max() / 32767)
        ins = [x, w.add_tensor("weights_feature", wf.shape, I8, data=qf, quantization=(sf, 0)),
               w.add_tensor("weights_time", wt.shape, I16,
                            data=np.round(wt / st).astype(np.int16), quantization=(st, 0))]
        bs = st_q[0] * st
        ins.append(w.add_tensor("bias", (units,), I32, data=np.round(b / bs).astype(np.int32),
                                quantization=(bs, 0)) if bias else -1)
        ins.append(w.add_tensor("state", (batch, memory * filters), I16, quantization=st_q,
                                is_variable=True))
    else:
        ins = [x, w.add_tensor("weights_feature", wf.shape, F32, data=wf),
               w.add_tensor("weights_time", wt.shape, F32, data=wt),
               w.add_tensor("bias", (units,), F32, data=b) if bias else -1,
               w.add_tensor("state", (batch, memory * filters), F32, is_variable=True)]
    out = w.add_tensor("output", (batch, units), I8 if integer else F32,
                       quantization=out_q if integer else None)
    w.add_operator(B.SVDF, ins, [out], O.SVDFOptions(rank=rank, fused_activation_function=act))
    w.set_inputs([x])
    w.set_outputs([out])
    return w.finish(), (batch, n_input)


@pytest.mark.parametrize("integer", [False, True], ids=["float", "int8"])
@pytest.mark.parametrize("batch,n_input,units,rank,memory,bias", [
    (1, 8, 4, 1, 5, True), (2, 10, 3, 2, 4, False), (3, 16, 6, 2, 10, True)])
def test_svdf(request, integer, batch, n_input, units, rank, memory, bias):
    rng = _seed(request)
    blob, shape = svdf_model(rng, batch=batch, n_input=n_input, units=units, rank=rank,
                             memory=memory, integer=integer, bias=bias)
    ours, ref = run_twice(blob, _feeds(rng, shape, integer, n=4))
    _compare(ours, ref, integer)


@pytest.mark.parametrize("act", [Act.NONE, Act.TANH, Act.RELU6])
def test_svdf_float_activations(request, act):
    rng = _seed(request)
    blob, shape = svdf_model(rng, batch=2, n_input=6, units=4, rank=1, memory=3, integer=False,
                             act=act)
    ours, ref = run_twice(blob, _feeds(rng, shape, False, n=3))
    _compare(ours, ref, False)
