"""The Python around the compiled kernels of one invoke, on the TFLite CPU path and on the NNAPI
path (the emulated delegate on ``nnapi-reference``).

Per path: the Python function calls of one invoke (``sys.setprofile``, C functions included;
the same count in every run), and the microseconds per invoke with each compiled program
replaced by nothing (``nnsim.kernels.program.Program.run``: what remains is the delegate,
execution, prepared model and executor layers), the best of ``--rounds`` rounds of
``--invokes`` invokes back to back. That Python runs hot here; in ``test_paths.py``, after
LiteRT's invoke, the same code and objects are cold and cost 3-5 times as much (measured with
probes: benchmarks/README.md, "Twenty-sixth session"), so for a model of about a millisecond
(the float MobileNet v1 0.25) it is what the NNAPI path's ratio over the CPU path is made of.

Run: ``python -m benchmarks.python_overhead [MODEL.tflite]`` (the float MobileNet by default).
"""
from __future__ import annotations

import argparse
import collections
import sys
import time

from benchmarks._results import MODELS

DEFAULT = MODELS / "mobilenet_v1_0.25_224_1_default_1.tflite"


def count_calls(fn) -> collections.Counter:
    """The calls ``fn()`` makes, by callee: ``file:line name`` for Python functions, ``C
    qualname`` for C ones (``fn`` itself not counted)."""
    calls: collections.Counter = collections.Counter()
    depth = [0]

    def profile(frame, event, arg):
        if event == "call":
            depth[0] += 1
            if depth[0] > 1:
                code = frame.f_code
                calls[f"{code.co_filename}:{code.co_firstlineno} {code.co_name}"] += 1
        elif event == "return":
            depth[0] -= 1
        elif event == "c_call" and arg is not sys.setprofile:
            calls["C " + getattr(arg, "__qualname__", repr(arg))] += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return calls


def _hot_us(invoke, invokes: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(invokes):
            invoke()
        best = min(best, (time.perf_counter() - start) / invokes)
    return best * 1e6


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.python_overhead",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", default=str(DEFAULT), help="a .tflite model "
                        f"(default {DEFAULT.name})")
    parser.add_argument("--invokes", type=int, default=2000, help="invokes per round (2000)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds, the best kept (7)")
    args = parser.parse_args(argv)
    from benchmarks._interleave import ready
    from nnsim.kernels import program
    from nnsim.tflite import Interpreter, load_delegate
    nnapi = load_delegate("nnapi", {"accelerator_name": "nnapi-reference"})
    paths = {"CPU path": ready(Interpreter(model_path=args.model, num_threads=1), 3),
             "NNAPI path": ready(Interpreter(model_path=args.model, num_threads=1,
                                             experimental_delegates=[nnapi]), 3)}
    run = program.Program.run
    program.Program.run = lambda self: None   # the kernels replaced by nothing
    try:
        for name, interp in paths.items():
            calls = sum(count_calls(interp.invoke).values())
            print(f"{name:10s} {calls:4d} Python and C calls per invoke, "
                  f"{_hot_us(interp.invoke, args.invokes, args.rounds):6.2f} us per invoke "
                  "without its kernels")
    finally:
        program.Program.run = run
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
