"""``nnsim benchmark``: benchmark_model's flags and output on a simulated board."""
from __future__ import annotations

import sys

from nnsim.commands.common import RunError, UsageError

NAME = "benchmark"
HELP = "benchmark_model: timings and op profiling (simulated board time by default)"


def main(argv, out=None) -> int:
    from nnsim.tflite.benchmark import Benchmark, BenchmarkFailed
    from nnsim.tflite.benchmark_flags import FlagError, help_text, parse_command_line
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
