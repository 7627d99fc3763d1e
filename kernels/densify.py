"""DENSIFY: a sparse constant (TFLite ``SparsityParameters``) to its dense array.

TFLite ``FormatConverter<T>::SparseToDense`` (``kernels/internal/utils/
sparsity_format_converter.cc``). The stored values are visited in traversal order, one level
per entry of ``traversal_order`` (the original dimensions, then the block dimensions):

* a DENSE level enumerates ``0 .. dense_size - 1``;
* a SPARSE_CSR level under parent position p enumerates ``array_indices[i]`` for ``i`` in
  ``array_segments[p] .. array_segments[p + 1] - 1`` (its position is then i).

Each complete path gives one coordinate per level; level k sets dimension
``traversal_order[k]``, and a block level ``b`` refines its original dimension
``block_map[b]``: ``idx = idx * block_size[b] + index`` with
``block_size[b] = dense_size[traversal_order[rank + b]]`` (TFLite indexes ``dense_size`` that
way). The next stored value goes there; every other element is 0. Vectorised numpy, level by
level, so there is no numba core.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

__all__ = ["DimensionMetadata", "DENSE", "SPARSE_CSR", "densify"]

DENSE, SPARSE_CSR = 0, 1   # tflite::DimensionType


class DimensionMetadata(NamedTuple):
    """One level of a sparse tensor (``tflite::DimensionMetadata``)."""

    format: int
    dense_size: int = 0
    array_segments: Sequence[int] = ()
    array_indices: Sequence[int] = ()


def _level(parents, meta):
    """The children of ``parents`` (in order) at one level: ``(positions, indices, counts)``,
    ``counts`` being how many children each parent has."""
    if meta.format == DENSE:
        n = int(meta.dense_size)
        counts = np.full(parents.size, n, np.int64)
        index = np.tile(np.arange(n, dtype=np.int64), parents.size)
        return np.repeat(parents * n, n) + index, index, counts
    segments = np.asarray(meta.array_segments, np.int64)
    indices = np.asarray(meta.array_indices, np.int64)
    counts = np.zeros(parents.size, np.int64)
    ok = parents + 1 < segments.size          # TFLite skips a parent past the segments
    starts = segments[parents[ok]]
    # Children at positions i >= len(array_indices) are skipped too (they end each run).
    counts[ok] = np.maximum(np.minimum(segments[parents[ok] + 1], indices.size) - starts, 0)
    first = np.zeros(parents.size, np.int64)
    first[ok] = starts
    positions = np.repeat(first - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
    return positions, indices[positions], counts


def densify(values, dense_shape, traversal_order, block_map, dim_metadata):
    """The dense array of shape ``dense_shape`` that the sparse ``values`` describe.

    Parameters
    ----------
    values : ndarray
        The stored (non-zero) values, 1-D, in traversal order.
    dense_shape : sequence of int
    traversal_order : sequence of int
        Dimension ids, the original ones (``< rank``) then block ones (``rank + b``).
    block_map : sequence of int
        The original dimension each block dimension refines.
    dim_metadata : sequence of DimensionMetadata
        One per level of ``traversal_order``.

    Returns
    -------
    ndarray
        ``dense_shape``, dtype of ``values``.
    """
    values = np.asarray(values).reshape(-1)
    shape = tuple(int(d) for d in dense_shape)
    order = [int(d) for d in traversal_order]
    rank = len(shape)
    if len(dim_metadata) != len(order) or sorted(order) != list(range(len(order))) \
            or len(order) != rank + len(block_map):
        raise ValueError(f"densify: traversal_order {order}, block_map {list(block_map)} and "
                         f"{len(dim_metadata)} dimension metadata do not fit rank {rank}")
    dense_size = [int(m.dense_size) for m in dim_metadata]
    positions = np.zeros(1, np.int64)
    coords = []
    for meta in dim_metadata:
        positions, index, counts = _level(positions, DimensionMetadata(*meta))
        # Each child inherits its parent's coordinates on the earlier levels.
        coords = [np.repeat(c, counts) for c in coords] + [index]
    orig = [np.zeros(positions.size, np.int64) for _ in range(rank)]
    for k in range(rank):
        orig[order[k]] = coords[k]
    for k in range(rank, len(order)):
        b = order[k] - rank
        orig[block_map[b]] = orig[block_map[b]] * dense_size[order[rank + b]] + coords[k]
    if positions.size > values.size:
        raise ValueError(f"densify: the sparsity describes {positions.size} values, the tensor "
                         f"holds {values.size}")
    flat = np.ravel_multi_index(orig, shape) if rank else np.zeros(positions.size, np.int64)
    out = np.zeros(int(np.prod(shape, dtype=np.int64)), values.dtype)
    out[flat] = values[:positions.size]
    return out.reshape(shape)
