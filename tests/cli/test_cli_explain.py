"""`nnsim explain`: reasons and fixes for the users' two cases (issue 6)."""
from __future__ import annotations

import json

import pytest

from .cliutil import MODELS, nnsim

needs_models = pytest.mark.skipif(not MODELS.is_dir(), reason=f"no shared models at {MODELS}")


@needs_models
def test_explain_deeplab_names_the_three_refused_kinds():
    r = nnsim("explain", MODELS / "deeplabv3_mnv2_pascal_quant.tflite", "--android_sdk", "29",
              "--format", "json")
    assert r.returncode == 0, r.stderr
    ex = json.loads(r.stdout)
    refused = {n["node"]: n for n in ex["nodes"] if n["delegate_refusals"]}
    assert sorted(refused) == [61, 64, 69, 70, 71]
    assert "kUnsupportedOperandSize" in refused[61]["delegate_refusals"][0]
    assert any("accelerator" in f for f in refused[61]["fixes"])
    assert any("align_corners=False" in f for f in refused[64]["fixes"])
    assert "kUnsupportedOutputType" in refused[71]["delegate_refusals"][0]
    assert any("int32" in f for f in refused[71]["fixes"])
    text = nnsim("explain", MODELS / "deeplabv3_mnv2_pascal_quant.tflite", "--android_sdk", "29")
    assert "node 71 ARG_MAX: ran on TFLite CPU" in text.stdout


@needs_models
def test_explain_int8_lost_to_the_cpu_on_vsi_npu():
    r = nnsim("explain", MODELS / "tf2_mobilenet_v2_1.0_224_ptq.tflite", "--format", "json")
    assert r.returncode == 0, r.stderr
    ex = json.loads(r.stdout)
    conv = next(n for n in ex["nodes"] if n["op"] == "CONV_2D")
    assert conv["ran_on"] == "nnapi-reference"
    vsi = next(v for v in conv["devices"] if v["device"] == "vsi-npu")
    assert vsi["supported"] and vsi["perf"] > 1e38          # FLT_MAX for int8
    assert any("uint8" in f for f in conv["fixes"])


def test_explain_missing_model_exit_1():
    r = nnsim("explain", "/nonexistent/model.tflite")
    assert r.returncode == 1 and "nnsim: error:" in r.stderr


# -- issue 12 item 7 (review D8): a reason and a fix for every board and refusal kind ------------
def _explain_json(*argv):
    r = nnsim("explain", *argv, "--format", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _header_devices(text: str) -> list:
    line = next(ln for ln in text.splitlines() if "; devices: " in ln)
    return line.split("; devices: ", 1)[1].split(", ")


@needs_models
def test_explain_int8_on_vs680_names_synap_npu():
    ex = _explain_json(MODELS / "vww_96_int8.tflite", "--board", "vs680")
    assert ex["devices"] == ["synap-npu", "nnapi-reference"]
    assert len(ex["nodes"]) == 31
    for n in ex["nodes"]:
        assert n["ran_on"] == "nnapi-reference"
        synap = next(v for v in n["devices"] if v["device"] == "synap-npu")
        assert synap["supported"] and synap["perf"] > 1e38
        assert any("synap-npu" in f and "uint8" in f and "disallow_nnapi_cpu" in f
                   for f in n["fixes"]), n
        assert not any("vsi-npu" in f for f in n["fixes"])
    text = nnsim("explain", MODELS / "vww_96_int8.tflite", "--board", "vs680").stdout
    assert "what to change:" in text and "(31 node(s): 0, 1, 2" in text


@needs_models
def test_explain_sdk_below_27_says_nnapi_needs_8_1():
    ex = _explain_json(MODELS / "mobilenet_v1_0.25_128_quant.tflite", "--android_sdk", "26")
    assert {n["ran_on"] for n in ex["nodes"]} == {"TFLite CPU"}
    for n in ex["nodes"]:
        assert "NNAPI needs Android 8.1 (SDK 27)" in n["not_delegated"]
        assert "SDK 26" in n["not_delegated"]
        assert any("SDK 27" in f for f in n["fixes"])
    text = nnsim("explain", MODELS / "mobilenet_v1_0.25_128_quant.tflite",
                 "--android_sdk", "26").stdout
    assert text.count("not delegated: NNAPI needs Android 8.1") == 31


@needs_models
def test_explain_hybrid_model_blames_the_inserted_dequantize():
    ex = _explain_json(MODELS / "kws_ref_model_float32.tflite")
    node0 = ex["nodes"][0]
    assert node0["op"] == "CONV_2D" and node0["ran_on"] == "nnapi-reference"
    vsi = next(v for v in node0["devices"] if v["device"] == "vsi-npu")
    ops = vsi["operations"]
    assert [o["operation"] for o in ops] == ["DEQUANTIZE", "CONV_2D"]
    deq, conv = ops
    assert deq["added_by_delegate"] and not deq["supported"]
    assert "input[0] is constant" in deq["reason"]           # the DEQUANTIZE's own input
    assert not conv["added_by_delegate"] and "input[0]" not in conv["reason"]
    assert vsi["operand_type"] == "TENSOR_FLOAT32"            # CONV_2D's input 0, the model input
    assert vsi["reason"].startswith("DEQUANTIZE (added by the delegate")
    assert any("full-integer" in f and "float32 weights" in f for f in node0["fixes"])
    # the depthwise layers (float weights) are on vsi-npu, no hybrid fix there
    node1 = ex["nodes"][1]
    assert node1["ran_on"] == "vsi-npu" and node1["fixes"] == []


@needs_models
def test_explain_vendor_op_blocklist_fix(tmp_path):
    blk = tmp_path / "blk.txt"
    blk.write_text("0,\n")                                   # ADD
    ex = _explain_json(MODELS / "deeplabv3_mnv2_pascal_quant.tflite", "--android_sdk", "29",
                       "--setprop", f"vendor.NN_DBG_OP_BLK_LIST={blk}")
    adds = [n for n in ex["nodes"] if n["op"] == "ADD"]
    assert adds
    for n in adds:
        assert n["ran_on"] == "nnapi-reference"
        assert any("NN_DBG_OP_BLK_LIST" in f and "ADD (0)" in f and str(blk) in f
                   for f in n["fixes"]), n
    assert not any("NN_DBG_OP_BLK_LIST" in f for n in ex["nodes"] if n["op"] != "ADD"
                   for f in n["fixes"])


@needs_models
def test_explain_fallback_only_sorted_by_impact(tmp_path):
    blk = tmp_path / "blk.txt"
    blk.write_text("0,\n")
    args = [MODELS / "deeplabv3_mnv2_pascal_quant.tflite", "--android_sdk", "29",
            "--setprop", f"vendor.NN_DBG_OP_BLK_LIST={blk}"]
    full = _explain_json(*args)
    only = _explain_json(*args, "--fallback-only")
    expected = {n["node"] for n in full["nodes"]
                if n["ran_on"] == "TFLite CPU" or "nnapi-reference" in n["ran_on"].split("+")}
    got = [n["node"] for n in only["nodes"]]
    assert set(got) == expected and len(got) == len(expected) == 15
    impacts = [n["impact_ns"] for n in only["nodes"]]
    assert all(i is not None and i > 0 for i in impacts)
    assert impacts == sorted(impacts, reverse=True)
    text = nnsim("explain", *args, "--fallback-only").stdout
    shown = [int(ln.split()[1]) for ln in text.splitlines() if ln.startswith("node ")]
    assert shown == got
    assert "fallback only: 15 of 72 node(s)" in text and "what to change:" in text


@needs_models
def test_explain_json_devices_match_the_header():
    for extra in ((), ("--disallow-nnapi-cpu",)):
        args = (MODELS / "vww_96_int8.tflite", *extra)
        ex = _explain_json(*args)
        text = nnsim("explain", *args).stdout
        assert ex["devices"] == _header_devices(text)
        for n in ex["nodes"]:                    # no verdict from a device outside the set
            assert {v["device"] for v in n["devices"]} <= set(ex["devices"])
    assert ex["devices"] == ["vsi-npu"]
    assert ex["excluded"] == {"nnapi-reference": "disallow_nnapi_cpu"}
    assert "nnapi-reference excluded: disallow_nnapi_cpu" in text
    assert "nnapi-reference 1" not in text                   # never cited as a competitor


def _patched_input_shape(src, dst, dims):
    """The review's appendix: overwrite the input tensor's declared shape in place."""
    import struct
    import tflite
    buf = bytearray(src.read_bytes())
    sg = tflite.Model.GetRootAsModel(buf, 0).Subgraphs(0)
    t = sg.Tensors(sg.Inputs(0))
    start = t._tab.Vector(t._tab.Offset(4))
    for k, d in enumerate(dims):
        struct.pack_into("<i", buf, start + 4 * k, d)
    dst.write_bytes(buf)
    return dst


@needs_models
def test_explain_operand_over_uint32_refuses_that_node(tmp_path):
    model = _patched_input_shape(MODELS / "mobilenet_v1_0.25_128_quant.tflite",
                                 tmp_path / "huge.tflite", [1, 65536, 65536, 3])
    r = nnsim("explain", model, "--format", "json")
    assert r.returncode == 0, r.stderr
    ex = json.loads(r.stdout)
    assert "uint32" in ex["delegate_error"]
    assert {n["ran_on"] for n in ex["nodes"]} == {"TFLite CPU"}   # TFLite restores its plan
    node0 = ex["nodes"][0]
    assert any("t0" in r and str(65536 * 65536 * 3) in r for r in node0["delegate_refusals"])
    assert any("4 GiB" in f for f in node0["fixes"])
    for n in ex["nodes"][1:]:
        assert n["delegate_refusals"] == [] and "delegate failed" in n["not_delegated"]


# -- in process: delegate options the CLI does not expose, vendor model block list ---------------
@pytest.fixture
def board_state():
    import nnsim
    from nnsim.drivers import boards
    from nnsim.runtime.board import apply_board
    from nnsim.runtime.devices import get_device_manager
    current, drivers = boards._current[0], get_device_manager().drivers()
    nnsim.reset_props()
    apply_board("imx8mp")
    yield
    boards._current[0] = current
    nnsim.reset_props()
    get_device_manager().set_drivers(drivers)


@needs_models
def test_explain_partition_limit_fix(board_state):
    from nnsim.explain import explain, format_text
    from nnsim.tflite.delegate import NnApiDelegate
    from nnsim.tflite.reader import read_model
    model = read_model((MODELS / "deeplabv3_mnv2_pascal_quant.tflite").read_bytes())
    full = explain(model, NnApiDelegate(disallow_nnapi_cpu=False, android_sdk_version=29))
    ex = explain(model, NnApiDelegate(disallow_nnapi_cpu=False, android_sdk_version=29,
                                      max_number_delegated_partitions=1))
    # three partitions without a limit (0-60+62, 63, 65-68); the limit keeps the largest
    before = {n.node for n in full.nodes if n.ran_on != "TFLite CPU"}
    after = {n.node for n in ex.nodes if n.ran_on != "TFLite CPU"}
    dropped = {n.node for n in ex.nodes if any("partition limit" in r
                                               for r in n.delegate_refusals)}
    assert after == set(range(61)) | {62}
    assert dropped == before - after and 63 in dropped
    for n in ex.nodes:
        if n.node in dropped:
            assert any("max_number_delegated_partitions (now 1" in f for f in n.fixes)
    assert "what to change:" in "\n".join(format_text(ex))


@needs_models
def test_explain_model_block_level_fix(board_state, tmp_path):
    import nnsim
    from nnsim.drivers.vsi_npu import block_entries_for
    from nnsim.explain import explain
    from nnsim.tflite.delegate import NnApiDelegate
    from nnsim.tflite.reader import read_model
    model = read_model((MODELS / "mobilenet_v1_0.25_128_quant.tflite").read_bytes())
    result = NnApiDelegate(disallow_nnapi_cpu=False).prepare(model)
    entries = block_entries_for(result.kernels[0].converted.nnapi_model, "XS", "mnet")[:1]
    (tmp_path / "block.json").write_text(json.dumps(entries))
    nnsim.setprop("vendor.nnsim.vsi.model_block_list", str(tmp_path / "block.json"))
    nnsim.setprop("vendor.MODEL_BLOCK_LEVEL", "6")
    ex = explain(model, NnApiDelegate(disallow_nnapi_cpu=False))
    assert {n.ran_on for n in ex.nodes} == {"nnapi-reference"}
    for n in ex.nodes:
        assert any("MODEL_BLOCK_LEVEL=6" in f for f in n.fixes), n
    nnsim.setprop("vendor.MODEL_BLOCK_LEVEL", "0")            # the oracle: off = on the NPU
    ex = explain(model, NnApiDelegate(disallow_nnapi_cpu=False))
    assert {n.ran_on for n in ex.nodes} == {"vsi-npu"}
