"""Cold start: compile a model's kernels in a second process during the first invoke.

A first invoke that meets kernels neither compiled in this process nor in numba's cache (a
fresh install, changed kernel sources, a model with operations no earlier run compiled)
compiles them as it meets them, one after the other: numba compiles under a process-wide lock,
so threads cannot share the work. A second process can. :func:`compiling_alongside` waits for
the invoke's first compilation and forks there a child that runs the same model's operations
on zeros (``nnsim.tflite.warm_up``), kinds the invoke meets last first, so the child compiles
what the invoke needs later while the invoke compiles what it needs now. Both store what they
compile in numba's cache, where the other finds it instead of compiling again. Stores take a
lock (``nnsim.kernels._jit``), so the two processes never corrupt the cache. Compilations take
claims (``nnsim.kernels._claims``): a kernel the child is compiling, the invoke waits for and
loads instead of compiling it a second time, compiling meanwhile what it will need later and
the child has not done yet (the plan's GEMM micro-kernels and padded copy,
``nnsim.tflite.warm_up.spare_compiles``); one the invoke is compiling, the child skips.
When the first invoke is done, the child is stopped. An invoke that compiles nothing (a warm
cache) starts no child: the second core stays free and the first inference's host time
undisturbed.

The child is forked from inside numba's compiler (its compile-start event), holding numba's
compiler lock, which is re-entrant: the child's compilations nest in that frame as a kernel's
callees do, and the child leaves with ``os._exit`` without returning to it. (A kernel that
calls the one being compiled at the fork fails in the child, which numba takes for recursion;
the child skips that operation and the parent compiles it.)

This happens only when the host has a second core, the process can fork and runs no other
thread, and the cache stores are locked. ``NNSIM_WARM_UP=0`` turns it off.
"""
from __future__ import annotations

import contextlib
import gc
import os
import signal
import threading

from nnsim.kernels._claims import claiming, give_up_claimed, spare_work
from nnsim.kernels._jit import cache_shared_safely, on_first_compile

ENV = "NNSIM_WARM_UP"


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # not Linux
        return os.cpu_count() or 1


def _single_threaded() -> bool:
    return threading.active_count() == 1


def worth_it() -> bool:
    """Whether a first invoke that compiles could gain from a compiling child (see the module
    doc); whether it compiles is known only when it does."""
    return (os.environ.get(ENV, "1") != "0" and hasattr(os, "fork") and _cores() >= 2
            and cache_shared_safely())


@contextlib.contextmanager
def compiling_alongside(interp):
    """Run the body (``interp``'s first invoke); when :func:`worth_it`, a child compiling the
    same model's kernels is forked at the body's first compilation (none: no child), and
    stopped when the body ends, however."""
    if not worth_it():
        yield
        return
    child: list = []

    def fork_here():
        if _single_threaded():   # forking copies this thread only
            pid = _start(interp)
            if pid is not None:
                child.append(pid)
    try:
        spare = getattr(interp, "_spare_compiles", tuple)()   # (none: wait idle)
        with claiming(wait=True), spare_work(spare), on_first_compile(fork_here):
            yield
    finally:
        for pid in child:
            _stop(pid)
        if child:
            gc.unfreeze()


def _start(interp) -> int | None:
    # the objects alive now out of the collector's reach until the child is stopped: a
    # collection marks each object it visits, which after the fork copies every page of the
    # heap it touches (copy on write), in both processes
    gc.freeze()
    try:
        pid = os.fork()
    except OSError:   # no room for a process: compile in this one only
        gc.unfreeze()
        return None
    if pid == 0:   # the child: compile quietly, then leave without running any exit handler
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's to handle
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            give_up_claimed()   # skip what the invoke is compiling, never wait for it
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
