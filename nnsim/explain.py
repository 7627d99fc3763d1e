"""``nnsim explain``: for every TFLite node and every NNAPI device, supported or not and why,
where the node ran, and what to change.

Reasons come from three places, in the order a board applies them: the TFLite delegate's
Validate (the node never reaches NNAPI), the device's getSupportedOperations answer (the
driver's own rule, or an operation above the device's feature level), and the runtime's
findBestDeviceForEachOperation (the device supports it but another one had better
performance for the operand type of input 0, or tied with the CPU, which wins ties).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from nnsim.report import TFLITE_CPU, placements
from nnsim.runtime.devices import DeviceManager
from nnsim.runtime.plan import get_performance
from nnsim.types import FLT_MAX, OperandType, PreferenceCode


@dataclass
class DeviceVerdict:
    device: str
    supported: bool
    reason: str = ""
    perf: float | None = None       # exec time ratio for the node's first NNAPI operation
    operand_type: str = ""          # input 0's operand type: it selects the perf entry


@dataclass
class NodeExplanation:
    node: int
    op: str
    ran_on: str
    delegate_refusals: list = field(default_factory=list)     # "kName: message"
    devices: list = field(default_factory=list)               # DeviceVerdict
    fixes: list = field(default_factory=list)


@dataclass
class Explanation:
    model: str
    sdk: int
    target_feature_level: int
    devices: list
    nodes: list
    summary: dict

    def to_json(self) -> dict:
        return asdict(self)


def explain(model, delegate, name: str = "") -> Explanation:
    """Apply ``delegate`` (an NnApiDelegate) to ``model`` and explain every node."""
    result = delegate.prepare(model)
    places = placements(model, result)
    devices = [d for d in _all_devices()]
    nodes = []
    decisions = result.decisions if result else {}
    per_node_device = _device_answers(model, delegate, decisions, devices)
    for place in places:
        dec = decisions.get(place.node)
        entry = NodeExplanation(place.node, place.op_name, place.where)
        if dec is not None:
            entry.delegate_refusals = [f"{f.type.name}: {f.message}"
                                       for f in dec.validation_failures]
            if dec.dropped_by_partition_limit:
                entry.delegate_refusals.append(
                    "dropped by the delegate's partition limit (max_number_delegated_partitions)")
        entry.devices = per_node_device.get(place.node, [])
        entry.fixes = suggest_fixes(entry, model, delegate)
        nodes.append(entry)
    summary = {}
    for e in nodes:
        summary[e.ran_on] = summary.get(e.ran_on, 0) + 1
    return Explanation(name, delegate.sdk, result.target_feature_level if result else delegate.sdk,
                       [d.name for d in devices], nodes, summary)


def _all_devices():
    from nnsim.runtime.devices import get_device_manager
    return get_device_manager().get_devices()


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
                out[n] = [DeviceVerdict(d.name, False, f"NNAPI model could not be built: {e}")
                          for d in devices]
            continue
        nnapi = conv.nnapi_model
        for d in devices:
            answers = d.supported_operations_with_reasons(nnapi)
            for sorted_index, ans in enumerate(answers):
                op = nnapi.operations[sorted_index]
                node = conv.nnapi_to_tflite_node[nnapi.sorted_to_original[sorted_index]]
                ok, reason = ans.supported, ans.reason
                if ok and op.min_feature_level > d.feature_level:
                    ok, reason = False, (f"the operation needs feature level "
                                         f"{op.min_feature_level}; {d.name} has "
                                         f"{int(d.feature_level)}")
                perf = get_performance(preference, d, nnapi, sorted_index)
                in0 = nnapi.operands[op.inputs[0]].type if op.inputs else None
                type_name = OperandType(in0).name if in0 is not None else ""
                verdicts = out.setdefault(node, {})
                prev = verdicts.get(d.name)
                if prev is None:
                    verdicts[d.name] = DeviceVerdict(d.name, ok, reason, perf, type_name)
                elif not ok and prev.supported:
                    verdicts[d.name] = DeviceVerdict(d.name, False, reason, prev.perf)
    return {n: list(v.values()) for n, v in out.items()}


def _input_type_name(model, node) -> str:
    op = model.main.operators[node]
    if not op.inputs or op.inputs[0] < 0:
        return ""
    return model.main.tensors[op.inputs[0]].type.name


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
    if not entry.delegate_refusals:
        for v in entry.devices:
            if v.device.startswith("vsi-npu") and _input_type_name(model, entry.node) == "INT8" \
                    and entry.ran_on != v.device:
                fixes.append("vsi-npu reports TENSOR_QUANT8_ASYMM_SIGNED (int8) at FLT_MAX, so "
                             "the runtime prefers nnapi-reference: quantize the model to uint8 "
                             "(asymmetric per-tensor) for the NPU")
                break
        for v in entry.devices:
            if v.device.startswith("synap-npu") and v.supported and entry.ran_on == v.device:
                fixes.append("synap-npu converts the model at the first inference: enable the "
                             "compile cache (vendor.npu.cache.model=1 with "
                             "ANeuralNetworksCompilation_setCaching) to skip it next time")
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


def format_text(ex: Explanation) -> list[str]:
    lines = [f"model: {ex.model}", f"android sdk {ex.sdk}, delegate feature level "
                                   f"{ex.target_feature_level}; devices: {', '.join(ex.devices)}",
             "summary: " + ", ".join(f"{k}: {v} node(s)" for k, v in
                                     sorted(ex.summary.items(), key=lambda kv: -kv[1])), ""]
    fixes: dict[str, list] = {}
    for e in ex.nodes:
        lines.append(f"node {e.node} {e.op}: ran on {e.ran_on}")
        for r in e.delegate_refusals:
            lines.append(f"    refused by the TFLite NNAPI delegate: {r}")
        for v in e.devices:
            if v.supported:
                lines.append(f"    {v.device}: supported (exec time {perf_text(v.perf)})")
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
        for f, nodes in sorted(fixes.items(), key=lambda kv: -len(kv[1])):
            shown = ", ".join(map(str, nodes[:8])) + (", ..." if len(nodes) > 8 else "")
            lines.append(f"  - {f} ({len(nodes)} node(s): {shown})")
    return lines
