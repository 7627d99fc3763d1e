"""benchmarks/_link.py: the cache-line round trip between CPUs 0 and 1 that test_threads.py
prints beside each speed-up. On two CPUs it is a plausible latency (a round trip takes at
least two cache-line transfers: more than a nanosecond, far less than a millisecond) and the
calling thread keeps its CPUs; with one CPU there is nothing to measure."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from nnsim.kernels import _jit

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_link", ROOT / "benchmarks" / "_link.py")
link = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(link)

needs_two = pytest.mark.skipif(
    not _jit.JIT_ENABLED or not hasattr(os, "sched_getaffinity")
    or len(os.sched_getaffinity(0)) < 2, reason="needs the JIT and two CPUs")


@needs_two
def test_round_trip_is_a_latency_and_leaves_the_caller_unpinned():
    before = os.sched_getaffinity(0)
    ns = link.core_round_trip_ns(rounds=5_000)   # after the default settle: no spinning worker
    assert 1.0 < ns < 1e6
    assert os.sched_getaffinity(0) == before


def test_one_cpu_gives_none(monkeypatch):
    if hasattr(os, "sched_getaffinity"):
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert link.core_round_trip_ns(settle=0.0) is None
