"""`nnsim compare` as a user runs it: table, json, csv, html; bad input is one error line."""
from __future__ import annotations

import csv
import io
import json

from tests.cli.cliutil import nnsim

FLAGS = ("--boards", "imx8mp", "--android_sdk", "29,31", "--delegates", "nnapi,vx,cpu",
         "--jobs", "2")


def test_table(zoo):
    proc = nnsim("compare", zoo["int8_conv.tflite"], *FLAGS)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "model: int8_conv.tflite"
    assert lines[1].split() == ["board", "sdk", "delegate", "delegated", "parts", "on", "NPU",
                                "ADD", "CONV_2D", "first", "ms", "avg", "ms", "top", "fallback"]
    rows = [ln.split() for ln in lines[3:9]]
    assert [r[:3] for r in rows] == [["imx8mp", "29", "nnapi"], ["imx8mp", "31", "nnapi"],
                                     ["imx8mp", "29", "vx"], ["imx8mp", "31", "vx"],
                                     ["imx8mp", "29", "cpu"], ["imx8mp", "31", "cpu"]]
    # delegated, partitions, on NPU, ADD, CONV_2D
    assert rows[0][3:8] == ["2/2", "1", "2/2", "vsi-npu", "vsi-npu"]
    assert rows[1][3:8] == ["2/2", "1", "0/2", "nnapi-ref", "nnapi-ref"]
    assert rows[2][3:8] == ["2/2", "1", "2/2", "vx-npu", "vx-npu"]
    assert rows[4][3:8] == ["0/2", "0", "0/2", "tflite-cpu", "tflite-cpu"]
    assert rows[1][-3:] == ["[1]", "2", "node(s)"]
    assert "fallback reasons (the top one of each combination):" in lines
    reason = lines[lines.index("fallback reasons (the top one of each combination):") + 1]
    assert reason.startswith("  [1] nnapi-reference for TENSOR_QUANT8_ASYMM_SIGNED")


def test_json_csv_html(zoo, tmp_path):
    proc = nnsim("compare", zoo["float_add.tflite"], *FLAGS, "--format", "json", "--run")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["model"] == "float_add.tflite" and len(data["records"]) == 6
    for r in data["records"]:
        assert r["status"] == "ok" and r["max_abs_diff"] == 0.0
        assert r["placement"] == [{"node": 0, "op": "ADD", "where": r["placement"][0]["where"]}]
    proc = nnsim("compare", zoo["float_add.tflite"], *FLAGS, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert len(rows) == 6 and rows[0]["devices"] == '{"vsi-npu": 1}'
    out = tmp_path / "cmp.html"
    proc = nnsim("compare", zoo["int8_conv.tflite"], *FLAGS, "--format", "html", "-o", out)
    assert proc.returncode == 0 and proc.stdout.startswith(f"wrote {out}: 6 combination(s)")
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and 'id="placement"' in page
    assert "http://" not in page and "https://" not in page     # usable offline


def test_errors(zoo, tmp_path):
    proc = nnsim("compare", tmp_path / "missing.tflite")
    assert proc.returncode == 1 and proc.stderr.strip().endswith("missing.tflite: no such file")
    proc = nnsim("compare", zoo["float_add.tflite"], "--delegates", "nnapi,gpu")
    assert proc.returncode == 2 and "unknown 'gpu'; choose from nnapi, vx, cpu" in proc.stderr
    proc = nnsim("compare", zoo["float_add.tflite"], "--boards", "pixel")
    assert proc.returncode == 2 and "unknown 'pixel'" in proc.stderr
    # a corrupt model is a row per combination, not a failed command
    proc = nnsim("compare", zoo["corrupt.tflite"], "--boards", "vs680", "--delegates", "cpu")
    assert proc.returncode == 0
    assert "[1] error: not a valid .tflite model" in proc.stdout
