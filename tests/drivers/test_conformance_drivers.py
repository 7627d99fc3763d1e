"""Conformance over every simulated driver: each NNAPI CTS vector (../shared/cts) whose
operations a driver claims, compiled for that driver alone (createForDevices), gives the same
outputs as nnapi-reference."""
from __future__ import annotations

import numpy as np
import pytest

from nnsim.drivers.boards import BOARDS, CPU_DEVICE_NAME, make_driver
from nnsim.drivers.registry import load_entry_point_drivers
from nnsim.errors import NnapiError
from nnsim.runtime.compilation import CompilationBuilder
from nnsim.runtime.devices import DeviceManager
from nnsim.runtime.execution import Execution
from tests.conformance import cts_runner

BUILT_IN = sorted({d for b in BOARDS.values() for d in b.devices if d != CPU_DEVICE_NAME}
                  | {"google-edgetpu"})


def _driver(name):
    for d in load_entry_point_drivers():
        if d.name == name:
            return d
    return make_driver(name, "imx8mp")


def _all_driver_names():
    try:
        extra = [d.name for d in load_entry_point_drivers()]
    except Exception:  # a broken third-party package must not hide the built-in drivers
        extra = []
    return BUILT_IN + sorted(set(extra) - set(BUILT_IN))


def _execute(model_json, m, device) -> list[np.ndarray]:
    g = model_json["main"]
    comp = CompilationBuilder.create_for_devices(m, [device])
    comp.finish()
    ex = Execution(comp)
    for i, idx in enumerate(g["input_indexes"]):
        o = g["operands"][idx]
        ex.set_input(i, None, None if o["data"] is None else cts_runner._array(o))
    outputs = []
    for i, idx in enumerate(g["output_indexes"]):
        want = cts_runner._array(g["operands"][idx])
        outputs.append(np.zeros(want.shape, dtype=want.dtype))
        ex.set_output(i, None, outputs[-1])
    ex.compute()
    return outputs


@pytest.mark.skipif(not cts_runner.spec_files(),
                    reason=f"conformance vectors not found in {cts_runner.CTS_DIR}")
@pytest.mark.parametrize("name", _all_driver_names())
def test_driver_matches_reference_on_claimed_vectors(name):
    driver = _driver(name)
    cpu = DeviceManager.cpu_device()
    ran, mismatches = 0, []
    for path in cts_runner.spec_files():
        for model_json in cts_runner.load(path)["models"]:
            if model_json["expect_failure"] or cts_runner.missing_ops(model_json):
                continue
            try:
                m = cts_runner._build(model_json)
            except cts_runner._CallFailed:
                continue
            if not all(driver.supported_operations(m)) or not all(cpu.supported_operations(m)):
                continue
            try:
                want = _execute(model_json, m, cpu)
            except NnapiError:
                continue  # the reference itself cannot run it; not this test's business
            got = _execute(model_json, m, driver)
            ran += 1
            for k, (a, b) in enumerate(zip(got, want)):
                if a.shape != b.shape or not np.array_equal(a, b, equal_nan=True):
                    mismatches.append(f"{cts_runner.spec_id(path)}/{model_json['name']} "
                                      f"output {k}")
    assert not mismatches, "\n".join(mismatches)
    if ran == 0:
        pytest.skip(f"{name} claims none of the implemented conformance vectors")
