"""``nnsim explain`` for the VX delegate, and the advice to switch delegates.

``explain_vx`` gives the same ``Explanation`` as the NNAPI explain (nnsim/explain.py): per node
where it ran, the VX delegate's refusal (the refusing function and its log line,
nnsim/tflite/vx/rules.py), its CPU cost on the board, and fixes. ``advise`` applies
the other delegate (VX for an NNAPI explain, the app's NNAPI delegate for a VX one) to the same
model, silently, and ``recommendation`` words the result when the other one puts more nodes on
the NPU: how many, and the simulated steady inference of both (nnsim/tflite/vx/estimate.py).

A tool built on ``nnsim.explain``, above the TFLite library: the VX delegate never needs it.
"""
from __future__ import annotations

import contextlib

from nnsim.drivers.profiles import current_board
from nnsim.explain import Explanation, NodeExplanation, _cpu_costs
from nnsim.platform.properties import getprop_int
from nnsim.tflite import tflog
from nnsim.tflite.delegate import DelegateError
from nnsim.tflite.placement import placements
from nnsim.tflite.vx.delegate import LIBRARY, PLACEMENT, VxDelegate
from nnsim.tflite.vx.estimate import PlanEstimate, estimate
from nnsim.tflite.vx.rules import GLOBAL_CHECKS, SUPPORTED_OP

VX_DELEGATE = "VX delegate"


def explain_vx(model, delegate: VxDelegate, name: str = "", *, prepared: bool = False,
               delegate_error: str = "") -> Explanation:
    """Apply ``delegate`` to ``model`` (unless ``prepared``) and explain every node."""
    result = delegate.result if prepared else delegate.prepare(model)
    if delegate_error:
        result = None
    decisions = result.decisions if result is not None else {}
    cpu = _cpu_costs(model)
    nodes, summary = [], {}
    for place in placements(model, result if result is not None and result.kernels else None):
        entry = NodeExplanation(place.node, place.op_name, place.where)
        dec = decisions.get(place.node)
        if dec is not None:
            entry.delegate_refusals = [f"{f.where}: {f.message}"
                                       for f in dec.validation_failures]
        entry.on_accelerator = place.partition is not None
        entry.impact_ns = cpu.get(place.node)
        entry.fixes = vx_fixes(model, place.node, dec)
        nodes.append(entry)
        summary[entry.ran_on] = summary.get(entry.ran_on, 0) + 1
    detail = (f"delegate: {delegate.describe()}; no NNAPI: refused nodes run on the TFLite CPU "
              f"kernels")
    return Explanation(name, getprop_int("ro.build.version.sdk", 31), 0, [PLACEMENT], nodes,
                       summary, {}, delegate_error, VX_DELEGATE, detail)


def vx_fixes(model, n: int, decision) -> list[str]:
    """What to change so the VX delegate takes node ``n``."""
    if decision is None or not decision.validation_failures:
        return []
    op = model.main.operators[n]
    f = decision.validation_failures[0]
    text = f.message
    if f.where == SUPPORTED_OP:
        what = "custom operator" if op.name != op.builtin.name else "operator"
        return [f"the VX delegate has no mapper for the {what} {op.name}: it runs on the TFLite "
                f"CPU kernels (nothing in the model can change that but replacing the op)"]
    fixes = []
    if "Int64 output" in text and op.name in ("ARG_MAX", "ARG_MIN"):
        fixes.append("export with tf.math.argmax(..., output_type=tf.int32): the VX delegate "
                     "refuses int64 outputs")
    elif "Int64" in text:
        fixes.append("int64 tensors never reach the NPU: compute the value in int32 in the "
                     "model")
    if "hybrid" in text:
        fixes.append("quantize the model full-integer (int8/uint8 activations with a "
                     "representative dataset): the VX delegate refuses float inputs with "
                     "quantized weights")
    if "must be constant" in text or "const" in text or "Dynamic" in text or "dynamic" in text:
        fixes.append("make the operation's shape/axis/size inputs constants in the exported "
                     "model (the VX delegate compiles a static graph)")
    if "without quantization" in text:
        fixes.append("give the 8-bit tensor quantization parameters (scale, zero point)")
    if "PerChannel" in text:
        fixes.append("keep per-channel quantization on weights only: the VX delegate does not "
                     "convert per-channel tensors to or from float")
    if f.where == GLOBAL_CHECKS and ("dims is 0" in text or "greater than 6" in text
                                     or "65535" in text):
        fixes.append("reshape the tensor: the VX delegate takes ranks 1..6, no 0 dimension, "
                     "no non-batch dimension above 65535")
    return fixes


@contextlib.contextmanager
def _quiet():
    """A what-if application of a delegate prints nothing (TFLite lines off)."""
    saved, once = tflog.LOGGER.disabled, set(tflog._once)
    tflog.LOGGER.disabled = True
    try:
        yield
    finally:
        tflog.LOGGER.disabled = saved
        tflog._once.intersection_update(once)   # a "once" line silenced here still comes later


def what_if(model, make_delegate) -> tuple[object, PlanEstimate] | None:
    """(result, estimate) of creating a delegate (``make_delegate()``) and applying it to
    ``model``, silently; None if it fails."""
    with _quiet():
        try:
            result = make_delegate().prepare(model)
        except (DelegateError, ValueError):
            return None
        if result is not None and not result.kernels:
            result = None
        return result, estimate(model, result, current_board())


def _ms(ns) -> str:
    return "?" if ns is None else f"{ns / 1e6:.2f} ms"


def recommendation(primary: str, mine: PlanEstimate, other: str, theirs: PlanEstimate,
                   board: str, how: str) -> tuple[str, dict]:
    """("" when the other delegate puts no more nodes on the NPU, else the advice), figures."""
    figures = {"delegate": other, "how": how, "npu_nodes": theirs.npu_nodes,
               "total_nodes": theirs.total_nodes, "placement": dict(theirs.by_where),
               "steady_ms": None if theirs.steady_ns is None else theirs.steady_ns / 1e6,
               "current_npu_nodes": mine.npu_nodes,
               "current_steady_ms": None if mine.steady_ns is None else mine.steady_ns / 1e6,
               "speedup": None}
    if theirs.npu_nodes <= mine.npu_nodes:
        return "", figures
    where = ", ".join(f"{n} on {w}" for w, n in sorted(mine.by_where.items(),
                                                         key=lambda kv: -kv[1]))
    text = (f"{other} ({how}) would run {theirs.npu_nodes} of {theirs.total_nodes} nodes on "
            f"the {board} NPU, against {mine.npu_nodes} with {primary} ({where})")
    if mine.steady_ns and theirs.steady_ns:
        ratio = mine.steady_ns / theirs.steady_ns
        figures["speedup"] = ratio
        if ratio >= 1:
            text += (f"; simulated inference {_ms(theirs.steady_ns)} against "
                     f"{_ms(mine.steady_ns)}: {ratio:.1f}x faster")
        else:
            text += (f"; but its simulated inference is slower, {_ms(theirs.steady_ns)} against "
                     f"{_ms(mine.steady_ns)} ({1 / ratio:.1f}x): the NPU runs this model's "
                     f"float work on its shader")
    return text, figures


def advise(model, ex: Explanation, primary_result, make_other, primary_is_vx: bool):
    """Fill ``ex.recommendation`` / ``ex.alternative`` from the other delegate
    (``make_other()``: a fresh NnApiDelegate or VxDelegate) on ``model``."""
    board = current_board()
    with _quiet():
        mine = estimate(model, primary_result if primary_result is not None and
                        primary_result.kernels else None, board)
    other = what_if(model, make_other)
    if other is None:
        return ex
    if primary_is_vx:
        names = ("the VX delegate", "the NNAPI delegate", "TFLite NNAPI delegate, this app's "
                 "options")
    else:
        names = ("this NNAPI delegate", "the VX delegate",
                 f"--external_delegate_path={LIBRARY}")
    ex.recommendation, ex.alternative = recommendation(names[0], mine, names[1], other[1],
                                                       board.name, names[2])
    return ex
