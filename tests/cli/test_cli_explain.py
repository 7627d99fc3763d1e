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
