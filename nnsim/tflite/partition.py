"""TFLite's delegate partitioning: a literal port of ``PartitionGraphIntoIndependentNodeSubsets``
(tensorflow/lite/graph_info.cc) and of ``LimitDelegatedPartitions`` (delegates/utils.cc),
as described in tflite-nnapi-delegate.md 6.4 and 6.5.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

EPOCH_NOT_READY = -1
EPOCH_ALWAYS_READY = -2
UNEXPLORED, PARTITION, NON_PARTITION = "unexplored", "partition", "non-partition"


@dataclass
class NodeSubset:
    type: str = UNEXPLORED
    nodes: list = field(default_factory=list)
    input_tensors: list = field(default_factory=list)
    output_tensors: list = field(default_factory=list)


def partition_graph_into_independent_node_subsets(
        execution_plan: Sequence[int], node_io, nodes_to_partition, graph_outputs: Sequence[int],
        num_tensors: int, greedily: bool = True) -> list[NodeSubset]:
    """Split ``execution_plan`` into subsets of alternating type (delegated or not).

    ``node_io(node) -> (inputs, outputs)`` gives tensor indices (-1 = optional, skipped).
    Constants and graph inputs are always ready, so they appear in a subset's input tensors.
    """
    to_partition = set(nodes_to_partition)
    node_type = {n: PARTITION if n in to_partition else NON_PARTITION for n in execution_plan}
    tensor_epoch = [EPOCH_ALWAYS_READY] * num_tensors
    node_epoch = [EPOCH_NOT_READY] * len(execution_plan)
    for n in execution_plan:
        for t in node_io(n)[1]:
            if t >= 0:
                tensor_epoch[t] = EPOCH_NOT_READY
    subsets: list[NodeSubset] = []

    def update_node(k: int) -> bool:
        n = execution_plan[k]
        inputs, outputs = node_io(n)
        current = subsets[-1]
        epoch = len(subsets) - 1
        if node_epoch[k] != EPOCH_NOT_READY:
            return False
        if any(t >= 0 and tensor_epoch[t] == EPOCH_NOT_READY for t in inputs):
            return False
        if current.type == UNEXPLORED:
            current.type = node_type[n]   # the first ready node decides the epoch's type
        if current.type != node_type[n]:
            return False
        node_epoch[k] = epoch
        current.nodes.append(n)
        for t in outputs:
            if t >= 0:
                tensor_epoch[t] = epoch
        for t in inputs:
            if t < 0:
                continue
            input_epoch = tensor_epoch[t]
            if input_epoch != epoch:
                current.input_tensors.append(t)
                if input_epoch >= 0:
                    subsets[input_epoch].output_tensors.append(t)
        return True

    while True:
        subsets.append(NodeSubset())
        while True:                      # BuildNodeSubset
            did_something = False
            stop = False
            for k in range(len(execution_plan)):
                if update_node(k):
                    did_something = True
                elif did_something and not greedily:
                    stop = True
                    break
            if stop or not did_something:
                break
        if not subsets[-1].nodes:
            subsets.pop()
            break
    for t in graph_outputs:
        epoch = tensor_epoch[t]
        if epoch == EPOCH_ALWAYS_READY:
            continue                     # a graph input that is also a graph output
        subsets[epoch].output_tensors.append(t)
    for s in subsets:
        s.input_tensors = sorted(set(s.input_tensors))
        s.output_tensors = sorted(set(s.output_tensors))
    return subsets


def limit_delegated_partitions(max_partitions: int, partitions: list[NodeSubset],
                               nodes_to_delegate: list[int]) -> list[int]:
    """Keep only the nodes of the ``max_partitions`` largest delegated partitions.

    ``partitions`` are the delegated subsets (PreviewDelegatePartitioning). Upstream sorts with
    the non-stable ``std::sort``; equal-sized partitions keep their graph order here.
    """
    if max_partitions <= 0 or len(partitions) <= max_partitions:
        return list(nodes_to_delegate)
    wanted = set(nodes_to_delegate)
    delegated = [p for p in partitions if p.nodes and p.nodes[0] in wanted]
    if len(delegated) <= max_partitions:
        return list(nodes_to_delegate)
    kept = sorted(delegated, key=lambda p: len(p.nodes), reverse=True)[:max_partitions]
    keep_nodes = set(n for p in kept for n in p.nodes)
    return [n for n in nodes_to_delegate if n in keep_nodes]
