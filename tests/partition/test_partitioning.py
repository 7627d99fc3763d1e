"""AOSP TestPartitioning scenarios (runtime/test/TestPartitioning.cpp), written as our own tests.

Expected device choices and step input/output orders come from the AOSP tests and the
partitioner rules of nnapi-runtime.md 3.2-3.3, not from nnsim runs.
"""
from __future__ import annotations

import pytest

from nnsim.errors import BadDataError
from nnsim.runtime.devices import DeviceManager
from nnsim.runtime.plan import partition_the_work
from nnsim.types import PreferenceCode, PriorityCode

from .helpers import PartitioningModel, make_device

CPU = DeviceManager.cpu_device()
LOW_POWER = PreferenceCode.PREFER_LOW_POWER
PRIO = PriorityCode.PRIORITY_DEFAULT


def simple_model():
    m = PartitioningModel()
    o0, o1 = m.add_float_operand(), m.add_float_operand()
    o2 = m.add_operation_2to1(0, o0, o1)
    o3 = m.add_float_operand()
    o4 = m.add_operation_2to1(1, o2, o3)
    m.identify_inputs_and_outputs([o0, o1, o3], [o4])
    m.finish()
    return m, (o0, o1, o2, o3, o4)


def test_simple_model_best_device_wins():
    model, _ = simple_model()
    devices = [make_device("bad", 0.9, ~0), make_device("good", 0.5, ~0), CPU]
    plan = partition_the_work(model, devices, LOW_POWER, PRIO)
    assert plan.kind == plan.SIMPLE
    assert plan.device.name == "good"


def test_simple_model_tie_goes_to_cpu():
    model, _ = simple_model()
    devices = [make_device("bad", 1.1, ~0), make_device("bad2", 1.0, ~0), CPU]
    plan = partition_the_work(model, devices, LOW_POWER, PRIO)
    assert plan.kind == plan.SIMPLE
    assert plan.device is CPU


def test_simple_model_tie_between_drivers_goes_to_earlier_device():
    model, _ = simple_model()
    devices = [make_device("first", 0.5, ~0), make_device("second", 0.5, ~0), CPU]
    plan = partition_the_work(model, devices, LOW_POWER, PRIO)
    assert plan.device.name == "first"


def test_simple_model_two_single_op_devices():
    model, (o0, o1, o2, o3, o4) = simple_model()
    devices = [make_device("0", 0.9, 1 << 0), make_device("1", 0.5, 1 << 1), CPU]
    plan = partition_the_work(model, devices, LOW_POWER, PRIO)
    assert plan.kind == plan.COMPOUND
    s0, s1 = plan.steps
    assert s0.device.name == "0" and s1.device.name == "1"
    # step 0: ADD(o0, o1) -> o2; o0, o1 become step operands 0 and 1, the fuse code 2, o2 3.
    assert s0.model_inputs == [(o0, 0), (o1, 1)]
    assert s0.model_outputs == [] and s0.temps_as_inputs == []
    assert sorted(s0.temps_as_outputs.items()) == [(o2, 3)]
    # step 1: MUL(o2, o3): submodel inputs follow model inputs (AOSP comment).
    assert s1.model_inputs == [(o3, 1)]
    assert s1.temps_as_inputs == [(o2, 0)]
    assert s1.model_outputs == [(o4, 3)]
    assert s1.step_inputs == [(o3, 1), (o2, 0)]
    assert s1.step_model.input_indexes == [1, 0]


def test_cpu_partition_in_the_middle():
    """AOSP PartitioningTest.Cpu: device, cpu, same-device -> three steps."""
    cpu_op, dev_op = 1, 2
    m = PartitioningModel()
    o0, o1 = m.add_float_operand(), m.add_float_operand()
    o2 = m.add_operation_2to1(dev_op, o0, o1)
    o3 = m.add_operation_2to1(dev_op, o0, o2)
    o4 = m.add_operation_2to1(cpu_op, o0, o3)
    o5 = m.add_operation_2to1(cpu_op, o2, o4)
    o6 = m.add_float_operand()
    o7 = m.add_operation_2to1(dev_op, o3, o5)
    o8 = m.add_operation_2to1(dev_op, o6, o7)
    m.identify_inputs_and_outputs([o0, o1, o6], [o4, o8])
    m.finish()
    dev = make_device("1", 0.5, 1 << dev_op)
    plan = partition_the_work(m, [dev, CPU], LOW_POWER, PRIO)
    assert [s.device.name for s in plan.steps] == ["1", "nnapi-reference", "1"]
    s0, s1, s2 = plan.steps
    assert [src for src, _ in s0.model_inputs] == [o0, o1]
    assert sorted(s0.temps_as_outputs) == [o2, o3]
    assert [src for src, _ in s1.model_inputs] == [o0]
    assert [src for src, _ in s1.model_outputs] == [o4]
    assert [src for src, _ in s1.temps_as_inputs] == [o3, o2]
    assert sorted(s1.temps_as_outputs) == [o5]
    assert [src for src, _ in s2.model_inputs] == [o6]
    assert [src for src, _ in s2.temps_as_inputs] == [o3, o5]
    assert [src for src, _ in s2.model_outputs] == [o8]
    assert [src for src, _ in s2.step_inputs] == [o6, o3, o5]


def test_model_output_read_by_later_step_is_output_as_step_input():
    m = PartitioningModel()
    a, b = m.add_float_operand(), m.add_float_operand()
    c = m.add_operation_2to1(0, a, b)        # on device "d"
    d = m.add_operation_2to1(4, c, b)        # on the CPU
    m.identify_inputs_and_outputs([a, b], [c, d])
    m.finish()
    plan = partition_the_work(m, [make_device("d", 0.5, 1 << 0), CPU], LOW_POWER, PRIO)
    s0, s1 = plan.steps
    assert [src for src, _ in s0.model_outputs] == [c]
    assert [src for src, _ in s1.outputs_as_inputs] == [c]
    assert [src for src, _ in s1.step_inputs] == [b, c]


def test_no_driver_can_do_operation_is_bad_data():
    model, _ = simple_model()
    with pytest.raises(BadDataError, match="No driver can do operation ADD"):
        partition_the_work(model, [make_device("mul-only", 0.5, 1 << 4)], LOW_POWER, PRIO)


def test_fast_single_answer_uses_exec_time_low_power_uses_power():
    from nnsim.drivers.base import Capabilities, PerformanceInfo
    from nnsim.drivers.limited import LimitedDriver
    model, _ = simple_model()
    fast = LimitedDriver("fast", Capabilities.uniform(PerformanceInfo(0.2, 2.0)))
    frugal = LimitedDriver("frugal", Capabilities.uniform(PerformanceInfo(2.0, 0.2)))
    plan = partition_the_work(model, [fast, frugal, CPU],
                              PreferenceCode.PREFER_FAST_SINGLE_ANSWER, PRIO)
    assert plan.device.name == "fast"
    plan = partition_the_work(model, [fast, frugal, CPU], LOW_POWER, PRIO)
    assert plan.device.name == "frugal"
    plan = partition_the_work(model, [fast, frugal, CPU],
                              PreferenceCode.PREFER_SUSTAINED_SPEED, PRIO)
    assert plan.device.name == "fast"


def test_undeclared_operand_type_is_flt_max():
    """A device whose table lacks TENSOR_FLOAT32 loses to the CPU (lookup gives FLT_MAX)."""
    from nnsim.drivers.base import Capabilities, PerformanceInfo
    from nnsim.drivers.limited import LimitedDriver
    from nnsim.types import OperandType
    model, _ = simple_model()
    quant_only = LimitedDriver("q", Capabilities(
        {int(OperandType.TENSOR_QUANT8_ASYMM): PerformanceInfo(0.1, 0.1)}))
    plan = partition_the_work(model, [quant_only, CPU], LOW_POWER, PRIO)
    assert plan.device is CPU


def test_float32_arithmetic_in_tie_rule():
    """1.0000000001 rounds to 1.0f: a tie with the CPU, so the CPU wins (float arithmetic)."""
    model, _ = simple_model()
    plan = partition_the_work(model, [make_device("almost", 1.0000000001, ~0), CPU],
                              LOW_POWER, PRIO)
    assert plan.device is CPU
