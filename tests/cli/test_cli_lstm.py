"""Keras-style LSTMs (built with nnsim's writer, as in tests/tflite/test_builtins_recurrent.py)
through `nnsim run` and `nnsim explain` on both boards: where the node goes and why (issue:
sequence models). Expected, from the delegate and driver rules: the float LSTM is delegated and
refused by both NPUs ("reject UNIDIRECTIONAL_SEQUENCE_LSTM", npu-drivers.md 2.4), so it runs on
nnapi-reference; the int8 integer LSTM passes the delegate's Validate (not hybrid) but NNAPI's
LSTM takes float operands only, so BuildGraph fails and TFLite keeps the node on its CPU."""
from __future__ import annotations

import numpy as np
import pytest

from tests.tflite.test_builtins_recurrent import lstm_model

from .cliutil import nnsim

NPU = {"imx8mp": "vsi-npu", "vs680": "synap-npu"}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    out = {}
    for integer in (True, False):
        blob, _ = lstm_model(np.random.default_rng(5), batch=1, time=8, n_input=12, n_cell=16,
                             integer=integer)
        path = tmp_path_factory.mktemp("lstm") / f"lstm_{'int8' if integer else 'f32'}.tflite"
        path.write_bytes(blob)
        out[integer] = path
    return out


@pytest.mark.parametrize("board", ["imx8mp", "vs680"])
def test_float_lstm_runs_on_nnapi_reference(models, board, tmp_path):
    env = {"NNSIM_STATE_DIR": str(tmp_path)}
    r = nnsim("run", models[False], "--board", board, env=env)
    assert r.returncode == 0, r.stderr
    assert "nnapi-reference" in r.stdout and "1 node(s): UNIDIRECTIONAL_SEQUENCE_LSTM x1" in r.stdout
    e = nnsim("explain", models[False], "--board", board, env=env)
    assert e.returncode == 0, e.stderr
    assert "ran on nnapi-reference" in e.stdout
    assert f"{NPU[board]}: not supported: reject UNIDIRECTIONAL_SEQUENCE_LSTM" in e.stdout


@pytest.mark.parametrize("board", ["imx8mp", "vs680"])
def test_int8_lstm_stays_on_the_tflite_cpu(models, board, tmp_path):
    env = {"NNSIM_STATE_DIR": str(tmp_path)}
    r = nnsim("run", models[True], "--board", board, env=env)
    assert r.returncode == 0, r.stderr
    assert "TFLite CPU" in r.stdout and "UNIDIRECTIONAL_SEQUENCE_LSTM" in r.stdout
    e = nnsim("explain", models[True], "--board", board, env=env)
    assert e.returncode == 0, e.stderr
    assert "ran on TFLite CPU" in e.stdout
    assert "delegate failed" in e.stdout and "TENSOR_QUANT8_ASYMM_SIGNED" in e.stdout
