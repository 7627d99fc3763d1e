"""TFLite schema enums and a bounds-checked flatbuffer table view.

Everything here speaks the numbers of TFLite's ``schema.fbs`` (the ``tflite`` pip package is
generated from it), so a value read from a file can be compared with TFLite sources directly.

``Table`` replaces the generated ``tflite.*`` reader classes inside ``nnsim.tflite.reader``.
The generated readers trust the file: a corrupted offset gives ``struct.error``, ``IndexError``
or a vector "length" of four billion that a loop then walks. ``Table`` checks every offset and
every length against the size of the file before it reads, and reports a problem as
``MalformedError(what, offset)``, which the reader turns into one ``ModelFileError``. It never
recurses on file data, so a cyclic offset cannot loop: callers descend a fixed schema depth.
"""
from __future__ import annotations

import struct
from enum import IntEnum

import numpy as np
from tflite.BuiltinOperator import BuiltinOperator as _FbBuiltinOperator
from tflite.BuiltinOptions import BuiltinOptions as _FbBuiltinOptions

FILE_IDENTIFIER = b"TFL3"
SCHEMA_VERSION = 3


class TensorType(IntEnum):
    """``tflite::TensorType`` (schema.fbs values, not NNAPI's OperandType)."""

    FLOAT32 = 0
    FLOAT16 = 1
    INT32 = 2
    UINT8 = 3
    INT64 = 4
    STRING = 5
    BOOL = 6
    INT16 = 7
    COMPLEX64 = 8
    INT8 = 9
    FLOAT64 = 10
    COMPLEX128 = 11
    UINT64 = 12
    RESOURCE = 13
    VARIANT = 14
    UINT32 = 15
    UINT16 = 16
    INT4 = 17
    BFLOAT16 = 18


# numpy dtype of each element type whose buffer is a plain little-endian array. Types missing
# here (STRING, RESOURCE, VARIANT, INT4 packed two per byte, BFLOAT16) are exposed as raw bytes.
NUMPY_DTYPES: dict[TensorType, np.dtype] = {
    TensorType.FLOAT32: np.dtype("<f4"),
    TensorType.FLOAT16: np.dtype("<f2"),
    TensorType.INT32: np.dtype("<i4"),
    TensorType.UINT8: np.dtype("u1"),
    TensorType.INT64: np.dtype("<i8"),
    TensorType.BOOL: np.dtype("?"),
    TensorType.INT16: np.dtype("<i2"),
    TensorType.COMPLEX64: np.dtype("<c8"),
    TensorType.INT8: np.dtype("i1"),
    TensorType.FLOAT64: np.dtype("<f8"),
    TensorType.COMPLEX128: np.dtype("<c16"),
    TensorType.UINT64: np.dtype("<u8"),
    TensorType.UINT32: np.dtype("<u4"),
    TensorType.UINT16: np.dtype("<u2"),
}


class Padding(IntEnum):
    """``tflite::Padding``. Note SAME is 0 here, while NNAPI's PaddingCode has SAME = 1."""

    SAME = 0
    VALID = 1


class ActivationFunctionType(IntEnum):
    """``tflite::ActivationFunctionType``; NONE..RELU6 coincide with NNAPI's FuseCode."""

    NONE = 0
    RELU = 1
    RELU_N1_TO_1 = 2
    RELU6 = 3
    TANH = 4
    SIGN_BIT = 5


class FullyConnectedOptionsWeightsFormat(IntEnum):
    DEFAULT = 0
    SHUFFLED4x16INT8 = 1


class MirrorPadMode(IntEnum):
    REFLECT = 0
    SYMMETRIC = 1


def _schema_members(generated: type) -> dict[str, int]:
    return {k: v for k, v in vars(generated).items() if not k.startswith("_")}


# More than 200 operator codes and 120 option tables: take them from the schema package rather
# than retyping them, so the enums cannot drift from the generated schema we parse against.
BuiltinOperator = IntEnum("BuiltinOperator", _schema_members(_FbBuiltinOperator),
                          module=__name__)
BuiltinOperator.__doc__ = "``tflite::BuiltinOperator`` (schema.fbs values, e.g. CONV_2D = 3)."
BuiltinOptions = IntEnum("BuiltinOptions", _schema_members(_FbBuiltinOptions), module=__name__)
BuiltinOptions.__doc__ = "The ``tflite::BuiltinOptions`` union tag (0 = NONE)."

# Operator codes above 127 do not fit the int8 ``deprecated_builtin_code``; files store this
# placeholder there and the real code in ``builtin_code``.
PLACEHOLDER_FOR_GREATER_OP_CODES = 127


class MalformedError(Exception):
    """The model data is wrong: ``what`` happened at ``offset`` (bytes from the file start) or
    at ``where`` (an object such as "tensor 3 'x'"). Internal to nnsim.tflite: the reader
    turns it into one ``nnsim.errors.ModelFileError`` that names the file."""

    def __init__(self, what: str, offset: int | None = None, where: str | None = None):
        super().__init__(what)
        self.what, self.offset, self.where = what, offset, where


_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")
_U16 = struct.Struct("<H")
_VT_HEADER = struct.Struct("<HH")

# Scalar field kinds used by the table descriptions (reader and options): struct format codes.
SCALAR_STRUCTS = {k: struct.Struct("<" + k) for k in "bBhHiIqQf?d"}


class Table:
    """A flatbuffer table at absolute position ``pos`` of ``buf``, validated on construction.

    Fields are addressed by their schema slot number (the order of declaration in
    ``schema.fbs``, the ``N`` of ``builder.Prepend*Slot(N, ...)`` in the generated code).
    Every accessor returns the schema default (or None for offsets) when the field is absent,
    and raises MalformedError when the field points outside the file.
    """

    __slots__ = ("buf", "pos", "_size", "_vt", "_vt_len", "_tbl_len")

    def __init__(self, buf, pos: int):
        size = len(buf)
        if pos < 0 or pos + 4 > size:
            raise MalformedError("table offset points outside the file", pos)
        vt = pos - _I32.unpack_from(buf, pos)[0]
        if vt < 0 or vt + 4 > size:
            raise MalformedError("vtable offset points outside the file", pos)
        vt_len, tbl_len = _VT_HEADER.unpack_from(buf, vt)
        if vt_len < 4 or vt_len % 2 or vt + vt_len > size:
            raise MalformedError(f"invalid vtable size {vt_len}", vt)
        if tbl_len < 4 or pos + tbl_len > size:
            raise MalformedError(f"invalid table size {tbl_len}", pos)
        self.buf, self.pos, self._size = buf, pos, size
        self._vt, self._vt_len, self._tbl_len = vt, vt_len, tbl_len

    def field_position(self, slot: int, width: int = 1) -> int:
        """Absolute position of the field's inline data, or 0 when the field is absent."""
        entry = 4 + 2 * slot
        if entry >= self._vt_len:
            return 0
        off = _U16.unpack_from(self.buf, self._vt + entry)[0]
        if off == 0:
            return 0
        if off < 4 or off + width > self._tbl_len:
            raise MalformedError(f"field {slot} lies outside its table", self.pos)
        return self.pos + off

    def has(self, slot: int) -> bool:
        return self.field_position(slot, 1) != 0

    def scalar(self, slot: int, kind: str, default=0):
        """A scalar field; ``kind`` is a struct code from SCALAR_STRUCTS ('b', 'i', 'f', '?'...)."""
        st = SCALAR_STRUCTS[kind]
        p = self.field_position(slot, st.size)
        return st.unpack_from(self.buf, p)[0] if p else default

    def _target(self, slot: int) -> int:
        p = self.field_position(slot, 4)
        if not p:
            return 0
        target = p + _U32.unpack_from(self.buf, p)[0]
        if target + 4 > self._size:
            raise MalformedError(f"field {slot} points outside the file", p)
        return target

    def table(self, slot: int) -> Table | None:
        target = self._target(slot)
        return Table(self.buf, target) if target else None

    def vector(self, slot: int, elem_size: int) -> tuple[int, int] | None:
        """(start of elements, element count) of a vector field, checked against the file size."""
        target = self._target(slot)
        if not target:
            return None
        count = _U32.unpack_from(self.buf, target)[0]
        if count * elem_size > self._size - target - 4:
            raise MalformedError(f"vector of {count} elements runs past the end of the file",
                                  target)
        return target + 4, count

    def array(self, slot: int, dtype: np.dtype) -> np.ndarray | None:
        """A scalar vector as a read-only numpy view (no copy) of the file."""
        dtype = np.dtype(dtype)
        vec = self.vector(slot, dtype.itemsize)
        if vec is None:
            return None
        arr = np.frombuffer(self.buf, dtype=dtype, count=vec[1], offset=vec[0])
        arr.flags.writeable = False
        return arr

    def ints(self, slot: int, kind: str = "i") -> tuple[int, ...] | None:
        st = SCALAR_STRUCTS[kind]
        vec = self.vector(slot, st.size)
        if vec is None:
            return None
        return struct.unpack_from(f"<{vec[1]}{kind}", self.buf, vec[0])

    def tables(self, slot: int) -> list[Table]:
        vec = self.vector(slot, 4)
        if vec is None:
            return []
        start, count = vec
        out = []
        for i in range(count):
            p = start + 4 * i
            target = p + _U32.unpack_from(self.buf, p)[0]
            if target + 4 > self._size:
                raise MalformedError(f"element {i} of vector field {slot} points outside the "
                                     "file", p)
            out.append(Table(self.buf, target))
        return out

    def raw(self, slot: int) -> memoryview | None:
        """A ubyte vector as a zero-copy memoryview of the file."""
        vec = self.vector(slot, 1)
        if vec is None:
            return None
        return memoryview(self.buf)[vec[0]:vec[0] + vec[1]]

    def string(self, slot: int) -> str | None:
        data = self.raw(slot)
        if data is None:
            return None
        try:
            return str(data, "utf-8")
        except UnicodeDecodeError:
            raise MalformedError(f"string field {slot} is not valid UTF-8", self.pos) from None
