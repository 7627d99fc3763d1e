"""`nnsim explain` and `nnsim run --vlog` on models with IF / WHILE (several subgraphs): the
control-flow node stays on the TFLite CPU with the delegate's reason, the ADD of subgraph 0 is
delegated, and the outputs are LiteRT's."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tests.tflite.test_builtins_control_flow import if_model, while_model

from .cliutil import logcat, nnsim

REASON = "kUnsupportedOperator: Unsupported operation type."


@pytest.fixture
def models(tmp_path):
    paths = {"if": tmp_path / "if_add_mul.tflite", "while": tmp_path / "while_sum.tflite"}
    paths["if"].write_bytes(if_model(np.float32, pre_add=True))
    # n is a constant 4: `nnsim run` feeds random values, a random n could loop for hours
    paths["while"].write_bytes(while_model(np.float32, nested=True, count=4, pre_add=True))
    return paths


@pytest.mark.parametrize("kind, op", [("if", "IF"), ("while", "WHILE")])
def test_explain_says_why_control_flow_stays_on_the_cpu(models, kind, op):
    r = nnsim("explain", models[kind], "--format", "json")
    assert r.returncode == 0, r.stderr
    nodes = {n["op"]: n for n in json.loads(r.stdout)["nodes"]}
    assert sorted(nodes) == ["ADD", op]
    assert nodes[op]["ran_on"] == "TFLite CPU"
    assert nodes[op]["delegate_refusals"] == [REASON]
    assert nodes["ADD"]["delegate_refusals"] == []
    assert nodes["ADD"]["ran_on"] != "TFLite CPU"
    text = nnsim("explain", models[kind])
    assert text.returncode == 0, text.stderr
    assert f"node 1 {op}: ran on TFLite CPU" in text.stdout
    assert REASON in text.stdout


def test_run_vlog_delegates_subgraph_0_and_loops_on_the_cpu(models):
    r = nnsim("run", models["while"], "--vlog")
    assert r.returncode == 0, r.stderr
    assert "Replacing 1 out of 2 node(s) with delegate (TfLiteNnapiDelegate) node" in r.stderr
    # the NNAPI model holds the ADD of subgraph 0 only
    models_logged = [m for m in logcat(r.stdout, "Utils") if m.startswith("Model{")]
    assert models_logged and all("WHILE" not in m and "IF" not in m for m in models_logged)
    assert any("[ADD(" in m for m in models_logged)
    assert re.search(r"TFLite CPU +1 node\(s\): WHILE x1", r.stdout)
    # the loop ran 4 times: count and n come out 4
    assert re.search(r"output 0 'count': int32 \[\]\n  values: min 4, max 4", r.stdout)


def test_run_if_model(models):
    r = nnsim("run", models["if"], "--vlog")
    assert r.returncode == 0, r.stderr
    assert re.search(r"TFLite CPU +1 node\(s\): IF x1", r.stdout)
    assert "output 0 'out': float32 [2, 3]" in r.stdout
