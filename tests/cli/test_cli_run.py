"""`nnsim run` driven as a subprocess; expectations from issue 6 and the board reports."""
from __future__ import annotations

import pytest

from .cliutil import MODELS, logcat, nnsim

needs_models = pytest.mark.skipif(not MODELS.is_dir(), reason=f"no shared models at {MODELS}")

MOBILENET_V1_OPS = (["CONV_2D"] + ["DEPTHWISE_CONV_2D", "CONV_2D"] * 13
                    + ["AVERAGE_POOL_2D", "CONV_2D", "RESHAPE", "SOFTMAX"])


def test_run_without_model_uses_the_demo():
    r = nnsim("run")
    assert r.returncode == 0, r.stderr
    assert "model: " in r.stdout and "(31 nodes)" in r.stdout
    assert "vsi-npu" in r.stdout and "top-5: 835 suit, suit of clothes" in r.stdout
    assert "simulated on imx8mp: first inference" in r.stdout


@needs_models
def test_run_vlog_mobilenet_v1_on_imx8mp():
    r = nnsim("run", MODELS / "mobilenet_v1_1.0_224_quant_reconstructed.tflite", "--vlog")
    assert r.returncode == 0, r.stderr
    dump = logcat(r.stdout, "GraphDump")
    assert dump[:10] == [
        "// ModelBuilder::finish", "digraph {",
        '    d0 [style=filled fillcolor=black fontcolor=white label="0 = input[0]\\nTQ8A(1x224x224x3)"]',
        '    d1 [label="1: REF\\nTQ8A(32x3x3x3)"]', '    d2 [label="2: COPY\\nTI32(32)"]',
        '    d3 [label="3: COPY\\nI32 = 1"]', '    d4 [label="4: COPY\\nI32 = 2"]',
        '    d5 [label="5: COPY\\nI32 = 2"]', '    d6 [label="6: COPY\\nI32 = 3"]',
        '    d7 [label="7\\nTQ8A(1x112x112x32)"]']
    plan = logcat(r.stdout, "ExecutionPlan")
    best = [m for m in plan if m.startswith("ModelBuilder::findBestDeviceForEachOperation")]
    assert best == [f"ModelBuilder::findBestDeviceForEachOperation({op}:{i}) = 0 (vsi-npu)"
                    for i, op in enumerate(MOBILENET_V1_OPS)]
    k = plan.index("ModelBuilder::partitionTheWork: only one best device: 0 = vsi-npu")
    assert plan[k + 1] == "ExecutionPlan::SimpleBody::finish, compilation"
    assert "top-5: 653 military uniform" not in r.stdout or True  # random input: no claim


@needs_models
def test_run_int8_model_matches_the_forum_board_log():
    r = nnsim("run", MODELS / "tf2_mobilenet_v2_1.0_224_ptq.tflite", "--vlog")
    assert r.returncode == 0, r.stderr
    dump = logcat(r.stdout, "GraphDump")
    assert dump[2].endswith('label="0 = input[0]\\nTQ8A(1x224x224x3)"]')
    assert dump[3] == '    d1 [label="1\\nTF32(1x224x224x3)"]'
    assert dump[4] == '    d2 [label="2\\nTENSOR_QUANT8_ASYMM_SIGNED(1x224x224x3)"]'
    best = [m for m in logcat(r.stdout, "ExecutionPlan")
            if m.startswith("ModelBuilder::findBestDeviceForEachOperation")]
    assert best[0] == "ModelBuilder::findBestDeviceForEachOperation(DEQUANTIZE:0) = 0 (vsi-npu)"
    assert best[1] == "ModelBuilder::findBestDeviceForEachOperation(QUANTIZE:1) = 0 (vsi-npu)"
    convs = [m for m in best[2:] if "(CONV_2D:" in m or "(DEPTHWISE_CONV_2D:" in m]
    assert len(convs) == 53
    assert all(m.endswith("= 1 (nnapi-reference)") for m in convs)


@needs_models
def test_run_photo_is_a_military_uniform():
    r = nnsim("run", MODELS / "mobilenet_v1_1.0_224_quant_reconstructed.tflite", "--input",
              MODELS / "grace_hopper.bmp")
    assert r.returncode == 0, r.stderr
    assert "top-5: 653 military uniform" in r.stdout


@needs_models
def test_run_vs680_sysfs_counts_npu_inferences():
    r = nnsim("run", MODELS / "mobilenet_v1_0.25_224_quant.tflite", "--board", "vs680",
              "--sysfs")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    k = lines.index("$ cat /sys/class/misc/synap/device/misc/synap/statistics/inference_count")
    assert lines[k + 1] == "2"   # the first inference and one steady-state inference


def test_run_bad_flag_and_values_exit_2():
    for args in (["run", "--no-such-flag"], ["run", "--board", "nope"],
                 ["run", "--setprop", "novalue"], ["frobnicate"]):
        r = nnsim(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "nnsim: error:" in r.stderr


def test_run_missing_and_corrupt_model_exit_1(tmp_path):
    r = nnsim("run", tmp_path / "missing.tflite")
    assert r.returncode == 1 and r.stderr.strip().count("\n") == 0
    assert "no such file" in r.stderr
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x1c\x00\x00\x00TFL3" + b"\xff" * 64)
    r = nnsim("run", bad)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith("nnsim: error:") and "Traceback" not in r.stderr
