"""Nodes the delegate leaves on the CPU run on TFLite's CPU kernels, as on a board.

The issue's example: a one-node uint8 RESIZE_NEAREST_NEIGHBOR model on imx8mp. vsi-npu's
default BSP refuses the op, so with ``accelerator_name="vsi-npu"`` the node stays on the TFLite
CPU; the same node also runs through nnapi-reference. Both answers must equal LiteRT's
reference kernel, and the CPU node's private NNAPI model must not show in the board's logcat.
"""
from __future__ import annotations

import numpy as np
import pytest

from nnsim import setprop
from nnsim.runtime.board import apply_board
from nnsim.platform import vlog
from nnsim.tflite import Interpreter, load_delegate
from nnsim.tflite import options as O
from nnsim.tflite.schema import BuiltinOperator as B
from tests.tflite.test_builtins import T, build, litert

I32 = np.int32


def _resize_model() -> bytes:
    size = T((2,), I32, data=np.array([8, 6], I32))
    return build(B.RESIZE_NEAREST_NEIGHBOR, [T((1, 4, 3, 2), np.uint8, (0.1, 100)), size],
                 [T((1, 8, 6, 2), np.uint8, (0.1, 100))], O.ResizeNearestNeighborOptions())


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


def test_resize_nearest_left_on_cpu_by_vsi_npu_runs():
    apply_board("imx8mp")
    blob = _resize_model()
    x = np.random.default_rng(0).integers(0, 256, (1, 4, 3, 2)).astype(np.uint8)
    want = _litert(blob, x)
    ip, got = _run(blob, x, [load_delegate("nnapi", options={"accelerator_name": "vsi-npu"})])
    assert set(ip.node_placement().values()) == {"cpu"}
    np.testing.assert_array_equal(got, want)
    ip, got = _run(blob, x, [load_delegate("nnapi",
                                           options={"accelerator_name": "nnapi-reference"})])
    assert set(ip.node_placement().values()) == {"nnapi-reference"}
    np.testing.assert_array_equal(got, want)


def test_cpu_node_logs_nothing_to_logcat():
    setprop("debug.nn.vlog", "1")
    vlog.init_vlog_mask()
    blob = _resize_model()
    x = np.zeros((1, 4, 3, 2), np.uint8)
    with vlog.LogCapture() as cap:
        _run(blob, x)
    assert cap.lines() == []
    # The same capture sees the NNAPI runtime's lines when NNAPI really runs.
    apply_board("imx8mp")
    with vlog.LogCapture() as cap:
        _run(blob, x, [load_delegate("nnapi", options={"accelerator_name": "nnapi-reference"})])
    assert any("ExecutionPlan" in line or "GraphDump" in line for line in cap.lines())


def test_grouped_conv_fails_delegation_and_runs_on_the_cpu():
    """The delegate maps a grouped CONV_2D to an 8-operand GROUPED_CONV_2D (reference 4), which
    NNAPI's validation refuses at addOperation: DoPrepare fails. LiteRT's Python Interpreter
    then raises (ModifyGraphWithDelegate's error); applied as benchmark_model does
    (ModifyGraphWithDelegate after construction, failure not fatal), the plan is restored and
    the node runs on TFLite's CPU kernel (grouped convolution), matching LiteRT."""
    from nnsim.tflite.schema import Padding
    rng = np.random.default_rng(1)
    w = T((4, 3, 3, 2), np.float32, None, rng.standard_normal((4, 3, 3, 2)).astype(np.float32))
    b = T((4,), np.float32, None, np.zeros(4, np.float32))
    blob = build(B.CONV_2D, [T((1, 5, 5, 4)), w, b], [T((1, 5, 5, 4))],
                 O.Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1))
    apply_board("imx8mp")
    x = rng.standard_normal((1, 5, 5, 4)).astype(np.float32)
    with pytest.raises(RuntimeError, match="GROUPED_CONV_2D"):
        Interpreter(model_content=blob, experimental_delegates=[load_delegate("nnapi")])
    ip = Interpreter(model_content=blob)
    ip.modify_graph_with_delegate(load_delegate("nnapi"))
    ip.allocate_tensors()
    ip.set_tensor(ip.get_input_details()[0]["index"], x)
    ip.invoke()
    got = ip.get_tensor(ip.get_output_details()[0]["index"])
    assert set(ip.node_placement().values()) == {"cpu"}
    assert "GROUPED_CONV_2D" in ip.delegation_error
    ref = litert.Interpreter(model_content=blob, num_threads=1,
                             experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    ref.allocate_tensors()
    ref.set_tensor(ref.get_input_details()[0]["index"], x)
    ref.invoke()
    np.testing.assert_allclose(got, ref.get_tensor(ref.get_output_details()[0]["index"]),
                               rtol=1e-5, atol=1e-6)


def test_delegate_targets_the_emulated_androids_feature_level():
    """PACK: below FL6 the delegate lowers it to CONCATENATION (+ RESHAPE); on Android 14 (SDK
    34, runtime FL7) it is passed as NNAPI's own PACK (reference 3.1, 4)."""
    import nnsim
    from nnsim.types import OperationCode
    blob = build(B.PACK, [T((2, 3)), T((2, 3))], [T((2, 2, 3))], O.PackOptions(values_count=2))
    x = np.zeros((2, 3), np.float32)
    apply_board("imx8mp")
    seen = {}
    for sdk in ("31", "34"):
        nnsim.setprop("ro.build.version.sdk", sdk)
        ip = Interpreter(model_content=blob, experimental_delegates=[load_delegate(
            "nnapi", options={"accelerator_name": "nnapi-reference"})])
        ip.allocate_tensors()
        for d in ip.get_input_details():
            ip.set_tensor(d["index"], x)
        ip.invoke()
        model = ip.delegation.kernels[0].converted.nnapi_model
        seen[sdk] = {OperationCode(o.type).name for o in model.operations}
    assert "PACK" not in seen["31"] and "CONCATENATION" in seen["31"]
    assert seen["34"] == {"PACK"}
