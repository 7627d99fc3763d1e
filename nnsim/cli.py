"""The ``nnsim`` command line. Only this module prints."""
from __future__ import annotations

import argparse
import logging
import sys

import nnsim
from nnsim.runtime.vlog import LOGGER_PREFIX, LogcatFormatter


def _install_logcat(stream=sys.stdout) -> None:
    handler = logging.StreamHandler(stream)
    handler.setFormatter(LogcatFormatter())
    root = logging.getLogger(LOGGER_PREFIX.rstrip("."))
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def _apply_setprops(pairs) -> None:
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"nnsim: error: --setprop expects KEY=VALUE, got {pair!r}")
        nnsim.setprop(key, value)


def cmd_run(args) -> int:
    _apply_setprops(args.setprop)
    if args.vlog:
        nnsim.setprop("debug.nn.vlog", "1")
    _install_logcat()
    from nnsim.demo import run_conv_quant8
    out = run_conv_quant8()
    print(f"conv_quant8 (AOSP V1_0 conformance model) on nnapi-reference: output "
          f"{out.ravel().tolist()} (expected [15, 15, 15, 15])")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nnsim", description=(
        "An Android NNAPI runtime with simulated NPU drivers: see why each operation of a "
        "model runs where it runs."))
    parser.add_argument("--version", action="version", version=f"nnsim {nnsim.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser("run", help="run a model once and show where each operation ran",
                         description="Run the built-in demo model once.")
    run.add_argument("--vlog", action="store_true",
                     help="print the logcat lines of 'setprop debug.nn.vlog 1'")
    run.add_argument("--setprop", action="append", metavar="KEY=VALUE",
                     help="set an emulated Android property (repeatable)")
    run.set_defaults(func=cmd_run)
    return parser


def main(argv=None) -> int:
    import signal
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `nnsim run --vlog | head` is normal use
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
