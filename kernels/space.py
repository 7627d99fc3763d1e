"""SPACE_TO_DEPTH, DEPTH_TO_SPACE, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND on NHWC tensors.

Pure data movement (TFLite ``reference_ops`` semantics, which NNAPI's CPU executor calls), done
with numpy reshapes and transposes, so there is no numba core::

    space_to_depth:   out[b, h, w, (dy * bs + dx) * C + c] = x[b, h * bs + dy, w * bs + dx, c]
    depth_to_space:   inverse of space_to_depth
    space_to_batch:   out[(dy * bw + dx) * N + b, h, w, c] = padded[b, h * bh + dy, w * bw + dx, c]
    batch_to_space:   inverse of space_to_batch (no crops in NNAPI)

Any dtype; quantized tensors move raw (input and output share their quantization), and
SPACE_TO_BATCH_ND pads with ``pad_value`` (the zero point for quantized tensors).
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm

__all__ = ["space_to_depth", "depth_to_space", "space_to_batch_nd", "batch_to_space_nd"]


def _block(value, name: str) -> int:
    value = int(value)
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value


def space_to_depth(x, block_size):
    """Move ``block_size`` x ``block_size`` spatial blocks into the depth dimension.

    Parameters
    ----------
    x : ndarray [N, H, W, C]
        Any dtype; H and W must be multiples of ``block_size``.
    block_size : int
        >= 1.

    Returns
    -------
    ndarray [N, H / bs, W / bs, C * bs * bs]
    """
    x = np.asarray(x)
    cm.check_rank("input", x, 4)
    bs = _block(block_size, "block_size")
    n, h, w, c = x.shape
    if h % bs or w % bs:
        raise ValueError(f"height {h} and width {w} must be multiples of the block size {bs}")
    y = x.reshape(n, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5)
    return np.ascontiguousarray(y).reshape(n, h // bs, w // bs, c * bs * bs)


def depth_to_space(x, block_size):
    """Move depth into ``block_size`` x ``block_size`` spatial blocks (inverse of
    :func:`space_to_depth`).

    Parameters
    ----------
    x : ndarray [N, H, W, C]
        Any dtype; C must be a multiple of ``block_size ** 2``.
    block_size : int
        >= 1.

    Returns
    -------
    ndarray [N, H * bs, W * bs, C / (bs * bs)]
    """
    x = np.asarray(x)
    cm.check_rank("input", x, 4)
    bs = _block(block_size, "block_size")
    n, h, w, c = x.shape
    if c % (bs * bs):
        raise ValueError(f"depth {c} must be a multiple of block_size^2 = {bs * bs}")
    co = c // (bs * bs)
    y = x.reshape(n, h, w, bs, bs, co).transpose(0, 1, 3, 2, 4, 5)
    return np.ascontiguousarray(y).reshape(n, h * bs, w * bs, co)


def space_to_batch_nd(x, block_shape, paddings, *, pad_value=0):
    """Pad the spatial dimensions, then move spatial blocks into the batch dimension.

    Parameters
    ----------
    x : ndarray [N, H, W, C]
        Any dtype.
    block_shape : array-like [2]
        Block height and width, >= 1.
    paddings : array-like [2, 2]
        (top, bottom), (left, right), >= 0; the padded sizes must be multiples of the block.
    pad_value : scalar
        Fill value (the zero point for quantized tensors).

    Returns
    -------
    ndarray [N * bh * bw, (H + pads) / bh, (W + pads) / bw, C]
    """
    x = np.asarray(x)
    cm.check_rank("input", x, 4)
    bh, bw = (_block(v, "block_shape") for v in np.asarray(block_shape).reshape(2))
    pads = np.asarray(paddings, dtype=np.int64).reshape(2, 2)
    if (pads < 0).any():
        raise ValueError("paddings must be >= 0")
    n, h, w, c = x.shape
    ph, pw = h + int(pads[0].sum()), w + int(pads[1].sum())
    if ph % bh or pw % bw:
        raise ValueError(f"padded size {ph}x{pw} is not a multiple of the block {bh}x{bw}")
    padded = np.full((n, ph, pw, c), pad_value, dtype=x.dtype)
    padded[:, pads[0, 0]:pads[0, 0] + h, pads[1, 0]:pads[1, 0] + w, :] = x
    y = padded.reshape(n, ph // bh, bh, pw // bw, bw, c).transpose(2, 4, 0, 1, 3, 5)
    return np.ascontiguousarray(y).reshape(bh * bw * n, ph // bh, pw // bw, c)


def batch_to_space_nd(x, block_shape):
    """Move batch blocks back into the spatial dimensions (inverse of
    :func:`space_to_batch_nd` without padding).

    Parameters
    ----------
    x : ndarray [N, H, W, C]
        Any dtype; N must be a multiple of ``bh * bw``.
    block_shape : array-like [2]
        Block height and width, >= 1.

    Returns
    -------
    ndarray [N / (bh * bw), H * bh, W * bw, C]
    """
    x = np.asarray(x)
    cm.check_rank("input", x, 4)
    bh, bw = (_block(v, "block_shape") for v in np.asarray(block_shape).reshape(2))
    n, h, w, c = x.shape
    if n % (bh * bw):
        raise ValueError(f"batch {n} must be a multiple of the block size {bh}x{bw}")
    nb = n // (bh * bw)
    y = x.reshape(bh, bw, nb, h, w, c).transpose(2, 3, 0, 4, 1, 5)
    return np.ascontiguousarray(y).reshape(nb, h * bh, w * bw, c)
