"""Cold start: compile a model's kernels in a second process during the first invoke.

On a fresh install numba's cache is empty, and a first invoke compiles every kernel the model
needs as it meets them, one after the other: numba compiles under a process-wide lock, so
threads cannot share the work. A second process can. While the first invoke runs,
:func:`compiling_alongside` keeps a forked child running the same model's operations on zeros
(``Interpreter._warm_up``), kinds the invoke meets last first, so the child compiles what the
invoke needs later while the invoke compiles what it needs now. Both store what they compile
in numba's cache, where the other finds it instead of compiling again. Stores take a lock
(``nnsim.kernels._jit``), so the two processes never corrupt the cache. When the first invoke
is done, the child is stopped.

This happens only when the kernel cache is empty, the host has a second core, the process can
fork and runs no other thread, and the cache stores are locked. ``NNSIM_WARM_UP=0`` turns it
off.
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading

from nnsim.kernels._jit import cache_is_empty, cache_shared_safely

ENV = "NNSIM_WARM_UP"


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # not Linux
        return os.cpu_count() or 1


def worth_it() -> bool:
    """Whether a first invoke now would gain from a compiling child (see the module doc)."""
    return (os.environ.get(ENV, "1") != "0" and hasattr(os, "fork") and _cores() >= 2
            and threading.active_count() == 1 and cache_shared_safely() and cache_is_empty())


@contextlib.contextmanager
def compiling_alongside(interp):
    """Run the body (``interp``'s first invoke) with a child compiling the same model's
    kernels, when :func:`worth_it`; the child is stopped when the body ends, however."""
    pid = _start(interp) if worth_it() else None
    try:
        yield
    finally:
        if pid is not None:
            _stop(pid)


def _start(interp) -> int | None:
    try:
        pid = os.fork()
    except OSError:   # no room for a process: compile in this one only
        return None
    if pid == 0:   # the child: compile quietly, then leave without running any exit handler
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's to handle
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            interp._warm_up()
        finally:
            os._exit(0)
    return pid


def _stop(pid: int) -> None:
    """Stop the child (what it still compiles, the parent no longer needs); a store it was
    writing is replaced atomically by numba, so at most a temporary file is left behind."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
