"""Every shared model runs in ``nnsim.tflite.Interpreter`` and agrees with LiteRT.

Oracle: ``ai_edge_litert`` with ``OpResolverType.BUILTIN_REF`` (TFLite's reference kernels) on
seeded random inputs. Quantized outputs must be identical, float outputs within 1e-4 relative.

Two runs per model:

* ``cpu``: no delegate, every node on nnsim's CPU builtins;
* ``nnapi``: ``load_delegate("nnapi", {"disallow_nnapi_cpu": False})`` as the brief's scripts
  write it (with nnapi-reference as the only device TFLite delegates nothing: DoPrepare needs
  more than one device when no accelerator is named).

The NNAPI path proper (``accelerator_name="nnapi-reference"``), which computes as AOSP's
CpuExecutor and so differs from TFLite's kernels on some models, is checked model by model,
with every difference pinned and explained, in tests/numerics/test_nnapi_path_numerics.py.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
MODELS_DIR = SHARED / "models"
MODEL_FILES = sorted(MODELS_DIR.glob("*.tflite")) if MODELS_DIR.is_dir() else []

litert = pytest.importorskip("ai_edge_litert.interpreter")

# Models that take more than ~20 s each (cold numba cache included) run with ``-m slow``.
# None does today: the whole file takes ~25 s warm, ~55 s with an empty numba cache.
SLOW: set = set()

RUNS = {
    "cpu": None,
    "nnapi": {"disallow_nnapi_cpu": False},
}


def _params():
    if not MODEL_FILES:
        return [pytest.param(None, None, marks=pytest.mark.skip(
            reason=f"shared models not found at {MODELS_DIR}"))]
    out = []
    for path in MODEL_FILES:
        for run in RUNS:
            marks = [pytest.mark.slow] if path.stem in SLOW else []
            out.append(pytest.param(path, run, marks=marks, id=f"{path.stem}-{run}"))
    return out


def seeded_inputs(details, seed=0):
    rng = np.random.default_rng(seed)
    values = []
    for d in details:
        dtype = np.dtype(d["dtype"])
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            values.append(rng.integers(info.min, info.max + 1, size=d["shape"]).astype(dtype))
        else:
            values.append(rng.uniform(-1.0, 1.0, size=d["shape"]).astype(dtype))
    return values


def run_interpreter(ip, values):
    ip.allocate_tensors()
    for d, v in zip(ip.get_input_details(), values):
        ip.set_tensor(d["index"], v)
    ip.invoke()
    return [ip.get_tensor(d["index"]) for d in ip.get_output_details()]


def litert_outputs(path, values):
    ip = litert.Interpreter(model_path=str(path), num_threads=1,
                            experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    return run_interpreter(ip, values)


def assert_matches(ours, ref, names):
    for a, b, name in zip(ours, ref, names):
        assert a.shape == b.shape and a.dtype == b.dtype, (name, a.shape, b.shape)
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, err_msg=name)
        else:
            assert np.array_equal(a, b), (name, int(np.count_nonzero(a != b)), a.size)


@pytest.mark.parametrize("path,run", _params())
def test_model_matches_litert(path, run):
    from nnsim.tflite import Interpreter, load_delegate

    options = RUNS[run]
    delegates = [load_delegate("nnapi", options)] if options is not None else None
    ours = Interpreter(model_path=str(path), experimental_delegates=delegates)
    ours.allocate_tensors()
    values = seeded_inputs(ours.get_input_details())
    got = run_interpreter(ours, values)
    want = litert_outputs(path, values)
    names = [d["name"] for d in ours.get_output_details()]
    if "TFLite_Detection_PostProcess" in names[0]:
        _assert_detections(got, want)
    else:
        assert_matches(got, want, names)


def _assert_detections(got, want):
    """Boxes, classes, scores, count: equal on the first ``count`` rows (the rest is unset)."""
    count = int(want[3][0])
    assert int(got[3][0]) == count and count > 0
    for a, b in zip(got[:3], want[:3]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a[:, :count], b[:, :count], rtol=1e-6, atol=1e-7)


def test_grace_hopper_is_recognised_like_litert():
    """A real photo: the classifier says "military uniform", the SSD finds a person and a tie,
    with outputs identical to LiteRT's."""
    from nnsim.images import load_input
    from nnsim.tflite import Interpreter

    photo = MODELS_DIR / "grace_hopper.bmp"
    classifier = MODELS_DIR / "mobilenet_v1_1.0_224_quant_reconstructed.tflite"
    ssd = MODELS_DIR / "coco_ssd_mobilenet_v1_1.0_quant_2018_06_29_no_metadata.tflite"
    if not (photo.is_file() and classifier.is_file() and ssd.is_file()):
        pytest.skip(f"shared models not found at {MODELS_DIR}")
    imagenet = (MODELS_DIR / "imagenet_labels.txt").read_text().splitlines()
    coco = (MODELS_DIR / "coco_labels.txt").read_text().splitlines()
    results = {}
    for path in (classifier, ssd):
        ours = Interpreter(model_path=str(path))
        ours.allocate_tensors()
        values = [load_input(str(photo), ours.get_input_details()[0])]
        got, want = run_interpreter(ours, values), litert_outputs(path, values)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
        results[path] = got
    assert imagenet[int(np.argmax(results[classifier][0]))] == "military uniform"
    boxes, classes, scores, count = results[ssd]
    found = {coco[int(c)] for c, s in zip(classes[0][:int(count[0])], scores[0]) if s > 0.4}
    assert {"person", "tie"} <= found
