"""``nnsim explain``: for every TFLite node and every candidate NNAPI device, supported or not
and why, where the node ran, and what to change.

Reasons come from four places, in the order a board applies them: the delegate not applying
itself at all (Android below 8.1 / SDK 27, no usable device, a failed NNAPI model build, after
which TFLite restores the original plan), the TFLite delegate's Validate (the node never reaches
NNAPI), each device's getSupportedOperations answer per NNAPI operation generated from the node
(the driver's own rule, a vendor block list, an operation above the device's feature level), and
the runtime's findBestDeviceForEachOperation (the device supports it but another one had better
performance for the operand type of input 0, or tied with the CPU, which wins ties).

The device set is the one the delegate really used: its target devices when it chose some
(disallow_nnapi_cpu, accelerator_name), else every device of the board.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from nnsim.drivers.boards import current_board
from nnsim.platform.properties import getprop
from nnsim.runtime.devices import get_device_manager
from nnsim.runtime.plan import get_performance
from nnsim.tflite.cpu_timing import cpu_node_ns
from nnsim.tflite.delegate import MIN_SDK_NNAPI, MIN_SDK_NNAPI12, DelegateError
from nnsim.tflite.placement import placements
from nnsim.tflite.schema import NUMPY_DTYPES
from nnsim.types import FLT_MAX, OperandType, OperationCode, PreferenceCode

NNAPI_CPU = "nnapi-reference"
NNAPI_DELEGATE = "TFLite NNAPI delegate"
INT8 = "TENSOR_QUANT8_ASYMM_SIGNED"
UINT32_MAX = 0xFFFFFFFF


@dataclass
class OperationVerdict:
    """One device's answer for one NNAPI operation generated from the node."""
    operation: str                  # NNAPI OperationCode name
    added_by_delegate: bool         # e.g. the DEQUANTIZE of hybrid int8 weights
    supported: bool
    reason: str = ""


@dataclass
class DeviceVerdict:
    device: str
    supported: bool
    reason: str = ""                # every refusal, each named by its NNAPI operation
    perf: float | None = None       # exec time ratio for the node's first NNAPI operation
    operand_type: str = ""          # input 0's operand type: it selects the perf entry
    operations: list = field(default_factory=list)            # OperationVerdict


@dataclass
class NodeExplanation:
    node: int
    op: str
    ran_on: str
    delegate_refusals: list = field(default_factory=list)     # "kName: message"
    devices: list = field(default_factory=list)               # DeviceVerdict
    fixes: list = field(default_factory=list)
    not_delegated: str = ""         # why the delegate never offered the node to NNAPI
    on_accelerator: bool = False    # ran only on NNAPI devices other than nnapi-reference
    impact_ns: float | None = None  # simulated time of the node on the board's CPU


@dataclass
class Explanation:
    model: str
    sdk: int
    target_feature_level: int
    devices: list                   # the candidate devices, as the header prints them
    nodes: list
    summary: dict
    excluded: dict = field(default_factory=dict)   # device -> why it was not a candidate
    delegate_error: str = ""
    delegate: str = NNAPI_DELEGATE  # who refused nodes ("VX delegate" for nnsim.tflite.vx)
    delegate_detail: str = ""       # a header line replacing the NNAPI device line
    recommendation: str = ""        # the other delegate, when it puts more on the NPU
    alternative: dict = field(default_factory=dict)   # its figures (nnsim.explain_vx)

    def to_json(self) -> dict:
        return asdict(self)


def explain(model, delegate, name: str = "", *, prepared: bool = False,
            delegate_error: str = "") -> Explanation:
    """Apply ``delegate`` (an NnApiDelegate) to ``model`` and explain every node.

    ``prepared``: the delegate was already applied to ``model`` (by an Interpreter); its
    ``result`` (and ``delegate_error`` when it failed) are explained as they are."""
    if prepared:
        result = delegate.result if not delegate_error else None
    else:
        try:
            result = delegate.prepare(model)
        except DelegateError as e:  # TFLite restores the plan: every node on the CPU
            result, delegate_error = None, str(e)
    places = placements(model, result)
    devices, excluded = candidate_devices(delegate)
    decisions = result.decisions if result else getattr(delegate, "_decisions", {}) or {}
    per_node_device = {} if result is None else \
        _device_answers(model, delegate, decisions, devices)
    skipped = _not_delegated(model, delegate, result, delegate_error)
    oversized = _oversized_nodes(model) if delegate_error else {}
    cpu = _cpu_costs(model)
    nodes = []
    for place in places:
        dec = decisions.get(place.node)
        entry = NodeExplanation(place.node, place.op_name, place.where)
        if dec is not None:
            entry.delegate_refusals = [f"{f.type.name}: {f.message}"
                                       for f in dec.validation_failures]
            if dec.dropped_by_partition_limit:
                entry.delegate_refusals.append(
                    "dropped by the delegate's partition limit (max_number_delegated_partitions="
                    f"{delegate.options.max_number_delegated_partitions}): only the largest "
                    "partitions are delegated")
        if place.node in oversized:
            entry.delegate_refusals.append(oversized[place.node])
        if not entry.delegate_refusals:
            entry.not_delegated = skipped
        entry.devices = per_node_device.get(place.node, [])
        names = place.where.split("+")
        entry.on_accelerator = place.partition is not None and NNAPI_CPU not in names
        entry.impact_ns = cpu.get(place.node)
        entry.fixes = suggest_fixes(entry, model, delegate)
        nodes.append(entry)
    summary = {}
    for e in nodes:
        summary[e.ran_on] = summary.get(e.ran_on, 0) + 1
    target_fl = result.target_feature_level if result else delegate.sdk
    return Explanation(name, delegate.sdk, target_fl, [d.name for d in devices], nodes, summary,
                       excluded, delegate_error)


def candidate_devices(delegate) -> tuple[list, dict]:
    """(devices the delegate's NNAPI model could run on, {excluded device: why})."""
    every = list(get_device_manager().get_devices())
    if hasattr(delegate, "candidate_devices"):     # the delegate's own statement (issue 12.1)
        answer = dict(delegate.candidate_devices())
        return ([d for d in every if d.name in answer and answer[d.name] is None],
                {name: why for name, why in answer.items() if why is not None})
    chosen = list(getattr(delegate, "target_devices", None) or ())
    if not chosen:
        return every, {}
    names = {d.name for d in chosen}
    opts = delegate.options
    why = (f"accelerator_name={opts.accelerator_name}" if opts.accelerator_name
           else "disallow_nnapi_cpu")
    return chosen, {d.name: why for d in every if d.name not in names}


def _not_delegated(model, delegate, result, delegate_error: str) -> str:
    """The reason every validated node stayed off NNAPI when the delegate did not apply."""
    sdk = delegate.sdk
    if sdk < MIN_SDK_NNAPI:
        return (f"NNAPI needs Android 8.1 (SDK {MIN_SDK_NNAPI}); this emulated Android is SDK "
                f"{sdk}, so the TFLite NNAPI delegate does nothing and TFLite runs every node")
    if delegate_error:
        return (f"the NNAPI delegate failed ({delegate_error}); TFLite restored the original "
                f"execution plan, so every node runs on the TFLite CPU kernels")
    if result is None and sdk >= MIN_SDK_NNAPI12:
        names = [d.name for d in get_device_manager().get_devices()]
        if delegate._should_use_target_devices():
            if not any(n != NNAPI_CPU for n in names):
                return ("no candidate NNAPI device: disallow_nnapi_cpu leaves out "
                        "nnapi-reference and the board has no other device")
        elif len(names) <= 1:
            return ("the only NNAPI device is nnapi-reference and no accelerator was named: "
                    "the delegate does not apply itself (TFLite's rule)")
    return ""


def _oversized_nodes(model) -> dict:
    """node -> why: a tensor whose byte size overflows uint32 cannot be an NNAPI operand
    (ANeuralNetworksModel_addOperand refuses it, the delegate's model build fails)."""
    sg = model.main
    out = {}
    for n, op in enumerate(sg.operators):
        for i in list(op.inputs) + list(op.outputs):
            if i < 0:
                continue
            t = sg.tensors[i]
            dtype = NUMPY_DTYPES.get(t.type)
            size = (dtype.itemsize if dtype is not None else 1) * \
                int(np.prod([max(int(d), 1) for d in t.shape], dtype=object))
            if size > UINT32_MAX:
                shape = "x".join(str(d) for d in t.shape)
                out[n] = (f"operand size: tensor t{i} ({t.type.name.lower()} {shape}) is "
                          f"{size} bytes; an NNAPI operand must fit in uint32 (4 GiB), so "
                          f"ANeuralNetworksModel_addOperand refuses it")
                break
    return out


def _cpu_costs(model) -> dict:
    """node -> simulated ns on the current board's CPU (the cost of a fallback)."""
    board = current_board()
    out = {}
    for n in range(len(model.main.operators)):
        try:
            out[n] = float(cpu_node_ns(model.main, n, board))
        except Exception:  # a node the cost model cannot size has no impact figure
            out[n] = None
    return out


def _device_answers(model, delegate, decisions, devices) -> dict:
    """node -> [DeviceVerdict] from each device's answer on the NNAPI model of the node."""
    validated = [n for n, d in sorted(decisions.items()) if not d.validation_failures]
    if not validated:
        return {}
    sg = model.main
    plan = list(range(len(sg.operators)))
    target_fl = delegate.result.target_feature_level if delegate.result else delegate.sdk
    out: dict = {}
    preference = delegate.options.execution_preference
    if preference < 0:
        preference = PreferenceCode.PREFER_FAST_SINGLE_ANSWER
    for part in delegate._preview(sg, plan, validated):
        if part.type != "partition":
            continue
        try:
            conv = delegate._convert(model, 0, part.nodes, part.input_tensors,
                                     part.output_tensors, target_fl)
        except Exception as e:  # explain must still say something about the other nodes
            for n in part.nodes:
                out[n] = {d.name: DeviceVerdict(d.name, False,
                                                f"NNAPI model could not be built: {e}")
                          for d in devices}
            continue
        nnapi = conv.nnapi_model
        for d in devices:
            for sorted_index, ans in enumerate(d.supported_operations_with_reasons(nnapi)):
                op = nnapi.operations[sorted_index]
                node = conv.nnapi_to_tflite_node[nnapi.sorted_to_original[sorted_index]]
                ok, reason = ans.supported, ans.reason
                if ok and op.min_feature_level > d.feature_level:
                    ok, reason = False, (f"the operation needs feature level "
                                         f"{op.min_feature_level}; {d.name} has "
                                         f"{int(d.feature_level)}")
                code = OperationCode(op.type).name
                added = (code == "DEQUANTIZE" and sg.operators[node].name != "DEQUANTIZE"
                         and nnapi.operands[op.inputs[0]].is_constant)
                verdicts = out.setdefault(node, {})
                v = verdicts.get(d.name)
                if v is None:
                    in0 = nnapi.operands[op.inputs[0]].type if op.inputs else None
                    v = verdicts[d.name] = DeviceVerdict(
                        d.name, True, "", get_performance(preference, d, nnapi, sorted_index),
                        OperandType(in0).name if in0 is not None and not added else "")
                elif not v.operand_type and not added and op.inputs:
                    # the perf entry that decides is the node's own operation's, not the
                    # DEQUANTIZE the delegate put in front of it
                    v.perf = get_performance(preference, d, nnapi, sorted_index)
                    v.operand_type = OperandType(nnapi.operands[op.inputs[0]].type).name
                v.operations.append(OperationVerdict(code, added, ok, (reason or "").strip()))
    for verdicts in out.values():
        for v in verdicts.values():
            refused = [o for o in v.operations if not o.supported]
            if refused and v.operations:
                v.supported = False
                v.reason = "; ".join(_operation_reason(o, len(v.operations)) for o in refused)
    return {n: list(v.values()) for n, v in out.items()}


def _operation_reason(o: OperationVerdict, count: int) -> str:
    if o.added_by_delegate:
        return (f"{o.operation} (added by the delegate to dequantize constant weights): "
                f"{o.reason}")
    return f"{o.operation}: {o.reason}" if count > 1 else o.reason


def suggest_fixes(entry: NodeExplanation, model, delegate) -> list[str]:
    fixes = []
    refusals = " ".join(entry.delegate_refusals)
    if entry.op == "ARG_MAX" or entry.op == "ARG_MIN":
        if "kUnsupportedOutputType" in refusals:
            fixes.append("NNAPI only supports int32 output: export with "
                         "tf.math.argmax(..., output_type=tf.int32)")
    if entry.op in ("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR") and \
            "kUnsupportedOperandValue" in refusals:
        fixes.append("set align_corners=False and half_pixel_centers=False when exporting, or "
                     "run on Android 11+ (SDK 30) where NNAPI accepts them")
    if entry.op == "AVERAGE_POOL_2D" and "kUnsupportedOperandSize" in refusals:
        fixes.append("name the accelerator (accelerator_name / --nnapi_accelerator_name): the "
                     "256-tap limit only protects the reference CPU path; or use a smaller "
                     "pooling window")
    if entry.op == "CUSTOM" or "Unsupported operation type" in refusals:
        fixes.append("NNAPI cannot run this operation; it stays on the TFLite CPU kernels")
    if "partition limit" in refusals:
        fixes.append(f"raise the delegate's max_number_delegated_partitions (now "
                     f"{delegate.options.max_number_delegated_partitions}; "
                     f"--max_delegated_partitions, 0 = no limit), or make the nodes between "
                     f"the partitions delegable so they merge into fewer partitions")
    if "operand size:" in refusals:
        fixes.append("the model declares a tensor larger than 4 GiB: NNAPI cannot hold it and "
                     "the whole delegate fails; export with the real (smaller) input shape")
    if entry.not_delegated.startswith("NNAPI needs Android 8.1"):
        fixes.append("NNAPI exists from Android 8.1 (SDK 27): run on SDK 27 or later "
                     "(--android_sdk 27+; SDK 29+ lets the delegate choose devices)")
    if not entry.delegate_refusals and not entry.on_accelerator:
        fixes.extend(_device_fixes(entry))
    if not entry.delegate_refusals:
        for v in entry.devices:
            if v.device.startswith("synap-npu") and v.supported and entry.ran_on == v.device:
                fixes.append("synap-npu converts the model at the first inference: enable the "
                             "compile cache (vendor.npu.cache.model=1 with "
                             "ANeuralNetworksCompilation_setCaching) to skip it next time")
                break
    return fixes


def _device_fixes(entry: NodeExplanation) -> list[str]:
    """Fixes from the accelerators' answers for a node that did not run on one."""
    fixes = []
    ran = entry.ran_on.split("+")
    for v in entry.devices:
        if v.device == NNAPI_CPU:
            continue
        refused = [o for o in v.operations if not o.supported]
        if v.supported and v.device not in ran:
            if v.operand_type == INT8 and v.perf is not None and v.perf >= FLT_MAX * 0.999:
                fixes.append(f"{v.device} reports TENSOR_QUANT8_ASYMM_SIGNED (int8) at FLT_MAX, "
                             f"so the runtime prefers nnapi-reference: quantize the model to "
                             f"uint8 (asymmetric per-tensor) for the NPU, or keep "
                             f"nnapi-reference out (delegate option disallow_nnapi_cpu, "
                             f"TFLite's default, or accelerator_name={v.device})")
            else:
                fixes.append(f"{v.device} supports it but nnapi-reference won on exec time: "
                             f"keep nnapi-reference out (delegate option disallow_nnapi_cpu, "
                             f"TFLite's default, or accelerator_name={v.device})")
        if any(o.added_by_delegate for o in refused):
            fixes.append(f"the model keeps int8 weights with float activations (dynamic-range "
                         f"quantization): NNAPI dequantizes them with a DEQUANTIZE that "
                         f"{v.device} refuses; convert full-integer (int8/uint8 activations, "
                         f"with a representative dataset) or keep float32 weights")
        if any("blocked by debug blacklist" in o.reason for o in refused):
            path = getprop("vendor.NN_DBG_OP_BLK_LIST") or "(unset)"
            ops = sorted({f"{o.operation} ({int(OperationCode[o.operation])})"
                          for o in refused if "blocked by debug blacklist" in o.reason})
            fixes.append(f"{v.device}'s debug block list vendor.NN_DBG_OP_BLK_LIST={path} "
                         f"names {', '.join(ops)}: remove the code from the file's first line "
                         f"or unset the property (a debug setting, not a hardware limit)")
        if any("MODEL_BLOCK_LEVEL" in o.reason for o in refused):
            level = getprop("vendor.MODEL_BLOCK_LEVEL") or "0"
            fixes.append(f"{v.device} refuses the whole model: a weight MD5 matches the "
                         f"vendor's model block list at vendor.MODEL_BLOCK_LEVEL={level} "
                         f"(models known to run badly on the NPU); lower the level (0 = off) "
                         f"only after checking accuracy on the NPU")
        if fixes:
            break
    return fixes


def perf_text(p: float | None) -> str:
    if p is None:
        return "?"
    return "FLT_MAX" if p >= FLT_MAX * 0.999 else f"{p:g}"


def choice_text(e: NodeExplanation) -> str:
    """Why the device that ran the node won, from the runtime's rule (nnapi-runtime.md 3.2)."""
    ok = [v for v in e.devices if v.supported]
    winner = next((v for v in ok if v.device == e.ran_on), None)
    if winner is None or len(ok) < 2:
        return ""
    others = [v for v in ok if v is not winner]
    what = f"{winner.operand_type} " if winner.operand_type else ""
    parts = ", ".join(f"{v.device} {perf_text(v.perf)}" for v in others)
    tie = any(v.perf == winner.perf for v in others)
    rule = ("tied, and ties go to nnapi-reference" if tie else "the lowest exec time wins")
    return (f"choice: {winner.device} for {what}(exec time {perf_text(winner.perf)}; "
            f"{parts}): {rule}")


def impact_text(ns: float | None) -> str:
    if ns is None:
        return "?"
    return f"{ns / 1e6:.2f} ms" if ns >= 1e5 else f"{ns / 1e3:.1f} us"


def fallback_nodes(ex: Explanation) -> list:
    """Nodes not on an accelerator (TFLite CPU or nnapi-reference, even in part), the most
    costly on the board's CPU first."""
    rest = [e for e in ex.nodes if not e.on_accelerator]
    return sorted(rest, key=lambda e: (-(e.impact_ns or 0.0), e.node))


def header_lines(ex: Explanation) -> list[str]:
    if ex.delegate_detail:
        lines = [f"model: {ex.model}", ex.delegate_detail]
    else:
        lines = [f"model: {ex.model}", f"android sdk {ex.sdk}, delegate feature level "
                                       f"{ex.target_feature_level}; devices: "
                                       f"{', '.join(ex.devices) or '(none)'}"]
    for name, why in ex.excluded.items():
        lines.append(f"{name} excluded: {why}")
    if ex.delegate_error:
        lines.append(f"delegate failed: {ex.delegate_error}")
    lines.append("summary: " + ", ".join(f"{k}: {v} node(s)" for k, v in
                                         sorted(ex.summary.items(), key=lambda kv: -kv[1])))
    return lines


def format_text(ex: Explanation, fallback_only: bool = False) -> list[str]:
    lines = header_lines(ex)
    nodes = ex.nodes
    if fallback_only:
        nodes = fallback_nodes(ex)
        lines.append(f"fallback only: {len(nodes)} of {len(ex.nodes)} node(s) not on an "
                     f"accelerator, by simulated time on the board's CPU")
    lines.append("")
    fixes: dict[str, list] = {}
    for e in nodes:
        cost = "" if e.on_accelerator else f" (CPU time {impact_text(e.impact_ns)})"
        lines.append(f"node {e.node} {e.op}: ran on {e.ran_on}{cost}")
        for r in e.delegate_refusals:
            lines.append(f"    refused by the {ex.delegate}: {r}")
        if e.not_delegated:
            lines.append(f"    not delegated: {e.not_delegated}")
        for v in e.devices:
            if v.supported:
                lines.append(f"    {v.device}: supported (exec time {perf_text(v.perf)})")
            elif len(v.operations) > 1:      # one line per refused NNAPI operation
                lines.append(f"    {v.device}: not supported:")
                lines.extend(f"        {_operation_reason(o, 2)}" for o in v.operations
                             if not o.supported)
            else:
                lines.append(f"    {v.device}: not supported: {v.reason}")
        choice = choice_text(e)
        if choice:
            lines.append(f"    {choice}")
        for f in e.fixes:
            lines.append(f"    fix: {f}")
            fixes.setdefault(f, []).append(e.node)
    if fixes:
        lines += ["", "what to change:"]
        for f, ids in sorted(fixes.items(), key=lambda kv: -len(kv[1])):
            shown = ", ".join(map(str, ids[:8])) + (", ..." if len(ids) > 8 else "")
            lines.append(f"  - {f} ({len(ids)} node(s): {shown})")
    elif fallback_only and not nodes:
        lines.append("every node runs on an accelerator")
    if ex.recommendation:
        lines += ["", f"recommendation: {ex.recommendation}"]
    return lines


def to_json(ex: Explanation, fallback_only: bool = False) -> dict:
    data = ex.to_json()
    if fallback_only:
        data["nodes"] = [asdict(e) for e in fallback_nodes(ex)]
        data["fallback_only"] = True
    return data
