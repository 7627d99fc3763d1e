"""An int8 SSD-style feature-pyramid head with SPLIT and RESIZE_NEAREST_NEIGHBOR, end to end.

The graph (built with nnsim's writer, per-channel int8 weights as TFLite's converter emits
them): CONV_2D -> RESIZE_NEAREST_NEIGHBOR (x2 upsampling) -> ADD with a second CONV_2D branch
-> SPLIT into box and class halves along channels -> RESHAPE of both halves, LOGISTIC on the
class scores. On imx8mp vsi-npu's default BSP refuses RESIZE_NEAREST_NEIGHBOR and every int8
operation loses to nnapi-reference, so with TFLite's default options nodes stay on the TFLite
CPU between NNAPI partitions; with the CPU allowed the whole graph goes to NNAPI.

Oracle: LiteRT BUILTIN_REF. The CPU path must be bit-exact; the delegated runs must run and
agree with it exactly (no FULLY_CONNECTED or MEAN here, whose NNAPI rounding differs).
"""
from __future__ import annotations

import numpy as np
import pytest

from nnsim.runtime.board import apply_board
from nnsim.tflite import Interpreter, load_delegate
from nnsim.tflite import options as O
from nnsim.tflite.reader import Quantization
from nnsim.tflite.schema import ActivationFunctionType as Act
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import Padding, TensorType
from nnsim.tflite.writer import ModelWriter
from tests.tflite.test_builtins import litert

I8, I32 = TensorType.INT8, TensorType.INT32


def _conv(w, rng, x, cin, cout, stride, out_hw, name, out_q):
    scales = (0.01 * (1 + 0.1 * np.arange(cout))).astype(np.float32)
    wt = w.add_tensor(f"{name}_w", (cout, 3, 3, cin), I8,
                      data=rng.integers(-127, 128, (cout, 3, 3, cin)).astype(np.int8),
                      quantization=Quantization(scales, np.zeros(cout, np.int64), 0))
    bt = w.add_tensor(f"{name}_b", (cout,), I32,
                      data=rng.integers(-2000, 2000, cout).astype(np.int32),
                      quantization=Quantization(scales * 0.05, np.zeros(cout, np.int64)))
    y = w.add_tensor(name, (1, out_hw, out_hw, cout), I8, quantization=out_q)
    w.add_operator(B.CONV_2D, [x, wt, bt], [y],
                   O.Conv2DOptions(padding=Padding.SAME, stride_w=stride, stride_h=stride,
                                   fused_activation_function=Act.RELU))
    return y


def _model() -> bytes:
    rng = np.random.default_rng(7)
    w = ModelWriter()
    x = w.add_tensor("input", (1, 16, 16, 3), I8, quantization=(0.05, -3))
    coarse = _conv(w, rng, x, 3, 8, 2, 8, "coarse", (0.1, -128))
    size = w.add_tensor("size", (2,), I32, data=np.array([16, 16], np.int32))
    up = w.add_tensor("up", (1, 16, 16, 8), I8, quantization=(0.1, -128))
    w.add_operator(B.RESIZE_NEAREST_NEIGHBOR, [coarse, size], [up],
                   O.ResizeNearestNeighborOptions())
    fine = _conv(w, rng, x, 3, 8, 1, 16, "fine", (0.08, -128))
    fused = w.add_tensor("fused", (1, 16, 16, 8), I8, quantization=(0.15, -128))
    w.add_operator(B.ADD, [up, fine], [fused], O.AddOptions())
    axis = w.add_tensor("axis", (), I32, data=np.array(3, np.int32))
    boxes = w.add_tensor("boxes", (1, 16, 16, 4), I8, quantization=(0.15, -128))
    logits = w.add_tensor("logits", (1, 16, 16, 4), I8, quantization=(0.15, -128))
    w.add_operator(B.SPLIT, [axis, fused], [boxes, logits], O.SplitOptions(num_splits=2))
    shape = w.add_tensor("shape", (3,), I32, data=np.array([1, 256, 4], np.int32))
    flat = w.add_tensor("flat", (1, 256, 4), I8, quantization=(0.15, -128))
    w.add_operator(B.RESHAPE, [logits, shape], [flat], O.ReshapeOptions(new_shape=(1, 256, 4)))
    scores = w.add_tensor("scores", (1, 256, 4), I8, quantization=(1 / 256, -128))
    w.add_operator(B.LOGISTIC, [flat], [scores])
    box_flat = w.add_tensor("box_flat", (1, 256, 4), I8, quantization=(0.15, -128))
    shape2 = w.add_tensor("shape2", (3,), I32, data=np.array([1, 256, 4], np.int32))
    w.add_operator(B.RESHAPE, [boxes, shape2], [box_flat],
                   O.ReshapeOptions(new_shape=(1, 256, 4)))
    w.set_inputs([x])
    w.set_outputs([box_flat, scores])
    return w.finish()


def _run(ip, x):
    ip.allocate_tensors()
    ip.set_tensor(ip.get_input_details()[0]["index"], x)
    ip.invoke()
    return [ip.get_tensor(d["index"]) for d in ip.get_output_details()]


@pytest.fixture(scope="module")
def case():
    blob = _model()
    x = np.random.default_rng(3).integers(-128, 128, (1, 16, 16, 3)).astype(np.int8)
    ref = litert.Interpreter(model_content=blob, num_threads=1,
                             experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    return blob, x, _run(ref, x)


def test_cpu_path_bit_exact(case):
    blob, x, want = case
    for got, ref in zip(_run(Interpreter(model_content=blob), x), want):
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("board", ["imx8mp", "vs680"])
@pytest.mark.parametrize("options", [{}, {"disallow_nnapi_cpu": False}])
def test_delegated_runs_match(case, board, options, tmp_path, monkeypatch):
    monkeypatch.setenv("NNSIM_STATE_DIR", str(tmp_path))
    blob, x, want = case
    apply_board(board)
    ip = Interpreter(model_content=blob, experimental_delegates=[load_delegate("nnapi", options)])
    for got, ref in zip(_run(ip, x), want):
        np.testing.assert_array_equal(got, ref)
    placement = ip.node_placement()
    assert len(placement) == 8
    if board == "imx8mp" and not options:
        # the resize never reaches the NPU: it stays on the TFLite CPU
        assert placement[1] == "cpu"
