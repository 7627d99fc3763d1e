"""``nnsim props``: every emulated property, its value after the board, source and meaning."""
from __future__ import annotations

import json

import pytest

from nnsim.commands import props as props_cmd
from tests.cli.test_graph import parser_for, registered, run_cli, run_inprocess

not_registered = pytest.mark.xfail(condition=not registered("props"),
                                   reason="command not registered yet", strict=False)


def parse(out: str) -> tuple[dict, int]:
    lines = out.splitlines()
    assert lines[0].startswith("board: ")
    header = lines[1]
    assert header.startswith("property ")
    vcol, scol, mcol = header.index("value"), header.index("source"), header.index("meaning")
    rows = {}
    for ln in lines[2:]:
        key = ln[:vcol].strip()
        assert ln[vcol - 2:vcol] == "  " and ln[vcol] != " ", ln   # aligned columns
        rows[key] = (ln[vcol:scol].strip(), ln[scol:mcol].strip(), ln[mcol:].strip())
    return rows, vcol


def test_every_known_property_with_value_and_meaning():
    rc, out, err = run_inprocess(props_cmd, [])
    assert rc == 0, err
    rows, _ = parse(out)
    from nnsim.platform.properties import KNOWN_PROPERTIES
    assert set(KNOWN_PROPERTIES) <= set(rows)
    for key in ("debug.nn.vlog", "debug.nn.partition", "debug.nn.cpuonly",
                "debug.nn.enabled-devices", "ro.build.version.sdk", "vendor.nnsim.vsi.bsp",
                "vendor.NN_DBG_OP_BLK_LIST"):
        assert key in rows and rows[key][2], key
    assert rows["debug.nn.partition"][:2] == ("1", "default")
    assert rows["debug.nn.vlog"][0] == '""'
    assert rows["ro.build.version.sdk"][:2] == ("31", "board")
    assert rows["vendor.nnsim.vsi.bsp"][:2] == ("android-12.1.0_1.0.0", "board")
    assert list(rows) == sorted(rows)


def test_setprop_and_board():
    rc, out, err = run_inprocess(props_cmd, ["--board", "vs680", "--setprop",
                                             "debug.nn.vlog=compilation",
                                             "--setprop", "ro.build.version.sdk=29"])
    assert rc == 0, err
    rows, _ = parse(out)
    assert "vs680" in out.splitlines()[0]
    assert rows["debug.nn.vlog"][:2] == ("compilation", "setprop")
    assert rows["ro.build.version.sdk"][:2] == ("29", "setprop")
    assert rows["ro.nnsim.board"][:2] == ("vs680", "board")


def test_json():
    rc, out, err = run_inprocess(props_cmd, ["--format", "json"])
    assert rc == 0, err
    doc = json.loads(out)
    props = {p["key"]: p for p in doc["properties"]}
    assert props["debug.nn.partition"]["default"] == "1"
    assert props["debug.nn.partition"]["meaning"]


@pytest.mark.parametrize("argv, needle", [
    (["--board", "nosuch"], "unknown board"),
    (["--setprop", "=1"], "KEY=VALUE"),
    (["--format", "xml"], "--format"),
])
def test_bad_flags_exit_2(argv, needle):
    rc, out, err = run_inprocess(props_cmd, argv)
    assert rc == 2 and out == ""
    assert err.startswith("nnsim: error: ") and len(err.strip().splitlines()) == 1
    assert needle in err


def test_help():
    text = parser_for(props_cmd).format_help()
    assert "examples:" in text and "--board" in text and "--setprop" in text
    assert props_cmd.NAME == "props" and props_cmd.HELP


@not_registered
def test_cli_props_env_source():
    proc = run_cli("props", env={"NNSIM_PROP_DEBUG_NN_PARTITION": "2"})
    assert proc.returncode == 0, proc.stderr
    rows, _ = parse(proc.stdout)
    assert rows["debug.nn.partition"][:2] == ("2", "env")
    proc = run_cli("props", "--board", "nosuch")
    assert proc.returncode == 2 and proc.stderr.startswith("nnsim: error:")
    proc = run_cli("props", "--help")
    assert proc.returncode == 0 and "examples:" in proc.stdout


def test_setprop_values_the_runtime_would_ignore_are_warned_about():
    """D12: debug.nn.partition=banana and an invalid enabled-devices regex are read as their
    defaults by the runtime (as Android's property readers do): the CLI says so."""
    from .cliutil import nnsim
    r = nnsim("devices", "--setprop", "debug.nn.partition=banana",
              "--setprop", "debug.nn.enabled-devices=[", "--setprop", "debug.nn.cpuonly=1")
    assert r.returncode == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if line.startswith("nnsim: warning:")]
    assert len(warnings) == 2
    assert "debug.nn.partition=banana: not one of 0, 1, 2" in warnings[0]
    assert "debug.nn.enabled-devices=[: not a regular expression" in warnings[1]
