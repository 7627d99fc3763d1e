"""Data-movement kernels: TILE, FILL, PACK, REVERSE, CHANNEL_SHUFFLE, MIRROR_PAD.

Every output element is a copy of one input element (or of one fill value), so these are
numpy index arithmetic with no numba core and no per-element Python code. Quantized tensors
move raw values: NNAPI requires (or, for TILE and CHANNEL_SHUFFLE, sets) the output to share
the input's quantization. Arguments are checked here with ``ValueError``; the NNAPI operation
modules check them first and fail the operation with OP_FAILED.
"""

from __future__ import annotations

import numpy as np

__all__ = ["tile", "fill", "pack", "reverse", "channel_shuffle", "mirror_pad",
           "MIRROR_PAD_REFLECT", "MIRROR_PAD_SYMMETRIC"]

#: NNAPI MIRROR_PAD modes (``mirror_pad_op::kModeReflect`` / ``kModeSymmetric``).
MIRROR_PAD_REFLECT, MIRROR_PAD_SYMMETRIC = 0, 1


def tile(x, multiples):
    """Repeat ``x`` ``multiples[d]`` times along each dimension ``d`` (AOSP ``tile::eval``).

    ``multiples`` has one non-negative entry per dimension of ``x``; the output dimension ``d``
    is ``x.shape[d] * multiples[d]``, its blocks are whole copies of ``x`` in row-major order.
    """
    x = np.asarray(x)
    reps = [int(m) for m in np.asarray(multiples).reshape(-1)]
    if len(reps) != x.ndim or min(reps, default=0) < 0:
        raise ValueError(f"multiples {reps} must be {x.ndim} non-negative values")
    return np.tile(x, reps) if x.ndim else x.copy()


def fill(shape, value, dtype):
    """A new array of ``shape`` with every element equal to ``value`` converted to ``dtype``."""
    shape = tuple(int(d) for d in shape)
    if min(shape, default=0) < 0:
        raise ValueError(f"fill shape {shape} has a negative dimension")
    return np.full(shape, np.asarray(value).astype(dtype), dtype=dtype)


def pack(tensors, axis):
    """Stack ``tensors`` (same shape and dtype, rank >= 1) along a new dimension ``axis``.

    ``axis`` is in [0, rank] (NNAPI PACK takes no negative axis); the new dimension's size is
    the number of tensors.
    """
    arrays = [np.asarray(t) for t in tensors]
    if not arrays:
        raise ValueError("pack needs at least one tensor")
    first = arrays[0]
    if any(a.shape != first.shape or a.dtype != first.dtype for a in arrays):
        raise ValueError("pack: every tensor must have the shape and dtype of the first")
    if not 0 <= int(axis) <= first.ndim:
        raise ValueError(f"pack axis {axis} out of range [0, {first.ndim}]")
    return np.stack(arrays, axis=int(axis))


def reverse(x, axes):
    """Reverse ``x`` along each dimension of ``axes`` (one int or distinct ints in [0, rank);
    NNAPI REVERSE passes one axis, TFLite REVERSE_V2 several, normalised)."""
    x = np.asarray(x)
    axes = [int(a) for a in np.asarray(axes).reshape(-1)]
    if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"reverse axes {axes} must be distinct and in [0, {x.ndim})")
    return np.ascontiguousarray(np.flip(x, tuple(axes))) if axes else x.copy()


def channel_shuffle(x, num_groups, axis):
    """NNAPI CHANNEL_SHUFFLE: split dimension ``axis`` (size ``G * n``) into ``G`` groups of
    ``n`` and interleave them: ``out[.., i * G + j, ..] = x[.., j * n + i, ..]``.

    ``axis`` may be negative; ``num_groups`` must be positive and divide the dimension.
    """
    x = np.asarray(x)
    axis = int(axis) + x.ndim if int(axis) < 0 else int(axis)
    if not 0 <= axis < x.ndim:
        raise ValueError(f"channel_shuffle axis out of range for rank {x.ndim}")
    size, groups = x.shape[axis], int(num_groups)
    if groups <= 0 or size % groups:
        raise ValueError(f"{groups} groups do not divide dimension {axis} of size {size}")
    outer = int(np.prod(x.shape[:axis], dtype=np.int64))
    inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
    blocks = x.reshape(outer, groups, size // groups, inner)
    return np.ascontiguousarray(blocks.transpose(0, 2, 1, 3)).reshape(x.shape)


def mirror_pad_indices(size: int, before: int, after: int, mode: int) -> np.ndarray:
    """Input index of every output position of one padded dimension.

    REFLECT mirrors about the edge element (which is not repeated), SYMMETRIC about the edge
    itself (repeated), as ``getInputDimension`` in AOSP ``MirrorPad.cpp``; each side may pad at
    most ``size - 1`` (REFLECT) or ``size`` (SYMMETRIC) elements, so one reflection suffices.
    """
    offset = 1 if mode == MIRROR_PAD_REFLECT else 0
    limit = size - offset
    if not 0 <= before <= limit or not 0 <= after <= limit:
        raise ValueError(f"mirror padding ({before}, {after}) exceeds {limit} for size {size}")
    positions = np.arange(before + size + after, dtype=np.int64) - before
    left = -positions - 1 + offset                   # -1 -> offset, -2 -> 1 + offset, ...
    right = 2 * size - 1 - offset - positions        # size -> size - 1 - offset, ...
    return np.where(positions < 0, left, np.where(positions >= size, right, positions))


def mirror_pad(x, paddings, mode):
    """NNAPI MIRROR_PAD / TFLite MIRROR_PAD: pad with mirrored copies of ``x``.

    ``paddings`` is [rank, 2] (before, after) per dimension; ``mode`` is
    :data:`MIRROR_PAD_REFLECT` or :data:`MIRROR_PAD_SYMMETRIC`.
    """
    x = np.asarray(x)
    paddings = np.asarray(paddings, dtype=np.int64).reshape(-1, 2)
    if paddings.shape[0] != x.ndim:
        raise ValueError(f"paddings has {paddings.shape[0]} rows for a rank-{x.ndim} input")
    if int(mode) not in (MIRROR_PAD_REFLECT, MIRROR_PAD_SYMMETRIC):
        raise ValueError(f"unknown mirror pad mode {mode}")
    index = [mirror_pad_indices(d, int(p[0]), int(p[1]), int(mode))
             for d, p in zip(x.shape, paddings)]
    return np.ascontiguousarray(x[np.ix_(*index)]) if index else x.copy()
