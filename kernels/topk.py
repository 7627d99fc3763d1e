"""TOPK_V2: the ``k`` largest values of each innermost row and their indices.

Two tie orders exist upstream, both deterministic, and they differ:

* ``ties="nnapi"`` (AOSP ``TopK_V2.cpp``): each row becomes (value, index) pairs, the ``k``
  largest *pairs* are found with ``std::nth_element`` + ``std::sort`` and output in reverse,
  i.e. ordered by value descending and, among equal values, by index **descending**;
* ``ties="tflite"`` (TFLite ``topk_v2.cc``): value descending, equal values by index
  **ascending**.

A row is sorted with numpy's stable sort (values compared in their own dtype, so float16 and
the 8-bit types compare as AOSP's templates do); no per-element Python code.
"""

from __future__ import annotations

import numpy as np

__all__ = ["topk"]


def topk(x, k, *, ties="nnapi"):
    """``(values, indices)`` of the ``k`` largest entries along the last dimension of ``x``.

    Parameters
    ----------
    x : ndarray
        Rank >= 1, any real dtype (quantized tensors compare raw values, which order them as
        their real values do).
    k : int
        In [0, x.shape[-1]] (NNAPI itself requires k >= 1).
    ties : {"nnapi", "tflite"}
        Order of equal values (see the module docstring).

    Returns
    -------
    (ndarray, ndarray)
        Values (dtype of ``x``) and int32 indices, both of shape ``x.shape[:-1] + (k,)``.
    """
    x = np.asarray(x)
    k = int(k)
    if x.ndim < 1 or not 0 <= k <= x.shape[-1]:
        raise ValueError(f"k = {k} must be in [0, {x.shape[-1] if x.ndim else 0}]")
    if ties == "nnapi":
        # ascending (value, index) pairs, reversed: value descending, then index descending
        order = np.argsort(x, axis=-1, kind="stable")[..., ::-1][..., :k]
    elif ties == "tflite":
        # a stable sort of the reversed row, mapped back, orders equal values by index ascending
        n = x.shape[-1]
        order = (n - 1 - np.argsort(x[..., ::-1], axis=-1, kind="stable"))[..., ::-1][..., :k]
    else:
        raise ValueError(f"unknown tie order {ties!r}")
    values = np.take_along_axis(x, order, axis=-1)
    return np.ascontiguousarray(values), np.ascontiguousarray(order, dtype=np.int32)
