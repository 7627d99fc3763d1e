"""The model zoo: every shared model runs on nnsim's TFLite CPU path and through the NNAPI
delegate on both boards, with no UnsupportedOperatorError.

With TFLite's default delegate options (``disallow_nnapi_cpu`` true, no accelerator named) each
board's NPU takes what it supports and every other node falls back to nnsim's TFLite CPU
builtins, exactly the path where a missing CPU kernel used to stop a model. The outputs are
checked against nnsim's own CPU-only run: identical wherever every node ran on the CPU path or
the NPU computes as the CPU executor does, within the NNAPI path's documented deviations
(``test_models_litert.NNAPI_DEVIATIONS``) otherwise. LiteRT BUILTIN_REF checks the CPU path
itself in test_models_litert.py.
"""
from __future__ import annotations

import numpy as np
import pytest

from nnsim.drivers.boards import apply_board
from nnsim.tflite import Interpreter, load_delegate
from tests.tflite.test_models_litert import NNAPI_DEVIATIONS


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
