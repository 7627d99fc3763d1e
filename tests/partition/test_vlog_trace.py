"""The worked two-device trace of nnapi-runtime.md 3.7, line for line (tag ExecutionPlan)."""
from __future__ import annotations

import numpy as np

import nnsim
from nnsim.drivers.base import Capabilities, PerformanceInfo
from nnsim.drivers.limited import LimitedDriver
from nnsim.runtime.compilation import CompilationBuilder
from nnsim.runtime.devices import get_device_manager
from nnsim.runtime.model import ModelBuilder
from nnsim.common.operand import OperandTypeSpec
from nnsim.platform import vlog
from nnsim.types import OperandType, OperationCode

T = OperandType

EXPECTED = """ModelBuilder::partitionTheWork: sourceModelIndex = 0, deviceCount = 2, operationCount = 2
ModelBuilder::findBestDeviceForEachOperation(CONV_2D:0) = 0 (vsi-npu)
Device vsi-npu can't do operation DEQUANTIZE:1
ModelBuilder::findBestDeviceForEachOperation(DEQUANTIZE:1) = 1 (nnapi-reference)
enqueueOnAppropriateDevice 0 onto 0 (vsi-npu)
findNextDeviceToProcess: 0 (vsi-npu)
enqueueOnAppropriateDevice 1 onto 1 (nnapi-reference)
findNextDeviceToProcess: 1 (nnapi-reference)
findNextDeviceToProcess: -1 ({unknown})
ExecutionStep::finishStepModel, step 0
step model inputs: 0->0
step model outputs: 6->6
model inputs: 0->0
model outputs: 
temps as step model inputs: 
temps as step model outputs: 6->6
outputs as step model inputs: 
ExecutionStep::finishStepModel, compilation on vsi-npu
ExecutionStep::finishStepModel, step 1
step model inputs: 6->0
step model outputs: 7->1
model inputs: 
model outputs: 7->1
temps as step model inputs: 6->0
temps as step model outputs: 
outputs as step model inputs: 
ExecutionStep::finishStepModel, compilation on nnapi-reference
ExecutionPlan::CompoundBody::finish: compilation finished successfully
ModelBuilder::partitionTheWork: source model: 
Step#0: execute on vsi-npu
Step#1: execute on nnapi-reference""".split("\n")


def conv_dequantize_model():
    m = ModelBuilder()
    m.add_operand(OperandTypeSpec(T.TENSOR_QUANT8_ASYMM, (1, 3, 3, 1), 0.5, 0))
    m.add_operand(OperandTypeSpec(T.TENSOR_QUANT8_ASYMM, (1, 2, 2, 1), 0.5, 0))
    m.add_operand(OperandTypeSpec(T.TENSOR_INT32, (1,), 0.25, 0))
    for _ in range(3):
        m.add_operand(OperandTypeSpec(T.INT32))
    m.add_operand(OperandTypeSpec(T.TENSOR_QUANT8_ASYMM, (1, 2, 2, 1), 1.0, 0))
    m.add_operand(OperandTypeSpec(T.TENSOR_FLOAT32, (1, 2, 2, 1)))
    m.set_operand_value(1, np.array([2, 2, 2, 2], np.uint8))
    m.set_operand_value(2, np.array([4], np.int32))
    m.set_operand_value(3, np.array(0, np.int32))
    m.set_operand_value(4, np.array(1, np.int32))
    m.set_operand_value(5, np.array(0, np.int32))
    m.add_operation(OperationCode.CONV_2D, [0, 1, 2, 3, 3, 3, 3, 4, 4, 5], [6])
    m.add_operation(OperationCode.DEQUANTIZE, [6], [7])
    m.identify_inputs_and_outputs([0], [7])
    m.finish()
    return m


def conv_only_npu():
    caps = Capabilities({int(T.TENSOR_QUANT8_ASYMM): PerformanceInfo(0.1, 0.1)})
    return LimitedDriver("vsi-npu", caps,
                         lambda m, i: m.operations[i].type == OperationCode.CONV_2D)


def test_worked_trace(logcat):
    nnsim.setprop("debug.nn.vlog", "compilation")
    vlog.init_vlog_mask()
    model = conv_dequantize_model()
    get_device_manager().set_drivers([conv_only_npu()])
    comp = CompilationBuilder(model)
    comp.finish()
    assert logcat.lines("ExecutionPlan") == EXPECTED
    assert logcat.lines("CompilationBuilder") == ["CompilationBuilder::CompilationBuilder"]
    # and the compound plan computes what the CPU computes: 15 -> 15.0
    from nnsim.runtime.execution import Execution
    ex = Execution(comp)
    out = np.zeros((1, 2, 2, 1), np.float32)
    ex.set_input(0, None, np.array([8, 8, 8, 8, 4, 8, 8, 8, 8], np.uint8))
    ex.set_output(0, None, out)
    ex.compute()
    assert out.ravel().tolist() == [15.0, 15.0, 15.0, 15.0]


def test_single_device_collapse(logcat):
    nnsim.setprop("debug.nn.vlog", "compilation")
    vlog.init_vlog_mask()
    model = conv_dequantize_model()
    npu = LimitedDriver("vsi-npu", Capabilities({int(T.TENSOR_QUANT8_ASYMM):
                                                 PerformanceInfo(0.1, 0.1)}))
    get_device_manager().set_drivers([npu])
    CompilationBuilder(model).finish()
    lines = logcat.lines("ExecutionPlan")
    assert lines[1:] == [
        "ModelBuilder::findBestDeviceForEachOperation(CONV_2D:0) = 0 (vsi-npu)",
        "ModelBuilder::findBestDeviceForEachOperation(DEQUANTIZE:1) = 0 (vsi-npu)",
        "ModelBuilder::partitionTheWork: only one best device: 0 = vsi-npu",
        "ExecutionPlan::SimpleBody::finish, compilation",
        "ExecutionPlan::SimpleBody::finish: compilation finished successfully on vsi-npu",
        "ModelBuilder::partitionTheWork: source model: ",
        "SIMPLE for vsi-npu",
    ]


def test_cpu_only_property(logcat):
    nnsim.setprop("debug.nn.vlog", "compilation")
    nnsim.setprop("debug.nn.cpuonly", "1")
    vlog.init_vlog_mask()
    get_device_manager().set_drivers([conv_only_npu()])
    CompilationBuilder(conv_dequantize_model()).finish()
    assert "ModelBuilder::partitionTheWork: only one best device: 0 = nnapi-reference" in \
        logcat.lines("ExecutionPlan")


def test_partition_zero_goes_straight_to_cpu(logcat):
    nnsim.setprop("debug.nn.vlog", "compilation")
    nnsim.setprop("debug.nn.partition", "0")
    vlog.init_vlog_mask()
    get_device_manager().set_drivers([conv_only_npu()])
    comp = CompilationBuilder(conv_dequantize_model())
    comp.finish()
    assert logcat.lines("CompilationBuilder") == ["CompilationBuilder::CompilationBuilder",
                                                  "CompilationBuilder::finish with CPU fallback"]
    assert comp.plan.kind == comp.plan.SIMPLE and comp.plan.device.name == "nnapi-reference"


def test_enabled_devices_regex_filters_drivers():
    get_device_manager().set_drivers([conv_only_npu(), LimitedDriver("other", 0.5)])
    nnsim.setprop("debug.nn.enabled-devices", "vsi-.*")
    names = [d.name for d in get_device_manager().get_devices()]
    assert names == ["vsi-npu", "nnapi-reference"]
