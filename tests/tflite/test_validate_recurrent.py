"""The NNAPI delegate on the recurrent builtins: Validate (which variants it delegates at which
feature level, which it refuses with which NNAPIValidationFailureType) and the NNAPI model it
builds, run on nnapi-reference against LiteRT BUILTIN_REF.

Expected reasons: upstream ``nnapi_delegate.cc`` Validate (tflite-nnapi-delegate.md 0, 5.1;
the rules are tabulated in nnsim/tflite/validate_recurrent.py), not nnsim runs.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from nnsim.ops.executor import run_model
from nnsim.tflite import options as O
from nnsim.tflite.reader import read_model
from nnsim.tflite.schema import ActivationFunctionType as Act
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import TensorType as TT
from nnsim.tflite.validate import NNAPIValidationFailureType, ValidationFailure, validate_node

from .test_builtins_recurrent import lstm_model, rnn_model
from .test_convert_support import Graph, convert, ops_in_added_order

F = NNAPIValidationFailureType


def _rng(request):
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


def _model(blob):
    return read_model(blob) if isinstance(blob, (bytes, bytearray)) else blob


def fails(blob, fl, node=0):
    return validate_node(_model(blob), 0, node, fl, False)


def svdf_graph(weights_type=TT.FLOAT32, n_inputs=5):
    g = Graph()
    x = g.t((2, 3))
    wf = g.t((4, 3), weights_type, data=np.ones((4, 3)),
             q=(0.1, 0) if weights_type != TT.FLOAT32 else None)
    wt = g.t((4, 5), data=np.ones((4, 5)))
    bias = g.t((2,), data=np.zeros(2))
    state = g.w.add_tensor("state", (2, 20), TT.FLOAT32, is_variable=True)
    y = g.t((2, 2))
    ins = [x, wf, wt, bias, state][:n_inputs]
    g.op(B.SVDF, ins, [y], O.SVDFOptions(rank=2, fused_activation_function=Act.NONE))
    return g.model(inputs=[x])


# -- Validate ------------------------------------------------------------------------------------

def test_unidirectional_lstm_float_delegated_from_fl29(request):
    blob, _ = lstm_model(_rng(request), batch=1, time=3, n_input=4, n_cell=5)
    assert fails(blob, 29) == [] and fails(blob, 31) == []
    assert fails(blob, 28) == [ValidationFailure(F.kUnsupportedAndroidVersion,
                                                 "Android sdk version less than 29")]


def test_unidirectional_lstm_layer_norm_24_inputs_accepted(request):
    blob, _ = lstm_model(_rng(request), batch=1, time=2, n_input=3, n_cell=4, layer_norm=True)
    assert len(_model(blob).subgraphs[0].operators[0].inputs) == 24
    assert fails(blob, 29) == []


def test_unidirectional_lstm_int8_full_integer_is_not_hybrid_so_validate_accepts(request):
    # IsHybridOperator needs a float input: the int8 x int16 Keras kernel passes Validate
    blob, _ = lstm_model(_rng(request), batch=1, time=2, n_input=3, n_cell=4, integer=True)
    assert fails(blob, 30) == []


def test_unidirectional_lstm_hybrid_refused():
    g = Graph()
    x = g.t((1, 2, 3))
    ins = [x]
    for k in range(8):
        ins.append(g.t((4, 3) if k < 4 else (4, 4), TT.INT8, data=np.ones((4, 3 if k < 4 else 4)),
                       q=(0.1, 0)))
    ins += [-1, -1, -1] + [g.t((4,), data=np.zeros(4)) for _ in range(4)] + [-1, -1]
    ins += [g.w.add_tensor("h", (1, 4), TT.FLOAT32, is_variable=True),
            g.w.add_tensor("c", (1, 4), TT.FLOAT32, is_variable=True)]
    y = g.t((1, 2, 4))
    g.op(B.UNIDIRECTIONAL_SEQUENCE_LSTM, ins, [y], O.UnidirectionalSequenceLSTMOptions(),
         version=2)
    m = g.model(inputs=[x])
    assert fails(m, 31) == [ValidationFailure(
        F.kUnsupportedHybridOperator, "Hybrid version of this op is not supported by NN API.")]


def test_lstm_single_step_needs_fl28_and_24_inputs_need_fl29(request):
    rng = _rng(request)
    blob, _ = lstm_model(rng, batch=1, time=1, n_input=3, n_cell=4, sequence=False)
    assert fails(blob, 28) == []
    assert fails(blob, 27) == [ValidationFailure(
        F.kUnsupportedAndroidVersion,
        "NNAPI 1.0 has a bug for optional tensors which would affect LSTM.")]
    ln, _ = lstm_model(rng, batch=1, time=1, n_input=3, n_cell=4, sequence=False,
                       layer_norm=True)
    assert fails(ln, 28) == [ValidationFailure(F.kUnsupportedAndroidVersion,
                                               "Android sdk version less than 29")]
    assert fails(ln, 29) == []


def test_lstm_int8_weights_need_fl30(request):
    blob, _ = lstm_model(_rng(request), batch=1, time=1, n_input=3, n_cell=4, sequence=False,
                         integer=True)
    assert fails(blob, 29) == [ValidationFailure(F.kUnsupportedInputType,
                                                 "Weight has to be Float32 or UINT8")]
    assert fails(blob, 30) == []


def test_rnn_float_weights_only_and_no_sdk_minimum(request):
    blob, _ = rnn_model(_rng(request), batch=1, time=1, n_input=3, units=4, act=Act.TANH,
                        sequence=False)
    assert fails(blob, 27) == []
    g = Graph()
    x = g.t((1, 3))
    w = g.t((4, 3), TT.UINT8, data=np.ones((4, 3)), q=(0.1, 128))
    r, bias = g.t((4, 4), data=np.ones((4, 4))), g.t((4,), data=np.zeros(4))
    h = g.w.add_tensor("h", (1, 4), TT.FLOAT32, is_variable=True)
    g.op(B.RNN, [x, w, r, bias, h], [g.t((1, 4))], O.RNNOptions())
    assert fails(g.model(inputs=[x]), 31) == [ValidationFailure(
        F.kUnsupportedInputType, "NNAPI only support float32 weights.")]


def test_unidirectional_rnn_needs_fl29(request):
    blob, _ = rnn_model(_rng(request), batch=1, time=2, n_input=3, units=4, act=Act.RELU)
    assert fails(blob, 29) == []
    assert [f.type for f in fails(blob, 28)] == [F.kUnsupportedAndroidVersion]


def test_svdf_rules():
    assert fails(svdf_graph(), 28) == []
    # the NNAPI 1.0 refusal is reported as an operand-rank failure upstream
    assert fails(svdf_graph(), 27) == [ValidationFailure(
        F.kUnsupportedOperandRank, "SVDF does not support rank > 1 on NNAPI 1.0.")]
    # quantized weights: both weight checks fire
    assert fails(svdf_graph(TT.INT8), 31) == [
        ValidationFailure(F.kUnsupportedInputType, "NNAPI only support float32 weights."),
        ValidationFailure(F.kUnsupportedInputType, "Weights should be Float32")]


def test_bidirectional_rnn_has_no_validate_case():
    g = Graph()
    x = g.t((1, 2, 3))
    g.op(B.BIDIRECTIONAL_SEQUENCE_RNN, [x], [g.t((1, 2, 4))],
         O.BidirectionalSequenceRNNOptions())
    assert fails(g.model(inputs=[x]), 31) == [ValidationFailure(F.kUnsupportedOperator,
                                                                "Unsupported operation type.")]


# -- conversion, run on nnapi-reference against LiteRT ------------------------------------------

litert = pytest.importorskip("ai_edge_litert.interpreter")


def _litert_once(blob, x):
    it = litert.Interpreter(model_content=blob, num_threads=1,
                            experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"])


def _nnapi_once(blob, x, fl=31):
    """The delegate's NNAPI model for the one node, run on the CPU executor with the state
    tensors at their initial zeros; returns (TFLite tensor -> value, converted model)."""
    m = _model(blob)
    c = convert(m, fl=fl)
    sg = m.subgraphs[0]
    values = {t: (x if t == sg.inputs[0] else np.zeros(sg.tensors[t].shape, np.float32))
              for t in c.model_input_tensors}
    return c.tflite_outputs(run_model(c.nnapi_model, c.nnapi_inputs(values))), c


VARIANTS = {"plain": {}, "cifg": {"cifg": True}, "peephole": {"peephole": True},
            "projection": {"projection": True, "n_output": 3}, "layer_norm": {"layer_norm": True},
            "clips": {"cell_clip": 0.8, "proj_clip": 0.3, "projection": True, "n_output": 3}}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("time_major", [False, True], ids=["batch_major", "time_major"])
def test_unidirectional_lstm_delegated_matches_litert(request, variant, time_major):
    rng = _rng(request)
    blob, shape = lstm_model(rng, batch=2, time=3, n_input=4, n_cell=5, time_major=time_major,
                             **VARIANTS[variant])
    x = rng.standard_normal(shape).astype(np.float32)
    out, c = _nnapi_once(blob, x)
    assert [o[0] for o in ops_in_added_order(c.nnapi_model)] == ["UNIDIRECTIONAL_SEQUENCE_LSTM"]
    op = c.nnapi_model.operations[0]
    assert len(op.inputs) == 28 and len(op.outputs) == 1
    y = out[_model(blob).subgraphs[0].outputs[0]]
    np.testing.assert_allclose(y, _litert_once(blob, x), rtol=1e-5, atol=1e-6)


def test_lstm_single_step_delegated_with_state_outputs(request):
    rng = _rng(request)
    blob, shape = lstm_model(rng, batch=2, time=1, n_input=4, n_cell=5, sequence=False,
                             peephole=True)
    x = rng.standard_normal(shape).astype(np.float32)
    out, c = _nnapi_once(blob, x)
    sg = _model(blob).subgraphs[0]
    op = c.nnapi_model.operations[0]
    assert len(op.inputs) == 23 and len(op.outputs) == 4   # scratch, h, c, output
    state_in = sg.operators[0].inputs[18:20]
    assert c.model_output_tensors[-2:] == list(state_in)   # written back after Invoke
    y = out[sg.outputs[0]]
    np.testing.assert_allclose(y, _litert_once(blob, x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[state_in[0]], y, rtol=0, atol=0)


@pytest.mark.parametrize("time_major", [False, True], ids=["batch_major", "time_major"])
def test_unidirectional_rnn_delegated_matches_litert(request, time_major):
    rng = _rng(request)
    blob, shape = rnn_model(rng, batch=2, time=3, n_input=4, units=5, act=Act.TANH,
                            time_major=time_major)
    x = rng.standard_normal(shape).astype(np.float32)
    out, c = _nnapi_once(blob, x)
    assert [o[0] for o in ops_in_added_order(c.nnapi_model)] == ["UNIDIRECTIONAL_SEQUENCE_RNN"]
    y = out[_model(blob).subgraphs[0].outputs[0]]
    np.testing.assert_allclose(y, _litert_once(blob, x), rtol=1e-5, atol=1e-6)


def test_rnn_delegated_writes_the_hidden_state_back(request):
    rng = _rng(request)
    blob, shape = rnn_model(rng, batch=2, time=1, n_input=4, units=5, act=Act.RELU,
                            sequence=False)
    x = rng.standard_normal(shape).astype(np.float32)
    out, c = _nnapi_once(blob, x)
    sg = _model(blob).subgraphs[0]
    state = sg.operators[0].inputs[4]
    assert c.model_output_tensors[-1] == state
    y = out[sg.outputs[0]]
    np.testing.assert_allclose(y, _litert_once(blob, x), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[state], y)
