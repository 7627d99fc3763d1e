"""``nnsim explain --steps``: the partitioner's decisions in the order they are made.

The TFLite NNAPI delegate and the NNAPI runtime record each decision where they make it
(:mod:`nnsim.runtime.trace`); this module only applies the delegate under a recording, ties the
runtime's NNAPI operations back to TFLite nodes, and prints one line per decision:

1. ``device selection``: the delegate's candidate devices (and the excluded ones, with why);
2. ``Validate``: the delegate's Validate per node (with the refusal reasons);
3. ``GetNodesSupportedByAccelerator``: when an accelerator is named / nnapi-reference is
   disallowed, the delegate asks getSupportedOperationsForDevices and keeps the nodes it says
   yes to;
4. ``delegate partitions``: the node subsets the delegate replaces, and those left to TFLite;
5. per delegated partition, the runtime's compilation: ``getSupportedOperations`` per device,
   ``findBestDeviceForEachOperation`` per operation (every candidate's exec time; the lowest
   wins, a tie goes to nnapi-reference, the CPU, else to the lower device index),
   ``partitionTheWork`` steps, and ``CPU fallback`` when partitioning failed or is off.
"""
from __future__ import annotations

from nnsim.runtime import trace
from nnsim.tflite.delegate import DelegateError
from nnsim.types import FLT_MAX

NNAPI_CPU = "nnapi-reference"


def record_steps(model, delegate) -> tuple[object, str, list]:
    """Apply ``delegate`` to ``model`` under a recording: (result, delegate error, events)."""
    error = ""
    with trace.recording() as events:
        try:
            result = delegate.prepare(model)
        except DelegateError as e:
            result, error = None, str(e)
    return result, error, attach_nodes(events)


def attach_nodes(events: list) -> list:
    """Name the TFLite node of every NNAPI operation the runtime's events mention."""
    out, op_nodes, purpose = [], {}, ""
    for ev in events:
        ev = dict(ev)
        if ev["stage"] == "NNAPI model":
            op_nodes, purpose = ev.pop("op_nodes"), ev["purpose"]
            ev["operations"] = len(op_nodes)
        elif ev["stage"] == "getSupportedOperations":
            if purpose == "getSupportedOperationsForDevices":
                ev["stage"] = purpose
            ev["unsupported_nodes"] = sorted({op_nodes[o] for o in ev["unsupported"]
                                              if o in op_nodes})
        elif ev["stage"] == "findBestDeviceForEachOperation":
            ev["node"] = op_nodes.get(ev["op"])
            ev["compared"] = [{"device": d, "exec_time": p} for d, p in ev["compared"]]
            ev["rule"] = _rule(ev)
        elif ev["stage"] == "partitionTheWork":
            ev["nodes"] = sorted({op_nodes[o] for o in ev["operations"] if o in op_nodes})
        out.append(ev)
    return out


def _rule(ev: dict) -> str:
    able = [c for c in ev["compared"] if c["exec_time"] is not None]
    if ev["best"] < 0:
        return "control flow the CPU would win runs in the runtime's interpreter"
    if len(able) == 1:
        return "the only device that can do it"
    win = next(c for c in able if c["device"] == ev["device"])
    if sum(1 for c in able if c["exec_time"] == win["exec_time"]) > 1:
        return ("tie: the CPU (nnapi-reference) wins ties" if ev["device"] == NNAPI_CPU
                else "tie: the lower device index wins")
    return "lowest exec time"


def _perf(p) -> str:
    if p is None:
        return "can't do"
    return "FLT_MAX" if p >= FLT_MAX * 0.999 else f"{p:g}"


def _nodes(nodes: list) -> str:
    """0-30, 32, 34-36"""
    nodes = sorted(set(nodes))
    if not nodes:
        return "(none)"
    runs, start = [], nodes[0]
    for prev, cur in zip(nodes, nodes[1:] + [None]):
        if cur != prev + 1 if cur is not None else True:
            runs.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = cur
    return ", ".join(runs)


def format_step(ev: dict) -> str:
    stage = ev["stage"]
    if stage == "device selection":
        excluded = "".join(f"; {name} excluded ({why})" for name, why in ev["excluded"].items())
        return (f"device selection: candidates {', '.join(ev['devices']) or '(none)'}"
                f"{excluded}; delegate feature level {ev['feature_level']}")
    if stage == "Validate":
        what = "ok" if ev["supported"] else "refused: " + "; ".join(ev["reasons"])
        return f"Validate node {ev['node']} {ev['op']}: {what}"
    if stage == "GetNodesSupportedByAccelerator":
        return (f"GetNodesSupportedByAccelerator: keep nodes {_nodes(ev['kept'])}; "
                f"refused nodes {_nodes(ev['refused'])}")
    if stage == "delegate partitions":
        parts = "; ".join(f"nodes {_nodes(p['nodes'])} -> "
                          f"{'NNAPI' if p['delegated'] else 'TFLite CPU'}"
                          for p in ev["partitions"])
        return f"delegate partitions: {len(ev['partitions'])}: {parts}"
    if stage == "NNAPI model":
        for_what = (f"delegate node {ev['delegate_node']} compilation"
                    if ev["delegate_node"] is not None else ev["purpose"])
        return (f"NNAPI model of nodes {_nodes(ev['nodes'])} ({ev['operations']} "
                f"operation(s)), for {for_what}")
    if stage in ("getSupportedOperations", "getSupportedOperationsForDevices"):
        total = len(ev["supported"]) + len(ev["unsupported"])
        text = f"{stage} {ev['device']}: {len(ev['supported'])} of {total} supported"
        if ev["unsupported"]:
            text += f"; unsupported {', '.join(ev['unsupported'])}"
            if ev["unsupported_nodes"]:
                text += f" (nodes {_nodes(ev['unsupported_nodes'])})"
        return text
    if stage == "findBestDeviceForEachOperation":
        compared = ", ".join(f"{c['device']} {_perf(c['exec_time'])}" for c in ev["compared"])
        node = f" (node {ev['node']})" if ev["node"] is not None else ""
        return (f"findBestDeviceForEachOperation {ev['op']}{node}: {compared} "
                f"-> {ev['device']} ({ev['rule']})")
    if stage == "partitionTheWork":
        how = "only one best device: " if ev["single"] else ""
        nodes = f" (nodes {_nodes(ev['nodes'])})" if ev["nodes"] else ""
        return (f"partitionTheWork: {how}step {ev['step']} on {ev['device']}: "
                f"{len(ev['operations'])} operation(s){nodes}")
    if stage in ("CPU fallback", "no CPU fallback"):
        return f"{stage}: {ev['reason']}"
    return f"{stage}: {ev}"


def format_steps(events: list) -> list[str]:
    return [format_step(ev) for ev in events]
