"""The board time of a VX delegate partition (npu-drivers.md 3, 4.3-4.5; board ``vx`` section).

The VX delegate drives the same NPU as the board's NNAPI driver, so a node costs what the NPU
timing model (:mod:`nnsim.drivers.timing`) charges for it: the NNAPI operation it maps to, its
MACs and bytes (``cpu_timing.node_stats``, with per-channel weights and 1x1-output
convolutions classed as the NNAPI path classes them), on the unit ``npu_unit`` picks. What
differs is around it: no NNAPI runtime, no ExecutionPlan, no HAL/RPC call. A partition's
invoke adds

* ``invoke_overhead_ns``: the delegate's Invoke (tensor handles, ``vxProcessGraph``);
* the copy of every partition input and output between the TFLite arena and the VX tensors
  (``CopyDataToTensor`` / ``CopyDataFromTensor``) at ``transfer_bytes_per_ns``;
* ``run_delay_mean_ns``: what benchmark_model's average adds over its minimum on the board
  (scheduling, DVFS); the published "Online NPU" column is a minimum, the delegate's
  benchmark log gives both (calibration in benchmarks/test_board_calibration.py).

The first invoke of a partition also builds and compiles its graph (``compile_*``: a fixed
part, per TFLite node, per weight byte); with the NBG cache (``allowed_cache_mode``) a cache
miss also writes the binary (``nbg_store_per_weight_byte_ns``) and a hit loads it instead of
compiling (``nbg_load_*``). Every parameter and its source is in drivers/data/<board>.json.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from nnsim.drivers.timing import OpCost, npu_op_cost
from nnsim.tflite.cpu_timing import node_stats
from nnsim.tflite.schema import BuiltinOperator as B


@dataclass(frozen=True)
class VxParams:
    """The board profile's ``vx`` section (all times in ns)."""
    invoke_overhead_ns: float
    transfer_bytes_per_ns: float
    run_delay_mean_ns: float
    compile_fixed_ns: float
    compile_per_op_ns: float
    compile_per_weight_byte_ns: float
    nbg_load_fixed_ns: float
    nbg_load_per_weight_byte_ns: float
    nbg_store_per_weight_byte_ns: float


def vx_params(board) -> VxParams:
    if not board.vx:
        raise ValueError(f"board {board.name} has no 'vx' section in its profile "
                         f"(drivers/data/{board.name}.json): no VX delegate timing")
    return VxParams(**board.vx)


@dataclass
class PartitionCost:
    """The simulated cost of one VX partition's invoke (steady state)."""
    ops: list = field(default_factory=list)       # OpCost per node, in partition order
    invoke_ns: float = 0.0
    transfer_ns: float = 0.0
    run_delay_ns: float = 0.0
    io_bytes: int = 0
    weight_bytes: int = 0

    @property
    def device_ns(self) -> float:
        """Time on the NPU itself (the jitter-free hardware time)."""
        return sum(c.total_ns for c in self.ops)

    @property
    def min_ns(self) -> float:
        """An invoke without scheduling delay: what a minimum over many runs shows."""
        return self.device_ns + self.invoke_ns + self.transfer_ns

    @property
    def steady_ns(self) -> float:
        """An average invoke (what benchmark_model's "Inference (avg)" shows)."""
        return self.min_ns + self.run_delay_ns

    def by_unit(self) -> dict:
        out: dict = {}
        for c in self.ops:
            out[c.unit] = out.get(c.unit, 0.0) + c.total_ns
        return out


def _nbytes(t) -> int:
    n = 1
    for d in t.shape:
        n *= max(int(d), 1)
    size = t.data.dtype.itemsize if t.data is not None else \
        {"FLOAT32": 4, "INT32": 4, "INT64": 8, "FLOAT16": 2, "INT16": 2}.get(t.type.name, 1)
    return n * size


def vx_node_stats(sg, n: int):
    """``node_stats`` of node ``n`` as the NPU sees it: per-channel weights (NN with PPU
    help, npu-drivers.md 3.4) and a 1x1-output CONV_2D on the fully-connected path (the class
    the NNAPI path gives it, drivers/timing.py ``op_stats``)."""
    stats = node_stats(sg, n)
    op = sg.operators[n]
    if op.builtin in (B.CONV_2D, B.DEPTHWISE_CONV_2D, B.FULLY_CONNECTED,
                      B.TRANSPOSE_CONV) and len(op.inputs) > 1 and op.inputs[1] >= 0:
        q = sg.tensors[op.inputs[1]].quantization
        if q is not None and q.scales is not None and len(q.scales) > 1:
            stats = dataclasses.replace(stats, per_channel=True)
    if op.builtin == B.CONV_2D:
        out = sg.tensors[op.outputs[0]].shape
        if len(out) == 4 and out[1] == 1 and out[2] == 1:
            stats = dataclasses.replace(stats, op_class="fc")
    return stats


def node_cost(sg, n: int, board) -> OpCost:
    """One node on the board's NPU (the NNAPI path's per-operation model)."""
    return npu_op_cost(vx_node_stats(sg, n), board.npu)


def partition_cost(sg, nodes, inputs, outputs, board) -> PartitionCost:
    """Steady cost of one invoke of the partition: its nodes on the NPU, the delegate's
    invoke, the copies of its (non-constant) inputs and outputs, the mean run delay."""
    p = vx_params(board)
    ops = [node_cost(sg, n, board) for n in nodes]
    io = [i for i in list(inputs) + list(outputs) if i >= 0 and sg.tensors[i].data is None]
    io_bytes = sum(_nbytes(sg.tensors[i]) for i in io)
    weights = sum(c.stats.weight_bytes for c in ops)
    return PartitionCost(ops, p.invoke_overhead_ns, io_bytes / p.transfer_bytes_per_ns,
                         p.run_delay_mean_ns, io_bytes, weights)


def compile_ns(cost: PartitionCost, board) -> float:
    """Building and compiling the partition's graph at its first invoke."""
    p = vx_params(board)
    return (p.compile_fixed_ns + p.compile_per_op_ns * len(cost.ops)
            + p.compile_per_weight_byte_ns * cost.weight_bytes)


def nbg_store_ns(cost: PartitionCost, board) -> float:
    """Writing the compiled binary (NBG) to ``cache_file_path`` after compiling it."""
    return vx_params(board).nbg_store_per_weight_byte_ns * cost.weight_bytes


def nbg_load_ns(cost: PartitionCost, board) -> float:
    """Creating the partition's graph from a cached NBG instead of compiling it."""
    p = vx_params(board)
    return min(p.nbg_load_fixed_ns + p.nbg_load_per_weight_byte_ns * cost.weight_bytes,
               compile_ns(cost, board))
