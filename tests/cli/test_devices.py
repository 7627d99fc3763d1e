"""``nnsim devices``: a board's NNAPI devices and their capabilities, text and JSON."""
from __future__ import annotations

import json

import pytest

from nnsim.commands import devices as devices_cmd
from nnsim.types import FLT_MAX
from tests.cli.test_graph import parser_for, registered, run_cli, run_inprocess

not_registered = pytest.mark.xfail(condition=not registered("devices"),
                                   reason="command not registered yet", strict=False)


def test_default_board_text():
    rc, out, err = run_inprocess(devices_cmd, [])
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("board: imx8mp (")
    assert "2 NNAPI device(s), in discovery order:" in out
    table = [ln.split() for ln in lines if ln.startswith("  0 ") or ln.startswith("  1 ")]
    assert table[0][:4] == ["0", "vsi-npu", "DEVICE_ACCELERATOR", "FEATURE_LEVEL_4"]
    assert table[1][:4] == ["1", "nnapi-reference", "DEVICE_CPU", "FEATURE_LEVEL_5"]
    assert "android hal vsi npu 1.2 alpha" in out
    blocks = out.split("\nvsi-npu\n")[1].split("\nnnapi-reference\n")
    npu, cpu = blocks[0], blocks[1]
    assert "  type:          DEVICE_ACCELERATOR (4)" in npu
    assert "  feature level: FEATURE_LEVEL_4 (30)" in npu

    def row(block, name):
        for ln in block.splitlines():
            if ln.strip().startswith(name + " ") or ln.strip() == name:
                return ln.split()[-2:]
        raise AssertionError(f"no row {name}")
    assert row(npu, "TENSOR_QUANT8_ASYMM") == ["0.9", "0.9"]
    assert row(npu, "TENSOR_QUANT8_ASYMM_SIGNED") == ["FLT_MAX", "FLT_MAX"]
    assert row(npu, "IF") == ["FLT_MAX", "FLT_MAX"] and row(npu, "WHILE") == ["FLT_MAX"] * 2
    assert row(npu, "relaxed float32->float16 tensor") == ["0.9", "0.9"]
    assert row(cpu, "TENSOR_FLOAT32") == ["1", "1"] and row(cpu, "WHILE") == ["1", "1"]
    assert "SUBGRAPH" not in out and "MODEL " not in out


def test_json_and_other_board():
    rc, out, err = run_inprocess(devices_cmd, ["--board", "vs680", "--format", "json"])
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["board"]["name"] == "vs680"
    names = [d["name"] for d in doc["devices"]]
    assert names == ["synap-npu", "nnapi-reference"]
    npu = doc["devices"][0]
    assert npu["type"] == "DEVICE_ACCELERATOR" and npu["type_code"] == 4
    perf = npu["capabilities"]["operand_performance"]
    assert set(perf) >= {"TENSOR_FLOAT32", "TENSOR_QUANT8_ASYMM", "TENSOR_INT32"}
    assert npu["capabilities"]["if"]["exec_time"] == FLT_MAX      # a number in JSON


def test_setprop_changes_capabilities():
    rc, out, err = run_inprocess(devices_cmd, ["--format=json", "--setprop",
                                               "vendor.DISABLE_FLOAT_FEATURE=1"])
    assert rc == 0, err
    npu = json.loads(out)["devices"][0]
    assert npu["capabilities"]["operand_performance"]["TENSOR_FLOAT32"]["exec_time"] == FLT_MAX
    rc, out, _ = run_inprocess(devices_cmd, ["--setprop", "debug.nn.cpuonly=1"])
    assert "1 NNAPI device(s)" in out and "vsi-npu" not in out


@pytest.mark.parametrize("argv, needle", [
    (["--board", "nosuch"], "unknown board 'nosuch'"),
    (["--format", "yaml"], "--format"),
    (["--setprop", "x"], "KEY=VALUE"),
    (["extra"], "unrecognized arguments"),
])
def test_bad_flags_exit_2(argv, needle):
    rc, out, err = run_inprocess(devices_cmd, argv)
    assert rc == 2 and out == ""
    assert err.startswith("nnsim: error: ") and len(err.strip().splitlines()) == 1
    assert needle in err


def test_help():
    text = parser_for(devices_cmd).format_help()
    assert "examples:" in text and "--board" in text and "--format" in text
    assert devices_cmd.NAME == "devices" and devices_cmd.HELP


@not_registered
def test_cli_devices():
    proc = run_cli("devices", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert [d["name"] for d in json.loads(proc.stdout)["devices"]] == \
        ["vsi-npu", "nnapi-reference"]
    proc = run_cli("devices", "--board", "nosuch")
    assert proc.returncode == 2 and proc.stderr.startswith("nnsim: error:")
    proc = run_cli("devices", "--help")
    assert proc.returncode == 0 and "examples:" in proc.stdout
