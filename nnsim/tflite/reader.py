"""Read a .tflite flatbuffer into plain, frozen dataclasses.

``read_model(path_or_bytes) -> TfliteModel`` is the only way into a model file. No flatbuffer
object leaves this module: the rest of nnsim sees tuples, IntEnums, numpy arrays and the
options dataclasses of ``nnsim.tflite.options``.

Contract:

* A file is memory-mapped read-only and stays mapped for the model's lifetime; constant tensor
  data (``Tensor.data``) and ``TfliteModel.buffers`` are zero-copy, read-only numpy views of it.
* Every offset and length is checked against the file size before it is followed (see
  ``schema.Table``), and the model is checked the way LiteRT's InterpreterBuilder checks it:
  buffer, tensor and opcode indices in range, known operator codes, a custom code for CUSTOM,
  quantization scale/zero-point vectors of equal length, constant data that fills its shape.
* Anything wrong raises exactly one ``nnsim.errors.ModelFileError(path, what, where)``; where
  names the object ("tensor 12 'conv1/weights'", "operator 3 (CONV_2D)") and/or the byte
  offset. No other exception escapes ``read_model``, and reading never loops on file data.
* Dynamic shapes are not an error here: ``Tensor.is_dynamic`` marks a ``shape_signature``
  with -1 (and any negative ``shape`` dim); ``check_static`` is the policy check.

* Sparse constants (``Tensor.sparsity``, ``nnsim.tflite.sparsity``): the buffer holds only the
  stored values, so ``Tensor.data`` is their 1-D typed view and ``Tensor.shape`` the dense shape;
  the sparsity must place exactly those values inside the shape (``check_sparsity``).

Ignored: custom quantization details, ``mutating_variable_inputs``, ``builtin_options_2``
(StableHLO), debug metadata, min/max-only quantization tables, and the sparsity of a tensor
without data (LiteRT ignores them too).
"""
from __future__ import annotations

import mmap
import os
import struct
from contextlib import contextmanager
from dataclasses import dataclass, field
from math import prod

import numpy as np

from nnsim.errors import ModelFileError
from nnsim.tflite.options import parse_options
from nnsim.tflite.schema import (
    FILE_IDENTIFIER,
    NUMPY_DTYPES,
    PLACEHOLDER_FOR_GREATER_OP_CODES,
    SCHEMA_VERSION,
    BuiltinOperator,
    MalformedError,
    Table,
    TensorType,
)
from nnsim.tflite.sparsity import Sparsity, read_sparsity, sparse_values

MEMORY_PATH = "<memory>"


def _frozen_array(values, dtype) -> np.ndarray:
    arr = np.array(values, dtype=dtype).reshape(-1)
    arr.flags.writeable = False
    return arr


def _arrays_equal(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


@dataclass(frozen=True, eq=False)
class Quantization:
    """Affine quantization: real = scale * (q - zero_point), per tensor or per channel.

    ``scales`` (float32) and ``zero_points`` (int64) have equal length; more than one value
    means per-channel along ``quantized_dimension`` (the NNAPI delegate's rule too).
    """

    scales: np.ndarray
    zero_points: np.ndarray
    quantized_dimension: int = 0
    min: np.ndarray | None = None
    max: np.ndarray | None = None

    def __post_init__(self):
        object.__setattr__(self, "scales", _frozen_array(self.scales, np.float32))
        object.__setattr__(self, "zero_points", _frozen_array(self.zero_points, np.int64))
        for name in ("min", "max"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, _frozen_array(getattr(self, name), np.float32))

    @classmethod
    def per_tensor(cls, scale: float, zero_point: int = 0) -> Quantization:
        return cls([scale], [zero_point])

    @property
    def per_channel(self) -> bool:
        return len(self.scales) > 1

    @property
    def scale(self) -> float:
        """The per-tensor scale; ValueError for per-channel quantization."""
        if self.per_channel:
            raise ValueError("per-channel quantization has no single scale")
        return float(self.scales[0])

    @property
    def zero_point(self) -> int:
        """The per-tensor zero point; ValueError for per-channel quantization."""
        if self.per_channel:
            raise ValueError("per-channel quantization has no single zero point")
        return int(self.zero_points[0])

    def __eq__(self, other):
        if not isinstance(other, Quantization):
            return NotImplemented
        return (self.quantized_dimension == other.quantized_dimension
                and all(_arrays_equal(getattr(self, n), getattr(other, n))
                        for n in ("scales", "zero_points", "min", "max")))


@dataclass(frozen=True, eq=False)
class Tensor:
    """One tensor of a subgraph.

    ``data`` is the constant value (typed, shaped, read-only, zero-copy) or None when the
    tensor's buffer is empty. For element types without a numpy dtype (STRING, INT4, BFLOAT16,
    RESOURCE, VARIANT) it is the raw 1-D uint8 buffer. For a sparse constant (``sparsity`` set)
    it is the 1-D array of stored values; ``nnsim.tflite.sparsity.dense_value`` densifies it.
    """

    index: int
    name: str
    shape: tuple[int, ...]
    shape_signature: tuple[int, ...] | None
    type: TensorType
    buffer: int
    data: np.ndarray | None = None
    quantization: Quantization | None = None
    is_variable: bool = False
    sparsity: Sparsity | None = None

    @property
    def is_constant(self) -> bool:
        return self.data is not None

    @property
    def dynamic_dims(self) -> tuple[int, ...]:
        """Dimensions whose size is unknown in the file (-1 in shape_signature or shape)."""
        sig = self.shape_signature or ()
        return tuple(i for i in range(max(len(sig), len(self.shape)))
                     if (i < len(sig) and sig[i] < 0)
                     or (i < len(self.shape) and self.shape[i] < 0))

    @property
    def is_dynamic(self) -> bool:
        return bool(self.dynamic_dims)

    def __eq__(self, other):
        if not isinstance(other, Tensor):
            return NotImplemented
        return ((self.index, self.name, self.shape, self.shape_signature, self.type,
                 self.buffer, self.quantization, self.is_variable, self.sparsity)
                == (other.index, other.name, other.shape, other.shape_signature, other.type,
                    other.buffer, other.quantization, other.is_variable, other.sparsity)
                and _arrays_equal(self.data, other.data))


@dataclass(frozen=True)
class OperatorCode:
    builtin: BuiltinOperator
    custom_code: str | None = None
    version: int = 1


@dataclass(frozen=True)
class Operator:
    """One node. ``inputs``/``outputs``/``intermediates`` hold tensor indices, -1 = omitted.

    ``builtin``, ``custom_code`` and ``version`` are resolved from ``opcode_index``;
    ``options`` is an options dataclass (or ``RawOptions``) or None.
    """

    index: int
    opcode_index: int
    builtin: BuiltinOperator
    custom_code: str | None
    version: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    intermediates: tuple[int, ...] = ()
    options: object | None = None
    custom_options: bytes | None = None

    @property
    def name(self) -> str:
        """The builtin name, or the custom code for CUSTOM operators."""
        if self.builtin == BuiltinOperator.CUSTOM and self.custom_code:
            return self.custom_code
        return self.builtin.name


@dataclass(frozen=True)
class Subgraph:
    name: str
    tensors: tuple[Tensor, ...]
    operators: tuple[Operator, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


@dataclass(frozen=True)
class SignatureDef:
    key: str
    inputs: dict[str, int]
    outputs: dict[str, int]
    subgraph_index: int = 0


@dataclass(frozen=True, eq=False)
class TfliteModel:
    """A whole .tflite file. ``subgraphs[0]`` is the main graph; ``buffers`` are read-only
    uint8 views (index 0 is TFLite's empty sentinel); ``metadata`` maps names to bytes and
    ``metadata_buffers`` names to the buffer index each came from."""

    version: int
    description: str
    subgraphs: tuple[Subgraph, ...]
    buffers: tuple[np.ndarray, ...]
    operator_codes: tuple[OperatorCode, ...]
    signatures: tuple[SignatureDef, ...] = ()
    metadata: dict[str, bytes] = field(default_factory=dict)
    path: str = MEMORY_PATH
    metadata_buffers: dict[str, int] = field(default_factory=dict)
    # Keeps the mmap (or bytes) alive; the array views reference it as well.
    source: object = field(default=None, repr=False)

    @property
    def main(self) -> Subgraph:
        return self.subgraphs[0]

    @property
    def has_dynamic_shapes(self) -> bool:
        return any(t.is_dynamic for sg in self.subgraphs for t in sg.tensors)


def check_static(model: TfliteModel, *, allow_dynamic_batch: bool = True) -> None:
    """Raise ModelFileError naming the first tensor whose shape is not known statically.

    A negative dim in ``shape`` always fails. A -1 in ``shape_signature`` fails too, except in
    dimension 0 when ``allow_dynamic_batch``: the MLIR converter marks the batch dim of every
    activation -1, and LiteRT and the NNAPI delegate (without ``allow_dynamic_dimensions``)
    run such tensors at their stored ``shape``.
    """
    for s, sg in enumerate(model.subgraphs):
        for t in sg.tensors:
            dims = t.dynamic_dims
            bad = [d for d in dims if d > 0 or not allow_dynamic_batch
                   or (d < len(t.shape) and t.shape[d] < 0)]
            if bad:
                raise ModelFileError(
                    model.path,
                    f"dynamic shape not supported: dimension {bad[0]} is unknown "
                    f"(shape {t.shape}, shape_signature {t.shape_signature})",
                    _tensor_where(s, t.index, t.name))


def read_model(source: str | os.PathLike | bytes | bytearray | memoryview) -> TfliteModel:
    """Read a .tflite model from a file path or from bytes.

    Raises ModelFileError (only) when the file cannot be opened or is not a valid model.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        # Copy mutable inputs so the zero-copy views can never change under the model.
        data = source if isinstance(source, bytes) else bytes(source)
        return _parse_guarded(data, MEMORY_PATH)
    path = os.fspath(source)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                raise ModelFileError(path, "file is empty")
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise ModelFileError(path, f"cannot open: {exc.strerror or exc}") from None
    return _parse_guarded(data, path)


def _parse_guarded(buf, path: str) -> TfliteModel:
    try:
        return _Parser(buf, path).model()
    except MalformedError as exc:
        where = exc.where
        if exc.offset is not None:
            at = f"offset 0x{exc.offset:x}"
            where = f"{where}, {at}" if where else at
        raise ModelFileError(path, exc.what, where) from None
    except Exception as exc:
        # Table checks every offset first, so reaching this is a reader bug. The caller still
        # gets one ModelFileError; the chained cause keeps the bug diagnosable.
        raise ModelFileError(path, f"malformed model ({type(exc).__name__}: {exc})") from exc


def _tensor_where(subgraph: int, index: int, name: str | None) -> str:
    prefix = f"subgraph {subgraph}, " if subgraph else ""
    return f"{prefix}tensor {index}" + (f" '{name}'" if name else "")


@contextmanager
def _at(where: str):
    """Attach ``where`` to a MalformedError raised inside, unless it already names a place."""
    try:
        yield
    except MalformedError as exc:
        if exc.where is None:
            exc.where = where
        raise


class _Parser:
    """One pass over the file: model -> buffers -> opcodes -> subgraphs -> signatures."""

    def __init__(self, buf, path: str):
        self.buf, self.path = buf, path
        self.buffers: list[np.ndarray] = []
        self.codes: list[OperatorCode] = []

    def model(self) -> TfliteModel:
        buf = self.buf
        if len(buf) < 8:
            raise MalformedError(f"file too short for a TFLite model ({len(buf)} bytes)")
        ident = bytes(buf[4:8])
        if ident != FILE_IDENTIFIER:
            raise MalformedError(f"not a TFLite model: file identifier {ident!r}, expected "
                                 f"{FILE_IDENTIFIER!r}", 4)
        root_pos = struct.unpack_from("<I", buf, 0)[0]
        if root_pos + 4 > len(buf):
            raise MalformedError(f"root table offset 0x{root_pos:x} points outside the file", 0)
        root = Table(buf, root_pos)
        version = root.scalar(0, "I", 0)
        if version != SCHEMA_VERSION:
            raise MalformedError(f"unsupported schema version {version} (expected "
                                 f"{SCHEMA_VERSION})", where="model")
        for i, t in enumerate(root.tables(4)):
            with _at(f"buffer {i}"):
                self.buffers.append(self._buffer(t))
        for i, t in enumerate(root.tables(1)):
            with _at(f"operator code {i}"):
                self.codes.append(self._opcode(t))
        subgraphs = tuple(self._subgraph(s, t) for s, t in enumerate(root.tables(2)))
        if not subgraphs:
            raise MalformedError("model has no subgraphs", where="model")
        metadata, metadata_buffers = {}, {}
        for i, t in enumerate(root.tables(6)):
            with _at(f"metadata {i}"):
                name, index = t.string(0) or "", t.scalar(1, "I", 0)
                metadata[name] = bytes(self._buffer_at(index))
                metadata_buffers[name] = index
        signatures = tuple(self._signature(i, t, subgraphs)
                           for i, t in enumerate(root.tables(7)))
        return TfliteModel(version=version, description=root.string(3) or "",
                           subgraphs=subgraphs, buffers=tuple(self.buffers),
                           operator_codes=tuple(self.codes), signatures=signatures,
                           metadata=metadata, path=self.path,
                           metadata_buffers=metadata_buffers, source=buf)

    def _buffer(self, t: Table) -> np.ndarray:
        offset, size = t.scalar(1, "Q", 0), t.scalar(2, "Q", 0)
        if offset > 1:
            # Models over 2 GB keep buffer data after the flatbuffer, addressed from file start.
            if offset + size > len(self.buf):
                raise MalformedError(f"external data [{offset}, {offset + size}) lies outside "
                                     f"the file ({len(self.buf)} bytes)")
            start, count = offset, size
        else:
            start, count = t.vector(0, 1) or (0, 0)
        arr = np.frombuffer(self.buf, dtype=np.uint8, count=count, offset=start)
        arr.flags.writeable = False
        return arr

    def _buffer_at(self, index: int) -> np.ndarray:
        if index >= len(self.buffers):
            raise MalformedError(f"buffer index {index} out of range (model has "
                                 f"{len(self.buffers)} buffers)")
        return self.buffers[index]

    def _opcode(self, t: Table) -> OperatorCode:
        deprecated, code = t.scalar(0, "b", 0), t.scalar(3, "i", 0)
        # Files written before builtin_code existed only set the int8 deprecated field; newer
        # files set both, with the placeholder 127 in the old one for codes above 127. The
        # larger of the two is the real code in every case (as TFLite's GetBuiltinCode).
        real = max(code, deprecated)
        if deprecated < 0 or real not in BuiltinOperator._value2member_map_:
            raise MalformedError(f"unknown builtin operator code {real}")
        builtin = BuiltinOperator(real)
        if builtin == PLACEHOLDER_FOR_GREATER_OP_CODES:
            raise MalformedError("operator code is the placeholder 127 with no builtin_code")
        custom = t.string(1)
        if builtin == BuiltinOperator.CUSTOM and not custom:
            raise MalformedError("CUSTOM operator code has no custom_code")
        return OperatorCode(builtin, custom, t.scalar(2, "i", 1))

    def _subgraph(self, s: int, t: Table) -> Subgraph:
        sg_where = f"subgraph {s}"
        with _at(sg_where):
            name = t.string(4) or ""
            tensor_tables = t.tables(0)
        tensors = tuple(self._tensor(s, i, tt) for i, tt in enumerate(tensor_tables))
        n = len(tensors)
        with _at(sg_where):
            operator_tables = t.tables(3)
        operators = tuple(self._operator(s, i, ot, n) for i, ot in enumerate(operator_tables))
        with _at(sg_where):
            inputs = _check_indices(t.ints(1) or (), n, "input", allow_omitted=False)
            outputs = _check_indices(t.ints(2) or (), n, "output", allow_omitted=False)
        return Subgraph(name, tensors, operators, inputs, outputs)

    def _tensor(self, s: int, i: int, t: Table) -> Tensor:
        with _at(_tensor_where(s, i, None)):
            name = t.string(3) or ""
        with _at(_tensor_where(s, i, name)):
            shape = t.ints(0) or ()
            signature = t.ints(7)
            for dims in (shape, signature or ()):
                if any(d < -1 for d in dims):
                    raise MalformedError(f"invalid dimension in shape {dims}")
            code = t.scalar(1, "b", 0)
            if code not in TensorType._value2member_map_:
                raise MalformedError(f"unknown tensor type {code}")
            ttype = TensorType(code)
            buffer = t.scalar(2, "I", 0)
            raw = self._buffer_at(buffer)
            data = sparsity = None
            if raw.size:
                # LiteRT parses the sparsity of constants only (InterpreterBuilder)
                sparsity_table = t.table(6)
                if sparsity_table is None:
                    data = typed_view(raw, shape, ttype, buffer)
                else:
                    sparsity = read_sparsity(sparsity_table)
                    data = sparse_values(raw, shape, ttype, sparsity, buffer)
            return Tensor(index=i, name=name, shape=shape, shape_signature=signature,
                          type=ttype, buffer=buffer, data=data,
                          quantization=_quantization(t.table(4), shape),
                          is_variable=t.scalar(5, "?", False), sparsity=sparsity)

    def _operator(self, s: int, i: int, t: Table, n_tensors: int) -> Operator:
        prefix = f"subgraph {s}, " if s else ""
        with _at(f"{prefix}operator {i}"):
            index = t.scalar(0, "I", 0)
            if index >= len(self.codes):
                raise MalformedError(f"opcode index {index} out of range (model has "
                                     f"{len(self.codes)} operator codes)")
            code = self.codes[index]
        with _at(f"{prefix}operator {i} ({code.custom_code or code.builtin.name})"):
            inputs = _check_indices(t.ints(1) or (), n_tensors, "input")
            outputs = _check_indices(t.ints(2) or (), n_tensors, "output")
            intermediates = _check_indices(t.ints(8) or (), n_tensors, "intermediate")
            options = parse_options(t.scalar(3, "B", 0), t.table(4))
            return Operator(index=i, opcode_index=index, builtin=code.builtin,
                            custom_code=code.custom_code, version=code.version,
                            inputs=inputs, outputs=outputs, intermediates=intermediates,
                            options=options, custom_options=self._custom_options(t))

    def _custom_options(self, t: Table) -> bytes | None:
        offset, size = t.scalar(9, "Q", 0), t.scalar(10, "Q", 0)
        if offset > 1:
            if offset + size > len(self.buf):
                raise MalformedError("large custom options lie outside the file")
            return bytes(self.buf[offset:offset + size])
        raw = t.raw(5)
        return None if raw is None else bytes(raw)

    def _signature(self, i: int, t: Table, subgraphs) -> SignatureDef:
        with _at(f"signature {i}"):
            key = t.string(2) or ""
            sg = t.scalar(4, "I", 0)
            if sg >= len(subgraphs):
                raise MalformedError(f"subgraph index {sg} out of range")
            n = len(subgraphs[sg].tensors)
            maps = []
            for slot in (0, 1):
                entries = {}
                for m in t.tables(slot):
                    index = m.scalar(1, "I", 0)
                    if index >= n:
                        raise MalformedError(f"tensor index {index} out of range "
                                             f"(subgraph {sg} has {n} tensors)")
                    entries[m.string(0) or ""] = index
                maps.append(entries)
            return SignatureDef(key, maps[0], maps[1], sg)


def _check_indices(indices: tuple[int, ...], n: int, what: str,
                   allow_omitted: bool = True) -> tuple[int, ...]:
    low = -1 if allow_omitted else 0
    for k, index in enumerate(indices):
        if not low <= index < n:
            raise MalformedError(f"{what} {k} is tensor index {index}, out of range "
                                 f"(subgraph has {n} tensors)")
    return indices


def typed_view(raw: np.ndarray, shape: tuple[int, ...], ttype: TensorType,
                 buffer: int) -> np.ndarray:
    """The typed, shaped view of a constant tensor's buffer; its size must match the shape."""
    dtype = NUMPY_DTYPES.get(ttype)
    if ttype == TensorType.STRING:
        return raw  # TFLite's packed string format; its size does not follow from the shape
    if any(d < 0 for d in shape):
        raise MalformedError(f"constant tensor has an unknown dimension in shape {shape}")
    count = prod(shape)
    if dtype is not None:
        needed = count * dtype.itemsize
    elif ttype == TensorType.INT4:
        needed = (count + 1) // 2  # two 4-bit values per byte
    elif ttype == TensorType.BFLOAT16:
        needed = count * 2
    else:
        needed = raw.size  # RESOURCE / VARIANT: opaque
    if raw.size != needed:
        raise MalformedError(f"shape {shape} {ttype.name} needs {needed} bytes but buffer "
                             f"{buffer} holds {raw.size}")
    if dtype is None:
        return raw
    arr = raw.view(dtype).reshape(shape)
    arr.flags.writeable = False
    return arr


def _quantization(t: Table | None, shape: tuple[int, ...]) -> Quantization | None:
    """Quantization as LiteRT's InterpreterBuilder::ParseQuantization accepts it."""
    if t is None:
        return None
    scales = t.array(2, "<f4")
    if scales is None or scales.size == 0:
        return None  # min/max-only tables carry no quantization for inference
    zero_points = t.array(3, "<i8")
    if zero_points is None or zero_points.size != scales.size:
        got = 0 if zero_points is None else zero_points.size
        raise MalformedError(f"quantization has {scales.size} scales but {got} zero points")
    dim = t.scalar(6, "i", 0)
    if scales.size > 1:
        if not 0 <= dim < len(shape):
            raise MalformedError(f"quantized_dimension {dim} out of range for shape {shape}")
        if shape[dim] >= 0 and shape[dim] != scales.size:
            raise MalformedError(f"{scales.size} per-channel scales for dimension {dim} of "
                                 f"size {shape[dim]}")
    return Quantization(scales, zero_points, dim, t.array(0, "<f4"), t.array(1, "<f4"))
