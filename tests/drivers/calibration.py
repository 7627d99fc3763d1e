"""The calibration of the timing model: published board numbers vs simulated ones.

Each board profile lists the numbers it must reproduce (``calibration`` in
drivers/data/<board>.json, from npu-drivers.md 4.5 and the issue brief). :func:`calibration_rows`
runs the real models through the NNAPI runtime on that board and returns, per number, the
published value, the simulated value and the relative error:

* ``avg_us``: ``Timing.driver_ns`` of a steady-state execution (the whole model on the NPU);
* ``first_us``: the first execution, no SyNAP cache entry and no NNAPI cache (the conversion);
* ``first_cached_us``: the first execution of a second compilation that loads the NNAPI
  compilation cache (``vendor.npu.cache.model=1``);
* ``avg_us`` on nnapi-reference: the CPU cost of the whole model (``NNAPI_SYNAP_DISABLE=1``).
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import numpy as np

import nnsim
from nnsim.drivers.boards import get_board
from nnsim.runtime.board import apply_board
from nnsim.drivers.reference import reference_cpu_timing
from nnsim.runtime.compilation import CompilationBuilder
from nnsim.runtime.execution import Execution
from tests.drivers.helpers import nnapi_model_of

TOLERANCE = 0.15


def _run(comp, model) -> int:
    x = np.random.default_rng(0).integers(0, 255, model.operands[model.input_indexes[0]]
                                          .dimensions, dtype=np.uint8)
    ex = Execution(comp)
    ex.set_input(0, None, x)
    out = np.zeros(model.operands[model.output_indexes[0]].dimensions,
                   model.operands[model.output_indexes[0]].dtype())
    ex.set_output(0, None, out)
    ex.compute()
    if comp.plan.kind == comp.plan.SIMPLE and comp.plan.device.name == "nnapi-reference":
        return reference_cpu_timing(comp.plan.prepared, ex.timing.host_ns).driver_ns
    return ex.timing.driver_ns


def simulate(board_name: str, device: str, model, metric: str, scratch: Path) -> float:
    """One simulated number in microseconds; ``scratch`` is an empty directory."""
    nnsim.reset_props()
    board = apply_board(board_name)
    os.environ["NNSIM_STATE_DIR"] = str(scratch / "state")
    if device == "nnapi-reference":
        for d in board.devices:
            if d == "synap-npu":
                nnsim.setprop("vendor.NNAPI_SYNAP_DISABLE", "1")
    comp = CompilationBuilder(model)
    if metric == "first_cached_us":
        nnsim.setprop("vendor.npu.cache.model", "1")
        cache_dir = scratch / "nnapi-cache"
        cache_dir.mkdir()
        comp.set_caching(str(cache_dir), bytes(32))
        comp.finish()
        _run(comp, model)
        comp = CompilationBuilder(model)
        comp.set_caching(str(cache_dir), bytes(32))
    comp.finish()
    names = {s.device.name for s in comp.plan.steps} if comp.plan.kind == comp.plan.COMPOUND \
        else {comp.plan.device.name}
    assert names == {device}, f"{model} ran on {names}, expected {device}"
    first = _run(comp, model)
    if metric in ("first_us", "first_cached_us"):
        return first / 1000.0
    return float(np.median([_run(comp, model) for _ in range(3)])) / 1000.0


@contextlib.contextmanager
def restored_state():
    """Properties reset and ``NNSIM_STATE_DIR`` as it was, whatever the simulations set."""
    saved_env = os.environ.get("NNSIM_STATE_DIR")
    try:
        yield
    finally:
        nnsim.reset_props()
        if saved_env is None:
            os.environ.pop("NNSIM_STATE_DIR", None)
        else:
            os.environ["NNSIM_STATE_DIR"] = saved_env


def calibration_rows(board_name: str, models_dir: Path) -> list[dict]:
    board = get_board(board_name)
    rows = []
    with restored_state():
        for entry in board.calibration:
            model = nnapi_model_of(str(models_dir / entry["model"]))
            with tempfile.TemporaryDirectory() as scratch:
                sim = simulate(board_name, entry["device"], model, entry["metric"], Path(scratch))
            published = float(entry["published"])
            rows.append({**entry, "board": board_name, "simulated": sim,
                         "error": (sim - published) / published})
    return rows


def format_table(rows: list[dict]) -> str:
    lines = ["| board | device | model | metric | published (us) | simulated (us) | error |",
             "|---|---|---|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['board']} | {r['device']} | {r['model']} | {r['metric']} | "
                     f"{r['published']:.2f} | {r['simulated']:.2f} | {100 * r['error']:+.1f}% |")
    return "\n".join(lines)
