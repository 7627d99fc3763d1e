"""The example of docs/writing-a-driver.md, end to end: the board profile and the driver file are
taken from the page, the board is loaded from its data file, and `nnsim devices`, `nnsim run
--vlog`, `nnsim explain` and the TFLite Python API (``NNSIM_BOARD``) show both accelerators."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import nnsim
from nnsim.drivers.boards import board_drivers, get_board, make_driver
from nnsim.drivers.registry import load_driver_file
from nnsim.runtime.board import apply_board
from nnsim.runtime.devices import get_device_manager
from nnsim.runtime.plan import find_best_device_for_each_operation
from nnsim.tflite import options as O
from nnsim.tflite.schema import ActivationFunctionType as Act
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import Padding, TensorType
from nnsim.tflite.writer import ModelWriter
from nnsim.types import OperationCode as C
from nnsim.types import PreferenceCode
from tests.drivers.helpers import F32, U8, conv_model, unary_model

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "writing-a-driver.md"
LOGCAT = re.compile(r"^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} +\d+ +\d+ [VDIWEF] (\S+) *: (.*)$")


def _block(language: str) -> str:
    blocks = re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) >= 1, f"no {language} block in {DOC.name}"
    return blocks[0]


@pytest.fixture
def board_file(tmp_path) -> Path:
    """The page's board profile and driver file, written where the profile names them."""
    profile = tmp_path / "acme-a1.json"
    profile.write_text(_block("json"))
    (tmp_path / json.loads(profile.read_text())["driver_files"][0]).write_text(_block("python"))
    return profile


def conv_pool_softmax() -> bytes:
    """uint8 CONV_2D -> AVERAGE_POOL_2D -> RESHAPE -> SOFTMAX (the NPU takes the convolution,
    the DSP the rest)."""
    rng = np.random.default_rng(3)
    w = ModelWriter()
    x = w.add_tensor("x", (1, 8, 8, 3), TensorType.UINT8, quantization=(0.02, 128))
    wt = w.add_tensor("w", (4, 3, 3, 3), TensorType.UINT8, quantization=(0.01, 128),
                      data=rng.integers(0, 256, (4, 3, 3, 3)).astype(np.uint8))
    bt = w.add_tensor("b", (4,), TensorType.INT32, data=np.zeros(4, np.int32),
                      quantization=(0.0002, 0))
    y = w.add_tensor("y", (1, 8, 8, 4), TensorType.UINT8, quantization=(0.05, 128))
    w.add_operator(B.CONV_2D, [x, wt, bt], [y],
                   O.Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1,
                                   fused_activation_function=Act.RELU))
    p = w.add_tensor("p", (1, 1, 1, 4), TensorType.UINT8, quantization=(0.05, 128))
    w.add_operator(B.AVERAGE_POOL_2D, [y], [p],
                   O.Pool2DOptions(padding=Padding.VALID, stride_w=8, stride_h=8, filter_width=8,
                                   filter_height=8, fused_activation_function=Act.NONE))
    shape = w.add_tensor("shape", (2,), TensorType.INT32, data=np.array([1, 4], np.int32))
    r = w.add_tensor("r", (1, 4), TensorType.UINT8, quantization=(0.05, 128))
    w.add_operator(B.RESHAPE, [p, shape], [r], O.ReshapeOptions(new_shape=[1, 4]))
    s = w.add_tensor("s", (1, 4), TensorType.UINT8, quantization=(1 / 256, 0))
    w.add_operator(B.SOFTMAX, [r], [s], O.SoftmaxOptions(beta=1.0))
    w.set_inputs([x])
    w.set_outputs([s])
    return w.finish()


@pytest.fixture
def model_file(tmp_path) -> Path:
    path = tmp_path / "conv_pool_softmax.tflite"
    path.write_bytes(conv_pool_softmax())
    return path


def nnsim_cli(*args, env=None):
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("NNSIM_BOARD", "NNSIM_PROP_DEBUG_NN_VLOG")}
    full_env.update(env or {})
    proc = subprocess.run([sys.executable, "-m", "nnsim", *map(str, args)], capture_output=True,
                          text=True, timeout=600, cwd=str(ROOT), env=full_env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# -- in process --------------------------------------------------------------------------------
def test_the_board_profile_gives_each_accelerator_its_timing(board_file):
    board = get_board(str(board_file))
    raw = json.loads(board_file.read_text())
    assert board.name == "acme-a1" and get_board("acme-a1") is board
    assert board.devices == ("acme-npu", "acme-dsp", "nnapi-reference")
    assert set(board.accelerators) == {"acme-npu", "acme-dsp"}
    for name, section in raw["accelerators"].items():
        assert board.accelerator(name).clock_mhz == section["clock_mhz"]["value"]
        assert board.sources[f"accelerators.{name}.clock_mhz"] == section["clock_mhz"]["source"]
    npu, dsp = board_drivers(board)
    assert (npu.name, dsp.name) == ("acme-npu", "acme-dsp")
    assert npu.timing.params == board.accelerator("acme-npu") != dsp.timing.params
    model = unary_model(C.RELU, U8)   # the same work costs differently on each accelerator
    assert npu.step_cost(model).device_ns != dsp.step_cost(model).device_ns
    assert make_driver("acme-dsp", str(board_file)).timing == dsp.timing


def test_the_drivers_decide_log_and_time(board_file, logcat):
    npu, dsp = load_driver_file(str(board_file.parent / "acme_drivers.py"), board=str(board_file))
    assert npu.supported_operations(conv_model(U8)) == [True]
    (refused,) = npu.supported_operations_with_reasons(conv_model(U8, kernel=7))
    assert refused.reason == "reject CONV_2D because the kernel is larger than 5x5"
    assert refused.reason in logcat.lines("acme-npu-hal")
    assert npu.supported_operations(conv_model(F32)) == [False]
    assert dsp.supported_operations(conv_model(U8)) == [False]
    assert dsp.supported_operations(unary_model(C.LOGISTIC, F32)) == [True]
    assert npu.capabilities().lookup(U8).exec_time == 0.5
    nnsim.setprop("vendor.acme.npu.turbo", "1")
    assert npu.capabilities().lookup(U8).exec_time == 0.25
    for d in (npu, dsp):
        get_device_manager().register_driver(d)
    devices = get_device_manager().get_devices()
    assert [d.name for d in devices] == ["acme-npu", "acme-dsp", "nnapi-reference"]
    best = find_best_device_for_each_operation(conv_model(U8), devices,
                                               PreferenceCode.PREFER_FAST_SINGLE_ANSWER)
    assert best == [0]
    prepared = npu.prepare(conv_model(U8), 1, 100)
    _, timing = prepared.execute([np.zeros((1, 8, 8, 4), np.uint8)])
    assert timing.device_ns > 0 and timing.driver_ns > timing.device_ns


def test_apply_board_by_path_installs_both_accelerators(board_file):
    board = apply_board(str(board_file))
    assert nnsim.current_board() is board
    assert [d.name for d in get_device_manager().get_devices()] == [
        "acme-npu", "acme-dsp", "nnapi-reference"]
    assert nnsim.getprop("ro.nnsim.board") == "acme-a1"


def test_a_board_names_a_plugin_driver_by_its_entry_point(board_file, tmp_path, monkeypatch):
    """Without ``driver_files`` the board's device names resolve to an installed package's
    ``nnsim.drivers`` entry points (a dist-info on sys.path, as pip leaves it)."""
    site = tmp_path / "site"
    info = site / "acme_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "acme_plugin.py").write_text(_block("python"))
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[nnsim.drivers]\nacme-npu = acme_plugin:acme_npu\n"
                                           "acme-dsp = acme_plugin:acme_dsp\n")
    raw = json.loads(board_file.read_text())
    del raw["driver_files"]
    raw["name"] = "acme-a1-plugged"
    profile = tmp_path / "plugged" / "acme-a1-plugged.json"
    profile.parent.mkdir()
    profile.write_text(json.dumps(raw))
    monkeypatch.syspath_prepend(str(site))
    try:
        npu, dsp = board_drivers(str(profile))
    finally:
        sys.modules.pop("acme_plugin", None)
    assert (npu.name, dsp.name, npu.board) == ("acme-npu", "acme-dsp", "acme-a1-plugged")
    assert dsp.timing == get_board("acme-a1-plugged").timing("acme-dsp")


# -- as a user runs it ---------------------------------------------------------------------------
def test_nnsim_devices_lists_the_board(board_file):
    out = nnsim_cli("devices", "--board", board_file)
    assert out.splitlines()[0].startswith("board: acme-a1 (")
    assert re.search(r"0  acme-npu +DEVICE_ACCELERATOR", out)
    assert re.search(r"1  acme-dsp +DEVICE_ACCELERATOR", out)
    assert re.search(r"2  nnapi-reference +DEVICE_CPU", out)


def test_nnsim_run_vlog_plans_a_step_on_each_accelerator(board_file, model_file):
    out = nnsim_cli("run", model_file, "--board", board_file, "--vlog")
    plan = [m for line in out.splitlines() if (hit := LOGCAT.match(line))
            and hit.group(1) == "ExecutionPlan" for m in [hit.group(2)]]
    assert "ModelBuilder::findBestDeviceForEachOperation(CONV_2D:0) = 0 (acme-npu)" in plan
    assert "ModelBuilder::findBestDeviceForEachOperation(SOFTMAX:3) = 1 (acme-dsp)" in plan
    assert "Step#0: execute on acme-npu" in plan and "Step#1: execute on acme-dsp" in plan
    reasons = [m.group(2) for line in out.splitlines() if (m := LOGCAT.match(line))
               and m.group(1) == "acme-dsp-hal"]
    assert set(reasons) == {"reject CONV_2D because it is not supported by acme-dsp"}


def test_nnsim_explain_names_the_accelerator_of_each_node(board_file, model_file):
    out = nnsim_cli("explain", model_file, "--board", board_file)
    assert "devices: acme-npu, acme-dsp, nnapi-reference" in out
    assert "node 0 CONV_2D: ran on acme-npu" in out
    assert "node 1 AVERAGE_POOL_2D: ran on acme-dsp" in out
    assert "acme-dsp: not supported: reject CONV_2D because it is not supported by acme-dsp" \
        in out


def test_the_python_api_takes_the_board_from_nnsim_board(board_file, model_file):
    script = ("import sys\nfrom nnsim.tflite import Interpreter, load_delegate\n"
              "i = Interpreter(model_path=sys.argv[1], "
              "experimental_delegates=[load_delegate('nnapi')])\n"
              "i.allocate_tensors()\nprint(sorted(set(i.node_placement().values())))\n")
    env = {k: v for k, v in os.environ.items() if k != "NNSIM_BOARD"}
    env["NNSIM_BOARD"] = str(board_file)
    proc = subprocess.run([sys.executable, "-c", script, str(model_file)], capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "['acme-dsp', 'acme-npu']" in proc.stdout
