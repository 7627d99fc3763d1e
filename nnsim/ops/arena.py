"""Shared buffers for the intermediate values of a planned execution, as TFLite's
``ArenaPlanner`` (``simple_memory_arena.cc``).

Each prepared operation computes into a buffer of its own; kept apart, a model's activations
span several megabytes (MobileNet v2: 7 MB), so every layer writes into memory last touched an
execution earlier and long gone from the core's cache. TFLite places tensors whose lifetimes
do not overlap at the same offsets of one arena (largest first, each at the lowest offset free
for its lifetime): MobileNet v2's activations then fit in 1.5 MB, and each layer writes where
a layer a few steps earlier wrote. Measured on MobileNet v2 (benchmarks/README.md, "Seventh
session"): 4-8% faster on the TFLite CPU path.

:func:`share` re-homes the values a caller names (the TFLite interpreter when it binds its
plan, :mod:`nnsim.ops.executor` after a prepared model's first execution), through the
``adopt`` callback of whatever owns each buffer; a buffer that shares memory with another
value (a RESHAPE's output is a view of its input) keeps its own.
"""
from __future__ import annotations

import numpy as np

from nnsim.kernels._common import ALIGN, aligned_empty

__all__ = ["plan_offsets", "share"]


def plan_offsets(sizes, lives):
    """Byte offsets for buffers of ``sizes`` alive over the inclusive step ranges ``lives``:
    largest first, each at the lowest :data:`ALIGN`-aligned offset where it overlaps no
    placed buffer whose range meets its own. Returns ``(offsets, arena size)``."""
    offsets = [0] * len(sizes)
    placed = []   # (offset, end, first, last)
    for k in sorted(range(len(sizes)), key=lambda k: (-sizes[k], k)):
        first, last = lives[k]
        busy = sorted((o, e) for o, e, f, l in placed if f <= last and first <= l)
        offset = 0
        for o, e in busy:
            if offset + sizes[k] <= o:
                break
            offset = max(offset, -(-e // ALIGN) * ALIGN)
        offsets[k] = offset
        placed.append((offset, offset + sizes[k], first, last))
    return offsets, max((e for _, e, _, _ in placed), default=0)


def share(lives, values, adopt):
    """Move the values named by ``lives`` (index -> inclusive range of the steps that write
    and read it) into one arena: each C-contiguous array of ``values`` that shares memory with
    no other value gets its offset, and ``adopt(index, old, new)`` (True when the owner now
    writes into ``new``) decides whether it moves; ``values`` is updated. The moved values'
    contents are undefined until their steps run again. Returns the arena, or None."""
    arrays = [(i, a) for i, a in values.items() if isinstance(a, np.ndarray)]
    movable = [i for i in lives if isinstance(values.get(i), np.ndarray)
               and values[i].flags.c_contiguous and values[i].nbytes
               and not any(j != i and np.may_share_memory(values[i], a) for j, a in arrays)]
    if len(movable) < 2:
        return None
    offsets, size = plan_offsets([values[i].nbytes for i in movable],
                                 [lives[i] for i in movable])
    arena = aligned_empty(size, np.uint8)
    for i, offset in zip(movable, offsets):
        old = values[i]
        new = arena[offset:offset + old.nbytes].view(old.dtype).reshape(old.shape)
        if adopt(i, old, new):
            values[i] = new
    return arena
