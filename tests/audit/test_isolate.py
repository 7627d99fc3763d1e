"""nnsim.audit.isolate: every way a task's process can end is a value, never a crash."""
from __future__ import annotations

import os
import signal
import time

import numpy as np

from nnsim.audit.isolate import Isolated, Limits, human_bytes, parse_bytes, run_one


def _double(x):
    return {"value": 2 * x, "pid": os.getpid(), "state": os.environ.get("NNSIM_STATE_DIR")}


def _sleep():
    time.sleep(60)


def _hog():
    blocks = []
    for _ in range(200):          # 40 MB at a time, touched, until the watchdog kills it
        blocks.append(np.ones(5_000_000))
        time.sleep(0.01)
    return len(blocks)


def _huge():
    return int(np.zeros(1 << 36, np.uint8).sum())   # 64 GiB: over the address-space limit


def _segfault():
    os.kill(os.getpid(), signal.SIGSEGV)


def _raise():
    raise KeyError("lost")


def test_every_ending_is_a_verdict():
    pool = Isolated(3, Limits(timeout_s=1.5, memory_bytes=200 << 20))
    for tag, fn, args in [("ok", _double, (21,)), ("sleep", _sleep, ()), ("hog", _hog, ()),
                          ("huge", _huge, ()), ("segv", _segfault, ()), ("raise", _raise, ())]:
        pool.submit(tag, fn, args)
    start = time.monotonic()
    got = dict(pool.results())
    assert time.monotonic() - start < 10
    status, value = got["ok"]
    assert status == "ok" and value["value"] == 42
    assert value["pid"] != os.getpid()                       # it ran in a child
    assert value["state"] and value["state"] != os.environ.get("NNSIM_STATE_DIR")
    assert not os.path.exists(value["state"])                # its state folder is gone
    assert got["sleep"] == ("timeout", "timed out after 1.5 s (the per-task timeout); killed")
    assert got["hog"][0] == "memory" and "memory cap of 200 MiB" in got["hog"][1]
    assert got["huge"][0] == "memory" and "out of memory" in got["huge"][1]
    assert got["segv"][0] == "crashed" and "SIGSEGV" in got["segv"][1]
    assert got["raise"] == ("crashed", "KeyError: 'lost'")


def test_jobs_run_at_once():
    """Two sleeping tasks with 2 jobs take one sleep, not two."""
    pool = Isolated(2, Limits(timeout_s=0.8, memory_bytes=1 << 30))
    pool.submit(1, _sleep)
    pool.submit(2, _sleep)
    start = time.monotonic()
    assert [v[0] for _, v in pool.results()] == ["timeout", "timeout"]
    assert time.monotonic() - start < 1.6


def test_run_one_and_byte_counts():
    assert run_one(_double, (1,), Limits())[1]["value"] == 2
    assert parse_bytes("4G") == 4 << 30 and parse_bytes("512M") == 512 << 20
    assert parse_bytes("1.5K") == 1536 and parse_bytes("1000") == 1000
    assert parse_bytes("64MiB") == 64 << 20
    assert human_bytes(64 << 20) == "64 MiB"
