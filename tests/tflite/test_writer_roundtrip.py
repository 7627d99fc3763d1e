"""read(write(read(x))) == read(x) for every shared model, and LiteRT agrees with itself."""
from __future__ import annotations

import numpy as np

from nnsim.tflite.reader import read_model
from nnsim.tflite.writer import BUFFER_ALIGNMENT, write_model


def test_round_trip_is_structurally_equal(model_path, same_model):
    model = read_model(model_path)
    blob = write_model(model)
    again = read_model(blob)
    same_model(model, again)
    base = np.frombuffer(blob, np.uint8).ctypes.data
    for t in again.main.tensors:
        if t.data is not None:
            assert (t.data.ctypes.data - base) % BUFFER_ALIGNMENT == 0
    assert write_model(again) == blob  # writing is deterministic


def test_litert_runs_the_rewritten_model_identically(model_path):
    from ai_edge_litert.interpreter import Interpreter

    original = Interpreter(model_path=str(model_path))
    rewritten = Interpreter(model_content=write_model(read_model(model_path)))
    outputs = []
    for interp in (original, rewritten):
        interp.allocate_tensors()
        rng = np.random.default_rng(7)
        for d in interp.get_input_details():
            if np.issubdtype(d["dtype"], np.integer):
                info = np.iinfo(d["dtype"])
                value = rng.integers(info.min, info.max, d["shape"], endpoint=True)
            else:
                value = rng.standard_normal(d["shape"])
            interp.set_tensor(d["index"], value.astype(d["dtype"]))
        interp.invoke()
        outputs.append([interp.get_tensor(d["index"]) for d in interp.get_output_details()])
    for a, b in zip(*outputs):
        np.testing.assert_array_equal(a, b)
