"""The ``nnsim`` command line. Only the CLI prints.

Exit codes: 0 success, 1 a missing/corrupt model or a failed run, 2 bad flags or values.
"""
from __future__ import annotations

import argparse
import sys

import nnsim
from nnsim.commands import audit, cache, compare, devices, diff, graph, ops, props
from nnsim.commands import explain as explain_cmd
from nnsim.commands import run as run_cmd
from nnsim.commands.common import RunError, UsageError

EXAMPLES = {
    "run": """examples:
  nnsim run                                   # the built-in demo model on the default board
  nnsim run model.tflite --vlog               # plus the board's logcat lines
  nnsim run model.tflite --board vs680 --input photo.bmp
  nnsim run model.tflite --setprop debug.nn.partition=0""",
}


COMMAND_MODULES = [explain_cmd, graph, diff, compare, audit, devices, props, ops, cache]


class Parser(argparse.ArgumentParser):
    """One-line errors with exit code 2."""

    def error(self, message):
        raise UsageError(message)


def build_parser() -> Parser:
    parser = Parser(prog="nnsim", description=(
        "An Android NNAPI runtime with simulated NPU drivers: see where each operation of a "
        "model runs, and why."), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"nnsim {nnsim.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    p = sub.add_parser("run", help="run a model once and show where each operation ran",
                       description="Load a .tflite model, apply the NNAPI delegate for the "
                                   "board's devices, run one inference and report.",
                       epilog=EXAMPLES["run"], formatter_class=argparse.RawDescriptionHelpFormatter)
    run_cmd.add_arguments(p)
    p.set_defaults(func=run_cmd.run)
    sub.add_parser("benchmark", help="benchmark_model: timings and op profiling (simulated board "
                                     "time by default); see nnsim benchmark --help",
                   add_help=False)
    for module in COMMAND_MODULES:
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.DESCRIPTION,
                           epilog=module.EPILOG,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(p)
        p.set_defaults(func=module.run)
    return parser


_INTERRUPTED = []


def _on_sigint(signum, frame):
    """Ctrl-C: remember it (a kernel may turn the KeyboardInterrupt into another error on its
    way up, e.g. numba's SystemError inside an OpFailedError), then interrupt."""
    _INTERRUPTED.append(signum)
    raise KeyboardInterrupt


def main(argv=None) -> int:
    """The CLI: a command's exit code; every error is one ``nnsim: error:`` line (exit 1 or 2),
    Ctrl-C exits 130 without a word, as a shell expects (NNSIM_TRACEBACK=1 shows tracebacks)."""
    import os
    import signal
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `nnsim run --vlog | head` is normal use
    if argv is None:   # the console script: the process is ours
        signal.signal(signal.SIGINT, _on_sigint)
    _INTERRUPTED.clear()
    try:
        code = _main(argv)
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # noqa: BLE001 -- the last line of defence: never a traceback
        if _INTERRUPTED:
            return 130
        if os.environ.get("NNSIM_TRACEBACK"):
            raise
        from nnsim.commands.common import error_line
        print(f"nnsim: error: {error_line(e)}", file=sys.stderr)
        return 1
    return 130 if _INTERRUPTED else code


def _main(argv=None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "benchmark":
            # benchmark_model's own flag syntax (--name=value), not argparse's
            from nnsim.commands import benchmark
            return benchmark.main(argv[1:], sys.stdout)
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        return args.func(args, sys.stdout)
    except UsageError as e:
        print(f"nnsim: error: {e}", file=sys.stderr)
        return 2
    except RunError as e:
        if _INTERRUPTED:   # the command's error is the interrupt's echo: say nothing
            return 130
        print(f"nnsim: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
