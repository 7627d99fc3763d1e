"""Board profiles: which devices a board has, its properties and its timing parameters.

A board is data (``drivers/data/<name>.json``): its NNAPI devices in discovery order, the
system properties it sets (``ro.build.version.sdk``, the vsi-npu BSP, ...), the timing
parameters of its NPU and CPU (:mod:`nnsim.drivers.timing`) and the published numbers the
timing model is calibrated against. Every value in a profile carries its source (a section of
docs/reference/npu-drivers.md or "assumption"/"calibrated").

``BOARDS`` maps a name to a :class:`Board`; ``apply_board(name)`` makes a board current: it
sets the DeviceManager's drivers and the board's properties. ``imx8mp`` is the default board.
"""
from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from nnsim.drivers.simulated import google_edgetpu
from nnsim.drivers.synap_npu import SynapNpuDriver
from nnsim.drivers.timing import CpuParams, NpuParams
from nnsim.drivers.vsi_npu import VsiNpuDriver

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_BOARD = "imx8mp"
CPU_DEVICE_NAME = "nnapi-reference"


@dataclass(frozen=True)
class Board:
    name: str
    title: str
    devices: tuple            # NNAPI device names in discovery order (nnapi-reference last)
    properties: dict          # property -> value
    npu: NpuParams
    cpu: CpuParams
    calibration: tuple = ()   # published numbers: dicts (device, model, metric, published, source)
    sources: dict = field(default_factory=dict)   # "npu.compile_fixed_ns" -> source text
    npu_title: str = ""       # the NPU itself, for headers ("VeriSilicon VIPNano-SI+ ...")
    vx: dict = field(default_factory=dict)        # VX delegate timing (nnsim.tflite.vx.timing)
    vx_calibration: tuple = ()   # published VX delegate numbers, as ``calibration``


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
        npu = NpuParams(**_section(raw["npu"], "npu", sources))
        cpu = CpuParams(**_section(raw["cpu"], "cpu", sources))
        vx = _section(raw.get("vx", {}), "vx", sources)
        return Board(raw["name"], raw.get("title", raw["name"]), tuple(raw["devices"]), props,
                     npu, cpu, tuple(raw.get("calibration", ())), sources,
                     str(_value(raw.get("npu_title", ""), "npu_title", sources)), vx,
                     tuple(raw.get("vx_calibration", ())))
    except (KeyError, TypeError) as e:
        raise ValueError(f"{path}: bad board profile: {e}") from None


def _load_all() -> dict[str, Board]:
    boards = {}
    for p in sorted(DATA_DIR.glob("*.json")):
        raw = json.loads(p.read_text())
        if "npu" in raw and "devices" in raw:
            board = load_board(p)
            boards[board.name] = board
    return boards


BOARDS: dict[str, Board] = _load_all()

_lock = threading.Lock()
_current = [DEFAULT_BOARD]


def get_board(name: str) -> Board:
    try:
        return BOARDS[name]
    except KeyError:
        raise ValueError(f"unknown board {name!r}; known boards: {', '.join(sorted(BOARDS))}") \
            from None


def current_board() -> Board:
    """The board of the last ``apply_board`` (``imx8mp`` before any)."""
    return BOARDS[_current[0]]


DRIVER_FACTORIES = {"vsi-npu": VsiNpuDriver, "synap-npu": SynapNpuDriver,
                    "google-edgetpu": google_edgetpu}


def make_driver(device: str, board: str):
    """A fresh driver instance for ``device`` with the timing of ``board``."""
    factory = DRIVER_FACTORIES.get(device)
    if factory is not None:
        return factory(board)
    raise ValueError(f"no simulated driver named {device!r}")


DEFAULT_BOARD = "imx8mp"
BOARD_ENV = "NNSIM_BOARD"


def ensure_board() -> Board | None:
    """The TFLite Python API's board: when no devices were chosen in this process yet
    (``nnsim.set_board``, a test, a plugin), apply ``$NNSIM_BOARD`` or the default
    (``imx8mp``), so a script's ``load_delegate("nnapi", ...)`` meets a board's devices.
    Returns the board applied, None when devices were already chosen."""
    from nnsim.runtime.devices import get_device_manager
    if get_device_manager().configured:
        return None
    return apply_board(os.environ.get(BOARD_ENV) or DEFAULT_BOARD)


def apply_board(name: str) -> Board:
    """Make ``name`` the current board: set its properties and the DeviceManager's drivers
    (fresh instances, in the board's discovery order; nnapi-reference is always appended by
    the DeviceManager itself). Returns the Board."""
    from nnsim.runtime.devices import get_device_manager
    from nnsim.runtime.properties import setprop
    board = get_board(name)
    drivers = [make_driver(d, board.name) for d in board.devices if d != CPU_DEVICE_NAME]
    with _lock:
        for key, value in board.properties.items():
            setprop(key, value)
        setprop("ro.nnsim.board", board.name)
        get_device_manager().set_drivers(drivers)
        _current[0] = board.name
    return board
