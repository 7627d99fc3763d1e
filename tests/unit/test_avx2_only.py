"""benchmarks/avx2_only.py: a process run through it sees the CPU without AVX-512, AVX-VNNI
and AMX (LLVM's host-feature detection is the oracle: it executes CPUID itself), picks nnsim's
AVX2 kernels, and still dies of a real segmentation fault. Skipped where the shim cannot run
(no CPUID faulting, no C compiler, not Linux x86-64)."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("avx2_only", ROOT / "benchmarks" / "avx2_only.py")
avx2_only = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(avx2_only)

pytestmark = pytest.mark.skipif(avx2_only.unavailable() is not None,
                                reason=f"avx2_only: {avx2_only.unavailable()}")

PROBE = ("import json, llvmlite.binding as ll; f = ll.get_host_cpu_features(); "
         "import nnsim.kernels._jit as j; "
         "print(json.dumps({k: bool(f.get(k)) for k in ('avx2', 'fma', 'avx512f', "
         "'avx512vnni', 'avx512bw', 'avxvnni', 'amx-int8')} | {'simd': j.SIMD_MODE}))")


def _run(*args, shim=True):
    cmd = [sys.executable, "-m", "benchmarks.avx2_only"] if shim else []
    return subprocess.run(cmd + [sys.executable, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False)


def test_avx512_hidden_avx2_kept():
    seen = json.loads(_run("-c", PROBE).stdout.strip().splitlines()[-1])
    assert seen == {"avx2": True, "fma": True, "avx512f": False, "avx512vnni": False,
                    "avx512bw": False, "avxvnni": False, "amx-int8": False, "simd": "avx2"}


def test_without_the_shim_the_host_is_unchanged():
    """The control: the same probe outside the shim reports what /proc/cpuinfo lists."""
    seen = json.loads(_run("-c", PROBE, shim=False).stdout.strip().splitlines()[-1])
    flags = set(Path("/proc/cpuinfo").read_text().split())
    assert seen["avx512f"] == ("avx512f" in flags)
    assert seen["avx512vnni"] == ("avx512_vnni" in flags)


def test_a_real_segfault_still_kills():
    done = _run("-c", "import ctypes; ctypes.string_at(0)")
    assert done.returncode == -11   # SIGSEGV, not resumed as if it were CPUID


def test_no_command_is_a_usage_error():
    done = subprocess.run([sys.executable, "-m", "benchmarks.avx2_only"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "python -m benchmarks.avx2_only" in done.stdout
