"""The ``nnsim`` command line. Only the CLI prints.

Exit codes: 0 success, 1 a missing/corrupt model or a failed run, 2 bad flags or values.
"""
from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from typing import NamedTuple

import nnsim
from nnsim.commands.errors import Parser, RunError, UsageError, error_line


class Command(NamedTuple):
    module: str   # NAME, HELP, DESCRIPTION, EPILOG, add_arguments(parser), run(args, out)
    help: str     # its line in `nnsim --help`: the module's HELP (tests/cli/test_cli_commands.py)


# Every subcommand, in `nnsim --help` order. A command's module is imported (importlib, in
# command_module) only when that command runs or shows its own help: the modules import the
# TFLite interpreter, the drivers and their numba kernels, and `nnsim --help`, `nnsim ops` or
# `nnsim devices` must not pay the start-up time of everything `nnsim run` needs.
COMMANDS = {
    "run": Command("nnsim.commands.run",
                   "run a model once and show where each operation ran"),
    # benchmark_model's own flag syntax (--name=value): its module parses its arguments
    "benchmark": Command("nnsim.commands.benchmark",
                         "benchmark_model: timings and op profiling (simulated board time by "
                         "default); see nnsim benchmark --help"),
    "explain": Command("nnsim.commands.explain",
                       "for every node and device: supported or not, the exact reason, and "
                       "fixes"),
    "graph": Command("nnsim.commands.graph",
                     "draw the model graph coloured by where each node ran "
                     "(.dot/.svg/.png/.html)"),
    "diff": Command("nnsim.commands.diff",
                    "compare the NNAPI-delegated model with the TFLite CPU reference "
                    "(inference_diff)"),
    "compare": Command("nnsim.commands.compare",
                       "one model on several boards, delegates and Android versions, side by "
                       "side"),
    "audit": Command("nnsim.commands.audit",
                     "a model zoo across boards, Android versions and delegates: CSV, JSON, "
                     "HTML report"),
    "devices": Command("nnsim.commands.devices",
                       "list a board's NNAPI devices with their capabilities"),
    "props": Command("nnsim.commands.props",
                     "list the emulated Android properties with their values and meanings"),
    "ops": Command("nnsim.commands.ops",
                   "the op matrix: which layers implement each TFLite builtin and NNAPI "
                   "operation"),
    "cache": Command("nnsim.commands.cache",
                     "show or clear the SyNAP compile cache a board keeps across runs"),
}
OWN_FLAG_SYNTAX = {"benchmark"}   # parsed by the command module itself (``main(argv, out)``)


def command_module(name: str):
    """The module of subcommand ``name`` (imported now, on first use: see COMMANDS)."""
    return importlib.import_module(COMMANDS[name].module)


def build_parser(command: str | None = None) -> Parser:
    """The ``nnsim`` parser: every subcommand listed, and only ``command``'s arguments (the
    other modules are not imported)."""
    parser = Parser(prog="nnsim", description=(
        "An Android NNAPI runtime with simulated NPU drivers: see where each operation of a "
        "model runs, and why."), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"nnsim {nnsim.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, entry in COMMANDS.items():
        if name != command or name in OWN_FLAG_SYNTAX:
            sub.add_parser(name, help=entry.help, add_help=name not in OWN_FLAG_SYNTAX)
            continue
        module = command_module(name)
        p = sub.add_parser(name, help=entry.help, description=module.DESCRIPTION,
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
        print(f"nnsim: error: {error_line(e)}", file=sys.stderr)
        return 1
    return 130 if _INTERRUPTED else code


def _main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in OWN_FLAG_SYNTAX:
            return command_module(argv[0]).main(argv[1:], sys.stdout)
        # the first word that is not an option names the command (nnsim has no option
        # taking a value before it)
        command = next((a for a in argv if not a.startswith("-")), None)
        parser = build_parser(command if command in COMMANDS else None)
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
