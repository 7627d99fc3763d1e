"""``nnsim compare``: one model on every board x delegate x Android version, side by side."""
from __future__ import annotations

import argparse
import json
import os
import textwrap
from pathlib import Path

from nnsim.audit.engine import DELEGATES, Combination, model_digest
from nnsim.audit.html import compare_page
from nnsim.audit.isolate import Limits, parse_bytes
from nnsim.audit.scheduler import Task, run_tasks
from nnsim.audit.tables import compare_table, csv_text, sort_records
from nnsim.commands.argtypes import int_at_least, positive_float
from nnsim.commands.client import sdk_version
from nnsim.commands.common import RunError, UsageError
from nnsim.drivers.boards import BOARDS

NAME = "compare"
HELP = "one model on several boards, delegates and Android versions, side by side"
DESCRIPTION = textwrap.fill(
    "Evaluate a .tflite model for every combination of board, delegate and Android SDK: "
    "nodes delegated, delegate partitions, where every op type ran, the simulated first and "
    "average inference on the board, and the top reason for the fallbacks (nnsim explain's). "
    "Delegates: nnapi (the NNAPI delegate with the options run/explain use), vx (the TIM-VX "
    "delegate, libvx_delegate.so), cpu (no delegate: TFLite's CPU kernels). Combinations run "
    "in parallel, each in a process of its own.")
EPILOG = """examples:
  nnsim compare model.tflite
  nnsim compare model.tflite --boards imx8mp,vs680 --delegates nnapi,vx,cpu --android_sdk 29,31,34
  nnsim compare model.tflite --format html -o compare.html     # per-node placement side by side
  nnsim compare model.tflite --format json > compare.json
  nnsim compare model.tflite --run        # also one inference against the TFLite CPU path"""


def csv_list(kind, choices=None):
    """argparse type of a comma-separated list (each item checked)."""
    def parse(text: str) -> list:
        items = [t.strip() for t in str(text).split(",") if t.strip()]
        if not items:
            raise argparse.ArgumentTypeError("expects a comma-separated list")
        out = []
        for t in items:
            value = kind(t)
            if choices is not None and value not in choices:
                raise argparse.ArgumentTypeError(f"unknown {t!r}; choose from "
                                                 f"{', '.join(choices)}")
            if value not in out:
                out.append(value)
        return out
    parse.__name__ = "list"
    return parse


def add_combination_arguments(p, default_delegates: str) -> None:
    """--boards, --delegates, --android_sdk, --jobs, --run, --timeout, --memory-cap."""
    p.add_argument("--boards", type=csv_list(str, sorted(BOARDS)), default=None,
                   metavar="B1,B2", help=f"boards (default: all: {','.join(sorted(BOARDS))})")
    p.add_argument("--delegates", type=csv_list(str, DELEGATES),
                   default=default_delegates.split(","), metavar="D1,D2",
                   help=f"delegates among {','.join(DELEGATES)} (default: {default_delegates})")
    p.add_argument("--android_sdk", "--android-sdk", dest="android_sdk",
                   type=csv_list(sdk_version), default=None, metavar="N1,N2",
                   help="emulated Android SDK levels (default: each board's own)")
    p.add_argument("--run", action="store_true",
                   help="also run one inference per combination and compare it with nnsim's "
                        "TFLite CPU path (max_abs_diff)")
    p.add_argument("--jobs", "-j", type=int_at_least(1), default=os.cpu_count() or 1,
                   metavar="N", help="combinations evaluated at once (default: the number of "
                                     "cores)")
    p.add_argument("--timeout", type=positive_float, default=600.0, metavar="S",
                   help="per-combination timeout in seconds (default 600); a combination "
                        "that exceeds it is a row with status timeout")
    p.add_argument("--memory-cap", "--memory_cap", dest="memory_cap", type=_byte_count,
                   default="4G", metavar="BYTES",
                   help="per-combination memory cap (e.g. 4G, 512M; default 4G); a "
                        "combination that exceeds it is a row with status memory")


def _byte_count(text: str) -> int:
    try:
        return parse_bytes(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expects a byte count such as 4G or 512M, got "
                                         f"{text!r}") from None


def combinations(args) -> list:
    """Every (board, SDK, delegate) of the flags; no --android_sdk: each board's own SDK."""
    boards = args.boards or sorted(BOARDS)
    out = []
    for b in boards:
        sdks = args.android_sdk or [int(BOARDS[b].properties.get("ro.build.version.sdk", 31))]
        for d in args.delegates:
            for s in sdks:
                out.append(Combination(b, s, d))
    return out


def limits(args):
    return Limits(timeout_s=args.timeout, memory_bytes=args.memory_cap)


def add_arguments(p) -> None:
    p.add_argument("model", help="the .tflite model")
    add_combination_arguments(p, "nnapi,vx,cpu")
    p.add_argument("--format", choices=("table", "json", "csv", "html"), default="table",
                   help="table (default), json (every record, with the per-node placement), "
                        "csv (one row per combination), html (one self-contained page with "
                        "the per-node placement side by side)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")


def run(args, out) -> int:
    path = Path(args.model)
    if not path.is_file():
        raise RunError(f"{args.model}: no such file" if not path.exists() else
                       f"{args.model}: is a directory; nnsim audit takes folders")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise RunError(f"{args.model}: {e.strerror or e}") from None
    if args.output:
        _check_writable(args.output)
    combos = combinations(args)
    tasks = [Task(str(path), path.name, model_digest(data), c, args.run) for c in combos]
    records = sort_records([v for _, v in run_tasks(tasks, jobs=args.jobs, limits=limits(args))],
                           args.delegates)
    if args.format == "json":
        text = json.dumps({"model": path.name, "records": records}, indent=2)
    elif args.format == "csv":
        text = csv_text(records)
    elif args.format == "html":
        text = compare_page(path.name, records)
    else:
        text = f"model: {path.name}\n" + compare_table(records)
    if args.output:
        try:
            Path(args.output).write_text(text if text.endswith("\n") else text + "\n",
                                         encoding="utf-8")
        except OSError as e:
            raise RunError(f"cannot write {args.output}: {e.strerror or e}") from None
        print(f"wrote {args.output}: {len(records)} combination(s) of {path.name}", file=out)
    else:
        print(text, file=out, end="" if text.endswith("\n") else "\n")
    return 0


def _check_writable(output: str) -> None:
    parent = Path(output).resolve().parent
    if not parent.is_dir():
        raise UsageError(f"-o {output}: folder {parent} does not exist")
    if Path(output).is_dir():
        raise UsageError(f"-o {output}: is a directory")
