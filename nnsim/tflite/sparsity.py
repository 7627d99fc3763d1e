"""Sparse constant tensors: TFLite ``SparsityParameters`` as plain frozen dataclasses.

``nnsim.tflite.reader`` reads them (``Tensor.sparsity``) with ``read_sparsity`` and
``sparse_values``, ``nnsim.tflite.writer`` writes them back, and ``dense_value`` gives the
dense array (``nnsim.kernels.densify``) to the DENSIFY builtin and to the NNAPI delegate's
sparse CONV_2D weights (tflite-nnapi-delegate.md 3.7).

A sparse constant's buffer holds only its stored values, in traversal order; ``Tensor.shape``
is the dense shape. LiteRT's ``InterpreterBuilder::ParseSparsity`` requires traversal_order
and dim_metadata, a known format per level, and both index vectors (Int32Vector, Uint16Vector
or Uint8Vector) on a SPARSE_CSR level; its ``FormatConverter`` trusts the rest and reads out
of bounds when it is wrong. ``check_sparsity`` therefore also requires the layout TFLite's
converter writes, so that every stored value has exactly one place in the dense shape:

* ``traversal_order`` lists the dimensions, then the block dimensions (``rank + b``);
  ``block_map`` names distinct dimensions in increasing order (as ``FormatConverter`` walks it);
* block b is ``dense_size`` of level ``traversal_order[rank + b]`` (``FormatConverter`` reads
  it there), a DENSE level, and divides its dimension;
* a DENSE level's ``dense_size`` is the extent of its dimension (the blocked extent for a
  blocked dimension); a SPARSE_CSR level under ``n`` parents has ``n + 1`` non-decreasing
  ``array_segments`` from 0 to ``len(array_indices)``, and indices inside the extent;
* the levels describe as many values as the buffer holds.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nnsim.kernels.densify import DimensionMetadata as _Level
from nnsim.kernels.densify import densify
from nnsim.tflite.schema import NUMPY_DTYPES, MalformedError, Table, TensorType

__all__ = ["DENSE", "SPARSE_CSR", "INDEX_VECTOR_TYPES", "DimensionMetadata", "Sparsity",
           "read_sparsity", "sparse_values", "check_sparsity", "dense_value",
           "sparsity_details"]

DENSE, SPARSE_CSR = 0, 1   # tflite::DimensionType

# tflite::SparseIndexVector union tag -> element dtype of its ``values`` vector.
INDEX_VECTOR_TYPES = {1: np.dtype("<i4"), 2: np.dtype("<u2"), 3: np.dtype("u1")}
_INDEX_DTYPES = {dtype: tag for tag, dtype in INDEX_VECTOR_TYPES.items()}


def _index_array(values) -> np.ndarray | None:
    """A frozen 1-D copy that keeps an index vector's element type (int32, uint16 or uint8)."""
    if values is None:
        return None
    arr = np.asarray(values)
    if arr.dtype.newbyteorder("<") not in _INDEX_DTYPES:
        arr = arr.astype(np.int32)
    arr = np.array(arr.reshape(-1), dtype=arr.dtype.newbyteorder("<"))
    arr.flags.writeable = False
    return arr


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return a.dtype == b.dtype and np.array_equal(a, b)


@dataclass(frozen=True, eq=False)
class DimensionMetadata:
    """One level of a sparse tensor (``tflite::DimensionMetadata``). ``array_segments`` and
    ``array_indices`` (SPARSE_CSR only) keep the element type the file stores them with."""

    format: int
    dense_size: int = 0
    array_segments: np.ndarray | None = None
    array_indices: np.ndarray | None = None

    def __post_init__(self):
        object.__setattr__(self, "array_segments", _index_array(self.array_segments))
        object.__setattr__(self, "array_indices", _index_array(self.array_indices))

    def __eq__(self, other):
        if not isinstance(other, DimensionMetadata):
            return NotImplemented
        return ((self.format, self.dense_size) == (other.format, other.dense_size)
                and _same(self.array_segments, other.array_segments)
                and _same(self.array_indices, other.array_indices))


@dataclass(frozen=True)
class Sparsity:
    """``tflite::SparsityParameters``; ``block_map`` is None when the file has none."""

    traversal_order: tuple[int, ...]
    block_map: tuple[int, ...] | None
    dim_metadata: tuple[DimensionMetadata, ...]


def read_sparsity(t: Table) -> Sparsity:
    """The SparsityParameters table ``t`` (ParseSparsity's checks; see ``check_sparsity``)."""
    order = t.ints(0)
    if order is None or not t.has(2):
        raise MalformedError("invalid sparsity: traversal_order and dim_metadata are required")
    return Sparsity(order, t.ints(1),
                    tuple(_dimension(k, m) for k, m in enumerate(t.tables(2))))


def _dimension(k: int, m: Table) -> DimensionMetadata:
    fmt = m.scalar(0, "b", DENSE)
    if fmt not in (DENSE, SPARSE_CSR):
        raise MalformedError(f"sparsity level {k} has unknown format {fmt}")
    dense_size = m.scalar(1, "i", 0)
    if fmt == DENSE:
        return DimensionMetadata(DENSE, dense_size)   # LiteRT reads no vectors here
    vectors = []
    for type_slot, value_slot, what in ((2, 3, "array_segments"), (4, 5, "array_indices")):
        dtype, inner = INDEX_VECTOR_TYPES.get(m.scalar(type_slot, "B", 0)), m.table(value_slot)
        values = inner.array(0, dtype) if dtype is not None and inner is not None else None
        if values is None:
            raise MalformedError(f"sparsity level {k} (SPARSE_CSR) has no {what} (an "
                                 f"Int32Vector, Uint16Vector or Uint8Vector with values)")
        vectors.append(values)
    return DimensionMetadata(SPARSE_CSR, dense_size, *vectors)


def sparse_values(raw: np.ndarray, shape: tuple[int, ...], ttype: TensorType,
                  sparsity: Sparsity, buffer: int) -> np.ndarray:
    """The stored values of a sparse constant: a read-only 1-D typed view of its buffer,
    checked against the sparsity (``check_sparsity``)."""
    dtype = NUMPY_DTYPES.get(ttype)
    if dtype is None or ttype == TensorType.STRING:
        raise MalformedError(f"sparse {ttype.name} tensors are not supported")
    if raw.size % dtype.itemsize:
        raise MalformedError(f"buffer {buffer} holds {raw.size} bytes, not a whole number of "
                             f"{ttype.name} values")
    values = raw.view(dtype)
    check_sparsity(sparsity, shape, values.size)
    values.flags.writeable = False
    return values


def _block_sizes(sp: Sparsity, shape) -> list[int]:
    rank, blocks = len(shape), sp.block_map or ()
    order, metas = sp.traversal_order, sp.dim_metadata
    if len(metas) != len(order):
        raise MalformedError(f"sparsity has {len(metas)} dim_metadata for {len(order)} "
                             f"traversal_order entries")
    if len(order) != rank + len(blocks):
        raise MalformedError(f"traversal_order {list(order)} does not fit shape {shape} with "
                             f"{len(blocks)} block dimensions")
    if sorted(order[:rank]) != list(range(rank)) or \
            sorted(order[rank:]) != list(range(rank, len(order))):
        raise MalformedError(f"traversal_order {list(order)} must list the {rank} dimensions, "
                             f"then the block dimensions")
    if any(not 0 <= d < rank for d in blocks) or list(blocks) != sorted(set(blocks)):
        raise MalformedError(f"block_map {list(blocks)} must name distinct dimensions in "
                             f"increasing order")
    sizes = []
    for b, d in enumerate(blocks):
        level = order[rank + b]
        size = metas[level].dense_size
        if metas[level].format != DENSE or size <= 0 or shape[d] % size:
            raise MalformedError(f"block {b} of dimension {d} (size {shape[d]}) takes its size "
                                 f"from level {level}, which is not a DENSE divisor")
        sizes.append(size)
    return sizes


def check_sparsity(sp: Sparsity, shape: tuple[int, ...], count: int) -> None:
    """Raise MalformedError unless ``sp`` places ``count`` values inside the dense ``shape``
    (the rules in the module docstring)."""
    if any(d < 0 for d in shape):
        raise MalformedError(f"sparse constant has an unknown dimension in shape {shape}")
    rank = len(shape)
    sizes = _block_sizes(sp, shape)
    extent = [shape[d] for d in range(rank)] + sizes
    for b, d in enumerate(sp.block_map or ()):
        extent[d] = shape[d] // sizes[b]
    parents = 1
    for k, (dim, m) in enumerate(zip(sp.traversal_order, sp.dim_metadata)):
        if m.format == DENSE:
            if m.dense_size != extent[dim]:
                raise MalformedError(f"sparsity level {k} is DENSE of size {m.dense_size}; its "
                                     f"dimension {dim} has {extent[dim]}")
            parents *= extent[dim]
            continue
        if m.format != SPARSE_CSR or m.array_segments is None or m.array_indices is None:
            raise MalformedError(f"sparsity level {k} is neither DENSE nor SPARSE_CSR with "
                                 f"array_segments and array_indices")
        seg = m.array_segments.astype(np.int64)
        idx = m.array_indices.astype(np.int64)
        if seg.size != parents + 1 or seg[0] != 0 or seg[-1] != idx.size \
                or (np.diff(seg) < 0).any():
            raise MalformedError(f"sparsity level {k}: array_segments must rise from 0 to the "
                                 f"{idx.size} array_indices in {parents + 1} entries")
        if idx.size and (idx.min() < 0 or idx.max() >= extent[dim]):
            raise MalformedError(f"sparsity level {k}: array_indices outside dimension {dim} "
                                 f"of size {extent[dim]}")
        parents = idx.size
    if parents != count:
        raise MalformedError(f"the sparsity describes {parents} values but the buffer holds "
                             f"{count}")


def dense_value(tensor) -> np.ndarray:
    """The dense array of a sparse constant reader ``Tensor`` (``Tensor.shape``, its dtype)."""
    sp = tensor.sparsity
    levels = [_Level(m.format, m.dense_size,
                    () if m.array_segments is None else m.array_segments,
                    () if m.array_indices is None else m.array_indices)
              for m in sp.dim_metadata]
    return densify(np.asarray(tensor.data), tensor.shape, sp.traversal_order,
                   sp.block_map or (), levels)


def sparsity_details(sp: Sparsity | None) -> dict:
    """LiteRT's ``sparsity_parameters`` entry of ``get_tensor_details`` ({} when dense): int32
    arrays, ``block_map`` only when the file has one, index vectors widened to int32."""
    if sp is None:
        return {}
    out = {"traversal_order": np.array(sp.traversal_order, np.int32)}
    if sp.block_map is not None:
        out["block_map"] = np.array(sp.block_map, np.int32)
    out["dim_metadata"] = [
        {"format": DENSE, "dense_size": int(m.dense_size)} if m.format == DENSE else
        {"format": SPARSE_CSR, "array_segments": np.array(m.array_segments, np.int32),
         "array_indices": np.array(m.array_indices, np.int32)}
        for m in sp.dim_metadata]
    return out
