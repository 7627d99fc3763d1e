"""Write .tflite flatbuffers: ``write_model(TfliteModel) -> bytes`` and the ``ModelWriter``
builder for tests and demo models.

The output is what LiteRT expects: file identifier "TFL3", schema version 3, buffer 0 the
empty sentinel, buffer data aligned to 16 bytes (as TFLite's ``force_align: 16``), operator
codes in both ``builtin_code`` and ``deprecated_builtin_code`` (127 placeholder above 127).
The model tables use the ``tflite`` package's generated builder functions; options tables are
written from the same field description the reader parses them with (``options.field_specs``).

``write_model`` writes ``model.buffers`` as given; ``Tensor.data`` is not consulted (it is a
view of a buffer). To change a constant, build the model with ``ModelWriter``.
``Tensor.sparsity`` is written as SparsityParameters, each index vector as the union member of
its element type (Int32Vector, Uint16Vector, Uint8Vector). Inputs the writer cannot encode
(a ``RawOptions`` with fields, a model over 2 GB) raise ValueError.

Round trip: ``read_model(write_model(m))`` equals ``m`` field by field, apart from what the
reader ignores (see ``nnsim.tflite.reader``).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import flatbuffers
import numpy as np
import tflite as fb
from flatbuffers import number_types as N

from nnsim.tflite.options import RawOptions, field_specs
from nnsim.tflite.reader import (
    Operator,
    OperatorCode,
    Quantization,
    SignatureDef,
    Subgraph,
    Tensor,
    TfliteModel,
    typed_view,
)
from nnsim.tflite.schema import (
    FILE_IDENTIFIER,
    NUMPY_DTYPES,
    PLACEHOLDER_FOR_GREATER_OP_CODES,
    SCHEMA_VERSION,
    BuiltinOperator,
    MalformedError,
    TensorType,
)
from nnsim.tflite.sparsity import INDEX_VECTOR_TYPES, Sparsity, sparse_values

BUFFER_ALIGNMENT = 16
_MAX_FLATBUFFER = 2**31 - 1

_FLAGS = {"b": N.Int8Flags, "B": N.Uint8Flags, "h": N.Int16Flags, "H": N.Uint16Flags,
          "i": N.Int32Flags, "I": N.Uint32Flags, "q": N.Int64Flags, "Q": N.Uint64Flags,
          "f": N.Float32Flags, "d": N.Float64Flags, "?": N.BoolFlags}
# flatbuffers' enforce_number wants the exact Python type (bool, float, int).
_COERCE = {"f": float, "d": float, "?": bool}


def write_model(model: TfliteModel) -> bytes:
    """Serialize ``model`` (TfliteModel dataclasses) to .tflite bytes."""
    total = sum(int(b.size) for b in model.buffers) + sum(len(v) for v in model.metadata.values())
    if total > _MAX_FLATBUFFER:
        raise ValueError(f"model data is {total} bytes; flatbuffers stop at 2 GB")
    b = flatbuffers.Builder(total + 65536)
    buffers = [_byte_view(x) for x in model.buffers]
    if not buffers or buffers[0].size:
        raise ValueError("buffer 0 must exist and be empty (TFLite's sentinel)")
    metadata_refs = []
    for name, data in model.metadata.items():
        index = model.metadata_buffers.get(name)
        if index is None or index >= len(buffers) or buffers[index].tobytes() != data:
            index = len(buffers)
            buffers.append(np.frombuffer(data, dtype=np.uint8))
        metadata_refs.append((name, index))

    buffer_offs = [_buffer(b, x) for x in buffers]
    code_offs = [_operator_code(b, c) for c in model.operator_codes]
    subgraph_offs = [_subgraph(b, sg) for sg in model.subgraphs]
    signature_offs = [_signature(b, s) for s in model.signatures]
    metadata_offs = []
    for name, index in metadata_refs:
        name_off = b.CreateString(name)
        fb.MetadataStart(b)
        fb.MetadataAddName(b, name_off)
        fb.MetadataAddBuffer(b, index)
        metadata_offs.append(fb.MetadataEnd(b))
    description = b.CreateString(model.description) if model.description else None

    codes_vec = _offsets(b, code_offs)
    subgraphs_vec = _offsets(b, subgraph_offs)
    buffers_vec = _offsets(b, buffer_offs)
    metadata_vec = _offsets(b, metadata_offs) if metadata_offs else None
    signatures_vec = _offsets(b, signature_offs) if signature_offs else None
    fb.ModelStart(b)
    fb.ModelAddVersion(b, SCHEMA_VERSION)
    fb.ModelAddOperatorCodes(b, codes_vec)
    fb.ModelAddSubgraphs(b, subgraphs_vec)
    if description is not None:
        fb.ModelAddDescription(b, description)
    fb.ModelAddBuffers(b, buffers_vec)
    if metadata_vec is not None:
        fb.ModelAddMetadata(b, metadata_vec)
    if signatures_vec is not None:
        fb.ModelAddSignatureDefs(b, signatures_vec)
    b.Finish(fb.ModelEnd(b), file_identifier=FILE_IDENTIFIER)
    return bytes(b.Output())


def _byte_view(data) -> np.ndarray:
    """The bytes of ``data`` (bytes-like or any ndarray) as a flat uint8 array, no casting."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return np.frombuffer(data, np.uint8)
    return np.ascontiguousarray(data).reshape(-1).view(np.uint8)


def _offsets(b: flatbuffers.Builder, offsets: Sequence[int]) -> int:
    b.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def _ints(b: flatbuffers.Builder, values: Iterable[int], dtype=np.int32) -> int:
    return b.CreateNumpyVector(np.asarray(tuple(values), dtype=dtype).reshape(-1))


def _aligned_bytes(b: flatbuffers.Builder, data: np.ndarray) -> int:
    # CreateByteVector aligns to 4 only; TFLite kernels and our zero-copy views prefer 16.
    n = int(data.size)
    b.StartVector(1, n, BUFFER_ALIGNMENT)
    b.head -= n
    b.Bytes[b.head:b.head + n] = data.tobytes()
    return b.EndVector()


def _buffer(b: flatbuffers.Builder, data: np.ndarray) -> int:
    vec = _aligned_bytes(b, data) if data.size else None
    fb.BufferStart(b)
    if vec is not None:
        fb.BufferAddData(b, vec)
    return fb.BufferEnd(b)


def _operator_code(b: flatbuffers.Builder, code: OperatorCode) -> int:
    custom = b.CreateString(code.custom_code) if code.custom_code is not None else None
    fb.OperatorCodeStart(b)
    fb.OperatorCodeAddDeprecatedBuiltinCode(
        b, min(int(code.builtin), PLACEHOLDER_FOR_GREATER_OP_CODES))
    if custom is not None:
        fb.OperatorCodeAddCustomCode(b, custom)
    fb.OperatorCodeAddVersion(b, int(code.version))
    fb.OperatorCodeAddBuiltinCode(b, int(code.builtin))
    return fb.OperatorCodeEnd(b)


def _quantization(b: flatbuffers.Builder, q: Quantization) -> int:
    scale = b.CreateNumpyVector(np.asarray(q.scales, dtype=np.float32))
    zero_point = b.CreateNumpyVector(np.asarray(q.zero_points, dtype=np.int64))
    qmin = b.CreateNumpyVector(np.asarray(q.min, np.float32)) if q.min is not None else None
    qmax = b.CreateNumpyVector(np.asarray(q.max, np.float32)) if q.max is not None else None
    fb.QuantizationParametersStart(b)
    if qmin is not None:
        fb.QuantizationParametersAddMin(b, qmin)
    if qmax is not None:
        fb.QuantizationParametersAddMax(b, qmax)
    fb.QuantizationParametersAddScale(b, scale)
    fb.QuantizationParametersAddZeroPoint(b, zero_point)
    fb.QuantizationParametersAddQuantizedDimension(b, int(q.quantized_dimension))
    return fb.QuantizationParametersEnd(b)


# SparseIndexVector member tables by union tag: (Start, AddValues, End).
_INDEX_VECTOR_BUILDERS = {
    1: (fb.Int32VectorStart, fb.Int32VectorAddValues, fb.Int32VectorEnd),
    2: (fb.Uint16VectorStart, fb.Uint16VectorAddValues, fb.Uint16VectorEnd),
    3: (fb.Uint8VectorStart, fb.Uint8VectorAddValues, fb.Uint8VectorEnd),
}
_INDEX_TAGS = {dtype: tag for tag, dtype in INDEX_VECTOR_TYPES.items()}


def _index_vector(b: flatbuffers.Builder, values: np.ndarray) -> tuple[int, int]:
    """A SparseIndexVector member table of the array's own element type: (tag, offset)."""
    tag = _INDEX_TAGS[values.dtype]
    data = np.ascontiguousarray(values)
    b.StartVector(values.dtype.itemsize, data.size, 4)   # schema: force_align 4
    b.head -= data.nbytes
    b.Bytes[b.head:b.head + data.nbytes] = data.tobytes()
    vec = b.EndVector()
    start, add_values, end = _INDEX_VECTOR_BUILDERS[tag]
    start(b)
    add_values(b, vec)
    return tag, end(b)


def _sparsity(b: flatbuffers.Builder, sp: Sparsity) -> int:
    metas = []
    for m in sp.dim_metadata:
        segments = indices = None
        if m.array_segments is not None:
            segments = _index_vector(b, m.array_segments)
        if m.array_indices is not None:
            indices = _index_vector(b, m.array_indices)
        fb.DimensionMetadataStart(b)
        fb.DimensionMetadataAddFormat(b, int(m.format))
        fb.DimensionMetadataAddDenseSize(b, int(m.dense_size))
        if segments is not None:
            fb.DimensionMetadataAddArraySegmentsType(b, segments[0])
            fb.DimensionMetadataAddArraySegments(b, segments[1])
        if indices is not None:
            fb.DimensionMetadataAddArrayIndicesType(b, indices[0])
            fb.DimensionMetadataAddArrayIndices(b, indices[1])
        metas.append(fb.DimensionMetadataEnd(b))
    # Written as given (None fields omitted), so tests can build the tables the reader refuses.
    order = _ints(b, sp.traversal_order) if sp.traversal_order is not None else None
    block_map = _ints(b, sp.block_map) if sp.block_map is not None else None
    dims = _offsets(b, metas)
    fb.SparsityParametersStart(b)
    if order is not None:
        fb.SparsityParametersAddTraversalOrder(b, order)
    if block_map is not None:
        fb.SparsityParametersAddBlockMap(b, block_map)
    fb.SparsityParametersAddDimMetadata(b, dims)
    return fb.SparsityParametersEnd(b)


def _tensor(b: flatbuffers.Builder, t: Tensor) -> int:
    shape = _ints(b, t.shape)
    signature = _ints(b, t.shape_signature) if t.shape_signature is not None else None
    name = b.CreateString(t.name) if t.name else None
    quant = _quantization(b, t.quantization) if t.quantization is not None else None
    sparsity = _sparsity(b, t.sparsity) if t.sparsity is not None else None
    fb.TensorStart(b)
    fb.TensorAddShape(b, shape)
    fb.TensorAddType(b, int(t.type))
    fb.TensorAddBuffer(b, int(t.buffer))
    if name is not None:
        fb.TensorAddName(b, name)
    if quant is not None:
        fb.TensorAddQuantization(b, quant)
    fb.TensorAddIsVariable(b, bool(t.is_variable))
    if sparsity is not None:
        fb.TensorAddSparsity(b, sparsity)
    if signature is not None:
        fb.TensorAddShapeSignature(b, signature)
    return fb.TensorEnd(b)


def _options(b: flatbuffers.Builder, opts) -> tuple[int, int]:
    """Write an options table; returns (union tag, table offset)."""
    if isinstance(opts, RawOptions):
        if opts.has_fields:
            raise ValueError(f"cannot write {opts.type_name}: nnsim does not describe its fields")
        b.StartObject(0)
        return opts.type_code, b.EndObject()
    specs = field_specs(type(opts))
    vectors = {}
    for spec in specs:
        value = getattr(opts, spec.name)
        if spec.kind.endswith("[]") and value is not None:
            dtype = np.int32 if spec.kind == "i[]" else np.float32
            vectors[spec.name] = _ints(b, value, dtype)
    b.StartObject(max((s.slot for s in specs), default=-1) + 1)
    for spec in specs:
        value = getattr(opts, spec.name)
        if spec.name in vectors:
            b.PrependUOffsetTRelativeSlot(spec.slot, vectors[spec.name], 0)
        elif not spec.kind.endswith("[]"):
            coerce = _COERCE.get(spec.kind, int)
            b.PrependSlot(_FLAGS[spec.kind], spec.slot, coerce(value), coerce(spec.default))
    return int(type(opts).options_type), b.EndObject()


def _operator(b: flatbuffers.Builder, op: Operator) -> int:
    inputs, outputs = _ints(b, op.inputs), _ints(b, op.outputs)
    intermediates = _ints(b, op.intermediates) if op.intermediates else None
    options = _options(b, op.options) if op.options is not None else None
    custom = b.CreateByteVector(bytes(op.custom_options)) if op.custom_options is not None \
        else None
    fb.OperatorStart(b)
    fb.OperatorAddOpcodeIndex(b, int(op.opcode_index))
    fb.OperatorAddInputs(b, inputs)
    fb.OperatorAddOutputs(b, outputs)
    if options is not None:
        fb.OperatorAddBuiltinOptionsType(b, options[0])
        fb.OperatorAddBuiltinOptions(b, options[1])
    if custom is not None:
        fb.OperatorAddCustomOptions(b, custom)
    if intermediates is not None:
        fb.OperatorAddIntermediates(b, intermediates)
    return fb.OperatorEnd(b)


def _subgraph(b: flatbuffers.Builder, sg: Subgraph) -> int:
    tensors = _offsets(b, [_tensor(b, t) for t in sg.tensors])
    operators = _offsets(b, [_operator(b, op) for op in sg.operators])
    inputs, outputs = _ints(b, sg.inputs), _ints(b, sg.outputs)
    name = b.CreateString(sg.name) if sg.name else None
    fb.SubGraphStart(b)
    fb.SubGraphAddTensors(b, tensors)
    fb.SubGraphAddInputs(b, inputs)
    fb.SubGraphAddOutputs(b, outputs)
    fb.SubGraphAddOperators(b, operators)
    if name is not None:
        fb.SubGraphAddName(b, name)
    return fb.SubGraphEnd(b)


def _tensor_maps(b: flatbuffers.Builder, entries: Mapping[str, int]) -> int:
    offs = []
    for name, index in entries.items():
        name_off = b.CreateString(name)
        fb.TensorMapStart(b)
        fb.TensorMapAddName(b, name_off)
        fb.TensorMapAddTensorIndex(b, int(index))
        offs.append(fb.TensorMapEnd(b))
    return _offsets(b, offs)


def _signature(b: flatbuffers.Builder, sig: SignatureDef) -> int:
    inputs, outputs = _tensor_maps(b, sig.inputs), _tensor_maps(b, sig.outputs)
    key = b.CreateString(sig.key)
    fb.SignatureDefStart(b)
    fb.SignatureDefAddInputs(b, inputs)
    fb.SignatureDefAddOutputs(b, outputs)
    fb.SignatureDefAddSignatureKey(b, key)
    fb.SignatureDefAddSubgraphIndex(b, int(sig.subgraph_index))
    return fb.SignatureDefEnd(b)


class ModelWriter:
    """Build a model step by step, then ``finish()`` it to bytes.

    >>> w = ModelWriter()
    >>> x = w.add_tensor("x", (1, 4), TensorType.FLOAT32)
    >>> y = w.add_tensor("y", (1, 4), TensorType.FLOAT32)
    >>> _ = w.add_operator(BuiltinOperator.SOFTMAX, [x], [y], SoftmaxOptions(beta=1.0))
    >>> w.set_inputs([x]); w.set_outputs([y])
    >>> blob = w.finish()

    Indices returned by ``add_*`` are the file's indices (``SoftmaxOptions`` comes from
    ``nnsim.tflite.options``). Misuse raises ValueError.

    Further subgraphs (the branches and loop bodies IF / WHILE / CALL_ONCE name by index):
    ``add_subgraph(name)`` appends one and makes it current, ``use_subgraph(i)`` switches;
    tensors, operators, inputs and outputs go to the current subgraph, buffers and operator
    codes are the model's.
    """

    def __init__(self, description: str = "nnsim ModelWriter", subgraph_name: str = "main"):
        self.description, self.subgraph_name = description, subgraph_name
        self._buffers: list[np.ndarray] = [np.zeros(0, np.uint8)]
        self._codes: dict[tuple, int] = {}
        self._tensors: list[Tensor] = []
        self._operators: list[Operator] = []
        self._inputs: tuple[int, ...] = ()
        self._outputs: tuple[int, ...] = ()
        self._signatures: list[SignatureDef] = []
        self._metadata: dict[str, bytes] = {}
        self._metadata_buffers: dict[str, int] = {}
        self._subgraphs: list[list] = [[subgraph_name, self._tensors, self._operators, (), ()]]
        self._current = 0

    def add_subgraph(self, name: str) -> int:
        """Append an empty subgraph, make it the current one and return its index."""
        self._subgraphs.append([name, [], [], (), ()])
        self.use_subgraph(len(self._subgraphs) - 1)
        return self._current

    def use_subgraph(self, index: int) -> None:
        """Make subgraph ``index`` the one later ``add_tensor`` / ``add_operator`` /
        ``set_inputs`` / ``set_outputs`` calls build."""
        if not 0 <= index < len(self._subgraphs):
            raise ValueError(f"subgraph index {index} out of range "
                             f"({len(self._subgraphs)} subgraphs)")
        self._park()
        self._current = index
        _, self._tensors, self._operators, self._inputs, self._outputs = self._subgraphs[index]

    def _park(self) -> None:
        """Store the current subgraph's inputs and outputs (the lists are shared)."""
        state = self._subgraphs[self._current]
        state[0] = self.subgraph_name if self._current == 0 else state[0]
        state[3], state[4] = self._inputs, self._outputs

    def add_buffer(self, data: np.ndarray | bytes | None) -> int:
        """Append a buffer (little-endian bytes of ``data``); None or empty reuses buffer 0."""
        if data is None:
            return 0
        raw = _byte_view(data)
        if raw.size == 0:
            return 0
        raw = raw.copy()
        raw.flags.writeable = False
        self._buffers.append(raw)
        return len(self._buffers) - 1

    def add_tensor(self, name: str, shape: Sequence[int], type: TensorType | int,
                   data=None, quantization: Quantization | tuple[float, int] | None = None,
                   shape_signature: Sequence[int] | None = None, *,
                   is_variable: bool = False, sparsity: Sparsity | None = None) -> int:
        """Add a tensor; ``data`` (array-like) makes it a constant with its own buffer.

        ``quantization`` is a Quantization or a (scale, zero_point) pair. With ``sparsity``,
        ``data`` holds the stored values of a sparse constant of dense ``shape``.
        """
        ttype = TensorType(type)
        shape = tuple(int(d) for d in shape)
        buffer, view = 0, None
        if sparsity is not None and (data is None or not np.size(data)):
            raise ValueError(f"tensor '{name}': sparsity needs the stored values as data")
        if data is not None:
            dtype = NUMPY_DTYPES.get(ttype)
            if dtype is not None:  # else raw bytes: STRING, packed INT4, BFLOAT16 ...
                data = np.asarray(data, dtype=dtype)  # NUMPY_DTYPES are little-endian
                if sparsity is None and data.size != int(np.prod(shape, dtype=np.int64)):
                    raise ValueError(f"tensor '{name}': data has {data.size} elements, shape "
                                     f"{shape} needs {int(np.prod(shape))}")
            buffer = self.add_buffer(data)
            raw = self._buffers[buffer]
            try:
                view = typed_view(raw, shape, ttype, buffer) if sparsity is None else \
                    sparse_values(raw, shape, ttype, sparsity, buffer)
            except MalformedError as exc:
                raise ValueError(f"tensor '{name}': {exc.what}") from None
        if isinstance(quantization, tuple):
            quantization = Quantization.per_tensor(*quantization)
        index = len(self._tensors)
        self._tensors.append(Tensor(
            index=index, name=name, shape=shape,
            shape_signature=None if shape_signature is None else tuple(shape_signature),
            type=ttype, buffer=buffer, data=view, quantization=quantization,
            is_variable=is_variable, sparsity=sparsity))
        return index

    def add_operator(self, builtin: BuiltinOperator | int, inputs: Sequence[int],
                     outputs: Sequence[int], options=None, custom_code: str | None = None,
                     custom_options: bytes | None = None, version: int = 1,
                     intermediates: Sequence[int] = ()) -> int:
        """Add a node; its operator code is shared with earlier nodes of the same kind."""
        builtin = BuiltinOperator(builtin)
        if (builtin == BuiltinOperator.CUSTOM) != (custom_code is not None):
            raise ValueError("custom_code is required for CUSTOM and only for CUSTOM")
        n = len(self._tensors)
        for index in (*inputs, *outputs, *intermediates):
            if not -1 <= index < n:
                raise ValueError(f"tensor index {index} out of range ({n} tensors)")
        key = (builtin, custom_code, version)
        opcode = self._codes.setdefault(key, len(self._codes))
        self._operators.append(Operator(
            index=len(self._operators), opcode_index=opcode, builtin=builtin,
            custom_code=custom_code, version=version, inputs=tuple(inputs),
            outputs=tuple(outputs), intermediates=tuple(intermediates), options=options,
            custom_options=None if custom_options is None else bytes(custom_options)))
        return len(self._operators) - 1

    def set_inputs(self, indices: Sequence[int]) -> None:
        self._inputs = tuple(indices)

    def set_outputs(self, indices: Sequence[int]) -> None:
        self._outputs = tuple(indices)

    def add_signature(self, key: str, inputs: Mapping[str, int],
                      outputs: Mapping[str, int]) -> None:
        self._signatures.append(SignatureDef(key, dict(inputs), dict(outputs), 0))

    def add_metadata(self, name: str, data: bytes) -> None:
        """Add a named metadata entry; its bytes get their own buffer, as converters do."""
        self._metadata[name] = bytes(data)
        self._metadata_buffers[name] = len(self._buffers)
        raw = np.frombuffer(self._metadata[name], np.uint8)
        self._buffers.append(raw)

    def to_model(self) -> TfliteModel:
        """The model built so far, as reader dataclasses."""
        codes = tuple(OperatorCode(*key) for key in self._codes)
        self._park()
        subgraphs = tuple(Subgraph(name, tuple(tensors), tuple(operators), inputs, outputs)
                          for name, tensors, operators, inputs, outputs in self._subgraphs)
        return TfliteModel(version=SCHEMA_VERSION, description=self.description,
                           subgraphs=subgraphs, buffers=tuple(self._buffers),
                           operator_codes=codes, signatures=tuple(self._signatures),
                           metadata=dict(self._metadata),
                           metadata_buffers=dict(self._metadata_buffers))

    def finish(self) -> bytes:
        return write_model(self.to_model())
