"""``--external_delegate_path=libvx_delegate.so`` in every command (issue 15 items 1 and 4).

Expectations: benchmark_model's external-delegate lines (external_delegate_provider.cc,
delegate_provider.cc, benchmark_tflite_model.cc) and the SyNAP timvx log quoted in
npu-drivers.md 4.5; the int8 MobileNet v2 on i.MX 8M Plus case of issue 15 (NNAPI: int8 on
nnapi-reference, npu-drivers.md 2.8; VX: int8 on the NPU, 3.3-3.4).
"""
from __future__ import annotations

import json

import pytest

from .cliutil import MODELS, nnsim

needs_models = pytest.mark.skipif(not MODELS.is_dir(), reason=f"no shared models at {MODELS}")
VX = "--external_delegate_path=libvx_delegate.so"
PTQ = MODELS / "tf2_mobilenet_v2_1.0_224_ptq.tflite"
V1 = MODELS / "mobilenet_v1_0.25_224_quant.tflite"
IMX_NPU = "on the imx8mp NPU (VeriSilicon VIPNano-SI+"


@needs_models
def test_run_header_names_the_delegate_and_the_board_npu(tmp_path):
    r = nnsim("run", PTQ, VX, "--format", "json", env={"NNSIM_STATE_DIR": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["delegate"]["name"] == "Vx Delegate"
    assert rep["delegate"]["nodes_replaced"] == rep["delegate"]["nodes_total"] == 68
    assert {p["where"] for p in rep["placements"]} == {"NPU (VX delegate)"}
    assert rep["time_ms"]["simulated_first"] > 100 * rep["time_ms"]["simulated_steady"]
    text = nnsim("run", PTQ, VX, env={"NNSIM_STATE_DIR": str(tmp_path)})
    assert f"delegate: Vx Delegate (libvx_delegate.so, TIM-VX) {IMX_NPU}" in text.stdout
    assert "client: an app's external delegate libvx_delegate.so" in text.stdout
    assert "VX delegate: the first inference built and compiled the graph" in text.stdout
    assert "INFO: Vx delegate: allowed_cache_mode set to 0." in text.stderr


@needs_models
def test_run_nbg_cache_across_two_processes(tmp_path):
    opts = "--external_delegate_options=allowed_cache_mode:true;cache_file_path:v1.nb"
    env = {"NNSIM_STATE_DIR": str(tmp_path)}
    first = nnsim("run", V1, VX, opts, "--board", "vs680", "--format", "json", env=env)
    second = nnsim("run", V1, VX, opts, "--board", "vs680", "--format", "json", env=env)
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    assert "NBG cache miss" in a["cache"][0] and "NBG cache hit" in b["cache"][0]
    assert (tmp_path / "data" / "local" / "tmp" / "v1.nb").is_file()
    assert b["time_ms"]["simulated_first"] < a["time_ms"]["simulated_first"] / 10
    assert a["outputs"] == b["outputs"]


@needs_models
def test_explain_recommends_vx_for_int8_on_imx8mp():
    r = nnsim("explain", PTQ, "--board", "imx8mp", "--format", "json")
    assert r.returncode == 0, r.stderr
    ex = json.loads(r.stdout)
    alt = ex["alternative"]
    assert alt["delegate"] == "the VX delegate" and alt["npu_nodes"] == 68
    assert alt["current_npu_nodes"] < 5                # int8 lost to nnapi-reference (2.8)
    assert alt["speedup"] == pytest.approx(alt["current_steady_ms"] / alt["steady_ms"])
    assert alt["speedup"] > 5
    assert "--external_delegate_path=libvx_delegate.so" in ex["recommendation"]
    text = nnsim("explain", PTQ, "--board", "imx8mp").stdout
    assert text.rstrip().splitlines()[-1].startswith("recommendation: the VX delegate")
    assert "x faster" in text


@needs_models
def test_explain_with_vx_and_no_recommendation_when_nnapi_is_no_better():
    r = nnsim("explain", V1, VX, "--format", "json")
    assert r.returncode == 0, r.stderr
    ex = json.loads(r.stdout)
    assert ex["delegate"] == "VX delegate" and ex["recommendation"] == ""
    assert ex["summary"] == {"NPU (VX delegate)": 31}
    assert "Vx Delegate (libvx_delegate.so, TIM-VX) " + IMX_NPU in ex["delegate_detail"]


def test_explain_with_vx_recommends_nnapi_when_it_takes_more(tmp_path):
    """L2_POOL_2D: no VX mapper (3.2), accepted by vsi-npu for float32 (2.4, perf 0.9 < the
    CPU's 1.0)."""
    from nnsim.tflite.options import Pool2DOptions
    from nnsim.tflite.schema import BuiltinOperator as B
    from nnsim.tflite.schema import TensorType as TT
    from nnsim.tflite.writer import write_model
    from tests.tflite.test_convert_support import Graph
    g = Graph()
    g.op(B.L2_POOL_2D, [g.t((1, 8, 8, 4), TT.FLOAT32)], [g.t((1, 4, 4, 4), TT.FLOAT32)],
         Pool2DOptions(stride_w=2, stride_h=2, filter_width=2, filter_height=2))
    path = tmp_path / "l2pool.tflite"
    path.write_bytes(write_model(g.model()))
    r = nnsim("explain", path, VX, "--format", "json")
    assert r.returncode == 0, r.stderr
    ex = json.loads(r.stdout)
    assert ex["nodes"][0]["ran_on"] == "TFLite CPU"
    assert ex["nodes"][0]["delegate_refusals"] == [
        "SupportedBuiltinOps: Fallback unsupported op 12 to TfLite"]
    assert ex["alternative"]["delegate"] == "the NNAPI delegate"
    assert ex["alternative"]["placement"] == {"vsi-npu": 1}
    assert ex["recommendation"].startswith("the NNAPI delegate")


@needs_models
def test_graph_draws_vx_partitions():
    r = nnsim("graph", MODELS / "deeplabv3_mnv2_pascal_quant.tflite", "-o", "-", VX,
              "--board", "vs680")
    assert r.returncode == 0, r.stderr
    assert "Vx Delegate (libvx_delegate.so, TIM-VX) on the vs680 NPU" in r.stdout
    assert "VX partition 0 (delegate node 72): 71 nodes on NPU (VX delegate)" in r.stdout
    assert "refused by the VX delegate: OpMapperBase::IsSupported: Int64 output is not " \
           "supported" in r.stdout


@needs_models
def test_diff_vx_against_the_cpu_is_exact():
    r = nnsim("diff", V1, VX, "--num_runs=2")
    assert r.returncode == 0, r.stderr
    assert "INFO: OutputDiff[0]: avg_error=0, std_dev=0" in r.stdout
    assert "delegate: Vx Delegate (libvx_delegate.so, TIM-VX) " + IMX_NPU in r.stderr
    assert "no NNAPI device (the VX delegate reaches the NPU through TIM-VX" in r.stderr


@needs_models
def test_benchmark_prints_the_external_delegate_lines():
    r = nnsim("benchmark", f"--graph={V1}", VX, "--board=vs680", "--num_runs=5", "--min_secs=0",
              "--warmup_min_secs=0", "--warmup_runs=1")
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    for line in ("INFO: External delegate path: [libvx_delegate.so]",
                 "INFO: EXTERNAL delegate created.",
                 "INFO: Explicitly applied EXTERNAL delegate, and the model graph will be "
                 "completely executed by the delegate."):
        assert line in out
    assert out.index("INFO: EXTERNAL delegate created.") < out.index(
        "INFO: Explicitly applied EXTERNAL delegate, and the model graph will be completely "
        "executed by the delegate.")
    assert "INFO: Vx delegate: error_during_invoke set to 0." in r.stderr
    assert ("VERBOSE: Replacing 31 out of 31 node(s) with delegate (Vx Delegate) node, "
            "yielding 1 partitions for the whole graph.") in r.stderr
    assert any("delegate: Vx Delegate (libvx_delegate.so, TIM-VX) on the vs680 NPU" in line
               for line in out)
    timings = next(line for line in out if line.startswith("INFO: Inference timings in us"))
    first = int(timings.split("First inference: ")[1].split(",")[0])
    avg = float(timings.split("Inference (avg): ")[1])
    assert first > 100 * avg                            # the graph compiles at the first run


@needs_models
def test_benchmark_profiling_names_the_vx_kernel():
    r = nnsim("benchmark", f"--graph={V1}", VX, "--num_runs=2", "--min_secs=0",
              "--warmup_min_secs=0", "--enable_op_profiling=true")
    assert r.returncode == 0, r.stderr
    assert any(line.split("\t")[1:2] and line.split("\t")[1].strip() == "Vx Delegate"
               for line in r.stdout.splitlines())


@needs_models
@pytest.mark.parametrize("command", ["run", "explain", "graph", "diff"])
def test_unknown_external_library_is_a_usage_error(command, tmp_path):
    extra = ["-o", str(tmp_path / "g.dot")] if command == "graph" else []
    r = nnsim(command, V1, "--external_delegate_path=libfoo.so", *extra)
    assert r.returncode == 2, r.stderr
    assert "nnsim emulates one external delegate, libvx_delegate.so" in r.stderr


def test_benchmark_unknown_external_library_is_a_usage_error():
    r = nnsim("benchmark", "--graph=x.tflite", "--external_delegate_path=libfoo.so")
    assert r.returncode == 2 and "libvx_delegate.so" in r.stderr


@needs_models
def test_bad_option_value_fails_like_the_library():
    r = nnsim("run", V1, VX, "--external_delegate_options=allowed_cache_mode:yes")
    assert r.returncode == 2
    assert "ERROR: Failed to parse flag 'allowed_cache_mode' against argv " \
           "'--allowed_cache_mode=yes'" in r.stderr
    b = nnsim("benchmark", f"--graph={V1}", VX, "--external_delegate_options=device_id:x")
    assert b.returncode == 1
    assert "ERROR: Failed to apply EXTERNAL delegate." in b.stderr


@needs_models
def test_explain_steps_is_nnapi_only():
    r = nnsim("explain", V1, VX, "--steps")
    assert r.returncode == 2 and "NNAPI partitioner" in r.stderr
