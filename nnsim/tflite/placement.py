"""Where each TFLite node runs, and what it is: placements shared by the interpreter, the VX
delegate's estimates and the tools (``nnsim run``, ``explain``, ``graph``).

Maps every TFLite node to where it ran: a delegate partition and, inside it, the NNAPI device
the runtime's ExecutionPlan chose for each NNAPI operation generated from the node.
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field

from flatbuffers import flexbuffers

TFLITE_CPU = "TFLite CPU"


@dataclass
class NodePlacement:
    node: int
    op_name: str
    partition: int | None          # delegate kernel index, None = TFLite CPU kernel
    devices: list = field(default_factory=list)   # NNAPI devices of the node's NNAPI ops

    @property
    def where(self) -> str:
        if self.partition is None:
            return TFLITE_CPU
        return "+".join(sorted(set(self.devices))) or "NNAPI"


def nnapi_devices_by_tflite_node(kernel) -> dict:
    """tflite node -> device names of its NNAPI operations, from a prepared delegate kernel."""
    converted, comp = kernel.converted, kernel.compilation
    if converted is None or comp is None or comp.plan is None:
        return {}
    nnapi_model = converted.nnapi_model
    names_sorted = comp.plan.device_names_by_op()
    out: dict = {}
    for sorted_index, name in enumerate(names_sorted):
        original = nnapi_model.sorted_to_original[sorted_index]
        node = converted.nnapi_to_tflite_node[original]
        out.setdefault(node, []).append(name)
    return out


def placements(model, result, subgraph_index: int = 0) -> list[NodePlacement]:
    """One NodePlacement per TFLite node, in node order. ``result`` may be None (no delegate)."""
    sg = model.subgraphs[subgraph_index]
    out = {n: NodePlacement(n, op.name, None) for n, op in enumerate(sg.operators)}
    if result is not None:
        for k, kernel in enumerate(result.kernels):
            # a kernel that runs without NNAPI (the VX delegate) says where its nodes run
            devices = kernel.node_devices() if hasattr(kernel, "node_devices") else \
                nnapi_devices_by_tflite_node(kernel)
            for n in kernel.nodes:
                out[n].partition = k
                out[n].devices = devices.get(n, [])
    return [out[n] for n in sorted(out)]


def device_summary(places) -> Counter:
    return Counter(p.where for p in places)


# -- what a node is: its attributes and its tensors' quantization (explain, graph) ---------------
_ATTR_NAMES = {"filter_width": "window_w", "filter_height": "window_h",
               "fused_activation_function": "activation"}
# Options fields that say nothing to a user reading a placement (defaults, file bookkeeping).
_ATTR_HIDDEN = {"quantized_bias_type", "asymmetric_quantize_inputs", "keep_num_dims",
                "weights_format"}


def _attr_value(value) -> str:
    if hasattr(value, "name") and hasattr(value, "value"):      # an IntEnum of the schema
        return value.name
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_attr_value(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def node_attributes(op) -> list[str]:
    """``name=value`` texts of a TFLite node's options (pool window, strides, padding, fused
    activation, align_corners, ...); a custom op's flexbuffer options when they parse."""
    opts = op.options
    out = []
    if opts is not None and dataclasses.is_dataclass(opts) and \
            type(opts).__name__ != "RawOptions":
        values = {f.name: getattr(opts, f.name) for f in dataclasses.fields(opts)
                  if f.name not in _ATTR_HIDDEN}
        if "filter_width" in values and "filter_height" in values:
            w, h = values.pop("filter_width"), values.pop("filter_height")
            out.append(f"window={w}x{h}")
        if "stride_w" in values and "stride_h" in values:
            w, h = values.pop("stride_w"), values.pop("stride_h")
            out.append(f"strides={w}x{h}")
        if "dilation_w_factor" in values and "dilation_h_factor" in values:
            w, h = values.pop("dilation_w_factor"), values.pop("dilation_h_factor")
            if (w, h) != (1, 1):
                out.append(f"dilation={w}x{h}")
        for key, value in values.items():
            out.append(f"{_ATTR_NAMES.get(key, key)}={_attr_value(value)}")
    custom = getattr(op, "custom_options", None)
    if custom is not None and len(custom):
        try:
            parsed = flexbuffers.Loads(bytes(custom))
        except Exception:  # opaque custom options: nothing to show, never an error
            parsed = None
        if isinstance(parsed, dict):
            out.extend(f"{k}={_attr_value(v)}" for k, v in sorted(parsed.items()))
    return out


def quant_text(tensor) -> str:
    """``scale=… zp=…`` of a quantized TFLite tensor (per-channel: count and axis), or ''."""
    q = getattr(tensor, "quantization", None)
    if q is None or q.scales is None or not len(q.scales):
        return ""
    if len(q.scales) == 1:
        return f"scale={float(q.scales[0]):.6g} zp={int(q.zero_points[0])}"
    return (f"per-channel scales ({len(q.scales)} on axis {q.quantized_dimension}, "
            f"{float(min(q.scales)):.3g}..{float(max(q.scales)):.3g})")
