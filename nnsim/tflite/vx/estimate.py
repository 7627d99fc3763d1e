"""Simulated board time of a delegated model without running it (explain, compare).

``estimate(model, result, board)`` sums, over the execution plan a delegate produced:

* a VX partition: its steady invoke (``VxDelegateKernel.steady_ns``) and, for the first
  inference, what its first invoke adds given the NBG cache state found at Init;
* an NNAPI partition: per step of its compiled ExecutionPlan, the prepared model's cost as the
  driver reports it at execution (``Timing.driver_ns``: a simulated NPU's step cost with HAL
  and transfers, or nnapi-reference's CPU cost); for the first inference, the graph
  compilation of drivers that compile at the first execution (caches not counted);
* a node left on the TFLite CPU: the board CPU cost model (``cpu_timing.cpu_node_ns``).

These are the numbers ``nnsim run`` / ``benchmark`` report after running (the steady state);
``tests/tflite/test_vx_delegate.py`` checks the two agree. None when a prepared model exposes
no cost (a driver outside nnsim's simulated ones).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from nnsim.drivers import timing as tm
from nnsim.drivers.reference import reference_cpu_timing
from nnsim.tflite.cpu_timing import cpu_node_ns
from nnsim.tflite.placement import placements

NNAPI_CPU = "nnapi-reference"


@dataclass
class PlanEstimate:
    steady_ns: float | None
    first_ns: float | None
    npu_nodes: int                  # nodes on an accelerator (VX NPU or an NNAPI NPU device)
    total_nodes: int
    by_where: dict = field(default_factory=dict)   # placement -> node count


def _nnapi_step_costs(kernel) -> tuple[float, float] | None:
    """(steady, first-run extra) ns of an NNAPI delegate kernel's compiled plan."""
    comp = getattr(kernel, "compilation", None)
    plan = getattr(comp, "plan", None)
    if plan is None:
        return None
    pairs = [(plan.device, plan.prepared)] if plan.kind == plan.SIMPLE else \
        [(s.device, s.prepared) for s in plan.execution_steps()]
    steady = first = 0.0
    for device, prepared in pairs:
        cost = getattr(prepared, "cost", None)
        if device.name == NNAPI_CPU:
            steady += reference_cpu_timing(prepared, 0).driver_ns
        elif cost is not None:
            steady += cost.driver_ns
            if getattr(device, "compile_at_first_execution", False) and \
                    not getattr(prepared, "compiled", True):
                first += tm.compile_ns(cost, device.timing_params())
        else:
            return None
    return steady, first


def estimate(model, result, board) -> PlanEstimate:
    """The simulated steady and first inference of ``model`` as ``result`` (a delegate's
    DelegationResult, None = all on the CPU) places it on ``board``."""
    sg = model.main
    places = placements(model, result)
    by_where: dict = {}
    for p in places:
        by_where[p.where] = by_where.get(p.where, 0) + 1
    npu = sum(1 for p in places if p.partition is not None
              and NNAPI_CPU not in p.where.split("+"))
    steady = first = 0.0
    in_kernel = set()
    for kernel in (result.kernels if result is not None else ()):
        in_kernel.update(kernel.nodes)
        if hasattr(kernel, "steady_ns"):       # a VX partition
            steady += kernel.steady_ns()
            first += kernel.first_run_estimate().ns
            continue
        costs = _nnapi_step_costs(kernel)
        if costs is None:
            return PlanEstimate(None, None, npu, len(places), by_where)
        steady += costs[0]
        first += costs[1]
    for n in range(len(sg.operators)):
        if n not in in_kernel:
            steady += cpu_node_ns(sg, n, board)
    return PlanEstimate(steady, steady + first, npu, len(places), by_where)


def fallback_reasons(result) -> dict:
    """node -> the first reason it was not delegated, for the NNAPI and the VX delegate's
    results alike: the delegate's refusal (``<check>: <message>``: the NNAPI delegate's
    validation failure type, or the VX function that refused and its log line), else a device's
    refusal, else the NNAPI partition limit. Delegated nodes are not listed."""
    out = {}
    for n, dec in sorted(((result.decisions if result is not None else None) or {}).items()):
        if dec.delegated:
            continue
        if dec.validation_failures:
            f = dec.validation_failures[0]
            out[n] = f"{f.type.name}: {f.message}"
        elif dec.device_refusal:
            out[n] = dec.device_refusal
        elif dec.dropped_by_partition_limit:
            out[n] = "dropped by the delegate's partition limit (max_number_delegated_partitions)"
        else:
            out[n] = "not delegated"
    return out
