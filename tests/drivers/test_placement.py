"""Device placement of real models with the simulated drivers (npu-drivers.md 2.8, 8, 10.6)."""
from __future__ import annotations

import numpy as np

from nnsim.runtime.board import apply_board
from nnsim.drivers.vsi_npu import VsiNpuDriver
from nnsim.platform import vlog
from nnsim.runtime.compilation import CompilationBuilder
from nnsim.runtime.devices import get_device_manager
from nnsim.runtime.execution import Execution
from nnsim.runtime.plan import find_best_device_for_each_operation
from nnsim.types import OperandType as T
from nnsim.types import OperationCode as C
from nnsim.types import PreferenceCode

U8_MOBILENET = "mobilenet_v1_1.0_224_quant_reconstructed.tflite"
INT8_MOBILENET = "tf2_mobilenet_v2_1.0_224_ptq.tflite"
FAST = PreferenceCode.PREFER_FAST_SINGLE_ANSWER


def test_uint8_mobilenet_all_on_vsi_npu(load_nnapi, logcat):
    model = load_nnapi(U8_MOBILENET)
    apply_board("imx8mp")
    devices = get_device_manager().get_devices()
    assert [d.name for d in devices] == ["vsi-npu", "nnapi-reference"]
    vlog.set_vlog_mask(1 << vlog.COMPILATION)
    comp = CompilationBuilder(model)
    comp.finish()
    lines = logcat.lines("ExecutionPlan")
    assert len(model.operations) == 31
    for i, op in enumerate(model.operations):
        assert f"ModelBuilder::findBestDeviceForEachOperation({C(op.type).name}:{i}) = 0 " \
               f"(vsi-npu)" in lines
    assert "ModelBuilder::findBestDeviceForEachOperation(CONV_2D:0) = 0 (vsi-npu)" in lines
    assert "ModelBuilder::partitionTheWork: only one best device: 0 = vsi-npu" in lines
    assert comp.plan.kind == comp.plan.SIMPLE and comp.plan.device.name == "vsi-npu"


def test_int8_mobilenet_compound_with_cpu_candidate(load_nnapi):
    model = load_nnapi(INT8_MOBILENET)
    apply_board("imx8mp")
    devices = get_device_manager().get_devices()
    best = find_best_device_for_each_operation(model, devices, FAST)
    ops = model.operations
    # the uint8 -> int8 requantize at the input (DEQUANTIZE + QUANTIZE) goes to vsi-npu
    assert (C(ops[0].type), C(ops[1].type)) == (C.DEQUANTIZE, C.QUANTIZE)
    assert best[0] == 0 and best[1] == 0
    int8_ops = [i for i, op in enumerate(ops)
                if op.type in (C.CONV_2D, C.DEPTHWISE_CONV_2D, C.ADD)]
    assert len(int8_ops) > 50
    for i in int8_ops:
        assert model.operands[ops[i].inputs[0]].type == T.TENSOR_QUANT8_ASYMM_SIGNED
        assert best[i] == 1, f"{C(ops[i].type).name}:{i} on {devices[best[i]].name}"
    comp = CompilationBuilder(model)
    comp.finish()
    assert comp.plan.kind == comp.plan.COMPOUND
    assert {s.device.name for s in comp.plan.steps} == {"vsi-npu", "nnapi-reference"}


def test_int8_mobilenet_vsi_only_accepted_by_signature(load_nnapi):
    model = load_nnapi(INT8_MOBILENET)
    decisions = VsiNpuDriver().supported_operations_with_reasons(model)
    refused = [(C(op.type).name, d.reason) for op, d in zip(model.operations, decisions)
               if not d.supported]
    assert refused == []
    comp = CompilationBuilder.create_for_devices(model, [VsiNpuDriver()])
    comp.finish()
    assert comp.plan.kind == comp.plan.SIMPLE and comp.plan.device.name == "vsi-npu"


def test_uint8_mobilenet_runs_on_vsi_npu_with_simulated_time(load_nnapi):
    model = load_nnapi("mobilenet_v1_0.25_128_quant.tflite")
    apply_board("imx8mp")
    comp = CompilationBuilder(model)
    comp.finish()
    x = np.random.default_rng(0).integers(0, 255, model.operands[model.input_indexes[0]]
                                          .dimensions, dtype=np.uint8)
    timings = []
    outs = []
    for _ in range(2):
        ex = Execution(comp)
        ex.set_input(0, None, x)
        out = np.zeros(model.operands[model.output_indexes[0]].dimensions, np.uint8)
        ex.set_output(0, None, out)
        ex.compute()
        timings.append(ex.timing)
        outs.append(out)
    assert ex.step_report[0][0] == "vsi-npu"
    first, second = timings
    assert first.host_ns > 0 and second.device_ns > 0
    assert first.driver_ns > second.driver_ns > second.device_ns  # compile at the first run
    np.testing.assert_array_equal(outs[0], outs[1])
    # same numbers as the CPU device
    cpu = CompilationBuilder.create_for_devices(model, [get_device_manager().cpu_device()])
    cpu.finish()
    ex = Execution(cpu)
    ex.set_input(0, None, x)
    ref = np.zeros_like(outs[0])
    ex.set_output(0, None, ref)
    ex.compute()
    np.testing.assert_array_equal(outs[0], ref)
