"""One model of the client, stated everywhere (issue: D2 of the usability review).

``run`` emulates an app's NnApiDelegate (nnapi-reference allowed by default, the same flags as
benchmark_model to change it), ``benchmark`` emulates benchmark_model (TFLite's
``disallow_nnapi_cpu=true``); each prints the device set with the reason for every excluded
device, and ``--device NAME`` keeps only NAME. Expected placements follow the board rules: the
int8 model's operations lose to nnapi-reference on vsi-npu when the CPU is allowed (exec time
FLT_MAX for TENSOR_QUANT8_ASYMM_SIGNED), and go to vsi-npu when it is not.
"""
from __future__ import annotations

import pytest

from .cliutil import MODELS, nnsim

needs_models = pytest.mark.skipif(not MODELS.is_dir(), reason=f"no shared models at {MODELS}")
VWW = MODELS / "vww_96_int8.tflite"


def _where(stdout: str) -> dict:
    """``where the operations ran`` rows: device -> node count."""
    rows, on = {}, False
    for line in stdout.splitlines():
        if line.startswith("where the operations ran:"):
            on = True
            continue
        if on and line.startswith("  ") and "node(s):" in line:
            device, rest = line.split(None, 1)[0], line.split("node(s):")[0]
            rows[device] = int(rest.split()[-1])
        elif on:
            on = False
    return rows


@needs_models
def test_run_default_allows_the_cpu_and_says_so():
    r = nnsim("run", VWW)
    assert r.returncode == 0, r.stderr
    assert "devices: vsi-npu, nnapi-reference\n" in r.stdout
    assert "client: an app's NnApiDelegate" in r.stdout
    assert _where(r.stdout) == {"nnapi-reference": 31}


@needs_models
def test_run_disable_nnapi_cpu_is_tflites_default():
    r = nnsim("run", VWW, "--disable_nnapi_cpu")
    assert r.returncode == 0, r.stderr
    assert "devices: vsi-npu, nnapi-reference (excluded: disallow_nnapi_cpu)" in r.stdout
    assert _where(r.stdout) == {"vsi-npu": 31}
    r2 = nnsim("run", VWW, "--disable_nnapi_cpu=false")
    assert _where(r2.stdout) == {"nnapi-reference": 31}


@needs_models
def test_device_flag_means_what_it_says():
    r = nnsim("run", MODELS / "tf2_mobilenet_v2_1.0_224_ptq.tflite", "--device", "vsi-npu")
    assert r.returncode == 0, r.stderr
    assert "devices: vsi-npu, nnapi-reference (excluded: --device)" in r.stdout
    assert set(_where(r.stdout)) == {"vsi-npu"}


@needs_models
def test_benchmark_states_its_client_and_agrees_with_run():
    r = nnsim("benchmark", f"--graph={VWW}", "--use_nnapi=true", "--num_runs=1",
              "--warmup_runs=0", "--min_secs=0", "--enable_op_profiling=true")
    assert r.returncode == 0, r.stderr
    assert ("INFO: nnsim: client: benchmark_model; devices: vsi-npu, nnapi-reference "
            "(excluded: disallow_nnapi_cpu)") in r.stdout


@needs_models
def test_run_summary_reads_plainly():
    """D12: nnapi-reference is named as NNAPI's CPU implementation, a node split over two
    devices keeps the columns aligned, the delegate line says how its partition count relates
    to TFLite's, and --sysfs on a board without synap-npu says so instead of printing zeros."""
    r = nnsim("run", MODELS / "tf2_mobilenet_v2_1.0_224_ptq.tflite", "--sysfs")
    assert r.returncode == 0, r.stderr
    assert "(nnapi-reference is NNAPI's own CPU implementation, not an accelerator)" in r.stdout
    rows = [line for line in r.stdout.splitlines() if "node(s):" in line]
    assert len({line.index("node(s):") for line in rows}) == 1, rows   # one column
    assert any(line.split()[0] == "nnapi-reference+vsi-npu" for line in rows)
    assert "delegate partition(s)" in r.stdout and "also counts the runs of nodes" in r.stdout
    assert "this board has no synap-npu" in r.stdout and "inference_count" not in r.stdout
