"""Sparse CONV_2D weights through the NNAPI delegate (tflite-nnapi-delegate.md 3.7, 6.3).

A DENSIFY of a constant, alone or followed by a float16 DEQUANTIZE, adds no NNAPI operation:
the CONV_2D that takes it as its filter gets the dense value as a new constant operand (float16
dequantized to float32). A partition holding such nodes is delegated whole or not at all when
a device refuses one of its operations. Oracles: LiteRT BUILTIN_REF on the same model, the
dense filter itself, and the reference note.
"""
from __future__ import annotations

import numpy as np
import pytest

from nnsim.runtime.board import apply_board
from nnsim.tflite import Interpreter, load_delegate
from nnsim.tflite.options import Conv2DOptions, PadOptions
from nnsim.tflite.reader import Quantization
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import Padding, TensorType
from nnsim.tflite.writer import ModelWriter
from nnsim.types import OperandType
from nnsim.types import OperationCode as C
from tests.tflite.test_builtins_tfl_only import as_sparsity, csr_last_dimension

litert = pytest.importorskip("ai_edge_litert.interpreter")

X_SHAPE, W_SHAPE = (1, 6, 6, 5), (8, 3, 3, 5)
_TYPES = {np.float32: TensorType.FLOAT32, np.float16: TensorType.FLOAT16,
          np.int8: TensorType.INT8}


def _filter(dtype):
    rng = np.random.default_rng(3)
    dense = rng.standard_normal(W_SHAPE) * (rng.random(W_SHAPE) < 0.3)
    return (dense * 50).astype(np.int8) if dtype == np.int8 else dense.astype(dtype)


def _sparsity(dense):
    values, _, order, block_map, dims = csr_last_dimension(dense)
    return values, as_sparsity(order, block_map, dims)


def _model(weights="densify_dequantize", pad_channels=False, conv_version=1):
    """x [-> PAD of the channels] -> CONV_2D(filter, bias); the filter is a DENSIFY of a
    float16 sparse constant followed by DEQUANTIZE ("densify_dequantize"), a DENSIFY of a
    float32 one ("densify"), an int8 one ("densify_int8", quantized model) or a plain
    constant ("dense"). Returns the model and the dense filter (float32)."""
    int8 = weights == "densify_int8"
    dtype = np.int8 if int8 else np.float16 if weights == "densify_dequantize" else np.float32
    dense = _filter(dtype)
    act_type = TensorType.INT8 if int8 else TensorType.FLOAT32
    q_in, q_out = ((0.02, -3), (0.05, 4)) if int8 else (None, None)
    w = ModelWriter()
    x = w.add_tensor("x", X_SHAPE, act_type, quantization=q_in)
    conv_in = x
    channels = X_SHAPE[3]
    if pad_channels:
        channels += 2
        paddings = w.add_tensor("paddings", (4, 2), TensorType.INT32,
                                data=np.array([[0, 0], [0, 0], [0, 0], [1, 1]], np.int32))
        conv_in = w.add_tensor("padded", X_SHAPE[:3] + (channels,), act_type,
                               quantization=q_in)
        w.add_operator(B.PAD, [x, paddings], [conv_in], PadOptions())
        dense = np.concatenate([dense, dense[..., :2]], axis=3)
    shape = dense.shape
    if weights == "dense":
        filt = w.add_tensor("w", shape, TensorType.FLOAT32, data=dense)
    else:
        values, sparsity = _sparsity(dense)
        w_q = Quantization([0.01], [0]) if int8 else None
        sparse = w.add_tensor("w_sparse", shape, _TYPES[dtype], data=values, sparsity=sparsity,
                              quantization=w_q)
        filt = w.add_tensor("w_dense", shape, _TYPES[dtype], quantization=w_q)
        w.add_operator(B.DENSIFY, [sparse], [filt])
        if weights == "densify_dequantize":
            f32 = w.add_tensor("w", shape, TensorType.FLOAT32)
            w.add_operator(B.DEQUANTIZE, [filt], [f32])
            filt = f32
    bias = w.add_tensor("b", (8,), TensorType.INT32 if int8 else TensorType.FLOAT32,
                        data=np.arange(8, dtype=np.int32 if int8 else np.float32),
                        quantization=(0.02 * 0.01, 0) if int8 else None)
    y = w.add_tensor("y", (1, 6, 6, 8), act_type, quantization=q_out)
    w.add_operator(B.CONV_2D, [conv_in, filt, bias], [y],
                   Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1),
                   version=conv_version)
    w.set_inputs([x])
    w.set_outputs([y])
    return w.finish(), dense.astype(np.float32)


def _input(blob):
    ip = Interpreter(model_content=blob)
    d = ip.get_input_details()[0]
    rng = np.random.default_rng(0)
    if d["dtype"] == np.int8:
        return rng.integers(-128, 128, X_SHAPE).astype(np.int8)
    return rng.standard_normal(X_SHAPE).astype(np.float32)


def _run(blob, x, delegates=()):
    ip = Interpreter(model_content=blob, experimental_delegates=list(delegates))
    ip.allocate_tensors()
    ip.set_tensor(ip.get_input_details()[0]["index"], x)
    ip.invoke()
    return ip, ip.get_tensor(ip.get_output_details()[0]["index"])


def _litert(blob, x):
    ref = litert.Interpreter(model_content=blob, num_threads=1,
                             experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    ref.allocate_tensors()
    ref.set_tensor(ref.get_input_details()[0]["index"], x)
    ref.invoke()
    return ref.get_tensor(ref.get_output_details()[0]["index"])


def _assert_close(got, want):
    if want.dtype == np.int8:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))


def _nnapi_reference():
    return load_delegate("nnapi", options={"accelerator_name": "nnapi-reference"})


@pytest.mark.parametrize("weights", ["densify_dequantize", "densify", "densify_int8"])
def test_sparse_filter_becomes_a_dense_constant(weights):
    blob, dense = _model(weights)
    x = _input(blob)
    want = _litert(blob, x)
    _, cpu = _run(blob, x)
    _assert_close(cpu, want)
    ip, got = _run(blob, x, [_nnapi_reference()])
    assert ip.delegation.nodes_replaced == ip.delegation.nodes_total   # DENSIFY included
    _assert_close(got, want)
    nn = ip.delegation.kernels[0].converted.nnapi_model
    assert [C(op.type) for op in nn.operations] == [C.CONV_2D]   # no op for DENSIFY
    filt = nn.operands[nn.operations[0].inputs[1]]
    assert filt.is_constant and tuple(filt.dimensions) == W_SHAPE
    value = np.frombuffer(filt.value, filt.dtype()).reshape(W_SHAPE)
    if weights == "densify_int8":   # the DENSIFY output's per-tensor quantization
        assert (filt.type, filt.scale, filt.zero_point) == \
            (OperandType.TENSOR_QUANT8_ASYMM_SIGNED, np.float32(0.01), 0)
        np.testing.assert_array_equal(value, dense.astype(np.int8))
    else:
        assert filt.dtype() == np.float32   # float16 weights are dequantized (3.7)
        np.testing.assert_array_equal(value, dense)


def test_partition_with_sparse_weights_is_delegated_whole_or_not_at_all():
    """imx8mp's vsi-npu refuses a PAD of the channels (npu-drivers.md). With a plain filter
    only the PAD stays on the CPU; with sparse weights the whole partition does (6.3:
    "Only allow full model delegation for sparse model")."""
    apply_board("imx8mp")
    dense_blob, _ = _model("dense", pad_channels=True)
    ip, _ = _run(dense_blob, _input(dense_blob), [load_delegate("nnapi")])
    assert ip.node_placement() == {0: "cpu", 1: "vsi-npu"}   # PAD on the CPU, CONV_2D on the NPU

    blob, _ = _model("densify_dequantize", pad_channels=True)
    x = _input(blob)
    delegate = load_delegate("nnapi")
    ip, got = _run(blob, x, [delegate])
    assert set(ip.node_placement().values()) == {"cpu"}
    refusals = {d.op_name: d.device_refusal for d in delegate.result.decisions.values()}
    assert refusals["PAD"].startswith("vsi-npu: reject PAD")
    for name in ("DENSIFY", "DEQUANTIZE", "CONV_2D"):
        assert "sparse weights" in refusals[name]
    _assert_close(got, _litert(blob, x))


def test_sparse_weights_used_outside_their_partition_stay_on_the_cpu():
    """A CONV_2D of version 6 fails Validate (versions up to 5), so DENSIFY -> DEQUANTIZE
    form a partition of their own whose output a CPU node reads. Upstream leaves that output
    unwritten; nnsim keeps the partition's nodes on the CPU (the reason is recorded) and the
    CPU computes LiteRT's answer."""
    blob, _ = _model("densify_dequantize", conv_version=6)
    x = _input(blob)
    delegate = _nnapi_reference()
    ip, got = _run(blob, x, [delegate])
    assert set(ip.node_placement().values()) == {"cpu"}
    assert ip.delegation_error is None
    reasons = [d.device_refusal for d in delegate.result.decisions.values()]
    assert any("used outside its partition" in r for r in reasons)
    _assert_close(got, _litert(blob, x))
