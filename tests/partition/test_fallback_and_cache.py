"""Compile-time and run-time CPU fallback (nnapi-runtime.md 3.1, 3.4) and cache token hashing
(6.1), against hand-derived expectations."""
from __future__ import annotations

import hashlib
import struct

import numpy as np
import pytest

import nnsim
from nnsim.drivers.base import PreparedModel
from nnsim.drivers.limited import LimitedDriver
from nnsim.errors import NnapiError, OpFailedError
from nnsim.platform import vlog
from nnsim.runtime.compilation import CompilationBuilder
from nnsim.runtime.devices import DeviceManager, get_device_manager
from nnsim.runtime.execution import Execution

from .helpers import PartitioningModel


def two_op_model():
    m = PartitioningModel()
    a, b = m.add_float_operand((2,)), m.add_float_operand((2,))
    c = m.add_operation_2to1(0, a, b)     # ADD
    d = m.add_operation_2to1(4, c, b)     # MUL
    m.identify_inputs_and_outputs([a, b], [d])
    m.finish()
    return m


def compute(comp):
    ex = Execution(comp)
    out = np.zeros(2, np.float32)
    ex.set_input(0, None, np.array([1, 2], np.float32))
    ex.set_input(1, None, np.array([3, 4], np.float32))
    ex.set_output(0, None, out)
    ex.compute()
    return out, ex


EXPECTED = [(1 + 3) * 3, (2 + 4) * 4]


class _FailingPrepared(PreparedModel):
    def execute(self, inputs):
        raise OpFailedError("simulated device failure")


class FailsAtExecution(LimitedDriver):
    def prepare(self, model, preference, priority, cache=None):
        return _FailingPrepared(self, model)


class FailsAtPrepare(LimitedDriver):
    def prepare(self, model, preference, priority, cache=None):
        raise OpFailedError("simulated compilation failure")


def test_compile_failure_falls_back_to_cpu(logcat):
    nnsim.setprop("debug.nn.vlog", "compilation")
    vlog.init_vlog_mask()
    get_device_manager().set_drivers([FailsAtPrepare("npu", 0.5)])
    comp = CompilationBuilder(two_op_model())
    comp.finish()
    assert "CompilationBuilder::finish with CPU fallback" in logcat.lines("CompilationBuilder")
    assert comp.plan.device is DeviceManager.cpu_device()
    assert compute(comp)[0].tolist() == EXPECTED


def test_compile_failure_without_fallback_fails():
    get_device_manager().set_drivers([FailsAtPrepare("npu", 0.5)])
    nnsim.setprop("debug.nn.partition", "2")
    comp = CompilationBuilder(two_op_model())
    with pytest.raises(OpFailedError):
        comp.finish()
    assert not comp.is_valid


def test_execution_failure_full_fallback_on_simple_plan(logcat):
    nnsim.setprop("debug.nn.vlog", "execution")
    vlog.init_vlog_mask()
    get_device_manager().set_drivers([FailsAtExecution("npu", 0.5)])
    comp = CompilationBuilder(two_op_model())
    comp.finish()
    assert comp.plan.kind == comp.plan.SIMPLE and comp.plan.device.name == "npu"
    out, ex = compute(comp)
    assert out.tolist() == EXPECTED
    assert "cpuFallbackFull" in logcat.lines("ExecutionBuilder")
    assert [name for name, _ in ex.step_report] == ["nnapi-reference"]


def test_execution_failure_partial_fallback_on_compound_plan(logcat):
    nnsim.setprop("debug.nn.vlog", "execution")
    vlog.init_vlog_mask()
    from nnsim.types import OperationCode
    npu = FailsAtExecution("npu", 0.5, lambda m, i: m.operations[i].type == OperationCode.ADD)
    get_device_manager().set_drivers([npu])
    comp = CompilationBuilder(two_op_model())
    comp.finish()
    assert [s.device.name for s in comp.plan.steps] == ["npu", "nnapi-reference"]
    out, ex = compute(comp)
    assert out.tolist() == EXPECTED
    assert "cpuFallbackPartial" in logcat.lines("ExecutionBuilder")
    assert [name for name, _ in ex.step_report] == ["nnapi-reference", "nnapi-reference"]


def test_no_execution_fallback_for_create_for_devices():
    npu = FailsAtExecution("npu", 0.5)
    get_device_manager().set_drivers([npu])
    comp = CompilationBuilder.create_for_devices(two_op_model(), [npu])
    comp.finish()
    with pytest.raises(NnapiError):
        compute(comp)


class CachingDriver(LimitedDriver):
    number_of_cache_files_needed = (1, 2)

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.caches = []

    def prepare(self, model, preference, priority, cache=None):
        self.caches.append(cache)
        return super().prepare(model, preference, priority, cache)


def test_cache_token_and_file_names(tmp_path):
    npu = CachingDriver("npu", 0.5, version_string="1.2.3")
    get_device_manager().set_drivers([npu])
    token = bytes(range(32))
    comp = CompilationBuilder(two_op_model())
    comp.set_preference(2)
    comp.set_caching(str(tmp_path), token)
    comp.finish()
    # SIMPLE plan: SHA-256(token || name || version || int32 preference || int32 priority)
    digest = hashlib.sha256(token + b"npu" + b"1.2.3" + struct.pack("<ii", 2, 100)).digest()
    letters = "".join(chr(65 + (b & 15)) + chr(65 + (b >> 4)) for b in digest)
    cache = npu.caches[0]
    assert cache.token == digest
    assert cache.model_files == [f"{tmp_path}/{letters}10"]
    assert cache.data_files == [f"{tmp_path}/{letters}20", f"{tmp_path}/{letters}21"]


def test_cpu_device_gets_no_cache(tmp_path):
    get_device_manager().set_drivers([])
    comp = CompilationBuilder(two_op_model())
    comp.set_caching(str(tmp_path), bytes(32))
    comp.finish()
    assert list(tmp_path.iterdir()) == []
