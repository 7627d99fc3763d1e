"""Data-movement kernels: TRANSPOSE, SQUEEZE, SLICE, STRIDED_SLICE, GATHER, GATHER_ND.

Pure index arithmetic, done with numpy (no per-element Python), so there is no numba core.
Quantized tensors move raw values (TFLite requires the output to share the input's
quantization). Out-of-range indices raise ``IndexError`` (TFLite fails the node).
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm

__all__ = ["transpose", "squeeze", "slice_", "strided_slice", "strided_slice_index", "gather",
           "gather_nd"]


def transpose(x, perm):
    """``out.shape[i] = x.shape[perm[i]]`` (negative entries count from the end)."""
    x = np.asarray(x)
    perm = [cm.normalize_axis(int(p), x.ndim) for p in np.asarray(perm).reshape(-1)]
    if sorted(perm) != list(range(x.ndim)):
        raise ValueError(f"perm {perm} is not a permutation of {x.ndim} axes")
    return np.ascontiguousarray(np.transpose(x, perm))


def squeeze(x, axes=None):
    """Drop the size-1 dimensions listed in ``axes`` (all of them when empty or None)."""
    x = np.asarray(x)
    if not axes:
        return x.reshape(tuple(d for d in x.shape if d != 1))
    dims = {cm.normalize_axis(int(a), x.ndim) for a in axes}
    for d in dims:
        if x.shape[d] != 1:
            raise ValueError(f"cannot squeeze dimension {d} of size {x.shape[d]}")
    return x.reshape(tuple(s for i, s in enumerate(x.shape) if i not in dims))


def slice_(x, begin, size):
    """TFLite SLICE: ``x[begin[i] : begin[i] + size[i]]``, ``size[i] == -1`` = to the end."""
    x = np.asarray(x)
    begin = [int(b) for b in np.asarray(begin).reshape(-1)]
    size = [int(s) for s in np.asarray(size).reshape(-1)]
    if len(begin) != x.ndim or len(size) != x.ndim:
        raise ValueError(f"begin {begin} and size {size} need {x.ndim} entries")
    index = []
    for d, (b, s) in enumerate(zip(begin, size)):
        end = x.shape[d] if s == -1 else b + s
        if b < 0 or s < -1 or end > x.shape[d] or end < b:
            raise IndexError(f"slice [{b}, {end}) out of range for dimension {d} of size "
                             f"{x.shape[d]}")
        index.append(slice(b, end))
    return np.ascontiguousarray(x[tuple(index)])


def strided_slice_index(rank, begin, end, strides, *, begin_mask=0, end_mask=0,
                        ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, offset=False):
    """The numpy index tuple of a TFLite/TF STRIDED_SLICE on a rank-``rank`` input.

    Spec entry ``i`` is an ellipsis (bit ``i`` of ``ellipsis_mask``, first one only), a new
    axis, a shrunk axis (an integer index) or a Python slice with the masked ends left open;
    with ``offset`` the end is relative to the begin. Python slice clamping is TF's.
    """
    begin = [int(v) for v in np.asarray(begin).reshape(-1)]
    end = [int(v) for v in np.asarray(end).reshape(-1)]
    strides = [int(v) for v in np.asarray(strides).reshape(-1)]
    if not len(begin) == len(end) == len(strides):
        raise ValueError("begin, end and strides must have the same length")
    if any(s == 0 for s in strides):
        raise ValueError("strides must be non-zero")
    index, seen_ellipsis = [], False
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if ellipsis_mask & bit and not seen_ellipsis:
            index.append(Ellipsis)
            seen_ellipsis = True
        elif new_axis_mask & bit:
            index.append(np.newaxis)
        elif shrink_axis_mask & bit:
            index.append(("shrink", b))
        else:
            if offset:
                e = b + e
            index.append(slice(None if begin_mask & bit else b,
                               None if end_mask & bit else e, s))
    return index


def strided_slice(x, begin, end, strides, *, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, offset=False):
    """TFLite STRIDED_SLICE (TF semantics, masks as in the op's options)."""
    x = np.asarray(x)
    spec = strided_slice_index(x.ndim, begin, end, strides, begin_mask=begin_mask,
                               end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                               new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask,
                               offset=offset)
    used = sum(1 for s in spec if s is not np.newaxis and s is not Ellipsis)
    if used > x.ndim:
        raise ValueError(f"{used} sliced dimensions for a rank-{x.ndim} input")
    # Resolve shrink indices against the dimension they address.
    ell = spec.index(Ellipsis) if Ellipsis in spec else None
    dims_after_ellipsis = sum(1 for s in spec[ell + 1:] if s is not np.newaxis) \
        if ell is not None else 0
    index, dim = [], 0
    for k, s in enumerate(spec):
        if s is Ellipsis:
            skip = x.ndim - dim - dims_after_ellipsis
            index.append(Ellipsis)
            dim += skip
        elif s is np.newaxis:
            index.append(np.newaxis)
        elif isinstance(s, tuple):
            size = x.shape[dim]
            i = s[1] + size if s[1] < 0 else s[1]
            if not 0 <= i < size:
                raise IndexError(f"shrink index {s[1]} out of range for dimension {dim} of "
                                 f"size {size}")
            index.append(i)
            dim += 1
        else:
            index.append(s)
            dim += 1
    return np.ascontiguousarray(x[tuple(index)])


def gather(params, indices, axis=0, batch_dims=0):
    """TFLite GATHER: ``out = params[..., indices, ...]`` along ``axis`` (TF semantics)."""
    params, indices = np.asarray(params), np.asarray(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"indices must be integers, got {indices.dtype.name}")
    axis = cm.normalize_axis(axis, params.ndim)
    if batch_dims < 0:
        batch_dims += indices.ndim
    if not 0 <= batch_dims <= min(axis, indices.ndim):
        raise ValueError(f"batch_dims {batch_dims} invalid for axis {axis} and indices rank "
                         f"{indices.ndim}")
    limit = params.shape[axis]
    if indices.size and (indices.min() < 0 or indices.max() >= limit):
        raise IndexError(f"gather index out of bounds (axis size {limit})")
    if batch_dims == 0:
        return np.ascontiguousarray(np.take(params, indices.astype(np.int64), axis=axis))
    batch_shape = params.shape[:batch_dims]
    if indices.shape[:batch_dims] != batch_shape:
        raise ValueError("params and indices batch dimensions differ")
    n = int(np.prod(batch_shape, dtype=np.int64))
    p = params.reshape((n,) + params.shape[batch_dims:])
    ix = indices.reshape((n,) + indices.shape[batch_dims:]).astype(np.int64)
    parts = [np.take(p[b], ix[b], axis=axis - batch_dims) for b in range(n)]
    out = np.stack(parts) if parts else np.empty((0,), params.dtype)
    return np.ascontiguousarray(out.reshape(batch_shape + out.shape[1:]))


def gather_nd(params, indices):
    """TFLite GATHER_ND: ``out[i...] = params[indices[i..., :]]``."""
    params, indices = np.asarray(params), np.asarray(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"indices must be integers, got {indices.dtype.name}")
    if indices.ndim < 1:
        raise ValueError("indices must have rank >= 1")
    k = indices.shape[-1]
    if k > params.ndim:
        raise ValueError(f"index depth {k} exceeds params rank {params.ndim}")
    flat = indices.reshape(-1, k).astype(np.int64)
    limits = np.asarray(params.shape[:k], dtype=np.int64)
    if flat.size and ((flat < 0).any() or (flat >= limits).any()):
        raise IndexError("gather_nd index out of bounds")
    picked = params[tuple(flat.T)] if k else np.broadcast_to(params, (flat.shape[0],)
                                                              + params.shape)
    return np.ascontiguousarray(picked.reshape(indices.shape[:-1] + params.shape[k:]))
