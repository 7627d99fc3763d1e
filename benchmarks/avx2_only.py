"""Run a command as on an AVX2-only CPU: ``python -m benchmarks.avx2_only COMMAND...``.

``NUMBA_CPU_NAME=haswell`` changes only the code numba generates: LiteRT (XNNPACK) still finds
AVX-512 VNNI and uses it, so it compares nnsim's AVX2 code with LiteRT's AVX-512 code. This
wrapper runs ``COMMAND`` with ``avx2_only.c`` preloaded (compiled with the machine's C compiler
on first use, kept in the temporary directory): every CPUID instruction of the process, its
threads and its children reports the CPU without AVX-512, AVX-VNNI and AMX, so LiteRT's
cpuinfo and LLVM's host-feature detection (hence nnsim's ``SIMD_MODE``) both see an AVX2 CPU
of the same cores and clock. Needs Linux on x86-64, a C compiler, and CPUID faulting
(``cpuid_fault`` in /proc/cpuinfo; KVM guests usually have it).

Under pytest, disable its faulthandler plugin (it replaces the SIGSEGV handler that answers
CPUID)::

    python -m benchmarks.avx2_only python -m pytest -p no:faulthandler \\
        benchmarks/test_paths.py -s --benchmark-columns=median,rounds

Without CPUID faulting (an AMD EPYC KVM guest, for one) it falls back, saying so on stderr, to
the next best: ``COMMAND`` runs with ``NUMBA_CPU_NAME=haswell`` (nnsim's AVX2 kernels) and
``NNSIM_LITERT_AVX2=1``, which makes the benchmarks' conftest hold LiteRT's XNNPACK to its AVX2
kernels in-process (``benchmarks/litert_avx2.py``) before any LiteRT interpreter exists. Only
code that goes through the benchmarks' conftest is affected on the LiteRT side.
"""
from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_suffix(".c")


def unavailable() -> str | None:
    """Why the shim cannot run here, or None."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        return "needs Linux on x86-64"
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "cannot read /proc/cpuinfo"
    if " cpuid_fault" not in flags:
        return "the CPU offers no CPUID faulting (no cpuid_fault in /proc/cpuinfo)"
    if not (shutil.which("cc") or shutil.which("gcc")):
        return "no C compiler (cc or gcc) on PATH"
    return None


def library() -> Path:
    """The compiled shim (built once per source version)."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    lib = Path(tempfile.gettempdir()) / f"nnsim-avx2-only-{digest}.so"
    if not lib.exists():
        tmp = lib.with_suffix(f".{os.getpid()}.tmp")
        cc = shutil.which("cc") or shutil.which("gcc")
        subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(tmp), str(SOURCE)], check=True)
        tmp.replace(lib)
    return lib


def environment() -> dict:
    """``os.environ`` with the shim preloaded."""
    preload = " ".join(p for p in (str(library()), os.environ.get("LD_PRELOAD", "")) if p)
    return dict(os.environ, LD_PRELOAD=preload)


def fallback_environment() -> dict:
    """``os.environ`` for the fallback without CPUID faulting (see the module docstring)."""
    return dict(os.environ, NUMBA_CPU_NAME="haswell", NNSIM_LITERT_AVX2="1")


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    reason = unavailable()
    if reason:
        print(f"avx2_only: cannot hide AVX-512 from the whole process here ({reason}); "
              "nnsim runs NUMBA_CPU_NAME=haswell and the benchmarks hold LiteRT's XNNPACK "
              "to AVX2 (NNSIM_LITERT_AVX2=1, benchmarks/litert_avx2.py)", file=sys.stderr)
        os.execvpe(argv[0], argv, fallback_environment())
    os.execvpe(argv[0], argv, environment())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
