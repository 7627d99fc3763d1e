"""`nnsim benchmark`: benchmark_model's line sequence and tables (reference 7.2-7.4)."""
from __future__ import annotations

import re

import pytest

from .cliutil import MODELS, nnsim

needs_models = pytest.mark.skipif(not MODELS.is_dir(), reason=f"no shared models at {MODELS}")


def _run_order(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    regular = lines.index("INFO: Operator-wise Profiling Info for Regular Benchmark Runs:")
    start = lines.index("============================== Run Order ==============================",
                        regular)
    rows = []
    for line in lines[start + 2:]:
        if not line.strip():
            break
        rows.append(line.split("\t")[1].strip())
    return rows


@needs_models
def test_benchmark_synap_vs680_line_sequence(tmp_path):
    # a fresh state directory: the SyNAP compile cache is cold, as on a fresh board
    r = nnsim("benchmark", f"--graph={MODELS / 'mobilenet_v1_0.25_224_quant.tflite'}",
              "--use_nnapi=true", "--nnapi_accelerator_name=synap-npu", "--board=vs680",
              env={"NNSIM_STATE_DIR": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    out = [l for l in r.stdout.splitlines()]
    assert out[0] == "INFO: STARTING!"
    assert "INFO: Use NNAPI: [1]" in out and "INFO: NNAPI accelerator name: [synap-npu]" in out
    assert ("INFO: Explicitly applied NNAPI delegate, and the model graph will be completely "
            "executed by the delegate.") in out
    assert ("VERBOSE: Replacing 31 out of 31 node(s) with delegate (TfLiteNnapiDelegate) node, "
            "yielding 1 partitions for the whole graph.") in r.stderr.splitlines()
    timings = next(l for l in out if l.startswith("INFO: Inference timings in us:"))
    m = re.match(r"INFO: Inference timings in us: Init: (\d+), First inference: (\d+), "
                 r"Warmup \(avg\): ([\d.e+]+), Inference \(avg\): ([\d.e+]+)$", timings)
    assert m, timings
    first, avg = int(m.group(2)), float(m.group(4))
    assert abs(first - 637079) / 637079 < 0.15      # published first inference (no cache)
    assert abs(avg - 1885.74) / 1885.74 < 0.15      # published average
    stat = out[out.index(next(l for l in out if l.startswith("INFO: Running benchmark for at "
                                                            "least 50"))) + 1]
    assert re.match(r"INFO: count=\d+ ", stat)
    # a second process finds the SyNAP compile cache warm: the first inference is faster
    r2 = nnsim("benchmark", f"--graph={MODELS / 'mobilenet_v1_0.25_224_quant.tflite'}",
               "--use_nnapi=true", "--nnapi_accelerator_name=synap-npu", "--board=vs680",
               env={"NNSIM_STATE_DIR": str(tmp_path)})
    first2 = int(re.search(r"First inference: (\d+)", r2.stdout).group(1))
    assert first2 < first


@needs_models
def test_benchmark_deeplab_run_order_from_the_users_report():
    graph = f"--graph={MODELS / 'deeplabv3_mnv2_pascal_quant.tflite'}"
    common = ["--use_nnapi=true", "--disable_nnapi_cpu=false", "--android_sdk=29",
              "--enable_op_profiling=true", "--num_runs=2", "--min_secs=0", "--warmup_runs=1",
              "--warmup_min_secs=0"]
    r = nnsim("benchmark", graph, *common)
    assert r.returncode == 0, r.stderr
    assert _run_order(r.stdout) == [
        "TfLiteNnapiDelegate", "AVERAGE_POOL_2D", "TfLiteNnapiDelegate", "RESIZE_BILINEAR",
        "TfLiteNnapiDelegate", "RESIZE_BILINEAR", "RESIZE_BILINEAR", "ARG_MAX"]
    r = nnsim("benchmark", graph, *common, "--nnapi_accelerator_name=vsi-npu")
    assert r.returncode == 0, r.stderr
    assert "AVERAGE_POOL_2D" not in _run_order(r.stdout)


def test_benchmark_bad_flags_exit_2():
    # (an unknown flag is a warning, as upstream: tests/cli/test_cli_benchmark_flags.py)
    for args in (["--graph=x.tflite", "--min_secs=-1"], ["--num_runs=many"],
                 ["--use_nnapi=maybe"], ["--timing=wall"]):
        r = nnsim("benchmark", *args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.strip().startswith("nnsim: error:")


def test_benchmark_missing_model_exit_1(tmp_path):
    r = nnsim("benchmark", f"--graph={tmp_path / 'none.tflite'}")
    assert r.returncode == 1
    assert "Traceback" not in r.stderr


def test_benchmark_help_lists_flags():
    r = nnsim("benchmark", "--help")
    assert r.returncode == 0
    assert "--use_nnapi" in r.stdout and "--timing" in r.stdout and "examples:" in r.stdout


@needs_models
def test_benchmark_csv_profiling_and_input_files(tmp_path):
    import numpy as np
    x = np.full((1, 128, 128, 3), 7, np.uint8)
    np.save(tmp_path / "x.npy", x)
    graph = f"--graph={MODELS / 'mobilenet_v1_0.25_128_quant.tflite'}"
    r = nnsim("benchmark", graph, "--enable_op_profiling=true", "--op_profiling_output_mode=csv",
              "--num_runs=2", "--min_secs=0", "--warmup_min_secs=0",
              f"--input_layer_value_files=input:{tmp_path / 'x.npy'}", "--timing=host")
    assert r.returncode == 0, r.stderr
    assert "node type, first, avg_ms, %, cdf%, mem KB, times called, name" in r.stdout
    rows = [l for l in r.stdout.splitlines() if l.startswith("CONV_2D, ")]
    per_node = [l for l in rows if l.split(", ")[-1].startswith("[")]
    assert len(per_node) == 15    # no delegate: every CONV_2D profiled on the CPU path
    assert [l.split(", ")[1] for l in rows if l not in per_node] == ["15"]   # summary row
    r = nnsim("benchmark", graph, "--input_layer_value_files=nope:x.npy")
    assert r.returncode == 1 and "unknown inputs" in r.stderr
