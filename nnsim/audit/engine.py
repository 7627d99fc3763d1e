"""One combination of (model, board, Android SDK, delegate), evaluated into a plain record.

``evaluate(model, Combination(...))`` applies the delegate the way the CLI's clients do, and
returns a dict of JSON-serialisable values (see ``RECORD_FIELDS``): nodes delegated, delegate
partitions, where every node ran and a per-op-type summary, the simulated first and steady
inference on the board (``nnsim run``'s timing: delegate partitions at the drivers' simulated
time, TFLite CPU nodes at the board's CPU cost model), the refusal reasons of ``nnsim explain``
grouped, and, with ``run=True``, the largest difference of one inference against nnsim's own
TFLite CPU path (no delegate). Any failure (a model that cannot be read, an operation nnsim
cannot run, a delegate that does not exist, memory) is a record with ``status`` and ``error``,
never an exception: one bad model must not stop an audit.

Delegates: ``nnapi`` is ``load_delegate("nnapi", ...)`` with the options of the app the CLI
emulates (nnsim/commands/client.py: nnapi-reference allowed, 3 partitions), ``vx`` is
``load_delegate("libvx_delegate.so", ...)`` (TIM-VX, bypassing NNAPI), ``cpu`` no delegate.
The process running ``evaluate`` is changed by it (board, properties): run it in a process of
its own (``nnsim.audit.isolate``), as the audit and compare commands do.
"""
from __future__ import annotations

import argparse
import hashlib
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import nnsim
import nnsim.tflite   # load_delegate is looked up on the module when called (tests replace it)
from nnsim.commands.client import add_client_arguments
from nnsim.commands.common import error_line
from nnsim.commands.diff import random_input
from nnsim.commands.run import _simulated_ns
from nnsim.runtime.board import apply_board
from nnsim.errors import ModelFileError
from nnsim.explain import choice_text, explain, fallback_nodes
from nnsim.explain_vx import explain_vx
from nnsim.tflite import Interpreter
from nnsim.tflite.delegate import NnApiDelegate
from nnsim.tflite.vx import VxDelegate

__all__ = ["Combination", "DELEGATES", "VX_LIBRARY", "RECORD_FIELDS", "evaluate",
           "error_record", "nnapi_client_options", "model_digest"]

DELEGATES = ("nnapi", "vx", "cpu")
VX_LIBRARY = "libvx_delegate.so"
TFLITE_CPU = "TFLite CPU"
NNAPI_CPU = "nnapi-reference"
INPUT_SEED = 0
#: Set by nnsim.audit.isolate in a task's process: the memory cap, as a person reads it.
MEMORY_CAP_ENV = "NNSIM_AUDIT_MEMORY_CAP"

#: The flat (CSV) columns of a record, in order; nested values are JSON in the CSV.
RECORD_FIELDS = ("model", "model_sha256", "board", "android_sdk", "delegate", "status", "error",
                 "nodes", "delegated_nodes", "partitions", "accelerator_nodes", "npu_coverage",
                 "first_ms", "avg_ms", "top_reason", "top_fix", "max_abs_diff", "devices",
                 "op_classes", "reasons")


@dataclass(frozen=True, order=True)
class Combination:
    board: str
    android_sdk: int
    delegate: str

    def key(self) -> str:
        return f"{self.board}/sdk{self.android_sdk}/{self.delegate}"


def model_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def nnapi_client_options() -> dict:
    """The NnApiDelegate options of the app ``run``/``explain``/``graph`` emulate, read from
    the CLI's own defaults (nnsim/commands/client.py), as ``load_delegate`` option values."""
    parser = argparse.ArgumentParser(add_help=False)
    add_client_arguments(parser)
    args = parser.parse_args([])
    options = {"disallow_nnapi_cpu": bool(args.disable_nnapi_cpu),
               "max_number_delegated_partitions": int(args.max_delegated_partitions)}
    if args.accelerator_name:
        options["accelerator_name"] = args.accelerator_name
    return options


def error_record(model: str, combo: Combination, status: str, error: str,
                 sha256: str = "") -> dict:
    """A row for a combination that produced no result (``status`` != "ok")."""
    record = {name: None for name in RECORD_FIELDS}
    record.update(model=model, model_sha256=sha256, board=combo.board,
                  android_sdk=combo.android_sdk, delegate=combo.delegate, status=status,
                  error=error, devices={}, op_classes={}, reasons=[])
    record["placement"] = []
    return record


def _make_delegate(kind: str):
    if kind == "nnapi":
        return nnsim.tflite.load_delegate("nnapi", options=nnapi_client_options())
    if kind == "vx":
        try:
            return nnsim.tflite.load_delegate(VX_LIBRARY, options={})
        except ValueError as e:   # LiteRT's words for a library it cannot load
            raise DelegateUnavailable(" ".join(str(e).split())) from None
    if kind == "cpu":
        return None
    raise ValueError(f"unknown delegate {kind!r}; choose from {', '.join(DELEGATES)}")


class DelegateUnavailable(Exception):
    """``load_delegate`` refused the library (e.g. the VX delegate in an nnsim without it)."""


def _inputs(interp) -> list:
    """Deterministic inputs, inference_diff's (nnsim diff) truncated-Gaussian generator."""
    rng = np.random.default_rng(INPUT_SEED)
    return [(d["index"], random_input(rng, np.dtype(d["dtype"]),
                                      tuple(int(x) for x in d["shape"])))
            for d in interp.get_input_details()]


def _ms(ns) -> float | None:
    return None if ns is None else round(float(ns) / 1e6, 6)   # as nnsim run --format json


def evaluate(model, combo: Combination, *, run: bool = False, name: str | None = None) -> dict:
    """The record of one combination (see the module docstring). ``model`` is a path or the
    model's bytes; ``name`` is how the record names it (default: the path as given)."""
    shown = name or (str(model) if not isinstance(model, (bytes, bytearray)) else "model")
    try:
        data = bytes(model) if isinstance(model, (bytes, bytearray)) else Path(model).read_bytes()
    except OSError as e:
        return error_record(shown, combo, "error", f"cannot read the model: "
                                                   f"{e.strerror or e}")
    digest = model_digest(data)
    try:
        return _evaluate(data, digest, shown, combo, run)
    except DelegateUnavailable as e:
        return error_record(shown, combo, "unavailable", f"{combo.delegate} delegate: {e}",
                            digest)
    except MemoryError as e:
        text = error_line(e)
        if os.environ.get(MEMORY_CAP_ENV):   # nnsim.audit.isolate set the limit
            text = text.replace("NNSIM_MAX_TENSOR_BYTES raises it",
                                f"the per-task memory cap of {os.environ[MEMORY_CAP_ENV]}")
        return error_record(shown, combo, "memory", text, digest)
    except Exception as e:  # noqa: BLE001 -- every failure is a row, never a crash
        return error_record(shown, combo, "error", _error_text(e), digest)


def _error_text(e: BaseException) -> str:
    if isinstance(e, ModelFileError):
        return f"not a valid .tflite model: {e.what}" + (f" at {e.where}" if e.where else "")
    return error_line(e)


def _evaluate(data: bytes, digest: str, shown: str, combo: Combination, run: bool) -> dict:
    board = apply_board(combo.board)
    nnsim.setprop("ro.build.version.sdk", str(combo.android_sdk))
    interp = Interpreter(model_content=data)   # parses the model before any delegate
    delegate = _make_delegate(combo.delegate)
    if delegate is not None:
        interp.modify_graph_with_delegate(delegate)
    interp.allocate_tensors()
    inputs = _inputs(interp)
    for index, value in inputs:
        interp.set_tensor(index, value)
    first, steady = _board_time(interp, board)
    result = interp.delegation
    ops = [op.name for op in interp.model.main.operators]
    where = {n: (TFLITE_CPU if w == "cpu" else w) for n, w in interp.node_placement().items()}
    placement = [where[n] for n in range(len(ops))]
    accelerated = [is_accelerator(w) for w in placement]
    reasons = _reasons(interp, delegate, shown)
    record = error_record(shown, combo, "ok", "", digest)
    record.update(
        nodes=len(ops),
        delegated_nodes=0 if result is None else int(result.nodes_replaced),
        partitions=0 if result is None else len(result.kernels),
        accelerator_nodes=sum(accelerated),
        npu_coverage=round(sum(accelerated) / len(ops), 4) if ops else 0.0,
        first_ms=_ms(first), avg_ms=_ms(steady),
        devices=dict(sorted(Counter(placement).items())),
        op_classes=_op_classes(ops, placement),
        reasons=reasons,
        top_reason=reasons[0]["reason"] if reasons else "",
        top_fix=reasons[0]["fix"] if reasons else "",
        placement=[{"node": n, "op": op, "where": w}
                   for n, (op, w) in enumerate(zip(ops, placement))])
    if interp.delegation_error:
        record["error"] = f"delegate not applied: {interp.delegation_error}"
    if run:   # a failed check keeps the placement: the row says what failed
        try:
            record["max_abs_diff"], record["outputs"] = _compare_with_cpu(interp, data, inputs)
        except MemoryError:
            raise
        except Exception as e:  # noqa: BLE001 -- a row, never a crash
            record["status"], record["error"] = "run_failed", f"--run: {_error_text(e)}"
    return record


def is_accelerator(where: str) -> bool:
    """A placement entirely on devices other than the CPUs (TFLite's and NNAPI's)."""
    parts = where.split("+")
    return not any(p in (TFLITE_CPU, "cpu", NNAPI_CPU, "NNAPI") for p in parts)


def _board_time(interp, board) -> tuple:
    """(first, steady) simulated ns, as ``nnsim run`` computes them (its own function): the
    model is invoked (twice, first and steady state) only when a delegate partition has to
    report its drivers' time; TFLite CPU nodes need no inference."""
    delegated = any(item.kind != "node" for item in interp.plan_items())
    if delegated:
        interp.invoke()
    first = _simulated_ns(interp.delegation, interp, board)
    steady = first
    if delegated:
        interp.invoke()
        steady = _simulated_ns(interp.delegation, interp, board)
    return first, steady


def _op_classes(ops: list, placement: list) -> dict:
    """{TFLite op: {where: count}}: where each kind of operation ran."""
    out: dict = {}
    for op, where in zip(ops, placement):
        per = out.setdefault(op, {})
        per[where] = per.get(where, 0) + 1
    return {op: dict(sorted(per.items())) for op, per in sorted(out.items())}


# -- refusal reasons ---------------------------------------------------------------------------
def _reasons(interp, delegate, shown: str) -> list:
    """The reasons of ``nnsim explain`` for every node not on an accelerator, grouped:
    [{reason, nodes, ops {op: count}, fix, cpu_ms}], the most nodes first."""
    if delegate is None:
        return []
    error = interp.delegation_error or ""
    if isinstance(delegate, NnApiDelegate):
        ex = explain(interp.model, delegate, shown, prepared=True, delegate_error=error)
        who = "TFLite NNAPI delegate"
    else:
        if not isinstance(delegate, VxDelegate):
            return _other_delegate_reasons(interp, delegate)
        ex = explain_vx(interp.model, delegate, shown, prepared=True, delegate_error=error)
        who = "VX delegate"
    groups: dict = {}
    for e in fallback_nodes(ex):
        reason = node_reason(e, who)
        g = groups.setdefault(reason, {"reason": reason, "nodes": 0, "ops": Counter(),
                                       "fix": "", "cpu_ms": 0.0})
        g["nodes"] += 1
        g["ops"][e.op] += 1
        g["cpu_ms"] += (e.impact_ns or 0.0) / 1e6
        if not g["fix"] and e.fixes:
            g["fix"] = e.fixes[0]
    return _sorted_groups(groups)


def _sorted_groups(groups: dict) -> list:
    out = []
    for g in sorted(groups.values(), key=lambda g: (-g["nodes"], -g["cpu_ms"], g["reason"])):
        out.append({"reason": g["reason"], "nodes": g["nodes"],
                    "ops": dict(sorted(g["ops"].items())), "fix": g["fix"],
                    "cpu_ms": round(g["cpu_ms"], 4)})
    return out


def node_reason(e, who: str = "TFLite NNAPI delegate") -> str:
    """One line: why this node (an explain NodeExplanation) is not on an accelerator, in the
    order the board decides it (the delegate ``who`` first, then the devices, then the
    runtime's choice between devices)."""
    if e.delegate_refusals:
        return f"{who}: {e.delegate_refusals[0]}"
    if e.not_delegated:
        return e.not_delegated
    accelerators = [v for v in e.devices if v.device != NNAPI_CPU]
    refused = [v for v in accelerators if not v.supported]
    if refused and len(refused) == len(accelerators):
        v = refused[0]
        return f"{v.device}: {v.reason}"
    choice = choice_text(e)
    if choice:
        return choice.removeprefix("choice: ")
    if e.ran_on == TFLITE_CPU:
        return "not delegated"
    if "+" in e.ran_on:
        return f"its NNAPI operations were split between {e.ran_on.replace('+', ' and ')}"
    return f"ran on {e.ran_on}"


def _other_delegate_reasons(interp, delegate) -> list:
    """A delegate without an explain of its own: one group of the nodes it left."""
    ops = [op.name for op in interp.model.main.operators]
    groups: dict = {}
    reason = f"not taken by the {getattr(delegate, 'name', None) or type(delegate).__name__}"
    for n, where in sorted(interp.node_placement().items()):
        if not is_accelerator(TFLITE_CPU if where == "cpu" else where):
            g = groups.setdefault(reason, {"reason": reason, "nodes": 0, "ops": Counter(),
                                           "fix": "", "cpu_ms": 0.0})
            g["nodes"] += 1
            g["ops"][ops[n]] += 1
    return _sorted_groups(groups)


# -- --run: one inference against nnsim's TFLite CPU path ------------------------------------
def _compare_with_cpu(interp, data: bytes, inputs: list) -> tuple:
    """(largest |delegated - TFLite CPU| over the outputs, per-output list), on the raw
    output values (quantized outputs in their integer steps) of the same inputs."""
    reference = Interpreter(model_content=data)
    reference.allocate_tensors()
    for index, value in inputs:
        reference.set_tensor(index, value)
    reference.invoke()
    if not any(item.kind != "node" for item in interp.plan_items()):
        interp.invoke()   # no delegate: the model has not run yet
    outputs, worst = [], 0.0
    for test_d, ref_d in zip(interp.get_output_details(), reference.get_output_details()):
        a = np.asarray(interp.get_tensor(test_d["index"]))
        b = np.asarray(reference.get_tensor(ref_d["index"]))
        if a.shape != b.shape:
            raise ValueError(f"output '{test_d['name']}': shape {list(a.shape)} with the "
                             f"delegate, {list(b.shape)} on the TFLite CPU")
        diff = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) \
            if a.size else 0.0
        outputs.append({"name": test_d["name"], "max_abs_diff": diff})
        worst = max(worst, diff)
    return worst, outputs


def model_files(paths) -> list[tuple[str, str]]:
    """(path, display name) of every .tflite file under ``paths`` (files or folders), sorted;
    the display name is the path relative to the folder given."""
    found = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            for f in sorted(path.rglob("*.tflite")):
                if f.is_file():
                    found.append((str(f), str(f.relative_to(path))))
        elif path.exists():
            found.append((str(path), path.name))
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
    seen, out = set(), []
    for path, shown in found:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            out.append((path, shown))
    return out
