"""``nnsim props``: every emulated Android property, its current value and meaning.

Values are read after the board applied its properties (``ro.build.version.sdk``, the vsi-npu
BSP, ...), then ``NNSIM_PROP_*`` environment variables and ``--setprop`` as usual
(nnsim.platform.properties).
"""
from __future__ import annotations

import json
import os
import textwrap

# The modules that declare properties are imported here, so the table is complete:
import nnsim.drivers.boards  # noqa: F401  (vsi-npu, synap-npu, simulated drivers)
import nnsim.tflite.delegate  # noqa: F401  (ro.build.version.sdk)
from nnsim.commands.common import apply_board, apply_setprops, board_text
from nnsim.platform.properties import KNOWN_PROPERTIES, _env_key, all_props, getprop

NAME = "props"
HELP = "list the emulated Android properties with their values and meanings"
DESCRIPTION = textwrap.fill(
    "List every emulated Android system property (debug.nn.* of the NNAPI runtime, "
    "ro.build.version.sdk, the vendor.* knobs of the simulated drivers) with its current value "
    "after the board applied its properties, where the value comes from (default, board, env "
    "for an NNSIM_PROP_* variable, setprop) and what it means. Set them with --setprop "
    "KEY=VALUE on any command, NNSIM_PROP_<KEY> in the environment, or nnsim.setprop().")
EPILOG = """examples:
  nnsim props                                   # the default board (imx8mp)
  nnsim props --board vs680
  nnsim props --setprop debug.nn.vlog=1
  nnsim props --format json"""


def add_arguments(p) -> None:
    p.add_argument("--board", default="imx8mp", help="board profile (default: imx8mp)")
    p.add_argument("--setprop", action="append", metavar="KEY=VALUE",
                   help="set an emulated Android property first (repeatable)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="aligned text (default) or JSON")


def collect(board, setprop_keys) -> list:
    rows = []
    values = all_props()
    for key in sorted(set(values) | set(KNOWN_PROPERTIES)):
        value = getprop(key)
        info = KNOWN_PROPERTIES.get(key)
        if key in setprop_keys:
            source = "setprop"
        elif key in board.properties or key == "ro.nnsim.board":
            source = "board"
        elif os.environ.get(_env_key(key)) is not None:
            source = "env"
        else:
            source = "default"
        meaning = info.meaning if info else ("the current board profile" if key ==
                                             "ro.nnsim.board" else "")
        rows.append({"key": key, "value": value, "source": source, "meaning": meaning,
                     "default": info.default if info else None})
    return rows


def run(args, out) -> int:
    board = apply_board(args.board)
    apply_setprops(args.setprop)
    keys = {pair.partition("=")[0] for pair in args.setprop or ()}
    rows = collect(board, keys)
    if args.format == "json":
        print(json.dumps({"board": board.name, "properties": rows}, indent=2), file=out)
        return 0
    print(f"board: {board_text(board)}", file=out)
    kw = max(len("property"), *(len(r["key"]) for r in rows))
    vw = min(max(len("value"), *(len(_shown(r["value"])) for r in rows)), 40)
    sw = len("default")
    print(f"{'property':<{kw}}  {'value':<{vw}}  {'source':<{sw}}  meaning", file=out)
    for r in rows:
        print(f"{r['key']:<{kw}}  {_shown(r['value']):<{vw}}  {r['source']:<{sw}}  "
              f"{r['meaning']}".rstrip(), file=out)
    return 0


def _shown(value: str) -> str:
    return '""' if value == "" else value
