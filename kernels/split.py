"""SPLIT into equal parts along one axis (NNAPI ``splitGeneric``).

Pure data movement with numpy (views copied to contiguous arrays), so there is no numba core.
"""

from __future__ import annotations

import numpy as np

from nnsim.kernels import _common as cm

__all__ = ["split"]


def split(x, axis, num_splits):
    """Split ``x`` into ``num_splits`` equal slices along ``axis``.

    Parameters
    ----------
    x : ndarray
        Any dtype and rank >= 1.
    axis : int
        Negative counts from the end.
    num_splits : int
        >= 1 and dividing ``x.shape[axis]``.

    Returns
    -------
    list of ndarray
    """
    x = np.asarray(x)
    axis = cm.normalize_axis(axis, x.ndim)
    num_splits = int(num_splits)
    if num_splits < 1 or x.shape[axis] % num_splits:
        raise ValueError(f"cannot split a dimension of {x.shape[axis]} into {num_splits} parts")
    return [np.ascontiguousarray(p) for p in np.split(x, num_splits, axis=axis)]
