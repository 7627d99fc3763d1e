"""The example of docs/writing-a-driver.md loads with the registry and behaves as described."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from nnsim.drivers.registry import load_driver_file
from nnsim.runtime.devices import get_device_manager
from nnsim.runtime.plan import find_best_device_for_each_operation
from nnsim.types import PreferenceCode
from tests.drivers.helpers import F32, U8, conv_model

DOC = Path(__file__).resolve().parents[2] / "docs" / "writing-a-driver.md"


@pytest.fixture
def driver_file(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    path = tmp_path / "my_npu.py"
    path.write_text(blocks[0])
    return path


def test_doc_example_loads_and_decides(driver_file, logcat):
    my_npu, float_dsp = load_driver_file(str(driver_file))
    assert (my_npu.name, float_dsp.name) == ("my-npu", "my-float-dsp")
    assert my_npu.supported_operations(conv_model(U8)) == [True]
    (refused,) = my_npu.supported_operations_with_reasons(conv_model(U8, kernel=7))
    assert refused.reason == "reject CONV_2D because the kernel is larger than 5x5"
    assert refused.reason in logcat.lines("my-npu-hal")
    assert my_npu.supported_operations(conv_model(F32)) == [False]
    assert float_dsp.supported_operations(conv_model(F32)) == [True]
    for d in (my_npu, float_dsp):
        get_device_manager().register_driver(d)
    devices = get_device_manager().get_devices()
    assert [d.name for d in devices] == ["my-npu", "my-float-dsp", "nnapi-reference"]
    best = find_best_device_for_each_operation(conv_model(U8), devices,
                                               PreferenceCode.PREFER_FAST_SINGLE_ANSWER)
    assert best == [0]
    prepared = my_npu.prepare(conv_model(U8), 1, 100)
    import numpy as np
    _, timing = prepared.execute([np.zeros((1, 8, 8, 4), np.uint8)])
    assert timing.device_ns > 0 and timing.driver_ns > timing.device_ns
