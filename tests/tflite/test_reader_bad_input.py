"""Bad input: each case gives one ModelFileError naming the file, what and where."""
from __future__ import annotations

import dataclasses
import struct

import numpy as np
import pytest

from nnsim.errors import ModelFileError
from nnsim.tflite.options import Conv2DOptions
from nnsim.tflite.reader import OperatorCode, Quantization, check_static, read_model
from nnsim.tflite.schema import BuiltinOperator, Table, TensorType
from nnsim.tflite.sparsity import DENSE, SPARSE_CSR, DimensionMetadata, Sparsity, dense_value
from nnsim.tflite.writer import ModelWriter, write_model


def small_model(input_signature=None, input_shape=(1, 8, 8, 3)):
    """input -> CONV_2D(weights, bias) -> output; tensors 0..3 = input, weights, bias, output."""
    w = ModelWriter()
    x = w.add_tensor("input", input_shape, TensorType.FLOAT32, shape_signature=input_signature)
    k = w.add_tensor("conv1/weights", (4, 3, 3, 3), TensorType.FLOAT32,
                     data=np.ones((4, 3, 3, 3)))
    b = w.add_tensor("conv1/bias", (4,), TensorType.FLOAT32, data=np.zeros(4))
    y = w.add_tensor("output", (1, 8, 8, 4), TensorType.FLOAT32)
    w.add_operator(BuiltinOperator.CONV_2D, [x, k, b], [y], Conv2DOptions(stride_w=1, stride_h=1))
    w.set_inputs([x])
    w.set_outputs([y])
    return w.to_model()


def replace_tensor(model, index, **changes):
    sg = model.main
    tensors = list(sg.tensors)
    tensors[index] = dataclasses.replace(tensors[index], **changes)
    return dataclasses.replace(model, subgraphs=(dataclasses.replace(sg, tensors=tuple(tensors)),))


def replace_operator(model, index, **changes):
    sg = model.main
    ops = list(sg.operators)
    ops[index] = dataclasses.replace(ops[index], **changes)
    return dataclasses.replace(model, subgraphs=(dataclasses.replace(sg, operators=tuple(ops)),))


def read_error(data) -> ModelFileError:
    with pytest.raises(ModelFileError) as info:
        read_model(data)
    err = info.value
    # One error, not a chain: nothing from inside the reader is attached.
    assert err.__cause__ is None and (err.__context__ is None or err.__suppress_context__)
    return err


def root(blob: bytes) -> Table:
    return Table(blob, struct.unpack_from("<I", blob, 0)[0])


def patched(blob: bytes, pos: int, data: bytes) -> bytes:
    return blob[:pos] + data + blob[pos + len(data):]


def test_valid_small_model_reads():
    model = read_model(write_model(small_model()))
    assert model.main.tensors[1].data.shape == (4, 3, 3, 3)


@pytest.mark.parametrize("data, what", [
    (b"", "too short"),
    (b"TFL3", "too short"),
    (b"definitely not a flatbuffer, just some text" * 4, "file identifier"),
    (b"\x89PNG\r\n\x1a\n" + bytes(64), "file identifier"),
])
def test_not_a_model(data, what):
    assert what in read_error(data).what


def test_wrong_identifier():
    blob = write_model(small_model())
    err = read_error(patched(blob, 4, b"TFL2"))
    assert "TFL2" in err.what and err.where == "offset 0x4"


def test_truncated():
    blob = write_model(small_model())
    for size in (8, 64, len(blob) // 2, len(blob) - 200):
        read_error(blob[:size])


def test_root_offset_outside_file():
    blob = write_model(small_model())
    err = read_error(patched(blob, 0, struct.pack("<I", 0xFFFFFF00)))
    assert "root table" in err.what and err.where == "offset 0x0"


def test_wrong_schema_version():
    blob = write_model(small_model())
    pos = root(blob).field_position(0, 4)
    assert "schema version 7" in read_error(patched(blob, pos, struct.pack("<I", 7))).what


def test_vector_length_past_end_of_file():
    blob = write_model(small_model())
    sg = root(blob).tables(2)[0]
    start, _ = sg.vector(0, 4)  # the tensors vector; its length word precedes the elements
    err = read_error(patched(blob, start - 4, struct.pack("<I", 0x7FFFFFFF)))
    assert "past the end" in err.what and "subgraph 0" in err.where


def test_unknown_opcode():
    model = dataclasses.replace(small_model(), operator_codes=(OperatorCode(250),))
    err = read_error(write_model(model))
    assert "unknown builtin operator code 250" in err.what and err.where == "operator code 0"


def test_custom_without_custom_code():
    model = dataclasses.replace(small_model(),
                                operator_codes=(OperatorCode(BuiltinOperator.CUSTOM),))
    assert "custom_code" in read_error(write_model(model)).what


def test_opcode_index_out_of_range():
    err = read_error(write_model(replace_operator(small_model(), 0, opcode_index=3)))
    assert "opcode index 3" in err.what and err.where == "operator 0"


def test_buffer_index_out_of_range():
    err = read_error(write_model(replace_tensor(small_model(), 1, buffer=99)))
    assert "buffer index 99" in err.what and err.where == "tensor 1 'conv1/weights'"


def test_operator_tensor_index_out_of_range():
    err = read_error(write_model(replace_operator(small_model(), 0, inputs=(0, 1, 57))))
    assert "tensor index 57" in err.what and err.where == "operator 0 (CONV_2D)"


def test_subgraph_input_out_of_range():
    model = small_model()
    model = dataclasses.replace(model, subgraphs=(dataclasses.replace(model.main, inputs=(9,)),))
    err = read_error(write_model(model))
    assert "tensor index 9" in err.what and err.where == "subgraph 0"


def test_shape_does_not_match_buffer():
    err = read_error(write_model(replace_tensor(small_model(), 1, shape=(4, 3, 3, 2))))
    assert "needs 288 bytes but buffer 1 holds 432" in err.what
    assert err.where == "tensor 1 'conv1/weights'"


def test_unknown_tensor_type():
    err = read_error(write_model(replace_tensor(small_model(), 3, type=99)))
    assert "unknown tensor type 99" in err.what and err.where == "tensor 3 'output'"


def test_invalid_dimension():
    err = read_error(write_model(replace_tensor(small_model(), 3, shape=(1, -5, 8, 4))))
    assert "invalid dimension" in err.what


@pytest.mark.parametrize("quant, what", [
    (Quantization([0.1, 0.2], [0]), "2 scales but 1 zero points"),
    (Quantization([0.1, 0.2], [0, 0], quantized_dimension=7), "quantized_dimension 7"),
    (Quantization([0.1, 0.2], [0, 0], quantized_dimension=0), "2 per-channel scales"),
])
def test_bad_quantization(quant, what):
    err = read_error(write_model(replace_tensor(small_model(), 1, quantization=quant)))
    assert what in err.what and err.where == "tensor 1 'conv1/weights'"


def test_invalid_option_enum():
    model = replace_operator(small_model(), 0, options=Conv2DOptions(padding=7))
    err = read_error(write_model(model))
    assert "invalid padding value 7" in err.what and err.where.startswith("operator 0 (CONV_2D)")


def test_name_not_utf8():
    blob = write_model(small_model())
    pos = blob.index(b"conv1/bias")
    err = read_error(patched(blob, pos, b"\xff"))
    assert "UTF-8" in err.what and err.where.startswith("tensor 2,")


def test_file_errors_name_the_file(tmp_path):
    path = tmp_path / "model.tflite"
    path.write_bytes(write_model(replace_tensor(small_model(), 1, buffer=99)))
    err = read_error(path)
    assert err.path == str(path) and str(err).startswith(str(path))
    assert "cannot open" in read_error(tmp_path / "missing.tflite").what
    assert "cannot open" in read_error(tmp_path).what
    (tmp_path / "empty.tflite").write_bytes(b"")
    assert "empty" in read_error(tmp_path / "empty.tflite").what


def test_dynamic_shapes_read_then_refused_by_check_static():
    model = read_model(write_model(small_model(input_signature=(1, -1, -1, 3))))
    assert model.has_dynamic_shapes and model.main.tensors[0].dynamic_dims == (1, 2)
    with pytest.raises(ModelFileError) as info:
        check_static(model)
    assert info.value.where == "tensor 0 'input'" and "dimension 1" in info.value.what


def test_dynamic_batch_only_is_allowed_unless_strict():
    model = read_model(write_model(small_model(input_signature=(-1, 8, 8, 3))))
    check_static(model)
    with pytest.raises(ModelFileError, match="tensor 0 'input'"):
        check_static(model, allow_dynamic_batch=False)


def test_unknown_dim_in_shape_is_refused_by_check_static():
    model = read_model(write_model(small_model(input_shape=(-1, 8, 8, 3))))
    assert model.main.tensors[0].is_dynamic
    with pytest.raises(ModelFileError, match="dimension 0"):
        check_static(model)


def test_constant_with_unknown_dim():
    err = read_error(write_model(replace_tensor(small_model(), 2, shape=(-1,))))
    assert "unknown dimension" in err.what and err.where == "tensor 2 'conv1/bias'"


# -- sparse constants (SparsityParameters) --------------------------------------------------
def _csr(segments, indices, dtype=np.int32):
    return DimensionMetadata(SPARSE_CSR, 0, np.array(segments, dtype), np.array(indices, dtype))


ROWS = DimensionMetadata(DENSE, 3)
# [[1, 0, 2, 3], [0, 0, 0, 0], [4, 0, 0, 5]]: rows dense, columns compressed
CSR = Sparsity((0, 1), None, (ROWS, _csr([0, 3, 3, 5], [0, 2, 3, 0, 3])))
DENSE_VALUE = [[1, 0, 2, 3], [0, 0, 0, 0], [4, 0, 0, 5]]


def sparse_model(sparsity=CSR, values=(1, 2, 3, 4, 5)):
    """sparse constant -> DENSIFY -> dense; tensor 0 = 'sparse' (3, 4), tensor 1 = 'dense'."""
    w = ModelWriter()
    s = w.add_tensor("sparse", (3, 4), TensorType.FLOAT32, data=np.array(values, np.float32),
                     sparsity=sparsity)
    d = w.add_tensor("dense", (3, 4), TensorType.FLOAT32)
    w.add_operator(BuiltinOperator.DENSIFY, [s], [d])
    w.set_inputs([])
    w.set_outputs([d])
    return w.to_model()


@pytest.mark.parametrize("index_dtype", [np.int32, np.uint16, np.uint8])
def test_sparse_constant_reads(index_dtype):
    sparsity = Sparsity((0, 1), None, (ROWS, _csr([0, 3, 3, 5], [0, 2, 3, 0, 3], index_dtype)))
    t = read_model(write_model(sparse_model(sparsity))).main.tensors[0]
    assert t.is_constant and t.shape == (3, 4) and t.sparsity == sparsity
    assert t.sparsity.dim_metadata[1].array_indices.dtype == index_dtype
    np.testing.assert_array_equal(t.data, [1, 2, 3, 4, 5])   # the stored values only
    np.testing.assert_array_equal(dense_value(t), DENSE_VALUE)


def _levels(*dims):
    return Sparsity((0, 1), None, (ROWS,) + dims)


@pytest.mark.parametrize("sparsity, what", [
    (Sparsity(None, None, CSR.dim_metadata), "traversal_order and dim_metadata are required"),
    (Sparsity((0, 1), None, (ROWS,)), "1 dim_metadata for 2 traversal_order entries"),
    (Sparsity((0, 1, 2), None, CSR.dim_metadata + (ROWS,)), "does not fit shape (3, 4)"),
    (Sparsity((1, 1), None, CSR.dim_metadata), "must list the 2 dimensions"),
    (Sparsity((0, 1, 2), (5,), CSR.dim_metadata + (DimensionMetadata(DENSE, 1),)),
     "block_map [5]"),
    (Sparsity((0, 1, 2), (1,), (ROWS, _csr([0, 1, 1, 2], [0, 1]), DimensionMetadata(DENSE, 3))),
     "block 0 of dimension 1 (size 4)"),
    (Sparsity((0, 1), None, (DimensionMetadata(DENSE, 4), CSR.dim_metadata[1])),
     "level 0 is DENSE of size 4; its dimension 0 has 3"),
    (_levels(DimensionMetadata(7)), "level 1 has unknown format 7"),
    (_levels(DimensionMetadata(SPARSE_CSR, 0, np.array([0, 3, 3, 5], np.int32))),
     "has no array_indices"),
    (_levels(_csr([0, 3, 2, 5], [0, 2, 3, 0, 3])), "array_segments must rise"),
    (_levels(_csr([0, 3, 5], [0, 2, 3, 0, 3])), "array_segments must rise"),
    (_levels(_csr([0, 3, 3, 5], [0, 2, 4, 0, 3])), "array_indices outside dimension 1 of size 4"),
    (_levels(_csr([0, 3, 3, 4], [0, 2, 3, 0])), "describes 4 values but the buffer holds 5"),
])
def test_bad_sparsity(sparsity, what):
    err = read_error(write_model(replace_tensor(sparse_model(), 0, sparsity=sparsity)))
    assert what in err.what and err.where == "tensor 0 'sparse'"


def test_sparse_buffer_of_partial_values():
    model = sparse_model()
    buffers = list(model.buffers)
    buffers[1] = np.zeros(18, np.uint8)
    err = read_error(write_model(dataclasses.replace(model, buffers=tuple(buffers))))
    assert "18 bytes, not a whole number of FLOAT32 values" in err.what
    assert err.where == "tensor 0 'sparse'"


def test_sparse_string_tensor_is_refused():
    err = read_error(write_model(replace_tensor(sparse_model(), 0, type=TensorType.STRING)))
    assert "sparse STRING tensors are not supported" in err.what


def test_sparsity_of_a_tensor_without_data_is_ignored():
    """LiteRT's InterpreterBuilder parses the sparsity of constants only."""
    model = replace_tensor(sparse_model(), 1, sparsity=Sparsity((7,), None, ()))
    assert read_model(write_model(model)).main.tensors[1].sparsity is None


def test_sparsity_offset_into_garbage():
    """The sparse constant's sparsity slot (6) pointed at its name: one error naming it."""
    blob = bytearray(write_model(sparse_model()))
    tensor = root(bytes(blob)).tables(2)[0].tables(0)[0]
    vtable = tensor.pos - struct.unpack_from("<i", blob, tensor.pos)[0]
    name_entry = struct.unpack_from("<H", blob, vtable + 4 + 2 * 3)[0]
    struct.pack_into("<H", blob, vtable + 4 + 2 * 6, name_entry)
    err = read_error(bytes(blob))
    assert err.where.startswith("tensor 0 'sparse'")
