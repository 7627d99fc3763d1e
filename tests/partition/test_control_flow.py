"""IF and WHILE end to end: results (hand-computed), the runtime interpreter's partitioning and
its ExecutionPlan vlog lines (derived from T13 runtime/ExecutionPlan.cpp partitionTheWorkInternal
and findBestDeviceForEachOperation, nnapi-runtime.md 3.2/3.3/3.6), the CPU executor path, and the
loop timeout."""
from __future__ import annotations

import time

import numpy as np
import pytest

import nnsim
from nnsim import nnapi as nn
from nnsim.drivers.base import Capabilities, PerformanceInfo
from nnsim.drivers.limited import LimitedDriver
from nnsim.platform import vlog
from nnsim.runtime.devices import get_device_manager
from nnsim.types import OperandType, OperationCode

from . import control_flow_models as cf

MISSED_DEADLINE = nn.ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT
F32 = np.float32
X, Y = np.array([2, 3], F32), np.array([4, 5], F32)


def cond(value: bool):
    return np.array([value], np.bool_)


def n_(value: int):
    return np.array([value], np.int32)


@pytest.fixture(params=["interpreter", "cpu-executor"])
def path(request):
    """Run each case through the runtime interpreter (partitioned, the default) and through
    the CPU executor (debug.nn.partition=0: the whole model on nnapi-reference)."""
    get_device_manager().set_drivers([])
    if request.param == "cpu-executor":
        nnsim.setprop("debug.nn.partition", "0")
    return request.param


def test_if_selects_the_branch(path):
    model = cf.if_model()
    code, (out,), comp = cf.run(model, [cond(True), X, Y], [np.zeros(2, F32)])
    assert code == cf.OK and out.tolist() == [6.0, 8.0]          # then: x + y
    code, (out,), _ = cf.run(model, [cond(False), X, Y], [np.zeros(2, F32)])
    assert code == cf.OK and out.tolist() == [8.0, 15.0]         # else: x * y
    assert comp.plan.kind == ("COMPOUND" if path == "interpreter" else "SIMPLE")


@pytest.mark.parametrize("n, want", [(0, 1), (1, 1), (5, 120), (10, 3628800)])
def test_while_factorial(path, n, want):
    code, (out,), _ = cf.run(cf.factorial_model(), [n_(n)], [np.zeros(1, np.int32)])
    assert code == cf.OK and out.tolist() == [want]


def test_while_fibonacci_two_outputs(path):
    # (a, b): (0,1) (1,1) (1,2) (2,3) (3,5) (5,8) (8,13) (13,21) (21,34) (34,55) (55,89)
    code, (state, k), _ = cf.run(cf.fibonacci_model(), [n_(10)],
                                 [np.zeros((1, 2), F32), np.zeros(1, np.int32)])
    assert code == cf.OK and state.tolist() == [[55.0, 89.0]] and k.tolist() == [10]


@pytest.mark.parametrize("n, want", [(0, 0), (2, 2), (5, 12)])
def test_if_nested_in_while_body(path, n, want):
    # acc: 0 -> +1 -> +1 -> +1 (i = 0, 1, 2) -> *2 -> *2 (i = 3, 4)
    code, (out,), _ = cf.run(cf.nested_model(), [n_(n)], [np.zeros(1, np.int32)])
    assert code == cf.OK and out.tolist() == [want]


def test_loop_timeout_gives_missed_deadline(path):
    start = time.monotonic()
    code, _, _ = cf.run(cf.infinite_loop_model(), [n_(1)], [np.zeros(1, np.int32)],
                        loop_timeout_ns=20_000_000)
    assert code == MISSED_DEADLINE
    # the execution's 20 ms limit ended the loop, not the 2 s default
    assert time.monotonic() - start < 1.5


def test_loop_timeout_values_and_clamp():
    assert nn.ANeuralNetworks_getDefaultLoopTimeout() == 2_000_000_000
    assert nn.ANeuralNetworks_getMaximumLoopTimeout() == 15_000_000_000
    _, comp = nn.ANeuralNetworksCompilation_create(cf.factorial_model())
    nn.ANeuralNetworksCompilation_finish(comp)
    _, ex = nn.ANeuralNetworksExecution_create(comp)
    assert ex.loop_timeout_ns == 2_000_000_000
    assert nn.ANeuralNetworksExecution_setLoopTimeout(ex, 20_000_000_000) == cf.OK
    assert ex.loop_timeout_ns == 15_000_000_000
    nn.ANeuralNetworksExecution_setInput(ex, 0, None, n_(3))
    out = np.zeros(1, np.int32)
    nn.ANeuralNetworksExecution_setOutput(ex, 0, None, out)
    assert nn.ANeuralNetworksExecution_compute(ex) == cf.OK and out.tolist() == [6]
    assert nn.ANeuralNetworksExecution_setLoopTimeout(ex, 1) == nn.ANEURALNETWORKS_BAD_STATE


def test_dynamic_shape_grows_across_iterations(path):
    """x = [1]; i = 0; while i < n: x = concat(x, x); i += 1 -> 2**n ones. The state has an
    unknown dimension, so the WHILE runs whole on the CPU device (not the interpreter)."""
    dyn = cf.OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (0,))
    c = cf.Builder()
    x, i, n = c.operand(dyn), c.operand(cf.I1), c.operand(cf.I1)
    (less,) = c.op(nn.ANEURALNETWORKS_LESS, [i, n], [cf.BOOL1])
    cond_model = c.finish([x, i, n], [less])
    b = cf.Builder()
    x, i, n = b.operand(dyn), b.operand(cf.I1), b.operand(cf.I1)
    axis = b.const(cf.SCALAR_I32, np.array(0, np.int32))
    (x2,) = b.op(nn.ANEURALNETWORKS_CONCATENATION, [x, x, axis], [dyn])
    one = b.const(cf.I1, n_(1))
    body = b.finish([x, i, n], [x2, b.binary(nn.ANEURALNETWORKS_ADD, i, one, cf.I1)])
    m = cf.Builder()
    n = m.operand(cf.I1)
    x0 = m.const(cf.OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (1,)), np.array([1], F32))
    (x_final,) = m.op(nn.ANEURALNETWORKS_WHILE, [m.ref(cond_model), m.ref(body), x0,
                                                  m.const(cf.I1, n_(0)), n], [dyn])
    model = m.finish([n], [x_final])
    _, comp = nn.ANeuralNetworksCompilation_create(model)
    assert nn.ANeuralNetworksCompilation_finish(comp) == cf.OK
    assert comp.plan.kind == "SIMPLE" and comp.plan.device.name == "nnapi-reference"
    _, ex = nn.ANeuralNetworksExecution_create(comp)
    nn.ANeuralNetworksExecution_setInput(ex, 0, None, n_(3))
    out = np.zeros(16, F32)
    nn.ANeuralNetworksExecution_setOutput(ex, 0, cf.OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (16,)),
                                          out)
    assert nn.ANeuralNetworksExecution_compute(ex) == cf.OK
    assert nn.ANeuralNetworksExecution_getOutputOperandDimensions(ex, 0) == (cf.OK, [8])
    assert out[:8].tolist() == [1.0] * 8


# -- partitioning and its vlog lines -------------------------------------------------------------
def add_only_npu(if_perf=None):
    """Claims float32 ADD (perf 0.5); with ``if_perf`` also IF (if perf, ADD/MUL perf 0.1)."""
    if if_perf is None:
        caps = Capabilities({int(OperandType.TENSOR_FLOAT32): PerformanceInfo(0.5, 0.5)})
        return LimitedDriver("npu", caps, lambda m, i: m.operations[i].type == OperationCode.ADD)
    caps = Capabilities({int(OperandType.TENSOR_FLOAT32): PerformanceInfo(0.1, 0.1)},
                        if_performance=PerformanceInfo(if_perf, if_perf))
    return LimitedDriver("npu", caps, lambda m, i: m.operations[i].type in (
        OperationCode.ADD, OperationCode.MUL, OperationCode.IF))


def step_lines(step, inputs, outputs, model_inputs, model_outputs, temps_in="", temps_out="",
               device="npu"):
    return [f"ExecutionStep::finishStepModel, step {step}", f"step model inputs: {inputs}",
            f"step model outputs: {outputs}", f"model inputs: {model_inputs}",
            f"model outputs: {model_outputs}", f"temps as step model inputs: {temps_in}",
            f"temps as step model outputs: {temps_out}", "outputs as step model inputs: ",
            f"ExecutionStep::finishStepModel, compilation on {device}"]


IF_TRACE = [
    "ModelBuilder::partitionTheWork: sourceModelIndex = 0, deviceCount = 2, operationCount = 1",
    "Device npu can't do operation IF:0",
    "ModelBuilder::findBestDeviceForEachOperation(IF:0) = -1 (NNAPI)",
    "enqueueOnAppropriateDevice 0 onto 2 (NNAPI)",
    "findNextDeviceToProcess: 2 (NNAPI)",
    "ModelBuilder::partitionTheWork: sourceModelIndex = 1, deviceCount = 2, operationCount = 1",
    "ModelBuilder::findBestDeviceForEachOperation(ADD:0) = 0 (npu)",
    "enqueueOnAppropriateDevice 0 onto 0 (npu)",
    "findNextDeviceToProcess: 0 (npu)",
    "findNextDeviceToProcess: -1 ({unknown})",
    "ModelBuilder::partitionTheWork: sourceModelIndex = 2, deviceCount = 2, operationCount = 1",
    "Device npu can't do operation MUL:0",
    "ModelBuilder::findBestDeviceForEachOperation(MUL:0) = 1 (nnapi-reference)",
    "enqueueOnAppropriateDevice 0 onto 1 (nnapi-reference)",
    "findNextDeviceToProcess: 1 (nnapi-reference)",
    "findNextDeviceToProcess: -1 ({unknown})",
    "findNextDeviceToProcess: -1 ({unknown})",
    *step_lines(1, "0->0, 1->1", "3->3", "0->0, 1->1", "3->3"),
    *step_lines(3, "0->0, 1->1", "3->3", "0->0, 1->1", "3->3", device="nnapi-reference"),
    "ExecutionPlan::CompoundBody::finish: compilation finished successfully",
    "ModelBuilder::partitionTheWork: source model: ",
    "Step#0: if (0, 0) then=1 else=3",
    "Step#1: execute on npu",
    "Step#2: goto 4",
    "Step#3: execute on nnapi-reference",
]


def test_if_partition_trace(logcat):
    nnsim.setprop("debug.nn.vlog", "compilation,execution")
    vlog.init_vlog_mask()
    get_device_manager().set_drivers([add_only_npu()])
    model = cf.if_model()
    code, (out,), comp = cf.run(model, [cond(False), X, Y], [np.zeros(2, F32)])
    assert logcat.lines("ExecutionPlan") == IF_TRACE
    assert code == cf.OK and out.tolist() == [8.0, 15.0]
    execution = logcat.lines("ExecutionBuilder")
    assert "next: Step#0: if (0, 0) then=1 else=3" in execution
    assert "next: Step#3: execute on nnapi-reference" in execution
    assert "next: Step#1: execute on npu" not in execution   # the then branch did not run


def test_while_partition_layout_and_trace(logcat):
    nnsim.setprop("debug.nn.vlog", "compilation,execution")
    vlog.init_vlog_mask()
    get_device_manager().set_drivers([])
    code, (out,), comp = cf.run(cf.factorial_model(), [n_(2)], [np.zeros(1, np.int32)])
    assert code == cf.OK and out.tolist() == [2]
    plan_lines = logcat.lines("ExecutionPlan")
    assert plan_lines[-5:] == ["Step#0: while cond=1 body=3 exit=5",
                               "Step#1: execute on nnapi-reference", "Step#2: goto 0",
                               "Step#3: execute on nnapi-reference", "Step#4: goto 0"]
    # The body (operands acc 0, i 1, n 2, one 3, MUL fuse 4, acc' 5, ADD fuse 6, i' 7) runs
    # ADD before MUL (LIFO sort), so the step model meets i, one, fuse, i', then acc, fuse,
    # acc': inputs i->0, acc->4; outputs i'->3, acc'->6. n is read by no body operation.
    assert step_lines(3, "1->0, 0->4", "7->3, 5->6", "1->0, 0->4", "7->3, 5->6",
                      device="nnapi-reference") == \
        plan_lines[plan_lines.index("ExecutionStep::finishStepModel, step 3"):][:9]
    loop = [m for m in logcat.lines("ExecutionBuilder") if "while" in m]
    assert loop == [
        "next: Step#0: while cond=1 body=3 exit=5: iteration 0: evaluating condition",
        "next: Step#0: while cond=1 body=3 exit=5: iteration 0: evaluating body",
        "next: Step#0: while cond=1 body=3 exit=5: iteration 1: evaluating condition",
        "next: Step#0: while cond=1 body=3 exit=5: iteration 1: evaluating body",
        "next: Step#0: while cond=1 body=3 exit=5: iteration 2: evaluating condition",
        "next: Step#0: while cond=1 body=3 exit=5: iteration 2: exiting loop"]


def test_if_goes_whole_to_a_faster_driver(logcat):
    """IF perf on the NPU = 0.1 + 0.5 * (0.1 + 0.1) = 0.2 < the CPU's 1 + 0.5 * (1 + 1): the
    whole IF, with its branches, is one SIMPLE step on the NPU."""
    nnsim.setprop("debug.nn.vlog", "compilation")
    vlog.init_vlog_mask()
    get_device_manager().set_drivers([add_only_npu(if_perf=0.1)])
    code, (out,), comp = cf.run(cf.if_model(), [cond(True), X, Y], [np.zeros(2, F32)])
    assert code == cf.OK and out.tolist() == [6.0, 8.0]
    assert logcat.lines("ExecutionPlan")[1:3] == [
        "ModelBuilder::findBestDeviceForEachOperation(IF:0) = 0 (npu)",
        "ModelBuilder::partitionTheWork: only one best device: 0 = npu"]


def test_if_slower_on_driver_goes_to_interpreter():
    """The same NPU with IF perf 1.9: 1.9 + 0.1 = 2.0 ties the CPU's 2.0, and a tie goes to the
    CPU, hence to the interpreter."""
    get_device_manager().set_drivers([add_only_npu(if_perf=1.9)])
    _, comp = nn.ANeuralNetworksCompilation_create(cf.if_model())
    assert nn.ANeuralNetworksCompilation_finish(comp) == cf.OK
    assert comp.plan.best_device_for_op == [2]   # len(devices) = the interpreter


def test_unknown_size_control_flow_is_a_cpu_step(logcat):
    """An IF whose output has an unknown dimension runs on the CPU device as an ordinary
    operation: logged with the CPU's index, not -1 (NNAPI), and no "can't do" line."""
    nnsim.setprop("debug.nn.vlog", "compilation")
    vlog.init_vlog_mask()
    get_device_manager().set_drivers([add_only_npu()])
    dyn = cf.OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (0,))
    b = cf.Builder()
    c, x, y = b.operand(cf.BOOL1), b.operand(cf.F2), b.operand(cf.F2)
    then_ref = b.ref(cf.branch_model(nn.ANEURALNETWORKS_ADD))
    else_ref = b.ref(cf.branch_model(nn.ANEURALNETWORKS_MUL))
    (z,) = b.op(nn.ANEURALNETWORKS_IF, [c, then_ref, else_ref, x, y], [dyn])
    model = b.finish([c, x, y], [z])
    code, (out,), comp = cf.run(model, [cond(True), X, Y], [np.zeros(2, F32)])
    assert code == cf.OK and out.tolist() == [6.0, 8.0]
    assert logcat.lines("ExecutionPlan")[1:3] == [
        "ModelBuilder::findBestDeviceForEachOperation(IF:0) = 1 (nnapi-reference)",
        "ModelBuilder::partitionTheWork: only one best device: 1 = nnapi-reference"]


def test_same_model_referenced_twice_gets_two_source_models():
    get_device_manager().set_drivers([])
    body = cf.branch_model(nn.ANEURALNETWORKS_ADD)
    b = cf.Builder()
    c, x, y = b.operand(cf.BOOL1), b.operand(cf.F2), b.operand(cf.F2)
    (z,) = b.op(nn.ANEURALNETWORKS_IF, [c, b.ref(body), b.ref(body), x, y], [cf.F2])
    model = b.finish([c, x, y], [z])
    code, (out,), comp = cf.run(model, [cond(False), X, Y], [np.zeros(2, F32)])
    assert code == cf.OK and out.tolist() == [6.0, 8.0]
    assert comp.plan.source_models == [model, body, body]
    assert [s.source_model_index for s in comp.plan.execution_steps()] == [1, 2]
