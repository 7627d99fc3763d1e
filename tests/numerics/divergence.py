"""Where does the NNAPI path leave LiteRT's reference kernels? A diagnosis tool (not a test).

    python -m tests.numerics.divergence                 # every shared model: output differences
    python -m tests.numerics.divergence --ops NAME...   # and, per model, each diverging operator

For each shared model, one seeded random input (and grace_hopper.bmp for image models) runs on
the NNAPI path (``accelerator_name="nnapi-reference"``) and on LiteRT ``BUILTIN_REF``. With
``--ops``, every operator also runs alone, as a one-node model fed with LiteRT's values of its
inputs (every activation tensor made a model output), so each line names an operator whose own
arithmetic differs; the first line is the first diverging tensor. docs/numerics.md explains the
differences found.
"""
from __future__ import annotations

import argparse
import dataclasses

import numpy as np

from nnsim.images import load_input
from nnsim.tflite.reader import read_model
from nnsim.tflite.writer import write_model
from tests.numerics.test_nnapi_path_numerics import (FLOAT_TOL, MODELS_DIR, invoke,
                                                     litert_interpreter, nnapi_interpreter,
                                                     seeded_inputs)

IMAGE = MODELS_DIR / "grace_hopper.bmp"


def describe(got: np.ndarray, want: np.ndarray) -> str | None:
    """How ``got`` differs from ``want``, or None when it does not (floats: within the test's
    FLOAT_TOL of the largest magnitude, summation-order noise)."""
    if got.dtype.kind == "f":
        err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
        if err <= FLOAT_TOL * max(float(np.max(np.abs(want))) if want.size else 0.0, 1.0):
            return None
        return f"max |diff| {err:.3g} ({err / (float(np.ptp(want)) or 1.0):.3g} of the range)"
    diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    return f"{np.count_nonzero(diff)}/{diff.size} differ, by up to {diff.max()}" \
        if diff.any() else None


def model_inputs(ip):
    details = ip.get_input_details()
    runs = [("random", seeded_inputs(details))]
    shape = details[0]["shape"]
    if len(details) == 1 and len(shape) == 4 and 3 in (shape[1], shape[3]) and IMAGE.is_file():
        runs.append(("image", [load_input(str(IMAGE), details[0])]))
    return runs


def with_outputs(model, outputs, operators=None):
    sg = model.subgraphs[0]
    ops = sg.operators if operators is None else operators
    inputs = sg.inputs if operators is None else tuple(
        i for op in ops for i in op.inputs if i >= 0 and sg.tensors[i].data is None)
    new_sg = dataclasses.replace(sg, operators=tuple(ops), inputs=tuple(inputs),
                                 outputs=tuple(outputs))
    return write_model(dataclasses.replace(model, subgraphs=(new_sg, *model.subgraphs[1:])))


def diverging_operators(path, values):
    """(operator index, name, tensor, description) of each operator that differs on its own."""
    model = read_model(str(path))
    sg = model.subgraphs[0]
    activations = list(dict.fromkeys(o for op in sg.operators for o in op.outputs if o >= 0))
    ref = litert_interpreter(with_outputs(model, activations))
    known = dict(zip(activations, invoke(ref, values)))
    known.update(zip(sg.inputs, values))
    for op in sg.operators:
        one = with_outputs(model, op.outputs, [dataclasses.replace(op, index=0)])
        ours = nnapi_interpreter(one)
        feeds = [known[d] for d in (i for i in op.inputs
                                    if i >= 0 and sg.tensors[i].data is None)]
        for t, got in zip(op.outputs, invoke(ours, feeds)):
            what = describe(got, known[t])
            if what:
                yield op.index, op.builtin.name, f"{t} '{sg.tensors[t].name[:60]}'", what


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help="model names (default: every shared model)")
    parser.add_argument("--ops", action="store_true", help="run each operator alone as well")
    args = parser.parse_args(argv)
    paths = sorted(MODELS_DIR.glob("*.tflite"))
    if args.models:
        paths = [p for p in paths if any(m in p.stem for m in args.models)]
    for path in paths:
        ours, ref = nnapi_interpreter(path=path), litert_interpreter(path=path)
        for kind, values in model_inputs(ours):
            found = [describe(a, b) for a, b in zip(invoke(ours, values), invoke(ref, values))]
            print(f"{path.stem} [{kind}]: " + "; ".join(f or "equal" for f in found))
            if args.ops and any(found):
                for index, name, tensor, what in diverging_operators(path, values):
                    print(f"    operator {index} {name} -> tensor {tensor}: {what}")


if __name__ == "__main__":
    main()
