"""Shared benchmark fixtures: the shared models folder and a session summary of nnsim / LiteRT
ratios (printed after pytest-benchmark's tables)."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks._results import RESULTS  # noqa: E402


def pytest_terminal_summary(terminalreporter):
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
