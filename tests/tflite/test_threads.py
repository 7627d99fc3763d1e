"""``Interpreter(num_threads=n)`` on the shared models: every tensor bit-identical for 1, 2 and
3 threads (CONV_2D and DEPTHWISE_CONV_2D split over output rows or channel blocks; each output
element is computed by the same instructions whatever the split).

Oracle: the single-thread interpreter on the same input (itself bit-exact with LiteRT's
reference kernels, tests/tflite/test_models_litert.py). The threaded interpreters must also
really have split layers (a plan with parts), so the test cannot pass on serial code only.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nnsim.tflite import Interpreter

MODELS_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "models"
MODELS = ["mobilenet_v1_1.0_224_quant_reconstructed", "tf2_mobilenet_v2_1.0_224_ptq",
          "mobilenet_v1_0.25_224_1_default_1", "deeplabv3_mnv2_pascal_quant"]


def _inputs(interp, seed=0):
    rng = np.random.default_rng(seed)
    for d in interp.get_input_details():
        dt = np.dtype(d["dtype"])
        if dt.kind in "iu":
            info = np.iinfo(dt)
            x = rng.integers(info.min, info.max + 1, size=d["shape"]).astype(dt)
        else:
            x = rng.uniform(-1.0, 1.0, size=d["shape"]).astype(dt)
        interp.set_tensor(d["index"], x)


def _split_layers(interp, n):
    """How many CPU nodes ran their kernel plan split for ``n`` threads."""
    return sum(1 for b in interp._builtins.values()
               if getattr(getattr(b, "plan", None), "_split", {}).get(n) is not None)


@pytest.mark.parametrize("name", MODELS)
def test_threads_bit_identical(name):
    path = MODELS_DIR / f"{name}.tflite"
    if not path.is_file():
        pytest.skip(f"shared model not found: {path}")
    results = {}
    for n in (1, 2, 3):
        interp = Interpreter(model_path=str(path), num_threads=n)
        interp.allocate_tensors()
        _inputs(interp)
        interp.invoke()
        interp.invoke()   # the second invoke runs the bound plan
        if n > 1:
            assert _split_layers(interp, n) > 0
        results[n] = {t["index"]: interp.get_tensor(t["index"])
                      for t in interp.get_tensor_details()}
    for n in (2, 3):
        for index, value in results[1].items():
            np.testing.assert_array_equal(results[n][index], value, err_msg=f"tensor {index}")


def test_num_threads_argument_checked():
    path = MODELS_DIR / f"{MODELS[2]}.tflite"
    if not path.is_file():
        pytest.skip(f"shared model not found: {path}")
    for bad, message in ((0, "num_threads should >= 1"), (2.0, "should be int")):
        with pytest.raises(ValueError, match=message):
            Interpreter(model_path=str(path), num_threads=bad)
