"""Per-layer times of nnsim's TFLite CPU path against LiteRT's, from prefix models.

For each operator index k asked for, the model cut after operator k (the same operators
0..k, operator k's first output the model's only output; ``nnsim.tflite.reader`` and
``writer``) runs on LiteRT (its default XNNPACK delegate, as ``test_paths.py``) and on nnsim,
one thread each, interleaved: the median time per inference of each prefix, the best of
``--rounds`` rounds, and the increase over the previous prefix asked for (the layers in
between, with noise of a few microseconds). LiteRT gives no per-layer times from Python;
this is how the float MobileNet's first layer was found to take 146 us against LiteRT's 109
(benchmarks/README.md, "Twenty-fifth session").

Run: ``python -m benchmarks.layer_times MODEL.tflite [K ...]`` (every operator by default).
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def prefix_model(model, k: int) -> bytes:
    """``model`` (a read TfliteModel) cut after operator ``k`` of its first subgraph (its
    signatures, which name the whole model's outputs, dropped)."""
    from nnsim.tflite.writer import write_model
    sg = model.subgraphs[0]
    ops = sg.operators[:k + 1]
    cut = dataclasses.replace(sg, operators=ops, outputs=(ops[-1].outputs[0],))
    return write_model(dataclasses.replace(model, subgraphs=(cut,) + tuple(model.subgraphs[1:]),
                                           signatures=()))


def _median_us(interp, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        interp.invoke()
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e6


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.layer_times",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a .tflite model")
    parser.add_argument("ops", nargs="*", type=int, help="operator indices (default: all)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per prefix (default 5)")
    parser.add_argument("--runs", type=int, default=300, help="invokes per round (default 300)")
    args = parser.parse_args(argv)
    from ai_edge_litert.interpreter import Interpreter as LiteRT

    from benchmarks._interleave import ready
    from nnsim.tflite import Interpreter
    from nnsim.tflite.reader import read_model
    model = read_model(args.model)
    operators = model.subgraphs[0].operators
    ks = args.ops or list(range(len(operators)))
    if any(not 0 <= k < len(operators) for k in ks):
        parser.error(f"operator indices are 0..{len(operators) - 1}")
    previous = (0.0, 0.0)
    print(f"{'operators':>12} {'last':22} {'LiteRT us':>16} {'nnsim us':>16}")
    with tempfile.TemporaryDirectory() as tmp:
        for k in sorted(set(ks)):
            path = Path(tmp) / f"prefix_{k}.tflite"
            path.write_bytes(prefix_model(model, k))
            pair = [LiteRT(model_path=str(path), num_threads=1),
                    Interpreter(model_path=str(path), num_threads=1)]
            for interp in pair:   # warm: compiled kernels, caches
                ready(interp, warm_invokes=30)
            rounds = [[], []]
            for _ in range(args.rounds):   # interleaved
                for times, interp in zip(rounds, pair):
                    times.append(_median_us(interp, args.runs))
            best = [min(times) for times in rounds]
            name = operators[k].builtin.name if operators[k].builtin is not None else "CUSTOM"
            print(f"{f'0..{k}':>12} {name:22} {best[0]:8.1f} ({best[0] - previous[0]:+6.1f})"
                  f" {best[1]:8.1f} ({best[1] - previous[1]:+6.1f})", flush=True)
            previous = (best[0], best[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
