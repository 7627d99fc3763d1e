"""The timing model and the board profiles (npu-drivers.md 2.9, 3.4, 4.3-4.5)."""
from __future__ import annotations

import json

import pytest

import nnsim
from nnsim.drivers import boards
from nnsim.drivers import timing as tm
from nnsim.drivers.base import PreparedModel
from nnsim.drivers.boards import BOARDS, current_board, get_board, load_board
from nnsim.drivers.reference import CPU_DEVICE, reference_cpu_timing
from nnsim.runtime.board import apply_board
from nnsim.runtime.devices import get_device_manager
from nnsim.types import OperationCode as C
from nnsim.types import OperandType as T
from tests.drivers.helpers import F16, F32, I8, U8, Builder, conv_model, unary_model


def test_conv_macs_and_bytes():
    s = tm.op_stats(conv_model(U8), 0)
    assert s.macs == 8 * 8 * 4 * 3 * 3 * 4
    assert s.bytes_read == 8 * 8 * 4 and s.bytes_written == 8 * 8 * 4
    assert s.weight_bytes == 4 * 3 * 3 * 4 + 4 * 4  # uint8 filter + int32 bias
    dw = tm.op_stats(conv_model(U8, depthwise=True), 0)
    assert dw.macs == 8 * 8 * 4 * 3 * 3


@pytest.mark.parametrize("model,unit", [
    (conv_model(U8), "NN"), (conv_model(I8), "NN"), (conv_model(F32), "SH"),
    (conv_model(F16), "SH"), (conv_model(U8, depthwise=True), "NN"),
    (unary_model(C.RELU, U8), "TP"), (unary_model(C.RELU, F32), "SH"),
])
def test_execution_units(model, unit):
    assert tm.npu_unit(tm.op_stats(model, 0)) == unit


def test_softmax_and_reshape_units():
    b = Builder()
    x = b.tensor(U8, (1, 10))
    y = b.tensor(U8, (1, 10), scale=1 / 256, zero_point=0)
    b.add_operation(C.SOFTMAX, [x, b.scalar(T.FLOAT32, 1.0)], [y])
    z = b.tensor(U8, (10,), scale=1 / 256, zero_point=0)
    b.add_operation(C.RESHAPE, [y, b.tensor(T.TENSOR_INT32, (1,), [10])], [z])
    model = b.done([x], [z])
    units = {C(op.type).name: tm.npu_unit(tm.op_stats(model, i))
             for i, op in enumerate(model.operations)}
    assert units == {"SOFTMAX": "SH", "RESHAPE": "--"}


def test_float_is_slower_on_the_npu_than_on_the_cpu():
    """float runs on the PPU, 8-bit on the NN core (3.4, 9.9, 9.10)."""
    for board in BOARDS.values():
        f32 = conv_model(F32)
        u8 = conv_model(U8)
        npu_f32 = tm.npu_step_cost(f32, board.npu).device_ns
        npu_u8 = tm.npu_step_cost(u8, board.npu).device_ns
        assert npu_f32 > npu_u8
        big = conv_model(F32, kernel=5)
        assert tm.npu_step_cost(big, board.npu).device_ns > \
            tm.cpu_step_cost(big, board.cpu).device_ns


def test_first_inference_costs():
    p = get_board("vs680").npu
    step = tm.npu_step_cost(conv_model(U8), p)
    compile_ns = tm.compile_ns(step, p)
    assert tm.synap_cache_hit_ns(step, p) == pytest.approx(compile_ns / 3)
    assert tm.cache_load_ns(step, p) < compile_ns


def test_profiling_adds_per_layer_time():
    p = get_board("vs680").npu
    model = conv_model(U8)
    assert tm.npu_step_cost(model, p, profiling=True).device_ns == pytest.approx(
        tm.npu_step_cost(model, p).device_ns + p.profile_layer_overhead_ns)


def test_reference_cpu_timing_uses_the_current_board():
    model = conv_model(U8, kernel=5)
    prepared = PreparedModel(CPU_DEVICE, model)
    apply_board("imx8mp")
    slow = reference_cpu_timing(prepared, 123)
    apply_board("vs680")
    fast = reference_cpu_timing(prepared, 123)
    assert slow.host_ns == 123 and slow.device_ns == slow.driver_ns
    assert fast.device_ns < slow.device_ns  # Cortex-A73 vs Cortex-A53


def test_boards_have_the_required_profiles():
    imx, vs = BOARDS["imx8mp"], BOARDS["vs680"]
    assert boards.DEFAULT_BOARD == "imx8mp"
    assert imx.devices == ("vsi-npu", "nnapi-reference")
    assert imx.properties["ro.build.version.sdk"] == "31"
    assert imx.properties["vendor.nnsim.vsi.bsp"] == "android-12.1.0_1.0.0"
    assert vs.devices == ("synap-npu", "nnapi-reference")


def test_every_profile_value_cites_its_source():
    for board in BOARDS.values():
        raw = json.loads((boards.DATA_DIR / f"{board.name}.json").read_text())

        def walk(node, path):
            if isinstance(node, dict) and "value" in node:
                assert node.get("source"), f"{board.name}: {path} has no source"
            elif isinstance(node, dict):
                for k, v in node.items():
                    if k not in ("name", "title", "calibration", "devices"):
                        walk(v, f"{path}.{k}")
            elif isinstance(node, (int, float)) and not isinstance(node, bool):
                raise AssertionError(f"{board.name}: {path} is a bare number")
        walk({k: v for k, v in raw.items() if k in ("npu", "cpu", "properties")}, "")
        for entry in board.calibration:
            assert entry["source"] and entry["published"] > 0


def test_apply_board_sets_drivers_and_properties():
    board = apply_board("vs680")
    assert current_board() is board
    assert [d.name for d in get_device_manager().get_devices()] == ["synap-npu",
                                                                    "nnapi-reference"]
    assert nnsim.getprop("ro.build.version.sdk") == "30"
    assert nnsim.getprop("ro.nnsim.board") == "vs680"
    apply_board("imx8mp")
    assert [d.name for d in get_device_manager().get_devices()] == ["vsi-npu", "nnapi-reference"]
    assert nnsim.getprop("vendor.nnsim.vsi.bsp") == "android-12.1.0_1.0.0"
    with pytest.raises(ValueError, match="unknown board"):
        apply_board("pixel9")


def test_bad_board_profile_names_the_file(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"name": "x", "devices": []}')
    with pytest.raises(ValueError, match="broken.json"):
        load_board(path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="broken.json"):
        load_board(path)
