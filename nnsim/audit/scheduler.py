"""Many tasks, one record each: on a local process pool or a Dask cluster, resumable.

A ``Task`` is one model and one ``Combination`` (or a ``graph`` page of one model on one
board). Each runs in a process of its own (``nnsim.audit.isolate``), whichever scheduler runs
it: locally ``jobs`` children of this process at a time; on Dask (``--scheduler ADDRESS`` or
``dask-local`` for a ``LocalCluster`` of ``jobs`` workers) one Dask task per Task, forking its
child inside the worker, the model's bytes scattered to the cluster once per model (workers
need no shared file system). Either way the record is the one ``engine.evaluate`` returns in a
fresh process, so tables do not depend on the scheduler.

``ResultCache`` keeps every finished record under a key made of nnsim's version and source
digest, the model's SHA-256 and the task; an interrupted audit run again skips what is cached.
Timeouts, crashes and memory-cap rows are not cached: they are retried.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

# What every task needs is imported with this module, in the parent process: forked children
# (and Dask workers, which import this module to run dask_task) start warm.
import nnsim
import nnsim.commands.run  # noqa: F401
import nnsim.drivers
import nnsim.drivers.boards  # noqa: F401
import nnsim.explain  # noqa: F401
import nnsim.explain_vx  # noqa: F401
import nnsim.kernels
import nnsim.tflite.interpreter  # noqa: F401
from nnsim.audit.engine import Combination, error_record, evaluate
from nnsim.audit.isolate import Isolated, Limits, run_one
from nnsim.commands import graph
from nnsim.commands.errors import Parser

__all__ = ["Task", "ResultCache", "run_tasks", "code_digest", "RETRIED"]

CONNECT_TIMEOUT = "10s"   # to a --scheduler address
#: Statuses that say nothing about the model itself: not cached, retried on the next run.
RETRIED = frozenset({"timeout", "crashed", "memory"})


@dataclass(frozen=True)
class Task:
    path: str                      # where this machine reads the model
    name: str                      # how records name it
    sha256: str
    combo: Combination
    run: bool = False
    kind: str = "combination"      # or "graph": the model's `nnsim graph` page on combo.board

    def key(self) -> str:
        return f"{self.kind}:{self.name}:{self.combo.key()}" + (":run" if self.run else "")


def execute(task: Task, data: bytes | None = None):
    """What the child runs: the record of a combination, or (for ``graph``) the HTML page."""
    model = data if data is not None else task.path
    if task.kind == "graph":
        return graph_page(model, task)
    return evaluate(model, task.combo, run=task.run, name=task.name)


def graph_page(model, task: Task) -> str:
    """``nnsim graph MODEL -o page.html --board B --android_sdk N`` (the command itself, its
    flags parsed as the CLI parses them)."""
    parser = Parser(prog="nnsim graph")
    graph.add_arguments(parser)
    with tempfile.TemporaryDirectory() as tmp:
        path = model if isinstance(model, str) else os.path.join(tmp, "model.tflite")
        if not isinstance(model, str):
            Path(path).write_bytes(model)
        out = os.path.join(tmp, "graph.html")
        args = parser.parse_args([path, "-o", out, "--board", task.combo.board,
                                  "--android_sdk", str(task.combo.android_sdk)])
        graph.run(args, io.StringIO())
        return Path(out).read_text(encoding="utf-8")


def verdict_record(task: Task, verdict: tuple):
    """The task's result: its value, or an error record (graph pages: None)."""
    status, value = verdict
    if status == "ok":
        return value
    if task.kind == "graph":
        return None
    return error_record(task.name, task.combo, status, str(value), task.sha256)


# -- the result cache ---------------------------------------------------------------------------
def code_digest() -> str:
    """nnsim's version and a digest of its installed source: a new nnsim invalidates caches."""
    roots = {Path(m.__file__).resolve().parent for m in (nnsim, nnsim.drivers, nnsim.kernels)}
    h = hashlib.sha256(nnsim.__version__.encode())
    for r in sorted(roots):
        for f in sorted(r.rglob("*")):
            if f.suffix in (".py", ".json") and "__pycache__" not in f.parts:
                h.update(str(f.relative_to(r)).encode())
                h.update(f.read_bytes())
    return f"{nnsim.__version__}+{h.hexdigest()[:16]}"


class ResultCache:
    """Records on disk, one JSON file per task, keyed by code digest, model hash and task."""

    def __init__(self, folder: Path | None, code: str):
        self.folder = None if folder is None else Path(folder)
        self.code = code

    def _path(self, task: Task) -> Path:
        what = json.dumps({"code": self.code, "model": task.sha256, "kind": task.kind,
                           "combo": asdict(task.combo), "run": task.run, "name": task.name},
                          sort_keys=True)
        key = hashlib.sha256(what.encode()).hexdigest()
        return self.folder / key[:2] / f"{key}.json"

    def get(self, task: Task):
        if self.folder is None:
            return None
        try:
            return json.loads(self._path(task).read_text(encoding="utf-8"))["value"]
        except (OSError, ValueError, KeyError):
            return None

    def put(self, task: Task, value) -> None:
        if self.folder is None or value is None:
            return
        if isinstance(value, dict) and value.get("status") in RETRIED:
            return
        path = self._path(task)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps({"task": task.key(), "value": value}), encoding="utf-8")
        os.replace(tmp, path)   # atomic: an interrupted write leaves no half record


# -- running ---------------------------------------------------------------------------------
def run_tasks(tasks: list, *, jobs: int, limits: Limits, scheduler: str | None = None,
              cache: ResultCache | None = None, progress=None):
    """Yield ``(task, value)`` for every task, cached ones first. ``progress`` is called once
    per finished task with (task, value, cached)."""
    cache = cache or ResultCache(None, "")
    todo = []
    for task in tasks:
        value = cache.get(task)
        if value is not None:
            if progress:
                progress(task, value, True)
            yield task, value
        else:
            todo.append(task)
    if not todo:
        return
    runner = _run_dask if scheduler else _run_local
    for task, value in runner(todo, jobs, limits, scheduler):
        cache.put(task, value)
        if progress:
            progress(task, value, False)
        yield task, value


def _run_local(tasks, jobs, limits, _scheduler):
    pool = Isolated(jobs, limits)
    for i, task in enumerate(tasks):
        pool.submit(i, execute, (task,))
    for i, verdict in pool.results():
        yield tasks[i], verdict_record(tasks[i], verdict)


def dask_task(task: Task, data: bytes, limits: Limits):
    """The Dask task: the same isolated child, forked inside the worker."""
    return verdict_record(task, run_one(execute, (task, data), limits))


def _run_dask(tasks, jobs, limits, scheduler):
    try:
        from distributed import Client, LocalCluster, as_completed   # optional: the dask extra
    except ImportError:
        raise RuntimeError("--scheduler needs Dask: pip install 'nnsim[dask]'") from None
    cluster = None
    if scheduler == "dask-local":
        cluster = LocalCluster(n_workers=max(1, jobs), threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(scheduler, timeout=CONNECT_TIMEOUT)
    try:
        datas, futures = {}, {}
        for task in tasks:
            if task.sha256 not in datas:
                datas[task.sha256] = client.scatter(Path(task.path).read_bytes(), hash=False)
            f = client.submit(dask_task, task, datas[task.sha256], limits, pure=False,
                              key=f"nnsim-{hashlib.sha1(task.key().encode()).hexdigest()}"
                                  f"-{os.getpid()}")
            futures[f.key] = (f, task)
        for f in as_completed([f for f, _ in futures.values()]):
            task = futures[f.key][1]
            try:
                value = f.result()
            except Exception as e:  # noqa: BLE001 -- a lost worker is a row, not a crash
                value = verdict_record(task, ("crashed", f"Dask: {type(e).__name__}: {e}"))
            yield task, value
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
