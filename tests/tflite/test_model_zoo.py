"""The model zoo: every shared model runs on nnsim's TFLite CPU path and through the NNAPI
delegate on both boards, with no UnsupportedOperatorError.

With TFLite's default delegate options (``disallow_nnapi_cpu`` true, no accelerator named) each
board's NPU takes what it supports and every other node falls back to nnsim's TFLite CPU
builtins, exactly the path where a missing CPU kernel used to stop a model. The outputs are
checked against nnsim's own CPU-only run: identical wherever every node ran on the CPU path or
the NPU computes as the CPU executor does, within the bounds of ``NNAPI_DEVIATIONS`` otherwise:
the models where AOSP's CpuExecutor, which the simulated NPUs share, computes differently from
TFLite's kernels (docs/numerics.md; the exact differences on the full NNAPI path are pinned in
tests/numerics/test_nnapi_path_numerics.py). LiteRT BUILTIN_REF checks the CPU path itself in
test_models_litert.py.
"""
from __future__ import annotations

import numpy as np
import pytest

from nnsim.runtime.board import apply_board
from nnsim.tflite import Interpreter, load_delegate

# Board run vs nnsim's CPU path: (kind, bound, cause). kind "lsb": integer outputs within
# ``bound``; "fraction": at least ``bound`` of the elements equal; "rtol": float tolerance.
# The bounds are the largest differences measured on both boards with this file's inputs.
NNAPI_DEVIATIONS = {
    "ad01_int8": ("lsb", 1, "AOSP FULLY_CONNECTED rounds twice (gemmlowp), LiteRT once"),
    "mobilenet_v2_quantized_1x3x224x224": (
        "lsb", 11, "AOSP's float32 CONV_2D multipliers flip a few outputs by 1, and its MEAN "
                   "truncates; the changes grow through the network"),
    "tf2_mobilenet_v2_1.0_224_ptq": (
        "lsb", 9, "AOSP's float32 CONV_2D multipliers; the delegate's MEAN + ADD lowering with "
                  "AOSP's truncating MEAN; SOFTMAX amplifies the pooled differences"),
    "deeplabv3_mnv2_pascal_quant": (
        "fraction", 0.98, "QUANTIZE of a quantized input lowered to DEQUANTIZE + QUANTIZE, "
                          "rounded once in float; ARG_MAX flips where classes nearly tie"),
    "kws_ref_model_float32": (
        "rtol", 0.1, "hybrid CONV_2D: the delegate dequantizes the weights and NNAPI computes "
                     "in float, LiteRT's hybrid kernel quantizes the activations to int8"),
}


def _inputs(ip, seed=0):
    rng = np.random.default_rng(seed)
    values = []
    for d in ip.get_input_details():
        dt = np.dtype(d["dtype"])
        if dt.kind == "f":
            values.append(rng.uniform(-1, 1, d["shape"]).astype(dt))
        else:
            info = np.iinfo(dt)
            values.append(rng.integers(max(info.min, -128), min(info.max, 255) + 1,
                                       d["shape"]).astype(dt))
    return values


def _run(path, delegates):
    ip = Interpreter(model_path=str(path), experimental_delegates=delegates)
    ip.allocate_tensors()
    for d, v in zip(ip.get_input_details(), _inputs(ip)):
        ip.set_tensor(d["index"], v)
    ip.invoke()
    return ip, [ip.get_tensor(d["index"]) for d in ip.get_output_details()]


def _close(name, got, want):
    kind, bound, _ = NNAPI_DEVIATIONS.get(name, ("lsb", 0, ""))
    for a, b in zip(got, want):
        assert a.shape == b.shape and a.dtype == b.dtype
        if kind == "fraction":
            assert np.mean(a == b) >= bound
        elif a.dtype.kind == "f":
            rtol = bound if kind == "rtol" else 1e-4
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(1.0, np.abs(b).max()))
        else:
            assert int(np.abs(a.astype(np.int64) - b.astype(np.int64)).max(initial=0)) <= bound


@pytest.mark.parametrize("board", ["imx8mp", "vs680"])
def test_model_runs_on_cpu_path_and_both_boards(model_path, board, tmp_path, monkeypatch):
    monkeypatch.setenv("NNSIM_STATE_DIR", str(tmp_path))   # the SyNAP cache of this test only
    _, want = _run(model_path, [])
    apply_board(board)
    ip, got = _run(model_path, [load_delegate("nnapi")])
    placement = ip.node_placement()
    assert len(placement) == len(ip._sg.operators)
    _close(model_path.stem, got, want)
