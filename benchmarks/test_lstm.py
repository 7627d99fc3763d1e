"""Quantized LSTM latency: nnsim's integer LSTM builtin vs LiteRT, same model, same run.

The model is a post-training-quantized Keras-style LSTM layer (int8 activations, int16 cell,
the five intermediate tensors), as a keyword-spotting front end uses it: 49 frames of 40
features into 128 units (and a smaller 16-unit layer), written with nnsim's ModelWriter. nnsim
runs its CPU builtin, LiteRT its default resolver; both single thread. Run:
``pytest benchmarks/test_lstm.py --benchmark-columns=median,mean,rounds``.
"""
from __future__ import annotations

import numpy as np
import pytest

from benchmarks._results import record

pytest.importorskip("ai_edge_litert.interpreter")

SHAPES = {"lstm_int8_t49_i40_u128": (1, 49, 40, 128), "lstm_int8_t20_i16_u16": (1, 20, 16, 16)}


def _model(name):
    from tests.tflite.test_builtins_recurrent import lstm_model
    batch, time, n_input, n_cell = SHAPES[name]
    blob, shape = lstm_model(np.random.default_rng(0), batch=batch, time=time, n_input=n_input,
                             n_cell=n_cell, integer=True)
    return blob, shape


def _bench(interp, shape, benchmark, name, engine):
    interp.allocate_tensors()
    x = np.random.default_rng(1).integers(-128, 128, shape).astype(np.int8)
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()     # warm up (numba compile, activation tables) outside the measurement
    benchmark.group = name
    benchmark.pedantic(interp.invoke, rounds=50, iterations=1, warmup_rounds=3)
    record(name, engine, benchmark)


@pytest.mark.parametrize("name", list(SHAPES))
def test_nnsim(name, benchmark):
    from nnsim.tflite import Interpreter
    blob, shape = _model(name)
    _bench(Interpreter(model_content=blob, num_threads=1), shape, benchmark, name, "nnsim")


@pytest.mark.parametrize("name", list(SHAPES))
def test_litert(name, benchmark):
    from ai_edge_litert.interpreter import Interpreter
    blob, shape = _model(name)
    _bench(Interpreter(model_content=blob, num_threads=1), shape, benchmark, name, "litert")
