"""Compile claims (nnsim/kernels/_claims.py): while another process compiles a kernel variant
(holds its byte of the claims lock file), a waiting process blocks until it is done and a
giving-up one (the compiling child) raises Claimed; a cold `nnsim run`, invoke and child
together, compiles each variant in one process only.

Oracle: another process holding the lock (a helper process here, the compiling child in the
cold run), and numba's own compile events recorded in both processes."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import defaultdict

import numba
import numpy as np
import pytest

from nnsim.kernels import _claims
from nnsim.kernels._jit import JIT_ENABLED, njit
from nnsim.tools import warmup

pytestmark = pytest.mark.skipif(not JIT_ENABLED or _claims._fcntl is None
                                or not hasattr(os, "fork"),
                                reason="needs numba, fcntl locks and fork")

_HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
fcntl.lockf(fd, fcntl.LOCK_EX, 1, int(sys.argv[2]))
print("held", flush=True)
time.sleep(float(sys.argv[3]))
"""


@njit
def _claimed_kernel(x):
    return x * 2


def _hold(value, seconds):
    """Another process claims the variant of ``_claimed_kernel`` for ``value``'s type for
    ``seconds`` (returns once the claim is held)."""
    name = f"{_claimed_kernel.py_func.__module__}.{_claimed_kernel.py_func.__qualname__}"
    offset = _claims._offset(name, (numba.typeof(value),))
    path = _claims._DIRECTORY[0] / _claims.LOCK_NAME
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path), str(offset),
                               str(seconds)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_child_gives_up_a_variant_claimed_by_the_other_process():
    holder = _hold(np.int16(3), 60)
    try:
        with _claims.claiming(wait=False):
            with pytest.raises(_claims.Claimed):
                _claimed_kernel(np.int16(3))
            assert _claimed_kernel(np.uint16(3)) == 6   # another variant: not claimed
    finally:
        holder.kill()
        holder.wait()
    with _claims.claiming(wait=False):   # the claim is gone with the process
        assert _claimed_kernel(np.int16(3)) == 6


def test_the_invoke_waits_for_a_variant_claimed_by_the_other_process():
    holder = _hold(np.int32(5), 1.5)
    try:
        with _claims.claiming(wait=True):
            start = time.monotonic()
            assert _claimed_kernel(np.int32(5)) == 10
            waited = time.monotonic() - start
    finally:
        holder.kill()
        holder.wait()
    assert waited >= 1.0


def test_the_waiting_invoke_runs_its_spare_work_first():
    """Finding a variant claimed by the other process, the invoke runs its spare work
    (``spare_work``) before it waits: the tasks in order, each once, a kernel variant the
    other process holds skipped at once (not waited for), a failing task as if done; then it
    waits for the claim and loads the variant. With the claim free, no task runs."""
    ran = []

    def compile_free():   # another variant: compiled here
        ran.append(("free", _claimed_kernel(np.float32(2)) == 4))

    def compile_held():   # held by the other process: skipped, not waited for
        start = time.monotonic()
        try:
            _claimed_kernel(np.int8(1))
        finally:
            ran.append(("held", time.monotonic() - start))

    def fail():
        ran.append(("fail", None))
        raise ValueError("a spare task that fails")

    waited_for, held = _hold(np.int64(5), 2.0), _hold(np.int8(1), 60)
    try:
        with _claims.claiming(wait=True), _claims.spare_work([compile_free, compile_held,
                                                              fail]):
            start = time.monotonic()
            assert _claimed_kernel(np.int64(5)) == 10
            waited = time.monotonic() - start
            assert _claims._STATE[1] is True   # waiting again after the tasks
            with _claims.spare_work([lambda: ran.append(("late", None))]):
                assert _claimed_kernel(np.uint8(3)) == 6   # not claimed: no task runs
    finally:
        for holder in (waited_for, held):
            holder.kill()
            holder.wait()
    assert [name for name, _ in ran] == ["free", "held", "fail"]
    assert ran[0][1] is True and ran[1][1] < 1.0
    assert waited >= 1.0   # the tasks ran out before the claim was released: it waited


def test_no_claims_outside_claiming():
    holder = _hold(np.uint32(7), 60)
    try:
        assert _claims._STATE is None
        assert _claimed_kernel(np.uint32(7)) == 14   # neither waits nor raises
    finally:
        holder.kill()
        holder.wait()


_TRACER = """
import os, sys
from numba.core import event
out = sys.argv[1]

class Trace(event.Listener):
    def on_start(self, ev):
        d = ev.data["dispatcher"]
        with open(os.path.join(out, str(os.getpid())), "a") as f:
            f.write(f"{d.py_func.__module__}.{d.py_func.__qualname__}{tuple(ev.data['args'])}\\n")
    def on_end(self, ev):
        pass
event.register("numba:compile", Trace())
from nnsim.cli import main
sys.argv = ["nnsim", "run", sys.argv[2]]
main()
"""


def test_a_cold_run_compiles_each_variant_in_one_process_only(shared_dir, tmp_path):
    """kws_ref_model: its invoke and the child both reach the quantized SOFTMAX kernel (the
    child takes the last operation first), which without claims both compiled."""
    model = shared_dir / "models" / "kws_ref_model.tflite"
    if not model.exists():
        pytest.skip(f"no {model}")
    if not warmup.worth_it():
        pytest.skip("no compiling child on this host (one core, or turned off)")
    traces = tmp_path / "traces"
    traces.mkdir()
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    env.pop("NNSIM_WARM_UP", None)
    out = subprocess.run([sys.executable, "-c", _TRACER, str(traces), str(model)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    by_variant = defaultdict(set)
    for trace in traces.iterdir():
        for line in trace.read_text().splitlines():
            by_variant[line].add(trace.name)
    assert len({pid for pids in by_variant.values() for pid in pids}) == 2, \
        "no compiling child ran"
    assert any("softmax" in v for v in by_variant)
    # (numba's own helpers, which it compiles for a kernel's typing and never caches, are not
    # claimed: only nnsim's kernels are)
    twice = sorted(v for v, pids in by_variant.items() if len(pids) > 1 and v.startswith("nnsim"))
    assert twice == []
