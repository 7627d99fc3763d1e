"""How many threads the kernels use: TFLite's ``num_threads`` (and an NNAPI execution's).

The setting is a context variable, so each Python thread (each concurrent execution) has its
own; it is read when a kernel plan is bound or run (``plan.bind(x, out)``, ``plan.run``), not
by the compiled cores. With 1 (the default) the plans run their serial cores exactly as before;
with ``n > 1`` the parallel kernels (CONV_2D's GEMM, DEPTHWISE_CONV_2D) split their output
into ``n`` parts, by output pixels (rows) or by blocks of output channels, and the thread
team (:mod:`nnsim.kernels.team`: the calling thread and ``n - 1`` workers) runs the parts;
the boundary between the two parts of a layer on two threads moves toward the thread that
ran faster (:func:`in_parts`).
Every output element is computed by the same instruction sequence whatever the split, so the
results are bit-identical for any thread count.

Use::

    from nnsim.kernels import threads
    with threads.num_threads(2):
        plan.run(x, out)

or ``token = threads.set_num_threads(2)`` ... ``threads.reset_num_threads(token)``.
"""

from __future__ import annotations

import contextvars
from contextlib import contextmanager

import numpy as np

from nnsim.kernels import team as _team
from nnsim.kernels._common import aligned_zeros

__all__ = ["get_num_threads", "set_num_threads", "reset_num_threads", "num_threads",
           "split", "per_part", "rows_or_channels", "in_parts"]

_NUM_THREADS = contextvars.ContextVar("nnsim_kernel_threads", default=1)

#: Below this many multiply-adds a GEMM layer runs serially (tuned when a parallel launch
#: cost about 2 us, a few times what these take; the thread team's costs about 1 us, and 50,000
#: measured the same on MobileNet v2 and the float v1 0.25 within the machine's noise);
#: depthwise layers, several times slower per multiply-add, use a quarter of it.
MIN_PARALLEL_WORK = 200_000


def get_num_threads() -> int:
    """The thread count of the current context (1 unless set)."""
    return _NUM_THREADS.get()


def set_num_threads(n) -> contextvars.Token:
    """Use ``n`` threads (an int >= 1; None or -1: 1, as TFLite's default) in this context;
    returns a token for :func:`reset_num_threads`."""
    if n is None or n == -1:
        n = 1
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"num_threads must be an int >= 1 (or -1), got {n!r}")
    return _NUM_THREADS.set(n)


def reset_num_threads(token: contextvars.Token) -> None:
    """Restore the thread count a :func:`set_num_threads` call replaced."""
    _NUM_THREADS.reset(token)


@contextmanager
def num_threads(n):
    """``with num_threads(n):`` kernels bound or run inside use ``n`` threads."""
    token = set_num_threads(n)
    try:
        yield
    finally:
        _NUM_THREADS.reset(token)


def in_parts(step, args, parts, units=None):
    """The layer bound in parts: a function of no arguments calling ``step(*args, t)`` for
    every row ``t`` of the array ``parts`` (the parts' bounds, among ``args``), run by the
    thread team (:mod:`nnsim.kernels.team`) on the current thread count. With ``units``
    ``(rows, channels)``, a layer of two parts has a movable boundary: ``parts[t]`` starts
    with part ``t``'s output rows (or pixels) and channels, ``(r_lo, r_hi, c_lo, c_hi)``, and
    the boundary of the split (of the channels when both parts have the same rows) moves in
    whole ``rows`` or ``channels`` toward the thread that ran faster
    (:class:`nnsim.kernels.team.Balance`; the step's results may not depend on it). The
    bound layer then moves bounds of its own (a copy of ``parts``, which takes its place in
    ``args``): a plan bound twice, as by two executions that may run at once, keeps one
    split, which neither may rewrite under the other."""
    if units is None or len(parts) != 2:
        return _team.bound(step, args, len(parts), get_num_threads())
    by_channels = parts[0, 0] == parts[1, 0]
    own = parts.copy()
    args = tuple(own if a is parts else a for a in args)
    balance = _team.Balance(own, 2 if by_channels else 0, units[1] if by_channels else units[0])
    return _team.bound(step, args, 2, get_num_threads(), balance)


def split(units: int, parts: int) -> list[tuple[int, int]]:
    """``units`` consecutive work units cut into at most ``parts`` non-empty, contiguous,
    nearly equal ranges ``(lo, hi)``."""
    parts = max(1, min(parts, units))
    return [(units * i // parts, units * (i + 1) // parts) for i in range(parts)]


#: Parts over output rows (pixels) are taken unless parts over channels spread the work this
#: much more evenly. A row part reads mostly what the same thread wrote in the previous layer
#: (split by rows as well); a channel part reads all of its input, half of it from the other
#: core's cache. Measured with 2 threads, each 2-thread invoke after a 1-thread one
#: (benchmarks/README.md): 1.1 turns MobileNet v2's 1x1 layers of 14x14 and 7x7 pixels
#: (channel parts 1-8% more even) to rows, and v2 ran 3-4% faster, v1 1%, the float v1 5-9%;
#: 1.5, which also turns v2's 7x7 depthwise layers (4 rows of 7 against 18 of 36 groups),
#: ran v2 2% slower.
ROWS_PREFERENCE = 1.1


def rows_or_channels(by_rows: list, by_channels: list, cost) -> list:
    """``by_rows`` unless ``by_channels`` is more than :data:`ROWS_PREFERENCE` times cheaper
    by ``cost(parts)`` (a tuple whose first item is the work of the largest part)."""
    if cost(by_rows)[0] <= ROWS_PREFERENCE * cost(by_channels)[0]:
        return by_rows
    return by_channels


def per_part(parts: int, template: np.ndarray, copy: bool = False) -> np.ndarray:
    """``parts`` copies of the 1-D ``template`` (zeroed, or with ``copy`` its contents) as the
    rows of one 64-byte aligned array, each row padded to a multiple of 4096 bytes: no two
    parts write the same cache line (false sharing), every row starts on a cache line (vector
    loads of whole lines are not split; :data:`nnsim.kernels._common.ALIGN`), and the rows
    are whole pages apart. Measured on the widened depthwise core (7x7x960, two threads, each
    on its own input and output copies): per-part rings 1536 or 1920 bytes apart made one of
    the two threads 35-55% slower, whichever part it ran; 1792, 2048, 4096 or 8192 bytes apart,
    or separate allocations, neither was (benchmarks/README.md, "Fifth session")."""
    per_page = max(1, 4096 // template.itemsize)
    width = -(-template.size // per_page) * per_page
    out = aligned_zeros((parts, width), template.dtype)
    if copy:
        out[:, :template.size] = template
    return out

