"""Board profiles: the data of a board (``drivers/data/<name>.json``, or any file by path).

A profile holds the board's NNAPI devices in discovery order, the system properties it sets
(``ro.build.version.sdk``, the vsi-npu BSP, ...), the timing parameters of each of its
accelerators and of its CPU (:mod:`nnsim.drivers.timing`) and the published numbers the timing
model is calibrated against. Every value carries its source (a section of
docs/reference/npu-drivers.md or "assumption"/"calibrated"): an entry is either a plain value
or ``{"value": ..., "source": ...}``.

Accelerator timing, by device name:

* ``"accelerators": {"<device>": {<NpuParams fields>}, ...}``: one section per accelerator;
* ``"npu": {<NpuParams fields>}``: the single-NPU form of the built-in boards; it times every
  accelerator that has no section of its own.

``"driver_files": ["my_drivers.py"]`` (paths relative to the profile) names Python files whose
``DRIVERS`` provide devices the registry does not know (:mod:`nnsim.drivers.registry`).

This module is data only: which drivers a board gets is :mod:`nnsim.drivers.boards`, installing
them is :mod:`nnsim.runtime.board`. It keeps the name of the current board (the last one
installed), which nnapi-reference's timing reads (the board's CPU).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from nnsim.drivers.timing import CpuParams, NpuParams, TimingModel

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_BOARD = "imx8mp"
CPU_DEVICE_NAME = "nnapi-reference"


@dataclass(frozen=True)
class Board:
    name: str
    title: str
    devices: tuple            # NNAPI device names in discovery order (nnapi-reference last)
    properties: dict          # property -> value
    npu: NpuParams | None     # the board's NPU: "npu", else its first accelerator
    cpu: CpuParams
    calibration: tuple = ()   # published numbers: dicts (device, model, metric, published, source)
    sources: dict = field(default_factory=dict)   # "npu.compile_fixed_ns" -> source text
    npu_title: str = ""       # the NPU itself, for headers ("VeriSilicon VIPNano-SI+ ...")
    vx: dict = field(default_factory=dict)        # VX delegate timing (nnsim.tflite.vx.timing)
    vx_calibration: tuple = ()   # published VX delegate numbers, as ``calibration``
    accelerators: dict = field(default_factory=dict)   # device name -> NpuParams
    driver_files: tuple = ()  # absolute paths of the profile's driver files

    def accelerator(self, device: str) -> NpuParams:
        """The timing parameters of ``device``: its own section, else the board's NPU."""
        params = self.accelerators.get(device, self.npu)
        if params is None:
            raise ValueError(f"board {self.name} has no timing for accelerator {device!r}")
        return params

    def timing(self, device: str) -> TimingModel:
        """The :class:`TimingModel` of ``device`` on this board."""
        return TimingModel(self.accelerator(device))


def _value(entry, path: str, sources: dict):
    """A profile entry is either a plain value or {"value": ..., "source": ...}."""
    if isinstance(entry, dict) and "value" in entry:
        sources[path] = entry.get("source", "")
        return entry["value"]
    return entry


def _section(raw: dict, prefix: str, sources: dict) -> dict:
    out = {}
    for key, entry in raw.items():
        if key == "title" or key == "name":
            continue
        path = f"{prefix}.{key}"
        if isinstance(entry, dict) and "value" not in entry:
            out[key] = {k: float(_value(v, f"{path}.{k}", sources)) for k, v in entry.items()}
        else:
            out[key] = float(_value(entry, path, sources))
    return out


def load_board(path: str | Path) -> Board:
    """Read one board profile; raises ValueError naming the file and the missing key."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: cannot read board profile: {e}") from None
    sources: dict = {}
    try:
        props = {k: str(_value(v, f"properties.{k}", sources))
                 for k, v in raw.get("properties", {}).items()}
        accelerators = {name: NpuParams(**_section(section, f"accelerators.{name}", sources))
                        for name, section in raw.get("accelerators", {}).items()}
        if "npu" in raw or not accelerators:
            npu = NpuParams(**_section(raw["npu"], "npu", sources))
        else:
            npu = next(iter(accelerators.values()))
        cpu = CpuParams(**_section(raw["cpu"], "cpu", sources))
        vx = _section(raw.get("vx", {}), "vx", sources)
        files = tuple(str((path.parent / f).resolve()) for f in raw.get("driver_files", ()))
        return Board(raw["name"], raw.get("title", raw["name"]), tuple(raw["devices"]), props,
                     npu, cpu, tuple(raw.get("calibration", ())), sources,
                     str(_value(raw.get("npu_title", ""), "npu_title", sources)), vx,
                     tuple(raw.get("vx_calibration", ())), accelerators, files)
    except (KeyError, TypeError) as e:
        raise ValueError(f"{path}: bad board profile: {e}") from None


def _load_all() -> dict[str, Board]:
    boards = {}
    for p in sorted(DATA_DIR.glob("*.json")):
        raw = json.loads(p.read_text())
        if "devices" in raw and ("npu" in raw or "accelerators" in raw):
            board = load_board(p)
            boards[board.name] = board
    return boards


BOARDS: dict[str, Board] = _load_all()     # the built-in boards
_from_files: dict[str, Board] = {}        # boards loaded by path, by name (not built-ins)
_current = [DEFAULT_BOARD]


def is_board_file(name: str) -> bool:
    """True when ``name`` is the path of a board profile file (``*.json``) that exists."""
    return name.endswith(".json") and Path(name).is_file()


def get_board(name: str) -> Board:
    """A built-in board by name, a board loaded earlier by path (by its name), or the profile
    at the path ``name`` (``/path/to/board.json``); ValueError for anything else."""
    board = BOARDS.get(name) or _from_files.get(name)
    if board is not None:
        return board
    if is_board_file(name):
        board = load_board(name)
        _from_files[board.name] = board
        return board
    raise ValueError(f"unknown board {name!r}; known boards: {', '.join(sorted(BOARDS))}")


def current_board() -> Board:
    """The board installed last (``imx8mp`` before any)."""
    return get_board(_current[0])


def current_board_name() -> str:
    """The name of :func:`current_board` (without resolving it)."""
    return _current[0]


def set_current_board(name: str) -> None:
    """Record ``name`` as the current board (:func:`nnsim.runtime.board.apply_board`)."""
    _current[0] = name
