"""The timing model reproduces the published board numbers within 15% (drivers/data/*.json)."""
from __future__ import annotations

import pytest

from nnsim.drivers.boards import BOARDS
from tests.drivers.calibration import TOLERANCE, calibration_rows, format_table


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_board_calibration(board, models_dir):
    rows = calibration_rows(board, models_dir)
    assert rows, f"{board} has no calibration entries"
    bad = [r for r in rows if abs(r["error"]) > TOLERANCE]
    assert not bad, "\n" + format_table(rows)
