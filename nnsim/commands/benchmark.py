"""``nnsim benchmark``: benchmark_model's flags and output on a simulated board."""
from __future__ import annotations

import sys

from nnsim.commands.common import RunError, UsageError
from nnsim.tools.benchmark import Benchmark, BenchmarkFailed
from nnsim.tools.benchmark_flags import FlagError, help_text, parse_command_line

NAME = "benchmark"
HELP = ("benchmark_model: timings and op profiling (simulated board time by default); see nnsim "
        "benchmark --help")


def main(argv, out=None) -> int:
    """benchmark_model's own flag syntax (--name=value), not argparse's: the CLI hands over
    the arguments after ``benchmark``."""
    out = out or sys.stdout
    if any(a in ("-h", "--help") for a in argv):
        print(help_text(), file=out)
        return 0
    try:
        flags = parse_command_line(argv)
    except FlagError as e:
        raise UsageError(str(e)) from None
    try:
        return Benchmark(flags.values, flags.given, out, unconsumed=flags.unconsumed,
                         unmodelled=flags.unmodelled).run()
    except BenchmarkFailed:
        raise RunError("benchmarking failed (see the ERROR lines above)") from None
