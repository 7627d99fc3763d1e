"""One task in a process of its own, with a timeout and a memory cap.

A model can hang a kernel, exhaust memory or kill the interpreter; the audit must outlive it.
``Isolated`` runs many calls at once, each in a child forked for it (POSIX ``fork``: the child
inherits the imported modules and starts at once), and turns every way a child can end into a
value the caller gets back:

* ``("ok", value)``: the function returned ``value`` (pickled back through a pipe);
* ``("timeout", message)``: still running after ``timeout_s``; killed;
* ``("memory", message)``: its resident memory grew past ``memory_bytes`` (polled); killed.
  The child also gets ``NNSIM_MAX_TENSOR_BYTES`` = the cap (nnsim refuses a larger tensor with
  a clear error before allocating it) and an address-space limit a margin above the cap, so
  an allocation burst between two polls fails in the child instead of the machine;
* ``("crashed", message)``: it died (a signal, ``os._exit``, an exception escaping pickling),
  with the last line it wrote to stderr.

Children write their stdout and stderr to a file of their own (the parent's stderr carries the
progress bar) and get a fresh ``NNSIM_STATE_DIR``: no compile cache or board state leaks from
one task into another, so a result does not depend on which tasks ran before it, or where.
``Isolated`` forks with ``os.fork`` rather than ``multiprocessing``: Dask's worker processes are
daemonic, and multiprocessing refuses to start children from those.
"""
from __future__ import annotations

import faulthandler
import os
import pickle
import resource
import selectors
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field

from nnsim.limits import max_tensor_bytes

__all__ = ["Limits", "Isolated", "run_one", "parse_bytes", "human_bytes"]

POLL_S = 0.05
#: Address-space headroom above the cap (JIT compilation, thread stacks, allocator arenas).
AS_MARGIN = 1 << 30
_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 600.0
    memory_bytes: int = 4 << 30


def parse_bytes(text: str) -> int:
    """``4G``, ``512M``, ``1048576`` -> bytes (ValueError otherwise)."""
    t = str(text).strip().upper().removesuffix("IB").removesuffix("B")
    mult = _UNITS.get(t[-1:], 1)
    digits = t[:-1] if t[-1:] in _UNITS else t
    value = int(float(digits) * mult)
    if value <= 0:
        raise ValueError(f"{text!r} is not a positive byte count")
    return value


def human_bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.4g} {unit}"
    return f"{n} B"


def _rss_bytes(pid: int | str = "self") -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _vm_bytes() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@dataclass
class _Child:
    pid: int
    fd: int
    tag: object
    workdir: str
    started: float
    rss_base: int
    data: bytearray = field(default_factory=bytearray)
    verdict: tuple | None = None


class Isolated:
    """Run ``fn(*args)`` calls in forked children, at most ``jobs`` at a time.

    ``submit(tag, fn, args)`` starts one when a slot is free (else queues it); ``results()``
    yields ``(tag, (status, value))`` as children finish, in completion order."""

    def __init__(self, jobs: int, limits: Limits):
        self.jobs = max(1, int(jobs))
        self.limits = limits
        self._queue: list = []
        self._running: dict[int, _Child] = {}
        self._sel = selectors.DefaultSelector()

    def submit(self, tag, fn, args=()) -> None:
        self._queue.append((tag, fn, tuple(args)))

    def results(self):
        try:
            while self._queue or self._running:
                while self._queue and len(self._running) < self.jobs:
                    tag, fn, args = self._queue.pop(0)
                    child = self._start(tag, fn, args)
                    self._running[child.fd] = child
                    self._sel.register(child.fd, selectors.EVENT_READ, child)
                for child in self._poll():
                    yield child.tag, child.verdict
        finally:
            for child in list(self._running.values()):   # the caller stopped early
                self._kill(child)
                self._reap(child)

    # -- the child ------------------------------------------------------------------------
    def _start(self, tag, fn, args) -> _Child:
        workdir = tempfile.mkdtemp(prefix="nnsim-task-")
        rss_base = _rss_bytes() or 0
        read_fd, write_fd = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:   # the child: never returns
            os.close(read_fd)
            self._child_main(write_fd, workdir, fn, args)
        os.close(write_fd)
        os.set_blocking(read_fd, False)
        return _Child(pid, read_fd, tag, workdir, time.monotonic(), rss_base)

    def _child_main(self, fd: int, workdir: str, fn, args) -> None:
        code = 0
        try:
            log = os.open(os.path.join(workdir, "output.log"),
                          os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(log, 1)
            os.dup2(log, 2)
            faulthandler.disable()   # a crash is the parent's verdict, not a dump on its tty
            signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent decides on Ctrl-C
            state = os.path.join(workdir, "state")
            os.makedirs(state, exist_ok=True)
            os.environ["NNSIM_STATE_DIR"] = state
            cap = self.limits.memory_bytes
            current = os.environ.get("NNSIM_MAX_TENSOR_BYTES")
            try:
                keep = current and max_tensor_bytes() <= cap
            except ValueError:
                keep = False
            if not keep:
                os.environ["NNSIM_MAX_TENSOR_BYTES"] = str(cap)
            os.environ["NNSIM_AUDIT_MEMORY_CAP"] = human_bytes(cap)
            try:
                limit = _vm_bytes() + cap + AS_MARGIN
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            except (ValueError, OSError):
                pass
            try:
                payload = pickle.dumps(("ok", fn(*args)), protocol=pickle.HIGHEST_PROTOCOL)
            except MemoryError as e:
                payload = pickle.dumps(("memory", f"out of memory: {e}"))
            except BaseException as e:  # noqa: BLE001 -- reported, never raised
                payload = pickle.dumps(("crashed", f"{type(e).__name__}: {e}"))
            view = memoryview(payload)
            while view:
                n = os.write(fd, view)
                view = view[n:]
        except BaseException:  # noqa: BLE001 -- the child must reach os._exit
            code = 70
        finally:
            os._exit(code)

    # -- the parent -----------------------------------------------------------------------
    def _poll(self) -> list:
        done = []
        for key, _ in self._sel.select(timeout=POLL_S):
            child = key.data
            try:
                chunk = os.read(child.fd, 1 << 20)
            except BlockingIOError:
                continue
            if chunk:
                child.data.extend(chunk)
                continue
            self._finish(child)   # EOF: the child wrote everything and is exiting
            done.append(child)
        now = time.monotonic()
        for child in list(self._running.values()):
            if child.verdict is not None:
                continue
            if now - child.started > self.limits.timeout_s:
                self._kill(child)
                child.verdict = ("timeout", f"timed out after {self.limits.timeout_s:g} s "
                                            f"(the per-task timeout); killed")
            else:
                rss = _rss_bytes(child.pid)
                if rss is not None and rss - child.rss_base > self.limits.memory_bytes:
                    self._kill(child)
                    child.verdict = ("memory", f"exceeded the memory cap of "
                                               f"{human_bytes(self.limits.memory_bytes)} "
                                               f"(resident {human_bytes(rss)}); killed")
            if child.verdict is not None:
                self._reap(child)
                done.append(child)
        return done

    def _finish(self, child: _Child) -> None:
        _, status = os.waitpid(child.pid, 0)
        child.pid = -1
        if child.data:
            try:
                child.verdict = pickle.loads(bytes(child.data))
            except Exception as e:  # noqa: BLE001 -- a truncated message is a crash
                child.verdict = ("crashed", f"unreadable result ({type(e).__name__})")
        else:
            child.verdict = ("crashed", self._death(status, child))
        self._reap(child)

    def _death(self, status: int, child: _Child) -> str:
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = str(sig)
            what = f"the task's process died of signal {name}"
            if sig == signal.SIGKILL:
                what += " (killed from outside: often the system running out of memory)"
        else:
            what = f"the task's process exited with code {os.WEXITSTATUS(status)}"
        tail = _last_line(os.path.join(child.workdir, "output.log"))
        return what + (f"; its last output: {tail}" if tail else "")

    def _kill(self, child: _Child) -> None:
        if child.pid > 0:
            try:
                os.kill(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(child.pid, 0)
            child.pid = -1

    def _reap(self, child: _Child) -> None:
        if child.fd in self._running:
            del self._running[child.fd]
            self._sel.unregister(child.fd)
            os.close(child.fd)
        shutil.rmtree(child.workdir, ignore_errors=True)


def _last_line(path: str) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 4096))
            lines = [ln.strip() for ln in f.read().decode(errors="replace").splitlines()
                     if ln.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


def run_one(fn, args, limits: Limits) -> tuple:
    """One call in a child of its own: ``(status, value)`` as ``Isolated.results`` gives."""
    pool = Isolated(1, limits)
    pool.submit(None, fn, args)
    for _, verdict in pool.results():
        return verdict
    raise RuntimeError("no result")   # unreachable: every submitted call yields a verdict
