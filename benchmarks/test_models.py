"""Whole-model latency: nnsim's CPU execution vs LiteRT on the same model in the same run.

nnsim runs the TFLite nodes on its own kernels (no delegate, single thread); LiteRT runs its
default resolver with ``num_threads=1``. Run:
``pytest benchmarks/test_models.py --benchmark-columns=median,mean,rounds`` and read the
ratio summary at the end. Numbers are recorded in benchmarks/README.md.
"""
from __future__ import annotations

import numpy as np
import pytest

from benchmarks._results import MODELS, record

TARGET_MODELS = ["mobilenet_v1_1.0_224_quant_reconstructed.tflite",
                 "tf2_mobilenet_v2_1.0_224_ptq.tflite",
                 "mobilenet_v1_0.25_224_1_default_1.tflite"]

pytestmark = pytest.mark.skipif(not MODELS.is_dir(), reason=f"no shared models at {MODELS}")


def _inputs(details, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for d in details:
        dtype, shape = np.dtype(d["dtype"]), tuple(int(x) for x in d["shape"])
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            out.append(rng.integers(info.min, int(info.max) + 1, shape, dtype=dtype))
        else:
            out.append(rng.uniform(-1, 1, shape).astype(dtype))
    return out


def _bench(interp, benchmark, model, engine):
    interp.allocate_tensors()
    details = interp.get_input_details()
    for d, x in zip(details, _inputs(details)):
        interp.set_tensor(d["index"], x)
    interp.invoke()  # warm up (numba compile / caches) outside the measurement
    benchmark.group = model
    benchmark.pedantic(interp.invoke, rounds=20, iterations=1, warmup_rounds=2)
    record(model, engine, benchmark)


@pytest.mark.parametrize("model", TARGET_MODELS)
def test_nnsim(model, benchmark):
    from nnsim.tflite import Interpreter
    _bench(Interpreter(model_path=str(MODELS / model), num_threads=1), benchmark, model, "nnsim")


@pytest.mark.parametrize("model", TARGET_MODELS)
def test_litert(model, benchmark):
    from ai_edge_litert.interpreter import Interpreter
    _bench(Interpreter(model_path=str(MODELS / model), num_threads=1), benchmark, model,
           "litert")
