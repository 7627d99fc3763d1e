"""SCATTER_ND: a zero tensor of ``shape`` with ``updates`` added at ``indices`` (TFLite).

``reference_ops::ScatterNd``: the output is zeroed, then slice i of ``updates`` is added at the
position ``indices[i]`` names, in order of i. Repeated indices accumulate: float32 sums in that
order, integers wrap (``WrappingAdd``), bool ORs. 8-bit tensors add raw values (no
requantization). An index outside the output is an error (nothing is written past it).
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels._jit import njit

__all__ = ["scatter_nd", "scatter_nd_shape_check"]

_TYPES = tuple(np.dtype(t) for t in (np.float32, np.uint8, np.bool_, np.int8, np.int64,
                                     np.int32))


def scatter_nd_shape_check(indices_shape, updates_shape, shape):
    """TFLite ``CheckShapes``: raise ValueError unless the three shapes agree."""
    indices_shape, updates_shape = tuple(indices_shape), tuple(updates_shape)
    shape = tuple(int(d) for d in shape)
    if len(indices_shape) < 1 or len(updates_shape) < 1:
        raise ValueError("scatter_nd: indices and updates need rank >= 1")
    outer = len(indices_shape) - 1
    ix = indices_shape[outer]
    if indices_shape[:outer] != updates_shape[:outer] \
            or len(updates_shape) - outer != len(shape) - ix \
            or updates_shape[outer:] != shape[ix:]:
        raise ValueError(f"scatter_nd: indices {indices_shape}, updates {updates_shape} and "
                         f"shape {shape} do not agree")


def scatter_nd(indices, updates, shape):
    """Scatter-add ``updates`` into zeros of ``shape``.

    Parameters
    ----------
    indices : ndarray
        int32, shape ``(..., ix)``.
    updates : ndarray
        float32, uint8, int8, int32, int64 or bool; shape ``indices.shape[:-1] + shape[ix:]``.
    shape : sequence of int
        The output shape.

    Returns
    -------
    ndarray
        ``shape``, dtype of ``updates``.
    """
    indices, updates = np.asarray(indices), np.asarray(updates)
    if updates.dtype not in _TYPES:
        raise TypeError(f"scatter_nd: updates dtype {updates.dtype.name} not supported")
    shape = tuple(int(d) for d in shape)
    scatter_nd_shape_check(indices.shape, updates.shape, shape)
    ix = indices.shape[-1]
    # Integers accumulate in int64 and wrap once at the end (the same sum modulo 2**bits as
    # TFLite's per-step WrappingAdd); bool ORs as uint8; float32 adds in float32, in order.
    kind = updates.dtype.kind
    work = np.int64 if kind in "iu" else np.uint8 if kind == "b" else np.float32
    flat_out = np.zeros(int(np.prod(shape, dtype=np.int64)), work)
    flat_upd = np.ascontiguousarray(updates).reshape(-1).astype(work)
    # Elements per step of each indexed dimension (TFLite's dims_to_count).
    strides = np.array([int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(ix)],
                       np.int64)
    slice_size = int(np.prod(shape[ix:], dtype=np.int64))
    is_bool = kind == "b"
    rows = int(np.prod(indices.shape[:-1], dtype=np.int64))
    bad = _scatter_core(np.ascontiguousarray(indices, np.int64).reshape(rows, ix),
                        np.array(shape[:ix], np.int64), strides, slice_size, flat_upd, is_bool,
                        flat_out)
    if bad >= 0:
        raise IndexError(f"scatter_nd: index {indices.reshape(rows, ix)[bad].tolist()} is out of "
                         f"bounds for shape {shape}")
    return flat_out.astype(updates.dtype).reshape(shape)


@njit
def _scatter_core(indices, dims, strides, slice_size, updates, is_bool, out):
    """Returns -1, or the number of the first index row that is out of bounds."""
    for i in range(indices.shape[0]):
        to = 0
        for j in range(indices.shape[1]):
            k = indices[i, j]
            if k < 0 or k >= dims[j]:
                return i
            to += k * strides[j]
        for j in range(slice_size):
            u = updates[i * slice_size + j]
            if is_bool:
                out[to + j] = 1 if (out[to + j] != 0 or u != 0) else 0
            else:
                out[to + j] = out[to + j] + u
    return -1
