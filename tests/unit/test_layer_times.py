"""benchmarks/layer_times.py: a prefix model (operators 0..k, operator k's output the model's
output) computes what the whole model computes at that tensor, LiteRT being the oracle (its
interpreter keeping every intermediate tensor of the whole model)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("layer_times",
                                               ROOT / "benchmarks" / "layer_times.py")
layer_times = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(layer_times)

litert = pytest.importorskip("ai_edge_litert.interpreter")


@pytest.mark.parametrize("k", [0, 3, 29])
def test_prefix_model_output_is_the_whole_models_tensor(shared_dir, k):
    from nnsim.tflite.reader import read_model
    path = shared_dir / "models" / "mobilenet_v1_0.25_224_1_default_1.tflite"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    model = read_model(path)
    x = np.random.default_rng(k).uniform(-1, 1, (1, 224, 224, 3)).astype(np.float32)
    whole = litert.Interpreter(model_path=str(path), experimental_preserve_all_tensors=True)
    whole.allocate_tensors()
    whole.set_tensor(whole.get_input_details()[0]["index"], x)
    whole.invoke()
    tensor = model.subgraphs[0].operators[k].outputs[0]
    want = whole.get_tensor(tensor)

    prefix = litert.Interpreter(model_content=layer_times.prefix_model(model, k))
    prefix.allocate_tensors()
    assert len(prefix.get_output_details()) == 1
    prefix.set_tensor(prefix.get_input_details()[0]["index"], x)
    prefix.invoke()
    got = prefix.get_tensor(prefix.get_output_details()[0]["index"])
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
