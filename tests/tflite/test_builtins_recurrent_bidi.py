"""BIDIRECTIONAL_SEQUENCE_LSTM / _RNN CPU builtins against LiteRT's reference kernels.

Each case writes a one-node float32 model with ``ModelWriter`` (the four or two states are
variable tensors; the aux input, when present, is a second graph input), runs two invokes on
nnsim and on LiteRT (BUILTIN_REF; the second invoke starts from the states the first left) and
compares every output to 1e-5 relative: LiteRT's LSTM multiplies with its own GEMM and both
kernels add the aux part separately, so float sums are in another order.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from nnsim.tflite import Interpreter
from nnsim.tflite import options as O
from nnsim.tflite.builtins import UnsupportedOperatorError
from nnsim.tflite.builtins._base import BuiltinError
from nnsim.tflite.schema import ActivationFunctionType as Act
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import TensorType
from nnsim.tflite.writer import ModelWriter

litert = pytest.importorskip("ai_edge_litert.interpreter")

F32 = TensorType.FLOAT32


def _seed(request):
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


def _layout(time_major, batch, time, width):
    return (time, batch, width) if time_major else (batch, time, width)


def _const(w, rng, name, shape, scale=0.4, offset=0.0):
    data = rng.standard_normal(shape).astype(np.float32) * scale + offset
    return w.add_tensor(name, shape, F32, data=data)


def lstm_model(rng, *, batch, time, n_input, n_cell, n_output=None, cifg=False,
               peephole=False, projection=False, time_major=True, merge=False, aux=None,
               aux_width=None, cell_clip=0.0, proj_clip=0.0, hybrid=False):
    """One BIDIRECTIONAL_SEQUENCE_LSTM node; ``aux``: None, "cross" (aux input and aux
    weights) or "bw_input" (aux input only: the backward cell's input)."""
    n_output = n_output if projection else n_cell
    aux_width = n_input if aux_width is None else aux_width
    w = ModelWriter()
    x = w.add_tensor("input", _layout(time_major, batch, time, n_input), F32)
    graph_inputs = [x]
    ins = [x]
    for d in ("fw", "bw"):
        def weights(name, rows, cols, d=d):
            if hybrid:
                q = rng.integers(-127, 128, (rows, cols)).astype(np.int8)
                return w.add_tensor(f"{d}_{name}", (rows, cols), TensorType.INT8, data=q,
                                    quantization=(0.01, 0))
            return _const(w, rng, f"{d}_{name}", (rows, cols))
        for gate in "ifco":
            ins.append(-1 if gate == "i" and cifg else weights(f"x_{gate}", n_cell, n_input))
        for gate in "ifco":
            ins.append(-1 if gate == "i" and cifg else weights(f"h_{gate}", n_cell, n_output))
        for gate in "ifo":
            skip = not peephole or (gate == "i" and cifg)
            ins.append(-1 if skip else _const(w, rng, f"{d}_peep_{gate}", (n_cell,), 0.3))
        for gate in "ifco":
            ins.append(-1 if gate == "i" and cifg else
                       _const(w, rng, f"{d}_bias_{gate}", (n_cell,), 0.5,
                              1.0 if gate == "f" else 0.0))
        if projection:
            ins.append(_const(w, rng, f"{d}_proj", (n_output, n_cell)))
            ins.append(_const(w, rng, f"{d}_proj_bias", (n_output,), 0.1))
        else:
            ins += [-1, -1]
    for d in ("fw", "bw"):
        ins.append(w.add_tensor(f"{d}_output_state", (batch, n_output), F32, is_variable=True))
        ins.append(w.add_tensor(f"{d}_cell_state", (batch, n_cell), F32, is_variable=True))
    if aux is None:
        ins += [-1] * 9
    else:
        width = aux_width if aux == "cross" else n_input
        a = w.add_tensor("aux_input", _layout(time_major, batch, time, width), F32)
        graph_inputs.append(a)
        ins.append(a)
        for d in ("fw", "bw"):
            for gate in "ifco":
                if aux == "cross" and not (gate == "i" and cifg):
                    ins.append(_const(w, rng, f"{d}_aux_{gate}", (n_cell, width)))
                else:
                    ins.append(-1)
    widths = [2 * n_output] if merge else [n_output, n_output]
    outs = [w.add_tensor(f"output_{k}", _layout(time_major, batch, time, v), F32)
            for k, v in enumerate(widths)]
    opts = O.BidirectionalSequenceLSTMOptions(
        fused_activation_function=Act.TANH, cell_clip=cell_clip, proj_clip=proj_clip,
        merge_outputs=merge, time_major=time_major)
    w.add_operator(B.BIDIRECTIONAL_SEQUENCE_LSTM, ins, outs, opts)
    w.set_inputs(graph_inputs)
    w.set_outputs(outs)
    return w.finish(), graph_inputs


def rnn_model(rng, *, batch, time, n_input, fw_units, bw_units, act=Act.TANH,
              time_major=False, merge=False, aux=None, aux_width=None, hybrid=False):
    aux_width = n_input if aux_width is None else aux_width
    w = ModelWriter()
    x = w.add_tensor("input", _layout(time_major, batch, time, n_input), F32)
    graph_inputs = [x]
    ins = [x]
    for d, units in (("fw", fw_units), ("bw", bw_units)):
        if hybrid:
            ins.append(w.add_tensor(f"{d}_weights", (units, n_input), TensorType.INT8,
                                    data=np.ones((units, n_input), np.int8),
                                    quantization=(0.01, 0)))
        else:
            ins.append(_const(w, rng, f"{d}_weights", (units, n_input)))
        ins.append(_const(w, rng, f"{d}_recurrent", (units, units), 0.3))
        ins.append(_const(w, rng, f"{d}_bias", (units,)))
        ins.append(w.add_tensor(f"{d}_hidden", (batch, units), F32, is_variable=True))
    if aux is None:
        ins += [-1, -1, -1]
    else:
        width = aux_width if aux == "cross" else n_input
        a = w.add_tensor("aux_input", _layout(time_major, batch, time, width), F32)
        graph_inputs.append(a)
        ins.append(a)
        for d, units in (("fw", fw_units), ("bw", bw_units)):
            ins.append(_const(w, rng, f"{d}_aux", (units, width)) if aux == "cross" else -1)
    widths = [fw_units + bw_units] if merge else [fw_units, bw_units]
    outs = [w.add_tensor(f"output_{k}", _layout(time_major, batch, time, v), F32)
            for k, v in enumerate(widths)]
    opts = O.BidirectionalSequenceRNNOptions(time_major=time_major, fused_activation_function=act,
                                             merge_outputs=merge)
    w.add_operator(B.BIDIRECTIONAL_SEQUENCE_RNN, ins, outs, opts)
    w.set_inputs(graph_inputs)
    w.set_outputs(outs)
    return w.finish(), graph_inputs


def run_both(blob, graph_inputs, rng, n_invokes=2):
    """Every output of every invoke, on nnsim and on LiteRT BUILTIN_REF, with the same feeds."""
    ours = Interpreter(model_content=blob)
    ref = litert.Interpreter(model_content=blob, num_threads=1,
                             experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    ref.allocate_tensors()
    shapes = {d["index"]: tuple(d["shape"]) for d in ref.get_input_details()}
    feeds = [{i: rng.standard_normal(shapes[i]).astype(np.float32) for i in graph_inputs}
             for _ in range(n_invokes)]
    results = []
    for ip in (ours, ref):
        ip.allocate_tensors()
        got = []
        for feed in feeds:
            for i, v in feed.items():
                ip.set_tensor(i, v)
            ip.invoke()
            got.append([ip.get_tensor(d["index"]) for d in ip.get_output_details()])
        results.append(got)
    return results


def _compare(ours, ref):
    assert len(ours) == len(ref)
    for a_outs, b_outs in zip(ours, ref):
        assert len(a_outs) == len(b_outs)
        for a, b in zip(a_outs, b_outs):
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# -- LSTM ----------------------------------------------------------------------------------------
LSTM_VARIANTS = {
    "plain": {},
    "cifg": {"cifg": True},
    "peephole": {"peephole": True},
    "cifg_peephole": {"cifg": True, "peephole": True},
    "projection": {"projection": True, "n_output": 5},
    "clips": {"cell_clip": 0.7, "proj_clip": 0.25, "projection": True, "n_output": 6},
}


@pytest.mark.parametrize("merge", [False, True], ids=["split", "merged"])
@pytest.mark.parametrize("variant", list(LSTM_VARIANTS))
def test_bidirectional_lstm_time_major(request, variant, merge):
    rng = _seed(request)
    blob, gi = lstm_model(rng, batch=3, time=5, n_input=4, n_cell=8, time_major=True,
                          merge=merge, **LSTM_VARIANTS[variant])
    _compare(*run_both(blob, gi, rng))


@pytest.mark.parametrize("variant", ["plain", "cifg_peephole", "projection"])
@pytest.mark.parametrize("batch,merge", [(3, False), (1, True), (1, False)],
                         ids=["b3_split", "b1_merged", "b1_split"])
def test_bidirectional_lstm_batch_major(request, variant, batch, merge):
    rng = _seed(request)
    blob, gi = lstm_model(rng, batch=batch, time=6, n_input=5, n_cell=7, time_major=False,
                          merge=merge, **LSTM_VARIANTS[variant])
    _compare(*run_both(blob, gi, rng))


@pytest.mark.parametrize("batch,time,n_input,n_cell", [(1, 1, 3, 2), (2, 9, 12, 16),
                                                       (5, 2, 1, 3)])
def test_bidirectional_lstm_shapes(request, batch, time, n_input, n_cell):
    rng = _seed(request)
    blob, gi = lstm_model(rng, batch=batch, time=time, n_input=n_input, n_cell=n_cell,
                          peephole=True, merge=True)
    _compare(*run_both(blob, gi, rng, n_invokes=3))


@pytest.mark.parametrize("time_major", [True, False], ids=["time_major", "batch_major"])
@pytest.mark.parametrize("aux,variant", [("cross", "plain"), ("cross", "cifg"),
                                         ("bw_input", "plain"), ("bw_input", "projection")])
def test_bidirectional_lstm_aux_input(request, aux, variant, time_major):
    rng = _seed(request)
    batch = 2 if time_major else 1
    blob, gi = lstm_model(rng, batch=batch, time=4, n_input=5, n_cell=6, time_major=time_major,
                          aux=aux, merge=not time_major, **LSTM_VARIANTS[variant])
    _compare(*run_both(blob, gi, rng))


@pytest.mark.parametrize("aux_width", [2, 5])
@pytest.mark.parametrize("time_major,batch", [(True, 2), (False, 2), (False, 1)])
def test_bidirectional_lstm_aux_width_differs(request, time_major, batch, aux_width):
    rng = _seed(request)
    blob, gi = lstm_model(rng, batch=batch, time=3, n_input=3, n_cell=4, time_major=time_major,
                          aux="cross", aux_width=aux_width)
    _compare(*run_both(blob, gi, rng))


def test_bidirectional_lstm_batch_major_merged_batch_2_is_refused(request):
    rng = _seed(request)
    blob, _ = lstm_model(rng, batch=2, time=3, n_input=3, n_cell=4, time_major=False,
                         merge=True)
    with pytest.raises(BuiltinError, match="past the state tensors"):
        Interpreter(model_content=blob).allocate_tensors()


def test_bidirectional_lstm_directions_are_independent(request):
    """The forward output at step t depends only on steps <= t, the backward one only on
    steps >= t (changing the last step leaves the forward outputs before it unchanged)."""
    rng = _seed(request)
    blob, gi = lstm_model(rng, batch=2, time=5, n_input=3, n_cell=4, time_major=True)
    x = rng.standard_normal((5, 2, 3)).astype(np.float32)
    outs = []
    for last in (0.0, 3.0):
        x[-1] = last
        ip = Interpreter(model_content=blob)
        ip.allocate_tensors()
        ip.set_tensor(gi[0], x)
        ip.invoke()
        outs.append([ip.get_tensor(d["index"]) for d in ip.get_output_details()])
    (fw0, bw0), (fw1, bw1) = outs
    assert np.array_equal(fw0[:-1], fw1[:-1]) and not np.array_equal(fw0[-1], fw1[-1])
    assert not np.array_equal(bw0[0], bw1[0])


def test_bidirectional_lstm_hybrid_is_refused(request):
    rng = _seed(request)
    blob, _ = lstm_model(rng, batch=1, time=2, n_input=3, n_cell=4, hybrid=True)
    ip = Interpreter(model_content=blob)
    with pytest.raises(UnsupportedOperatorError, match="BIDIRECTIONAL_SEQUENCE_LSTM"):
        ip.allocate_tensors()
        ip.invoke()


# -- RNN -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("merge", [False, True], ids=["split", "merged"])
@pytest.mark.parametrize("time_major", [False, True], ids=["batch_major", "time_major"])
@pytest.mark.parametrize("act", [Act.TANH, Act.RELU, Act.NONE])
def test_bidirectional_rnn(request, act, time_major, merge):
    rng = _seed(request)
    blob, gi = rnn_model(rng, batch=3, time=5, n_input=4, fw_units=6, bw_units=6, act=act,
                         time_major=time_major, merge=merge)
    _compare(*run_both(blob, gi, rng))


@pytest.mark.parametrize("merge", [False, True], ids=["split", "merged"])
@pytest.mark.parametrize("batch,time,n_input,fw_units,bw_units",
                         [(1, 1, 2, 3, 5), (2, 8, 9, 16, 4), (4, 3, 1, 2, 2)])
def test_bidirectional_rnn_shapes(request, batch, time, n_input, fw_units, bw_units, merge):
    rng = _seed(request)
    blob, gi = rnn_model(rng, batch=batch, time=time, n_input=n_input, fw_units=fw_units,
                         bw_units=bw_units, act=Act.RELU6, merge=merge)
    _compare(*run_both(blob, gi, rng, n_invokes=3))


@pytest.mark.parametrize("time_major", [False, True], ids=["batch_major", "time_major"])
@pytest.mark.parametrize("aux,aux_width", [("cross", None), ("cross", 7), ("bw_input", None)])
def test_bidirectional_rnn_aux_input(request, aux, aux_width, time_major):
    rng = _seed(request)
    blob, gi = rnn_model(rng, batch=2, time=4, n_input=3, fw_units=5, bw_units=4,
                         time_major=time_major, merge=True, aux=aux, aux_width=aux_width)
    _compare(*run_both(blob, gi, rng))


def test_bidirectional_rnn_time_major_aux_narrower_than_input_is_refused(request):
    """LiteRT's time-major loop steps through the aux input by batch * n_input values: with
    fewer aux features the last steps would read past the aux tensor."""
    rng = _seed(request)
    blob, _ = rnn_model(rng, batch=2, time=4, n_input=5, fw_units=3, bw_units=3,
                        time_major=True, aux="cross", aux_width=2)
    with pytest.raises(BuiltinError, match="reads past the aux"):
        Interpreter(model_content=blob).allocate_tensors()


def test_bidirectional_rnn_batch_major_backward_reads_the_main_input(request):
    """bidirectional_sequence_rnn.cc: the batch-major backward loop reads ``input``, not the
    aux input that replaces it; so the aux input has no effect there."""
    rng = _seed(request)
    blob, gi = rnn_model(rng, batch=2, time=3, n_input=3, fw_units=4, bw_units=4,
                         aux="bw_input")
    x = rng.standard_normal((2, 3, 3)).astype(np.float32)
    outs = []
    for aux in (np.zeros_like(x), np.ones_like(x)):
        ip = Interpreter(model_content=blob)
        ip.allocate_tensors()
        ip.set_tensor(gi[0], x)
        ip.set_tensor(gi[1], aux)
        ip.invoke()
        outs.append([ip.get_tensor(d["index"]) for d in ip.get_output_details()])
    assert all(np.array_equal(a, b) for a, b in zip(*outs))


def test_bidirectional_rnn_hybrid_is_refused(request):
    rng = _seed(request)
    blob, _ = rnn_model(rng, batch=1, time=2, n_input=3, fw_units=2, bw_units=2, hybrid=True)
    ip = Interpreter(model_content=blob)
    with pytest.raises(UnsupportedOperatorError, match="BIDIRECTIONAL_SEQUENCE_RNN"):
        ip.allocate_tensors()
        ip.invoke()
