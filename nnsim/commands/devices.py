"""``nnsim devices``: the NNAPI devices of a board, as ``ANeuralNetworks_getDevice`` lists them.

Per device: name, type, feature level, version string, compilation caching, and the capabilities
table (exec time / power usage per operand type, relaxed float32->float16, IF, WHILE; ratios to
the CPU, smaller is better, a missing operand type looks up as FLT_MAX: nnapi-runtime.md 2).
"""
from __future__ import annotations

import json
import textwrap

from nnsim.commands.common import apply_board, apply_setprops, board_text
from nnsim.runtime.devices import get_device_manager
from nnsim.types import FLT_MAX, DeviceType, FeatureLevel, OperandType

NAME = "devices"
HELP = "list a board's NNAPI devices with their capabilities"
DESCRIPTION = textwrap.fill(
    "List the NNAPI devices of a board in discovery order (nnapi-reference last), as "
    "ANeuralNetworks_getDevice sees them after the board's properties (and --setprop) are "
    "applied: name, type, feature level, version string, compilation caching, and the "
    "capabilities table the runtime uses to pick a device for each operation (exec time and "
    "power usage per operand type as ratios to the CPU, smaller is better; FLT_MAX means the "
    "type is not supported), plus the relaxed float32->float16, IF and WHILE performance.")
EPILOG = """examples:
  nnsim devices                                  # the default board (imx8mp)
  nnsim devices --board vs680
  nnsim devices --format json
  nnsim devices --setprop vendor.DISABLE_FLOAT_FEATURE=1"""

FLT_MAX_TEXT = "FLT_MAX"


def add_arguments(p) -> None:
    p.add_argument("--board", default="imx8mp", help="board profile (default: imx8mp)")
    p.add_argument("--setprop", action="append", metavar="KEY=VALUE",
                   help="set an emulated Android property first (repeatable)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text tables (default) or JSON")


def _enum_name(enum_cls, value) -> str:
    try:
        return enum_cls(int(value)).name
    except ValueError:
        return str(value)


def _num(value: float) -> str:
    return FLT_MAX_TEXT if float(value) >= FLT_MAX else f"{float(value):g}"


def _operand_types():
    """Every non-extension operand type except SUBGRAPH (covered by IF/WHILE)."""
    return [t for t in OperandType if t.name != "MODEL"]


def describe(device) -> dict:
    caps = device.capabilities()
    perf = {t.name: caps.lookup(int(t)) for t in _operand_types()}
    files = tuple(getattr(device, "number_of_cache_files_needed", (0, 0)))
    pi = lambda p: {"exec_time": float(p.exec_time), "power_usage": float(p.power_usage)}  # noqa
    return {
        "name": device.name,
        "type": _enum_name(DeviceType, device.device_type),
        "type_code": int(device.device_type),
        "feature_level": _enum_name(FeatureLevel, device.feature_level),
        "feature_level_code": int(device.feature_level),
        "version": device.version_string,
        "cache_files": {"model": int(files[0]), "data": int(files[1])},
        "capabilities": {
            "operand_performance": {name: pi(p) for name, p in perf.items()},
            "relaxed_float32_to_float16_scalar": pi(caps.relaxed_float32_to_float16_scalar),
            "relaxed_float32_to_float16_tensor": pi(caps.relaxed_float32_to_float16_tensor),
            "if": pi(caps.if_performance),
            "while": pi(caps.while_performance),
        },
    }


def run(args, out) -> int:
    board = apply_board(args.board)
    apply_setprops(args.setprop)
    devices = [describe(d) for d in get_device_manager().get_devices()]
    if args.format == "json":
        doc = {"board": {"name": board.name,
                         "description": getattr(board, "description", None)
                         or getattr(board, "title", board.name)},
               "devices": devices}
        print(json.dumps(doc, indent=2), file=out)
        return 0
    p = lambda line="": print(line, file=out)  # noqa: E731
    p(f"board: {board_text(board)}")
    p(f"{len(devices)} NNAPI device(s), in discovery order:")
    p()
    p(f"  {'#':<3}{'name':<20}{'type':<21}{'feature level':<28}version")
    for k, d in enumerate(devices):
        level = f"{d['feature_level']} ({d['feature_level_code']})"
        p(f"  {k:<3}{d['name']:<20}{d['type']:<21}{level:<28}{d['version']}")
    for d in devices:
        p()
        _device_block(p, d)
    return 0


def _device_block(p, d: dict) -> None:
    files = d["cache_files"]
    caching = "yes" if files["model"] or files["data"] else "no"
    p(f"{d['name']}")
    p(f"  type:          {d['type']} ({d['type_code']})")
    p(f"  feature level: {d['feature_level']} ({d['feature_level_code']})")
    p(f"  version:       {d['version']}")
    p(f"  caching:       {caching} ({files['model']} model, {files['data']} data cache files)")
    p("  capabilities (ratio to the CPU, smaller is better; FLT_MAX = not supported):")
    p(f"    {'operand type':<34}{'exec time':>12}{'power usage':>14}")
    caps = d["capabilities"]
    rows = list(caps["operand_performance"].items()) + [
        ("relaxed float32->float16 scalar", caps["relaxed_float32_to_float16_scalar"]),
        ("relaxed float32->float16 tensor", caps["relaxed_float32_to_float16_tensor"]),
        ("IF", caps["if"]), ("WHILE", caps["while"])]
    for name, perf in rows:
        p(f"    {name:<34}{_num(perf['exec_time']):>12}{_num(perf['power_usage']):>14}")
