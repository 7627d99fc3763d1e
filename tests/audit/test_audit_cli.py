"""`nnsim audit` as CI runs it: error rows, outputs, resuming, baselines."""
from __future__ import annotations

import csv
import json

import pytest

from tests.cli.cliutil import nnsim

FLAGS = ("--boards", "imx8mp", "--android_sdk", "31", "--delegates", "nnapi,cpu",
         "--memory-cap", "512M", "--jobs", "2")


@pytest.fixture(scope="module")
def audited(zoo, tmp_path_factory):
    """One audit of the tiny zoo (with graph pages), then the same audit again."""
    out = tmp_path_factory.mktemp("audit")
    folder = zoo["int8_conv.tflite"].parent
    first = nnsim("audit", folder, *FLAGS, "--out", out)
    second = nnsim("audit", folder, *FLAGS, "--out", out, "--quiet")
    return folder, out, first, second


def _rows(out) -> dict:
    with open(out / "audit.csv", newline="") as f:
        return {(r["model"], r["delegate"]): r for r in csv.DictReader(f)}


def test_error_rows_and_the_rest_completes(audited):
    folder, out, first, _ = audited
    assert first.returncode == 0, first.stderr
    rows = _rows(out)
    assert len(rows) == 10      # 5 models x 2 combinations
    corrupt = rows[("corrupt.tflite", "nnapi")]
    assert corrupt["status"] == "error"
    assert corrupt["error"].startswith("not a valid .tflite model: not a TFLite model")
    unknown = rows[("sub/unknown_op.tflite", "cpu")]
    assert unknown["status"] == "error"
    assert unknown["error"] == ("node 0 (NnsimNoSuchOp v1): nnsim has no CPU kernel for the "
                                "TFLite custom operator NnsimNoSuchOp")
    huge = rows[("huge.tflite", "nnapi")]
    assert huge["status"] == "memory"
    assert huge["error"] == ("tensor 0 'a' [1, 4096, 4096, 16] FLOAT32 needs 1.0 GiB, more "
                             "than the limit of 512.0 MiB (the per-task memory cap of 512 MiB)")
    ok = rows[("int8_conv.tflite", "nnapi")]
    assert ok["status"] == "ok" and ok["accelerator_nodes"] == "0"
    assert json.loads(ok["devices"]) == {"nnapi-reference": 2}
    assert ok["top_fix"].startswith("vsi-npu reports TENSOR_QUANT8_ASYMM_SIGNED (int8) at FLT_MAX")
    assert rows[("float_add.tflite", "nnapi")]["devices"] == '{"vsi-npu": 1}'
    # the progress bar on stderr, the summary on stdout
    assert "nnsim audit: 100%|" in first.stderr and "15/15" in first.stderr
    assert first.stdout.startswith("audited 5 model(s) x 2 combination(s): 4 ok, 6 failed "
                                   "(error 4, memory 2, ok 4)")


def test_summary_report_and_graph_pages(audited):
    _, out, _, _ = audited
    data = json.loads((out / "summary.json").read_text())
    assert data["totals"] == {"models": 5, "combinations": 10, "ok": 4, "failed": 6,
                              "by_status": {"error": 4, "memory": 2, "ok": 4}}
    cov = {(c["delegate"]): c for c in data["coverage"]}
    assert cov["nnapi"]["nodes"] == 3 and cov["nnapi"]["accelerator_nodes"] == 1  # float ADD
    assert data["reasons"][0]["nodes"] == 2 and data["reasons"][0]["ops"] == {"ADD": 1,
                                                                                "CONV_2D": 1}
    assert len(data["records"]) == 10 and len(data["failures"]) == 6
    page = (out / "report.html").read_text()
    assert 'href="graphs/int8_conv.tflite.imx8mp.html"' in page
    assert 'href="graphs/sub__unknown_op.tflite.imx8mp.html"' in page
    assert "corrupt.tflite.imx8mp.html" not in page      # no graph of an unreadable model
    graph = (out / "graphs" / "int8_conv.tflite.imx8mp.html").read_text()
    assert "nnapi-reference" in graph and "CONV_2D" in graph


def test_resume_uses_the_cache(audited):
    """The second run computes only what is not cached: the two memory-cap rows and the
    graph pages that failed (corrupt, huge); the table is the same."""
    _, out, first, second = audited
    assert second.returncode == 0, second.stderr
    assert "4 task(s) computed, 11 cached" in second.stdout
    assert "nnsim audit:" not in second.stderr        # --quiet: no progress bar
    data = json.loads((out / "summary.json").read_text())
    assert data["timing"]["cached_tasks"] == 11


def test_cache_is_keyed_by_code_version(tmp_path, zoo):
    from nnsim.audit.engine import Combination
    from nnsim.audit.scheduler import ResultCache, Task
    task = Task("m.tflite", "m.tflite", "ab" * 32, Combination("imx8mp", 31, "nnapi"))
    ResultCache(tmp_path, "0.1.0+aaaa").put(task, {"status": "ok", "x": 1})
    assert ResultCache(tmp_path, "0.1.0+aaaa").get(task) == {"status": "ok", "x": 1}
    assert ResultCache(tmp_path, "0.1.0+bbbb").get(task) is None     # another nnsim
    other = Task("m.tflite", "m.tflite", "cd" * 32, task.combo)
    assert ResultCache(tmp_path, "0.1.0+aaaa").get(other) is None      # another model file
    ResultCache(tmp_path, "0.1.0+aaaa").put(other, {"status": "timeout"})
    assert ResultCache(tmp_path, "0.1.0+aaaa").get(other) is None      # retried, not cached


def test_baseline_regressions_exit_3(audited, tmp_path):
    folder, out, _, _ = audited
    old = json.loads((out / "summary.json").read_text())
    for r in old["records"]:
        if r["model"] == "int8_conv.tflite" and r["delegate"] == "nnapi":
            r["accelerator_nodes"] = 2                 # it used to be on the NPU
        if r["model"] == "float_add.tflite" and r["delegate"] == "cpu":
            r["avg_ms"] = r["avg_ms"] / 2              # it used to be twice as fast
    baseline = tmp_path / "old.json"
    baseline.write_text(json.dumps(old))
    proc = nnsim("audit", folder, *FLAGS, "--out", out, "--quiet", "--no-graphs",
                 "--baseline", baseline)
    assert proc.returncode == 3, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("REGRESSION")]
    assert lines == [
        "REGRESSION float_add.tflite imx8mp/sdk31/cpu: slower: 0.015 -> 0.030 ms simulated "
        "average (+100.0%)",
        "REGRESSION int8_conv.tflite imx8mp/sdk31/nnapi: lost NPU coverage: 2 -> 0 of 2 nodes "
        "on an accelerator"]
    same = nnsim("audit", folder, *FLAGS, "--out", tmp_path / "again", "--quiet",
                 "--no-graphs", "--baseline", out / "summary.json")
    assert same.returncode == 0 and f"no regression against {out / 'summary.json'}" in same.stdout
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    proc = nnsim("audit", folder, "--baseline", bad, "--out", tmp_path / "x")
    assert proc.returncode == 2 and "not an nnsim audit summary.json" in proc.stderr


def test_no_model_found(tmp_path):
    proc = nnsim("audit", tmp_path, "--out", tmp_path / "out")
    assert proc.returncode == 1 and f"no .tflite file under {tmp_path}" in proc.stderr


def test_parquet_is_the_csv_table(audited, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet", reason="Parquet needs pyarrow")
    _, out, _, _ = audited
    table = pq.read_table(out / "audit.parquet").to_pylist()
    with open(out / "audit.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(t["model"], t["delegate"], t["status"]) for t in table] == \
        [(r["model"], r["delegate"], r["status"]) for r in rows]
