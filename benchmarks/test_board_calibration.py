"""Board calibration: published board numbers vs the timing model (drivers/data/*.json).

Run: ``pytest benchmarks/test_board_calibration.py -s``. Prints, per board, the table of
published vs simulated numbers (the one in benchmarks/README.md) and fails when an error
exceeds 15%. The simulated numbers are deterministic; the benchmark fixture times one full
calibration pass (model conversion, compilation, executions) on this machine.

``test_vx_calibration`` does the same for the VX delegate (``vx_calibration`` in the board
profiles, each number with its source): VS680's timvx benchmark_model run of
mobilenet_v1_0.25_224_quant (average 1096.48 us, minimum 810 us, first inference 201009 us) is
what the ``vx`` parameters are fitted to, with SyNAP's Offline init column for the NBG load;
the "Online NPU" column for mobilenet_v2_1.0_224_quant and inception_v4_299_quant
(``held_back``) is not used to fit and checks the model. A model missing from
../shared/models is reported as absent, not tested. The reference notes give no VX delegate
figure for the i.MX 8M Plus (npu-drivers.md 2.9), so that board has none.
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
from tests.drivers.vx_calibration import format_vx_table, vx_calibration_rows  # noqa: E402

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


@pytest.mark.skipif(not MODELS.is_dir(), reason=f"shared models not found at {MODELS}")
@pytest.mark.parametrize("board", sorted(BOARDS))
def test_vx_calibration(board, benchmark):
    if not BOARDS[board].vx_calibration:
        pytest.skip(f"{board}: no published VX delegate figure (npu-drivers.md 2.9)")
    rows = benchmark.pedantic(vx_calibration_rows, args=(board, MODELS), rounds=1, iterations=1)
    benchmark.extra_info["vx_calibration"] = [
        {k: r[k] for k in ("model", "metric", "held_back", "published", "simulated", "error")}
        for r in rows]
    print("\n" + format_vx_table(rows))
    for r in rows:
        if r["simulated"] is None:
            print(f"not tested: {r['note']}")
    tested = [r for r in rows if r["simulated"] is not None]
    assert any(r["held_back"] for r in tested), "no held-back number could be checked"
    assert all(abs(r["error"]) <= TOLERANCE for r in tested), format_vx_table(rows)
