"""Placement and timing reports shared by ``nnsim run``, ``explain`` and ``benchmark``.

Maps every TFLite node to where it ran: a delegate partition and, inside it, the NNAPI device
the runtime's ExecutionPlan chose for each NNAPI operation generated from the node.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

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
            devices = nnapi_devices_by_tflite_node(kernel)
            for n in kernel.nodes:
                out[n].partition = k
                out[n].devices = devices.get(n, [])
    return [out[n] for n in sorted(out)]


def device_summary(places) -> Counter:
    return Counter(p.where for p in places)
