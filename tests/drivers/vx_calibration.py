"""The VX delegate's timing against published numbers (``vx_calibration`` of a board profile).

:func:`vx_calibration_rows` runs each model through ``nnsim.tflite.Interpreter`` with the VX
delegate on the board (the real code path: partitioning, kernels, first-invoke compilation)
and returns, per published number, the simulated value and the relative error:

* ``first_us``: the simulated time of the first invoke (the graph compilation and one run);
* ``avg_us``: a later invoke (benchmark_model's average: the run delay included);
* ``min_us``: a later invoke without the mean run delay (a minimum over runs, as SyNAP's
  "Online" columns are);
* ``nbg_load_us``: the first invoke's NBG load when ``cache_file_path`` holds the binary.

Rows whose model is not in ``../shared/models`` have ``simulated`` None and a ``note``.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

import nnsim
from nnsim.drivers.boards import get_board
from nnsim.runtime.board import apply_board
from nnsim.tflite.cpu_timing import cpu_node_ns
from tests.drivers.calibration import restored_state

TOLERANCE = 0.15


def _plan_ns(interp, board, minimum: bool = False) -> float:
    """Simulated time of the last invoke: VX partitions at their own time, CPU nodes at the
    board's CPU model; ``minimum``: without the partitions' mean run delay."""
    total = 0.0
    for item in interp.plan_items():
        if item.kind == "node":
            total += cpu_node_ns(interp.model.main, item.index, board)
            continue
        kernel = interp.delegation.kernels[item.index]
        total += kernel.last_simulated_ns - (kernel.cost.run_delay_ns if minimum else 0.0)
    return total


def simulate(board_name: str, model_path: Path, metric: str, scratch: Path) -> float:
    """One simulated number in microseconds; ``scratch`` is an empty directory."""
    from nnsim.tflite import Interpreter, load_delegate
    nnsim.reset_props()
    board = apply_board(board_name)
    os.environ["NNSIM_STATE_DIR"] = str(scratch / "state")
    options = {}
    if metric == "nbg_load_us":
        options = {"allowed_cache_mode": "true", "cache_file_path": "/data/local/tmp/m.nb"}
        _invoke_once(Interpreter, load_delegate, model_path, options)   # writes the NBG
    interp = _invoke_once(Interpreter, load_delegate, model_path, options)
    kernels = interp.delegation.kernels
    assert len(kernels) == 1 and len(kernels[0].nodes) == len(interp.model.main.operators), \
        f"{model_path.name}: not wholly delegated"
    if metric == "nbg_load_us":
        assert kernels[0].first_run.kind == "nbg-load"
        return kernels[0].first_run.ns / 1000.0
    if metric == "first_us":
        return _plan_ns(interp, board) / 1000.0
    interp.invoke()
    return _plan_ns(interp, board, minimum=metric == "min_us") / 1000.0


def _invoke_once(Interpreter, load_delegate, model_path: Path, options: dict):
    interp = Interpreter(model_path=str(model_path),
                         experimental_delegates=[load_delegate("libvx_delegate.so", options)])
    interp.allocate_tensors()
    for d in interp.get_input_details():
        info = np.iinfo(d["dtype"]) if np.dtype(d["dtype"]).kind in "iu" else None
        x = np.random.default_rng(0).integers(info.min, int(info.max) + 1, d["shape"],
                                              dtype=d["dtype"]) if info else \
            np.zeros(d["shape"], d["dtype"])
        interp.set_tensor(d["index"], x)
    interp.invoke()
    return interp


def vx_calibration_rows(board_name: str, models_dir: Path) -> list[dict]:
    board = get_board(board_name)
    rows = []
    with restored_state():
        for entry in board.vx_calibration:
            path = models_dir / entry["model"]
            published = float(entry["published"])
            row = {**entry, "board": board_name, "device": "VX delegate", "published": published}
            if not path.exists():
                rows.append({**row, "simulated": None, "error": None,
                             "note": f"{entry['model']} is not in {models_dir}"})
                continue
            with tempfile.TemporaryDirectory() as scratch:
                sim = simulate(board_name, path, entry["metric"], Path(scratch))
            rows.append({**row, "simulated": sim, "error": (sim - published) / published})
    return rows


def format_vx_table(rows: list[dict]) -> str:
    lines = ["| board | model | metric | held back | published (us) | simulated (us) | error |",
             "|---|---|---|---|---:|---:|---:|"]
    for r in rows:
        sim = "absent" if r["simulated"] is None else f"{r['simulated']:.2f}"
        err = "-" if r["error"] is None else f"{100 * r['error']:+.1f}%"
        lines.append(f"| {r['board']} | {r['model']} | {r['metric']} | "
                     f"{'yes' if r.get('held_back') else 'no'} | {r['published']:.2f} | {sim} | "
                     f"{err} |")
    return "\n".join(lines)
