"""`nnsim explain --steps`: the partitioner's decisions in upstream's order (issue 17)."""
from __future__ import annotations

import json

import numpy as np
import pytest

import nnsim
from nnsim.drivers.base import PerformanceInfo
from nnsim.drivers.limited import LimitedDriver
from nnsim.explain_steps import format_steps
from nnsim.runtime import trace
from nnsim.runtime.compilation import CompilationBuilder
from nnsim.runtime.devices import get_device_manager
from nnsim.runtime.model import ModelBuilder
from nnsim.common.operand import OperandTypeSpec
from nnsim.types import FLT_MAX, OperandType, OperationCode

from .cliutil import MODELS, nnsim as run_cli

needs_models = pytest.mark.skipif(not MODELS.is_dir(), reason=f"no shared models at {MODELS}")


def steps_json(*args):
    r = run_cli("explain", *args, "--steps", "--format", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def best(events):
    return [e for e in events if e["stage"] == "findBestDeviceForEachOperation"]


@needs_models
def test_int8_convolutions_lose_to_nnapi_reference_on_flt_max():
    # vsi-npu declares TENSOR_QUANT8_ASYMM_SIGNED at FLT_MAX (drivers/data/imx8mp.json) and the
    # CPU is 1.0: every int8 CONV_2D goes to nnapi-reference, index by index.
    events = steps_json(MODELS / "tf2_mobilenet_v2_1.0_224_ptq.tflite", "--board", "imx8mp")
    stages = [e["stage"] for e in events]
    assert stages[0] == "device selection"
    assert events[0]["devices"] == ["vsi-npu", "nnapi-reference"]
    # Validate for every node, in node order, before the delegate forms its partitions
    validate = [e for e in events if e["stage"] == "Validate"]
    assert [e["node"] for e in validate] == list(range(68))
    assert stages.index("delegate partitions") > stages.index("Validate") + 67
    # getSupportedOperations per device precedes every device choice
    first_best = stages.index("findBestDeviceForEachOperation")
    asked = [e["device"] for e in events[:first_best] if e["stage"] == "getSupportedOperations"]
    assert asked == ["vsi-npu", "nnapi-reference"]
    convs = [e for e in best(events) if e["op"].startswith("CONV_2D:")]
    from nnsim.tflite.reader import read_model
    model = read_model((MODELS / "tf2_mobilenet_v2_1.0_224_ptq.tflite").read_bytes())
    conv_nodes = [n for n, op in enumerate(model.main.operators) if op.name == "CONV_2D"]
    assert sorted(e["node"] for e in convs) == conv_nodes
    for e in convs:
        perf = {c["device"]: c["exec_time"] for c in e["compared"]}
        assert perf["vsi-npu"] >= FLT_MAX * 0.999 and perf["nnapi-reference"] == 1.0
        assert e["device"] == "nnapi-reference" and e["rule"] == "lowest exec time"
    first = next(e for e in convs if e["op"] == "CONV_2D:2")
    assert first["node"] == 1
    text = run_cli("explain", MODELS / "tf2_mobilenet_v2_1.0_224_ptq.tflite", "--steps").stdout
    assert ("findBestDeviceForEachOperation CONV_2D:2 (node 1): vsi-npu FLT_MAX, "
            "nnapi-reference 1 -> nnapi-reference (lowest exec time)") in text.splitlines()
    steps = [e for e in events if e["stage"] == "partitionTheWork"]
    assert [s["device"] for s in steps] == ["vsi-npu", "nnapi-reference", "vsi-npu"]


@needs_models
def test_uint8_mobilenet_runs_on_vsi_npu_in_one_step():
    events = steps_json(MODELS / "mobilenet_v1_0.25_224_quant.tflite")
    choices = best(events)
    assert len(choices) == 31
    assert [e["node"] for e in choices] == list(range(31))
    for e in choices:
        perf = {c["device"]: c["exec_time"] for c in e["compared"]}
        assert perf["nnapi-reference"] == 1.0 and perf["vsi-npu"] < 1.0
        assert e["device"] == "vsi-npu"
    steps = [e for e in events if e["stage"] == "partitionTheWork"]
    assert len(steps) == 1 and steps[0]["single"] and steps[0]["device"] == "vsi-npu"
    assert steps[0]["nodes"] == list(range(31))
    assert events[-1]["stage"] == "partitionTheWork"


@needs_models
def test_deeplab_sdk29_validate_refusals_and_delegate_partitions():
    events = steps_json(MODELS / "deeplabv3_mnv2_pascal_quant.tflite", "--android_sdk", "29")
    refused = {e["node"]: e["reasons"] for e in events
               if e["stage"] == "Validate" and not e["supported"]}
    assert sorted(refused) == [61, 64, 69, 70, 71]
    assert refused[61][0].startswith("kUnsupportedOperandSize")
    assert refused[71][0].startswith("kUnsupportedOutputType")
    parts = next(e for e in events if e["stage"] == "delegate partitions")["partitions"]
    on_cpu = sorted(n for p in parts if not p["delegated"] for n in p["nodes"])
    assert on_cpu == [61, 64, 69, 70, 71]
    models = [e for e in events if e["stage"] == "NNAPI model"]
    assert len(models) == sum(p["delegated"] for p in parts)


@needs_models
def test_partition_zero_falls_back_to_the_cpu():
    events = steps_json(MODELS / "mobilenet_v1_0.25_224_quant.tflite",
                        "--setprop", "debug.nn.partition=0")
    assert not best(events)
    assert events[-1]["stage"] == "CPU fallback"
    assert events[-1]["device"] == "nnapi-reference"


# -- the runtime's own records, on AOSP-sample-style devices -------------------------------------
def _add_model(n_ops: int = 2) -> ModelBuilder:
    m = ModelBuilder()
    t = OperandTypeSpec(OperandType.TENSOR_FLOAT32, (1,))
    a = m.add_operand(t)
    prev = a
    for _ in range(n_ops):
        fuse = m.add_operand(OperandTypeSpec(OperandType.INT32))
        m.set_operand_value(fuse, np.array(0, np.int32))
        out = m.add_operand(t)
        m.add_operation(OperationCode.ADD, [prev, a, fuse], [out])
        prev = out
    m.identify_inputs_and_outputs([a], [prev])
    m.finish()
    return m


def _compile(drivers) -> list:
    get_device_manager().set_drivers(drivers)
    with trace.recording() as events:
        CompilationBuilder(_add_model()).finish()
    return events


def test_a_tie_goes_to_the_cpu():
    events = _compile([LimitedDriver("npu", PerformanceInfo(1.0, 1.0))])
    from nnsim.explain_steps import attach_nodes
    choices = best(attach_nodes(events))
    assert [c["device"] for c in choices] == ["nnapi-reference", "nnapi-reference"]
    assert choices[0]["compared"] == [{"device": "npu", "exec_time": 1.0},
                                      {"device": "nnapi-reference", "exec_time": 1.0}]
    assert choices[0]["rule"] == "tie: the CPU (nnapi-reference) wins ties"


def test_a_tie_between_accelerators_goes_to_the_lower_index_and_lines_are_readable():
    events = _compile([LimitedDriver("a", PerformanceInfo(0.5, 0.5)),
                       LimitedDriver("b", PerformanceInfo(0.5, 0.5))])
    from nnsim.explain_steps import attach_nodes
    events = attach_nodes(events)
    assert [c["device"] for c in best(events)] == ["a", "a"]
    lines = format_steps(events)
    assert lines[0] == "getSupportedOperations a: 2 of 2 supported"
    assert lines[3] == ("findBestDeviceForEachOperation ADD:0: a 0.5, b 0.5, "
                        "nnapi-reference 1 -> a (tie: the lower device index wins)")
    assert lines[-1] == "partitionTheWork: only one best device: step 0 on a: 2 operation(s)"


def test_partition_two_records_no_fallback():
    nnsim.setprop("debug.nn.partition", "2")
    get_device_manager().set_drivers([LimitedDriver(
        "npu", PerformanceInfo(0.5, 0.5), lambda m, i: False)])
    with trace.recording() as events:
        # nnapi-reference can do ADD, so partitioning succeeds: no fallback at all
        CompilationBuilder(_add_model()).finish()
    assert not [e for e in events if "fallback" in e["stage"]]
    assert [e["device"] for e in best(events)] == ["nnapi-reference"] * 2
    assert best(events)[0]["compared"] == [("npu", None), ("nnapi-reference", 1.0)]


def test_nothing_is_recorded_without_a_recording():
    get_device_manager().set_drivers([LimitedDriver("npu", PerformanceInfo(0.5, 0.5))])
    CompilationBuilder(_add_model()).finish()
    assert not trace.active()
