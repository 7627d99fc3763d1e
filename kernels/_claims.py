"""Compile claims: two processes compiling into one numba cache (:mod:`nnsim.tools.warmup`'s
first invoke and its compiling child) never compile the same kernel variant at once.

Without them, both processes often meet the same kernel within a fraction of a second (the
child runs a model's operation kinds from the last, the invoke from the first, and the middle
is shared) and both compile it: a second or more of one core wasted, and the invoke waits for
its own copy although the child's is nearly done.

While claims are on in a process (:func:`claiming`), each compilation of an nnsim kernel
variant (a dispatcher and its argument types: one entry of numba's cache) holds a claim for as
long as it runs: an exclusive POSIX (fcntl) lock on one byte of ``nnsim-jit-claims.lock`` in
the kernels' cache directory, the byte chosen by a hash of the variant. Finding the variant
claimed by the other process, the compilation either

* waits for the claim, then loads what the other process stored in the cache (``wait=True``:
  the invoke, which needs the kernel now), or
* gives the variant up at once by raising :class:`Claimed` (``wait=False``: the child, which
  goes on with another operation; the invoke will load it from the cache).

A waiting process first runs its *spare work* (:func:`spare_work`: compilations it will need
later, such as a plan's micro-kernels), one task at a time with claims given up (a variant
the other process holds is skipped, not waited for), looking again after each task; it waits
only when no task is left. Of an invoke and its child only the invoke ever waits, so they
cannot deadlock. Two independent invokes (two ``nnsim run`` on one cache) may both wait, each
for a variant the other compiles: a cycle would need two kernels each calling the other, and
should one ever form, the OS refuses one of the waits (EDEADLK) and that process compiles
unclaimed. A process that dies (the child is killed when the invoke ends) drops its claims
with it. Claims are an optimisation only: a hash collision or a nested compilation of the same
variant at worst releases a claim early, and the cache stores have their own lock
(:mod:`nnsim.kernels._jit`).
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import os
from pathlib import Path

try:
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - not POSIX
    _fcntl = None

__all__ = ["Claimed", "claiming", "give_up_claimed", "spare_work", "wrap"]

LOCK_NAME = "nnsim-jit-claims.lock"

#: (open lock-file descriptor, wait) while claims are on in this process, else None.
_STATE: tuple[int, bool] | None = None
_DIRECTORY: list[Path] = []   # the kernels' cache directory, known from the first wrap()
_SPARE: list = []   # [iterator of callables] a waiting compilation runs first (spare_work)
_DEPTH = [0]        # kernel compilations under way in this process (nested: callees)


class Claimed(RuntimeError):
    """The kernel variant is being compiled by the other process (raised when not waiting)."""


def wrap(dispatcher, cache_path) -> None:
    """Make ``dispatcher``'s compilations take claims while they are on; ``cache_path``: the
    directory where numba caches it."""
    if _fcntl is None:
        return
    if not _DIRECTORY:
        _DIRECTORY.append(Path(cache_path))
    compile_ = dispatcher.compile
    name = f"{dispatcher.py_func.__module__}.{dispatcher.py_func.__qualname__}"

    def compile(sig):
        _DEPTH[0] += 1
        try:
            return claimed(sig)
        finally:
            _DEPTH[0] -= 1

    def claimed(sig):
        state = _STATE
        # numba asks with a tuple of argument types (a call, a caller's typing); anything
        # else (an explicit signature) compiles unclaimed, as does a variant compiled here
        if state is None or not isinstance(sig, tuple) or sig in dispatcher.overloads:
            return compile_(sig)
        fd, wait = state
        offset = _offset(name, sig)
        try:
            # spare work only outside any other kernel's compilation: a task compiling a
            # kernel whose compilation is under way further up would be a recursion
            if not (wait and _DEPTH[0] == 1 and _spare_until_free(fd, offset)):
                _fcntl.lockf(fd, _fcntl.LOCK_EX if wait else _fcntl.LOCK_EX | _fcntl.LOCK_NB,
                             1, offset)
        except OSError as exc:
            if wait:   # no locks on this file system, or a deadlock: compile unclaimed
                return compile_(sig)
            raise Claimed(f"{name}{sig} is being compiled by another process") from exc
        try:
            return compile_(sig)
        finally:
            _fcntl.lockf(fd, _fcntl.LOCK_UN, 1, offset)

    dispatcher.compile = compile


def _spare_until_free(fd: int, offset: int) -> bool:
    """Take the claim at ``offset`` if it is free; while the other process holds it, run the
    spare tasks one by one (claims given up for them) and try again after each. True once
    taken; False when the tasks ran out first (the caller then waits for it)."""
    global _STATE
    while True:
        try:
            _fcntl.lockf(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB, 1, offset)
            return True
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EAGAIN) or not _SPARE:
                return False
        saved = _STATE
        _STATE = (saved[0], False)
        try:   # an optimisation only: a task that fails is as if done
            task = next(_SPARE[0], None)
            if task is None:
                return False
            task()
        except Exception:
            pass
        finally:
            _STATE = saved


@contextlib.contextmanager
def spare_work(tasks):
    """While the body runs, a compilation that finds its variant claimed by the other process
    runs ``tasks`` before it waits (see the module doc): an iterable of callables, each
    compiling what this process needs later and skipping what the other process holds,
    taken one at a time when first needed (a generator can defer finding them), each once."""
    _SPARE[:] = [iter(tasks)]
    try:
        yield
    finally:
        _SPARE.clear()


def _offset(name: str, args) -> int:
    """The byte of the lock file standing for a variant (the same in every process)."""
    key = f"{name}{tuple(str(a) for a in args)}".encode()
    return int.from_bytes(hashlib.sha1(key).digest()[:4], "little")


@contextlib.contextmanager
def claiming(wait: bool = True):
    """Claims on for the body, in this process and in any child forked inside it (which
    calls :func:`give_up_claimed` to stop waiting). Nothing happens when the cache directory
    is unknown or has no room for the lock file."""
    global _STATE
    if _fcntl is None or not _DIRECTORY or _STATE is not None:
        yield
        return
    try:
        fd = os.open(_DIRECTORY[0] / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:   # read-only cache directory: numba caches elsewhere, or not at all
        yield
        return
    _STATE = (fd, wait)
    try:
        yield
    finally:
        _STATE = None
        os.close(fd)   # (closing drops every claim this process still holds on the file)


def give_up_claimed() -> None:
    """In a process forked inside :func:`claiming`: from now on a variant the other process
    claims raises :class:`Claimed` instead of being waited for. (POSIX locks are not
    inherited by a child, so it starts with no claim of its own.)"""
    global _STATE
    _SPARE.clear()   # (the parent's: this process never waits)
    if _STATE is not None:
        _STATE = (_STATE[0], False)
