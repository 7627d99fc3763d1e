"""``nnsim cache show|clear``: the SyNAP compile cache a board keeps across runs (vs680).

``show`` prints the resolved host path of ``vendor.SYNAP_CACHE_PATH`` (``/data/...`` lives in
the nnsim state directory), the file size, the capacity (``vendor.SYNAP_CACHE_CAPACITY``) and
the entries, least recently used first (key, model, when inserted); a malformed file is
reported, not changed (the next run sets it aside). ``clear`` removes the file, and with
``--all`` the malformed files set aside earlier too.
"""
from __future__ import annotations

import json
import sys
import textwrap
import time

from nnsim.commands.common import RunError, apply_board, apply_setprops
from nnsim.drivers.boards import BOARDS
from nnsim.drivers.synap_npu import NAME as SYNAP_NPU
from nnsim.platform import vlog
from nnsim.runtime.devices import get_device_manager

NAME = "cache"
HELP = "show or clear the SyNAP compile cache a board keeps across runs"
DESCRIPTION = textwrap.fill(
    "The synap-npu driver (board vs680) converts a model at its first inference and keeps the "
    "result's key in the SyNAP compile cache file (vendor.SYNAP_CACHE_PATH, default "
    "/data/vendor/synap/nnhal.cache under $NNSIM_STATE_DIR, default ~/.local/state/nnsim), so a "
    "later run of the same model converts it faster. 'show' prints the resolved path, size, "
    "capacity and entries; 'clear' removes the file (--all: also the malformed files set aside "
    "as nnhal.cache.corrupt-*).")
EPILOG = """examples:
  nnsim cache show                               # the vs680 SyNAP compile cache
  nnsim cache show --format json
  nnsim cache clear
  nnsim cache clear --all                        # also the set-aside malformed files
  nnsim cache show --setprop vendor.SYNAP_CACHE_PATH=/tmp/my.cache"""

DEFAULT_BOARD = "vs680"   # the board with a SyNAP NPU


def add_arguments(p) -> None:
    p.add_argument("action", choices=("show", "clear"), help="show or clear the cache")
    p.add_argument("--board", default=DEFAULT_BOARD,
                   help=f"board profile (default: {DEFAULT_BOARD})")
    p.add_argument("--setprop", action="append", metavar="KEY=VALUE",
                   help="set an emulated Android property first (repeatable)")
    p.add_argument("--all", action="store_true",
                   help="clear: also remove the malformed cache files set aside earlier")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="show: text (default) or JSON")


def _cache_of_board(board):
    """The board's SyNAP cache, or None when it has no synap-npu device."""
    drivers = [d for d in get_device_manager().drivers() if d.name == SYNAP_NPU]
    return drivers[0].compile_cache() if drivers else None


def run(args, out) -> int:
    board = apply_board(args.board)
    apply_setprops(args.setprop)
    with vlog.silenced():   # its warnings are printed below, not as logcat lines
        cache = _cache_of_board(board)
    if cache is None:
        with_cache = sorted(b.name for b in BOARDS.values() if "synap-npu" in b.devices)
        print(f"board {board.name} has no SyNAP NPU (synap-npu), so it keeps no SyNAP compile "
              f"cache (boards with one: {', '.join(with_cache)})", file=out)
        return 0
    for warning in cache.warnings:
        print(f"nnsim: warning: {warning}", file=sys.stderr)
    if args.action == "clear":
        return _clear(cache, args, out)
    return _show(cache, board, args, out)


def _clear(cache, args, out) -> int:
    try:
        removed = cache.clear(set_aside_too=args.all)
    except OSError as e:
        raise RunError(f"cannot remove {e.filename or cache.path}: {e.strerror or e}") from None
    if not removed:
        print(f"nothing to remove: {cache.path} does not exist", file=out)
    for p in removed:
        print(f"removed {p}", file=out)
    left = [] if args.all else cache.set_aside_files()
    if left:
        print(f"{len(left)} malformed file(s) set aside earlier remain; --all removes them",
              file=out)
    return 0


def _describe(cache) -> dict:
    """Everything ``show`` prints, as a JSON-ready dict."""
    try:
        size = cache.path.stat().st_size
    except OSError:
        size = None
    with cache.locked(create=False):
        loaded = cache.load(set_aside=False)
    entries = loaded.cache["entries"]
    order = sorted(entries, key=lambda k: entries[k]["used"])
    return {
        "path": str(cache.path),
        "exists": size is not None,
        "size_bytes": size,
        "capacity": cache.capacity,
        "malformed": loaded.problem,
        "entries": [{"key": k, "model": entries[k].get("model"),
                     "layers": entries[k]["layers"], "inserted": entries[k].get("inserted"),
                     "last_used": entries[k]["used"]} for k in order],
        "set_aside": [str(p) for p in cache.set_aside_files()],
    }


def _when(stamp) -> str:
    if stamp is None:
        return "unknown"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))


def _show(cache, board, args, out) -> int:
    doc = _describe(cache)
    if args.format == "json":
        print(json.dumps({"board": board.name, **doc}, indent=2), file=out)
        return 0
    p = lambda line="": print(line, file=out)  # noqa: E731
    p(f"SyNAP compile cache of board {board.name}")
    p(f"  path:     {doc['path']}")
    p(f"  size:     {'no file' if not doc['exists'] else str(doc['size_bytes']) + ' bytes'}")
    cap = doc["capacity"]
    p(f"  capacity: {cap} entries" + (" (0: the cache is disabled)" if cap <= 0 else ""))
    if doc["malformed"]:
        p(f"  malformed: {doc['malformed']}; the next run sets it aside and starts empty")
    p(f"  entries:  {len(doc['entries'])}" + (" (least recently used first)"
                                              if doc["entries"] else ""))
    for e in doc["entries"]:
        p(f"    {e['key'][:16]}  inserted {_when(e['inserted'])}  "
          f"{e['model'] or str(e['layers']) + ' layers'}")
    if doc["set_aside"]:
        p(f"  set aside: {len(doc['set_aside'])} malformed file(s) "
          f"('nnsim cache clear --all' removes them)")
        for path in doc["set_aside"]:
            p(f"    {path}")
    return 0
