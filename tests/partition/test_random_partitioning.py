"""Property test in the spirit of AOSP TestPartitioningRandom: for random graphs of ADD/MUL
operations and random device support tables, the partitioned execution computes exactly what
the unpartitioned CPU-only execution (debug.nn.cpuonly=1) computes."""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nnsim
from nnsim.runtime.compilation import CompilationBuilder
from nnsim.runtime.devices import get_device_manager
from nnsim.runtime.execution import Execution

from .helpers import PartitioningModel, make_device


@st.composite
def graphs(draw):
    n_inputs = draw(st.integers(1, 3))
    n_ops = draw(st.integers(1, 10))
    ops = []
    for k in range(n_ops):
        available = n_inputs + k
        a = draw(st.integers(0, available - 1))
        b = draw(st.integers(0, available - 1))
        kind = draw(st.integers(0, 7))
        ops.append((kind, a, b))
    n_devices = draw(st.integers(1, 3))
    devices = [(draw(st.sampled_from([0.3, 0.5, 0.9, 1.0, 1.2])), draw(st.integers(0, 255)))
               for _ in range(n_devices)]
    outputs = draw(st.sets(st.integers(0, n_ops - 1), min_size=1, max_size=n_ops))
    return n_inputs, ops, devices, sorted(outputs)


def build(n_inputs, ops, outputs):
    m = PartitioningModel()
    values = [m.add_float_operand((2,)) for _ in range(n_inputs)]
    for kind, a, b in ops:
        values.append(m.add_operation_2to1(kind, values[a], values[b]))
    out_operands = [values[n_inputs + k] for k in outputs]
    # an operand that is a graph output must not be used after it as well? NNAPI allows it.
    m.identify_inputs_and_outputs(values[:n_inputs], out_operands)
    m.finish()
    return m


def run(model, inputs):
    comp = CompilationBuilder(model)
    comp.finish()
    ex = Execution(comp)
    outs = [np.zeros(2, np.float32) for _ in model.output_indexes]
    for i, x in enumerate(inputs):
        ex.set_input(i, None, x)
    for i, o in enumerate(outs):
        ex.set_output(i, None, o)
    ex.compute()
    return outs, comp.plan


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.integers(0, 2**32 - 1))
def test_partitioned_equals_cpu_only(graph, seed):
    n_inputs, ops, devices, outputs = graph
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(-2, 2, 2).astype(np.float32) for _ in range(n_inputs)]
    drivers = [make_device(f"dev{k}", perf, mask) for k, (perf, mask) in enumerate(devices)]
    get_device_manager().set_drivers(drivers)
    nnsim.setprop("debug.nn.cpuonly", "1")
    expected, cpu_plan = run(build(n_inputs, ops, outputs), inputs)
    assert cpu_plan.kind == cpu_plan.SIMPLE and cpu_plan.device.name == "nnapi-reference"
    nnsim.setprop("debug.nn.cpuonly", "0")
    got, plan = run(build(n_inputs, ops, outputs), inputs)
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(g, e)
