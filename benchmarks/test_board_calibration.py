"""Board calibration: published board numbers vs the timing model (drivers/data/*.json).

Run: ``pytest benchmarks/test_board_calibration.py -s``. Prints, per board, the table of
published vs simulated numbers (the one in benchmarks/README.md) and fails when an error
exceeds 15%. The simulated numbers are deterministic; the benchmark fixture times one full
calibration pass (model conversion, compilation, executions) on this machine.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from nnsim.drivers.boards import BOARDS  # noqa: E402
from tests.drivers.calibration import TOLERANCE, calibration_rows, format_table  # noqa: E402

MODELS = ROOT.parent / "shared" / "models"


@pytest.mark.skipif(not MODELS.is_dir(), reason=f"shared models not found at {MODELS}")
@pytest.mark.parametrize("board", sorted(BOARDS))
def test_board_calibration(board, benchmark):
    rows = benchmark.pedantic(calibration_rows, args=(board, MODELS), rounds=1, iterations=1)
    benchmark.extra_info["calibration"] = [
        {k: r[k] for k in ("device", "model", "metric", "published", "simulated", "error")}
        for r in rows]
    print("\n" + format_table(rows))
    assert all(abs(r["error"]) <= TOLERANCE for r in rows), format_table(rows)
