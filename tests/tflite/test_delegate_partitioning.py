"""Delegate partitioning goldens; expectations come from the reference note (6.2-6.6) and the
users' board reports quoted in issue 3, not from nnsim runs."""
from __future__ import annotations

import logging

import pytest

from nnsim.drivers.limited import sample_all
from nnsim.runtime.devices import get_device_manager
from nnsim.tflite import tflog
from nnsim.tflite.delegate import NnApiDelegate
from nnsim.tflite.partition import (NON_PARTITION, PARTITION, limit_delegated_partitions,
                                    partition_graph_into_independent_node_subsets)
from nnsim.tflite.reader import read_model


@pytest.fixture
def tflite_lines():
    records = []

    class H(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())
    handler = H(level=1)
    tflog.LOGGER.addHandler(handler)
    old = tflog.LOGGER.level
    tflog.LOGGER.setLevel(1)
    yield records
    tflog.LOGGER.removeHandler(handler)
    tflog.LOGGER.setLevel(old)


def test_deeplab_sdk29_refuses_pool_resize_argmax(shared_dir, tflite_lines):
    from nnsim.tflite.validate import NNAPIValidationFailureType as F
    model = read_model(shared_dir / "models" / "deeplabv3_mnv2_pascal_quant.tflite")
    get_device_manager().set_drivers([sample_all()])
    delegate = NnApiDelegate(android_sdk_version=29, disallow_nnapi_cpu=False)
    result = delegate.prepare(model)
    refused = {n: d for n, d in result.decisions.items() if d.validation_failures}
    assert sorted(refused) == [61, 64, 69, 70, 71]
    assert refused[61].op_name == "AVERAGE_POOL_2D"
    assert [f.type for f in refused[61].validation_failures] == [F.kUnsupportedOperandSize]
    for n in (64, 69, 70):
        assert refused[n].op_name == "RESIZE_BILINEAR"
        assert F.kUnsupportedOperandValue in [f.type for f in refused[n].validation_failures]
    assert refused[71].op_name == "ARG_MAX"
    assert [f.type for f in refused[71].validation_failures] == [F.kUnsupportedOutputType]
    n_nodes = len(model.main.operators)
    # the users' Run Order: delegate, AVERAGE_POOL_2D, delegate, RESIZE_BILINEAR, delegate,
    # RESIZE_BILINEAR, RESIZE_BILINEAR, ARG_MAX
    kinds = [item[0] if item[0] == "delegate" else model.main.operators[item[1]].name
             for item in result.plan]
    assert kinds == ["delegate", "AVERAGE_POOL_2D", "delegate", "RESIZE_BILINEAR", "delegate",
                     "RESIZE_BILINEAR", "RESIZE_BILINEAR", "ARG_MAX"]
    assert (f"Replacing {n_nodes - 5} out of {n_nodes} node(s) with delegate "
            f"(TfLiteNnapiDelegate) node, yielding 6 partitions for the whole graph."
            ) in tflite_lines


def test_deeplab_named_accelerator_lifts_the_256_tap_limit(shared_dir):
    model = read_model(shared_dir / "models" / "deeplabv3_mnv2_pascal_quant.tflite")
    get_device_manager().set_drivers([sample_all()])
    delegate = NnApiDelegate(android_sdk_version=29, accelerator_name="nnapi-sample_all")
    result = delegate.prepare(model)
    refused = sorted(n for n, d in result.decisions.items() if d.validation_failures)
    assert refused == [64, 69, 70, 71]


def test_mobilenet_v1_fully_delegated(shared_dir, tflite_lines):
    model = read_model(shared_dir / "models" / "mobilenet_v1_1.0_224_quant_reconstructed.tflite")
    get_device_manager().set_drivers([sample_all()])
    result = NnApiDelegate(disallow_nnapi_cpu=False).prepare(model)
    assert result.plan == [("delegate", 0)]
    assert ("Replacing 31 out of 31 node(s) with delegate (TfLiteNnapiDelegate) node, "
            "yielding 1 partitions for the whole graph.") in tflite_lines


def test_only_cpu_device_means_no_delegation(shared_dir):
    model = read_model(shared_dir / "models" / "mobilenet_v1_0.25_128_quant.tflite")
    get_device_manager().set_drivers([])
    # CPU allowed but it is the only device: getDeviceCount() <= 1 -> nothing delegated (6.2.3)
    assert NnApiDelegate(disallow_nnapi_cpu=False).prepare(model) is None
    # CPU disallowed (library default): no target device at all -> nothing delegated
    assert NnApiDelegate().prepare(model) is None


def test_unknown_accelerator_name_is_an_error(shared_dir, tflite_lines):
    from nnsim.tflite.delegate import DelegateError
    model = read_model(shared_dir / "models" / "mobilenet_v1_0.25_128_quant.tflite")
    get_device_manager().set_drivers([sample_all()])
    with pytest.raises(DelegateError):
        NnApiDelegate(accelerator_name="no-such-npu").prepare(model)
    assert ("Could not find the specified NNAPI accelerator: no-such-npu. Must be one of: "
            "{nnapi-sample_all,nnapi-reference}.") in tflite_lines


# -- the partitioning algorithm on hand-made graphs (graph_info.cc semantics) ----------------------
def _chain(n):
    """node k reads tensor k and writes tensor k+1."""
    return lambda k: ((k,), (k + 1,))


def test_partition_alternating_chain():
    subsets = partition_graph_into_independent_node_subsets(
        list(range(5)), _chain(5), {0, 1, 3}, graph_outputs=[5], num_tensors=6)
    assert [(s.type, s.nodes) for s in subsets] == [
        (PARTITION, [0, 1]), (NON_PARTITION, [2]), (PARTITION, [3]), (NON_PARTITION, [4])]
    assert subsets[0].input_tensors == [0] and subsets[0].output_tensors == [2]
    assert subsets[1].input_tensors == [2] and subsets[1].output_tensors == [3]
    assert subsets[3].output_tensors == [5]


def test_partition_greedy_merges_independent_nodes():
    # node 0 (delegated) and node 1 (CPU) both read the graph input; node 2 (delegated) reads
    # node 0's output only: greedy mode puts 0 and 2 in one subset, ahead of node 1.
    io = {0: ((0,), (1,)), 1: ((0,), (2,)), 2: ((1,), (3,))}
    subsets = partition_graph_into_independent_node_subsets(
        [0, 1, 2], lambda k: io[k], {0, 2}, graph_outputs=[2, 3], num_tensors=4)
    assert [(s.type, s.nodes) for s in subsets] == [(PARTITION, [0, 2]), (NON_PARTITION, [1])]


def test_limit_keeps_largest_partitions():
    subsets = partition_graph_into_independent_node_subsets(
        list(range(7)), _chain(7), {0, 2, 3, 5}, graph_outputs=[7], num_tensors=8)
    parts = [s for s in subsets if s.type == PARTITION]
    assert [p.nodes for p in parts] == [[0], [2, 3], [5]]
    assert limit_delegated_partitions(1, parts, [0, 2, 3, 5]) == [2, 3]
    assert limit_delegated_partitions(3, parts, [0, 2, 3, 5]) == [0, 2, 3, 5]
    assert limit_delegated_partitions(0, parts, [0, 2, 3, 5]) == [0, 2, 3, 5]
