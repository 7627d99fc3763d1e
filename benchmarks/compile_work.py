"""Compile work of the shared models' first runs, counted instead of timed.

Each model's `nnsim run`, one after the other in one process on an empty numba cache (a new
temporary ``NUMBA_CACHE_DIR``), without the compiling child (``NNSIM_WARM_UP=0``); for each
kernel compiled, the Python function calls numba makes compiling it (typing, lowering and its
other passes, not counting the kernels it compiles on the way, which are counted as their own)
and the lines of LLVM IR of its final module before optimisation (what LLVM then optimises and
compiles to machine code). Both counts are the same in every run on a given CPU kind, numba
and llvmlite, where this project's VMs' compile *times* move by up to 50% within minutes: an
A/B of a change meant to shorten the cold start reads these first (benchmarks/README.md,
"Twenty-third session"), then times it with ``test_cold_start.py``.

Run: ``python -m benchmarks.compile_work [--top N] [MODEL.tflite ...]`` (all shared models by
default; ``NUMBA_CPU_NAME=haswell`` for the AVX2 kernels). Counting calls makes the run about
twice as slow as a plain one.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import io
import os
import sys
import tempfile

from benchmarks._results import MODELS

NONE = "(no kernel)"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compile_work",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", help=f"model files (default: {MODELS}/*.tflite)")
    parser.add_argument("--top", type=int, default=30, help="kernels listed (default 30)")
    args = parser.parse_args(argv)
    models = args.models or sorted(str(p) for p in MODELS.glob("*.tflite"))
    if not models:
        parser.error(f"no models given and none in {MODELS}")
    if "numba" in sys.modules:   # its cache directory is fixed when it is first imported
        parser.error("numba is already imported in this process: run this in a new one")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["NUMBA_CACHE_DIR"] = cache
        os.environ["NNSIM_WARM_UP"] = "0"
        calls, ir_lines = _count(models)
    total = sum(v for k, v in calls.items() if k != NONE)
    print(f"{len(models)} models: {total / 1e6:.2f} M Python calls compiling, "
          f"{sum(ir_lines.values())} lines of LLVM IR, {len(ir_lines)} kernels")
    print(f"{'M calls':>8s} {'IR lines':>8s}  kernel")
    for name, count in calls.most_common(args.top):
        if name != NONE:
            print(f"{count / 1e6:8.3f} {ir_lines[name]:8d}  {name}")
    return 0


def _count(models):
    from numba.core import codegen, event

    from nnsim.cli import main as nnsim_main

    calls: collections.Counter = collections.Counter()
    ir_lines: collections.Counter = collections.Counter()
    compiling = [NONE]   # the kernels being compiled, innermost last

    class Compiling(event.Listener):
        def on_start(self, ev):
            func = ev.data["dispatcher"].py_func
            compiling.append(f"{func.__module__}.{func.__qualname__}")

        def on_end(self, ev):
            compiling.pop()

    optimize = codegen.CPUCodeLibrary._optimize_final_module   # (numba's, private)

    def counting_optimize(library):
        ir_lines[compiling[-1]] += str(library._final_module).count("\n")
        return optimize(library)

    def profile(frame, what, arg):
        if what == "call":
            calls[compiling[-1]] += 1

    listener = Compiling()
    event.register("numba:compile", listener)
    codegen.CPUCodeLibrary._optimize_final_module = counting_optimize
    try:
        with open(os.devnull, "w") as quiet:
            for model in models:   # (what a run prints is not wanted, unless it fails)
                said = io.StringIO()
                sys.setprofile(profile)
                try:
                    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(said):
                        status = nnsim_main(["run", model])
                finally:
                    sys.setprofile(None)
                if status:
                    raise SystemExit(f"nnsim run {model} failed (exit status {status}):\n"
                                     + said.getvalue()[-2000:])
    finally:
        codegen.CPUCodeLibrary._optimize_final_module = optimize
        event.unregister("numba:compile", listener)
    return calls, ir_lines


if __name__ == "__main__":
    raise SystemExit(main())
