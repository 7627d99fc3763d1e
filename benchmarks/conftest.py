"""Shared benchmark fixtures: the shared models folder and a session summary of nnsim / LiteRT
ratios (printed after pytest-benchmark's tables)."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks._results import PATHS, RESULTS  # noqa: E402


LITERT_PIN: dict = {}   # arch_flags before/after, when NNSIM_LITERT_AVX2=1 pinned XNNPACK


def pytest_configure(config):
    """``NNSIM_LITERT_AVX2=1`` (set by ``benchmarks/avx2_only.py`` where CPUID faulting is
    missing): LiteRT's XNNPACK held to AVX2 before any interpreter exists."""
    import os
    if os.environ.get("NNSIM_LITERT_AVX2") == "1":
        from benchmarks.litert_avx2 import pin
        LITERT_PIN["before"], LITERT_PIN["after"] = pin()


def pytest_terminal_summary(terminalreporter):
    _paths_summary(terminalreporter)
    models = sorted({m for m, _ in RESULTS})
    rows = [(m, RESULTS.get((m, "nnsim")), RESULTS.get((m, "litert"))) for m in models]
    rows = [r for r in rows if r[1] and r[2]]
    if not rows:
        return
    terminalreporter.write_line("")
    terminalreporter.write_line("nnsim vs LiteRT, single thread, median per inference:")
    for model, ours, theirs in rows:
        terminalreporter.write_line(f"  {model:<50} nnsim {ours * 1e3:8.2f} ms   LiteRT "
                                    f"{theirs * 1e3:8.2f} ms   ratio {ours / theirs:5.2f}x")


def _paths_summary(terminalreporter):
    if not PATHS:
        return
    import os

    from nnsim.kernels._jit import SIMD_MODE
    cpu = os.environ.get("NUMBA_CPU_NAME") or "host CPU"
    if "nnsim-avx2-only" in os.environ.get("LD_PRELOAD", ""):
        cpu += " without AVX-512 for LiteRT too (benchmarks/avx2_only.py)"
    if LITERT_PIN:
        cpu += (f", LiteRT's XNNPACK held to AVX2 (arch_flags {LITERT_PIN['before']:#x} -> "
                f"{LITERT_PIN['after']:#x}, benchmarks/litert_avx2.py)")
    terminalreporter.write_line("")
    terminalreporter.write_line(f"execution paths, interleaved, single thread, median per "
                                f"inference (numba CPU: {cpu}, kernels: {SIMD_MODE}):")
    for model, m in PATHS.items():
        terminalreporter.write_line(
            f"  {model:<42} LiteRT {m['litert'] * 1e3:8.2f} ms  CPU path "
            f"{m['cpu'] * 1e3:8.2f} ms ({m['cpu'] / m['litert']:4.2f}x LiteRT)  NNAPI path "
            f"{m['nnapi'] * 1e3:8.2f} ms ({m['nnapi'] / m['cpu']:4.2f}x CPU path)")
