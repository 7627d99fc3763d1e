"""nnsim.audit.engine: one combination into one record, checked against `nnsim run`,
`nnsim explain` and hand-counted placements; every failure a row."""
from __future__ import annotations

import json

import pytest

import nnsim.tflite
from nnsim.audit.engine import Combination, evaluate, nnapi_client_options
from nnsim.tflite.cpu_timing import cpu_node_ns
from nnsim.tflite.reader import read_model
from tests.cli.cliutil import nnsim as run_cli


@pytest.mark.parametrize("board", ["imx8mp", "vs680"])
def test_nnapi_record_matches_nnsim_run(small_model, board, tmp_path, monkeypatch):
    """Placement, partitions and the simulated first/steady inference are `nnsim run`'s
    (each with a state folder of its own: both first inferences find no SyNAP cache)."""
    monkeypatch.setenv("NNSIM_STATE_DIR", str(tmp_path / "engine"))
    r = evaluate(small_model, Combination(board, 30, "nnapi"))
    proc = run_cli("run", small_model, "--board", board, "--android_sdk", "30",
                   "--format", "json", env={"NNSIM_STATE_DIR": str(tmp_path / "run")})
    assert proc.returncode == 0, proc.stderr
    ran = json.loads(proc.stdout)
    assert r["status"] == "ok"
    assert r["delegated_nodes"] == ran["delegate"]["nodes_replaced"] == 31
    assert r["partitions"] == ran["delegate"]["partitions"] == 1
    assert r["first_ms"] == ran["time_ms"]["simulated_first"]
    assert r["avg_ms"] == ran["time_ms"]["simulated_steady"]
    assert r["first_ms"] > r["avg_ms"]   # the NPU compiles the graph at the first inference
    assert [p["where"] for p in r["placement"]] == [p["where"] for p in ran["placements"]]
    npu = {"imx8mp": "vsi-npu", "vs680": "synap-npu"}[board]
    assert r["devices"] == {npu: 31} and r["accelerator_nodes"] == 31
    assert r["op_classes"]["CONV_2D"] == {npu: 15}
    assert r["reasons"] == [] and r["top_reason"] == ""


def test_int8_on_imx8mp_nnapi_reference_vx_npu(zoo):
    """The issue's story on a 2-node int8 model: NNAPI at SDK 31 puts both nodes on
    nnapi-reference (vsi-npu reports int8 at FLT_MAX), explain's reason and fix; at SDK 29
    the delegate hands NNAPI uint8 and vsi-npu takes them; the VX delegate takes both."""
    path = zoo["int8_conv.tflite"]
    r31 = evaluate(path, Combination("imx8mp", 31, "nnapi"))
    assert r31["devices"] == {"nnapi-reference": 2}
    assert r31["delegated_nodes"] == 2 and r31["accelerator_nodes"] == 0
    assert r31["npu_coverage"] == 0.0
    [group] = r31["reasons"]
    assert group["nodes"] == 2 and group["ops"] == {"ADD": 1, "CONV_2D": 1}
    assert "vsi-npu FLT_MAX" in group["reason"] and "TENSOR_QUANT8_ASYMM_SIGNED" in group["reason"]
    assert "quantize the model to uint8" in group["fix"]
    assert r31["top_reason"] == group["reason"]
    r29 = evaluate(path, Combination("imx8mp", 29, "nnapi"))
    assert r29["devices"] == {"vsi-npu": 2} and r29["reasons"] == []
    vx = evaluate(path, Combination("imx8mp", 31, "vx"))
    assert vx["status"] == "ok", vx["error"]
    assert vx["accelerator_nodes"] == 2 and vx["reasons"] == []
    assert vx["avg_ms"] is not None and vx["first_ms"] > vx["avg_ms"]


def test_cpu_record_is_the_board_cpu_cost(zoo):
    """No delegate: every node on the TFLite CPU, timed by the board's CPU cost model."""
    from nnsim.drivers.boards import get_board
    path = zoo["int8_conv.tflite"]
    r = evaluate(path, Combination("vs680", 30, "cpu"))
    sg = read_model(path.read_bytes()).main
    want = sum(cpu_node_ns(sg, n, get_board("vs680")) for n in range(2)) / 1e6
    assert r["devices"] == {"TFLite CPU": 2} and r["delegated_nodes"] == 0
    assert r["partitions"] == 0 and r["reasons"] == []
    assert r["first_ms"] == r["avg_ms"] == round(want, 6)


@pytest.mark.parametrize("delegate", ["nnapi", "vx", "cpu"])
def test_run_compares_with_the_cpu_path(zoo, delegate):
    """--run: one inference against nnsim's TFLite CPU path; these models are bit-exact."""
    for name in ("int8_conv.tflite", "float_add.tflite"):
        r = evaluate(zoo[name], Combination("imx8mp", 31, delegate), run=True)
        assert r["status"] == "ok", r["error"]
        assert r["max_abs_diff"] == 0.0
        assert [o["max_abs_diff"] for o in r["outputs"]] == [0.0]


def test_error_rows(zoo, tmp_path):
    combo = Combination("imx8mp", 31, "nnapi")
    corrupt = evaluate(zoo["corrupt.tflite"], combo, name="corrupt.tflite")
    assert corrupt["status"] == "error"
    assert corrupt["error"].startswith("not a valid .tflite model")
    assert "TFL3" in corrupt["error"] and corrupt["model"] == "corrupt.tflite"
    assert corrupt["model_sha256"]           # the file was read: it is still identified
    unknown = evaluate(zoo["sub/unknown_op.tflite"], Combination("vs680", 30, "vx"))
    assert unknown["status"] == "error" and "NnsimNoSuchOp" in unknown["error"]
    missing = evaluate(tmp_path / "nope.tflite", combo)
    assert missing["status"] == "error" and "cannot read the model" in missing["error"]
    assert missing["nodes"] is None and missing["placement"] == []


def test_vx_unavailable_is_a_row(zoo, monkeypatch):
    """A load_delegate that refuses libvx_delegate.so (an nnsim without it) gives a row."""
    real = nnsim.tflite.load_delegate

    def refuse(library, options=None):
        if "vx" in str(library):
            raise ValueError(f"Failed to load delegate from {library}\nno such library")
        return real(library, options)

    monkeypatch.setattr(nnsim.tflite, "load_delegate", refuse)
    r = evaluate(zoo["float_add.tflite"], Combination("imx8mp", 31, "vx"))
    assert r["status"] == "unavailable"
    assert r["error"].startswith("vx delegate: Failed to load delegate from libvx_delegate.so")
    assert evaluate(zoo["float_add.tflite"], Combination("imx8mp", 31, "nnapi"))["status"] == "ok"


def test_nnapi_options_are_the_clients():
    """The NNAPI delegate of compare/audit is the app run/explain emulate."""
    assert nnapi_client_options() == {"disallow_nnapi_cpu": False,
                                      "max_number_delegated_partitions": 3}


def test_a_failed_run_check_keeps_the_placement(zoo, monkeypatch):
    import nnsim.audit.engine as engine

    def fail(*args):
        raise RuntimeError("the CPU path broke")

    monkeypatch.setattr(engine, "_compare_with_cpu", fail)
    r = evaluate(zoo["float_add.tflite"], Combination("imx8mp", 31, "nnapi"), run=True)
    assert r["status"] == "run_failed"
    assert r["error"].startswith("--run: internal error: RuntimeError: the CPU path broke")
    assert r["devices"] == {"vsi-npu": 1} and r["max_abs_diff"] is None
