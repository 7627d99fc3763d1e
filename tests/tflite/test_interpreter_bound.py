"""Repeated invokes: after the first one the interpreter runs its steps bound to fixed tensor
buffers (``Interpreter._bind``); every later invoke must give what a fresh interpreter gives
for the same inputs, whatever the model (bound and pinned steps, views, graph outputs)."""
from __future__ import annotations

import time

import numpy as np
import pytest

from nnsim.tflite import Interpreter


def _inputs(interp, seed):
    rng = np.random.default_rng(seed)
    values = []
    for d in interp.get_input_details():
        dtype = np.dtype(d["dtype"])
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            values.append(rng.integers(info.min, int(info.max) + 1, d["shape"]).astype(dtype))
        else:
            values.append(rng.uniform(-1, 1, d["shape"]).astype(dtype))
    return values


def _run(interp, seed):
    for d, x in zip(interp.get_input_details(), _inputs(interp, seed)):
        interp.set_tensor(d["index"], x)
    interp.invoke()
    return [interp.get_tensor(d["index"]) for d in interp.get_output_details()]


def _fresh(model_path, seed):
    interp = Interpreter(model_path=str(model_path), num_threads=1)
    interp.allocate_tensors()
    return _run(interp, seed)


@pytest.mark.parametrize("threads", [1, 2])
def test_repeated_invokes_match_fresh_interpreters(model_path, threads):
    """Invoke 1 runs the nodes, 2 the bound steps from Python, 3 and 4 the compiled program
    (nnsim.kernels.program; with 2 threads the layers in parts on the thread team)."""
    interp = Interpreter(model_path=str(model_path), num_threads=threads)
    try:
        interp.allocate_tensors()
    except Exception as e:  # a model nnsim's CPU path does not run is tested elsewhere
        pytest.skip(f"not runnable on the CPU builtins: {e}")
    seeds = (1, 2, 1, 3)
    results = [_run(interp, seed) for seed in seeds]
    assert interp._bound, "the steps were not bound after the first invoke"
    assert len(interp.last_profile) == len(interp.plan_items())
    # a bound invoke's profile: one duration per step, together within the invoke's time
    start = time.perf_counter_ns()
    interp.invoke()
    wall = time.perf_counter_ns() - start
    times = [p.host_ns for p in interp.last_profile]
    assert len(times) == len(interp.plan_items()) and min(times) >= 0 and sum(times) <= wall
    for seed, got in zip(seeds, results):
        for a, b in zip(got, _fresh(model_path, seed)):
            assert a.dtype == b.dtype and a.shape == b.shape
            assert np.array_equal(a, b, equal_nan=True)


def test_new_input_buffer_rebinds(shared_models):
    path = shared_models / "mobilenet_v1_0.25_224_quant.tflite"
    interp = Interpreter(model_path=str(path), num_threads=1)
    interp.allocate_tensors()
    first = _run(interp, 5)
    d = interp.get_input_details()[0]
    interp._values[d["index"]] = interp._values[d["index"]].copy()   # a different buffer
    interp.set_tensor(d["index"], _inputs(interp, 6)[0])
    interp.invoke()
    assert np.array_equal(interp.get_tensor(interp.get_output_details()[0]["index"]),
                          _fresh(path, 6)[0])
    assert not np.array_equal(first[0], _fresh(path, 6)[0])
