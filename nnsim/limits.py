"""Size limits checked before nnsim allocates a tensor or a kernel buffer.

A model can declare shapes that no machine can hold (a patched input of [1, 2^31-1] float32 is
8 GiB). LiteRT allocates and dies; nnsim is a diagnostic tool, so it refuses such a size with a
one-line error naming the tensor, before numpy is asked for the memory.

The limit is ``NNSIM_MAX_TENSOR_BYTES`` (bytes; suffixes K, M, G allowed) or, by default, the
smaller of 4 GiB and a quarter of the physical memory. It applies to every single tensor or
buffer, and to the sum of the graph's non-constant tensors (TFLite's arena is at most that).
"""
from __future__ import annotations

import os

import numpy as np

__all__ = ["TensorTooLargeError", "max_tensor_bytes", "check_bytes", "shape_bytes"]

_DEFAULT_CAP = 4 << 30
_SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class TensorTooLargeError(MemoryError):
    """A tensor or buffer is larger than the allowed size; raised before allocating it."""


def _physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def max_tensor_bytes() -> int:
    """The limit in bytes (``NNSIM_MAX_TENSOR_BYTES`` or the default)."""
    text = os.environ.get("NNSIM_MAX_TENSOR_BYTES", "").strip().upper().removesuffix("B")
    if text:
        mult = _SUFFIX.get(text[-1], 1)
        digits = text[:-1] if text[-1] in _SUFFIX else text
        try:
            value = int(float(digits) * mult)
        except ValueError:
            raise ValueError(f"NNSIM_MAX_TENSOR_BYTES={os.environ['NNSIM_MAX_TENSOR_BYTES']!r} "
                             f"is not a byte count (e.g. 4G, 500M, 1048576)") from None
        if value > 0:
            return value
    phys = _physical_memory()
    return min(_DEFAULT_CAP, phys // 4) if phys else _DEFAULT_CAP


def shape_bytes(shape, dtype) -> int:
    """Byte size of a dense array (Python ints: no overflow)."""
    count = 1
    for d in shape:
        count *= max(int(d), 0)
    return count * np.dtype(dtype).itemsize


def _human(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def check_bytes(what: str, nbytes: int, limit: int | None = None) -> None:
    """Raise ``TensorTooLargeError`` when ``nbytes`` exceeds the limit; ``what`` names it."""
    limit = max_tensor_bytes() if limit is None else limit
    if nbytes > limit:
        raise TensorTooLargeError(
            f"{what} needs {_human(nbytes)}, more than the limit of {_human(limit)} "
            f"(NNSIM_MAX_TENSOR_BYTES raises it)")
