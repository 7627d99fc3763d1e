"""The VX delegate applied through the Interpreter: loading, log lines, partitioning, numerics,
board time and the NBG cache (nnsim/tflite/vx; npu-drivers.md section 3, delegate_main.cc).

Oracles: the log lines of the SyNAP benchmark log and of the delegate's source (quoted in the
reference note), TFLite's partitioning rule (the NNAPI delegate's goldens use the same port),
nnsim's TFLite CPU path for numerics (the delegated partitions compute with it by design), the
board profile's published parameters for time.
"""
from __future__ import annotations

import logging

import numpy as np
import pytest

from nnsim.drivers.boards import get_board
from nnsim.runtime.board import apply_board
from nnsim.tflite import Interpreter, NnApiDelegate, load_delegate, tflog
from nnsim.tflite.reader import read_model
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import TensorType as TT
from nnsim.tflite.vx import PLACEMENT, VxDelegate, VxInvokeError, estimate_plan
from nnsim.tflite.vx import timing as vt
from nnsim.tflite.vx.options import parse_options, split_cli_options

from .test_convert_support import Graph


@pytest.fixture
def lines():
    """(level name, message) of every TFLite runtime line."""
    records = []

    class H(logging.Handler):
        def emit(self, record):
            records.append((record.levelname, record.getMessage()))
    handler = H(level=1)
    tflog.LOGGER.addHandler(handler)
    old = tflog.LOGGER.level
    tflog.LOGGER.setLevel(1)
    yield records
    tflog.LOGGER.removeHandler(handler)
    tflog.LOGGER.setLevel(old)


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("NNSIM_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def _run(model, delegate, invokes=1, seed=0):
    """An allocated Interpreter with ``delegate``, invoked on seeded random inputs."""
    ip = Interpreter(model_path=str(model), experimental_delegates=[delegate]) \
        if not isinstance(model, bytes) else \
        Interpreter(model_content=model, experimental_delegates=[delegate])
    ip.allocate_tensors()
    rng = np.random.default_rng(seed)
    for d in ip.get_input_details():
        if np.dtype(d["dtype"]).kind in "iu":
            info = np.iinfo(d["dtype"])
            x = rng.integers(info.min, int(info.max) + 1, d["shape"], dtype=d["dtype"])
        else:
            x = rng.uniform(-1, 1, d["shape"]).astype(d["dtype"])
        ip.set_tensor(d["index"], x)
    for _ in range(invokes):
        ip.invoke()
    return ip


def _outputs(ip):
    return [ip.get_tensor(d["index"]) for d in ip.get_output_details()]


# -- loading and options --------------------------------------------------------------------------
@pytest.mark.parametrize("library", ["libvx_delegate.so", "/vendor/lib64/libvx_delegate.so",
                                     "/usr/lib/libvx_delegate.so"])
def test_load_delegate_spells_the_library_as_litert(library):
    apply_board("imx8mp")
    assert isinstance(load_delegate(library), VxDelegate)


def test_creation_echoes_the_options_as_the_synap_log(lines):
    apply_board("vs680")
    load_delegate("libvx_delegate.so", {"allowed_cache_mode": "1", "device_id": "2"})
    assert [m for lvl, m in lines if m.startswith("Vx delegate:")] == [
        "Vx delegate: allowed_cache_mode set to 1.", "Vx delegate: device num set to 2.",
        "Vx delegate: allowed_builtin_code set to 0.", "Vx delegate: error_during_init set to 0.",
        "Vx delegate: error_during_prepare set to 0.",
        "Vx delegate: error_during_invoke set to 0."]


def test_option_strings_parse_as_tflite_flags():
    assert parse_options({"allowed_cache_mode": "true"}).allowed_cache_mode is True
    assert parse_options({"allowed_cache_mode": "0"}).allowed_cache_mode is False
    with pytest.raises(ValueError, match="Failed to parse flag 'allowed_cache_mode' against "
                                         "argv '--allowed_cache_mode=True'"):
        parse_options({"allowed_cache_mode": "True"})
    with pytest.raises(ValueError, match="device_id"):
        parse_options({"device_id": "two"})
    assert parse_options({"device_id": "7x"}).device_id == 7       # istream stops at 'x'
    assert parse_options({"no_such_option": "1"}) == parse_options({})
    # cache_file_path is read only with allowed_cache_mode (vx_delegate_adaptor.cc)
    assert parse_options({"cache_file_path": "a.nb"}).cache_file_path == ""
    assert parse_options({"allowed_cache_mode": "1", "cache_file_path": "a.nb"}) \
        .cache_file_path == "a.nb"


def test_python_bool_option_is_refused_like_litert():
    apply_board("imx8mp")
    with pytest.raises(ValueError, match="Failed to load delegate from libvx_delegate.so"):
        load_delegate("libvx_delegate.so", {"allowed_cache_mode": True})


def test_cli_option_string_splits_as_the_external_delegate_provider():
    assert split_cli_options("allowed_cache_mode:true;cache_file_path:/data/m.nb") == [
        ("allowed_cache_mode", "true"), ("cache_file_path", "/data/m.nb")]
    assert split_cli_options("a:b:c;d:e;f;") == [("d", "e")]   # not key:value -> dropped
    assert split_cli_options("") == []


# -- partitioning and log lines -------------------------------------------------------------------
def _chain(refused_at, length=3):
    """x -> op -> op -> ... on float [1, 8]; RELU everywhere, LOG_SOFTMAX (which the VX
    delegate does not map, 3.2) at the ``refused_at`` positions."""
    g = Graph()
    t = g.t((1, 8), TT.FLOAT32)
    for k in range(length):
        out = g.t((1, 8), TT.FLOAT32)
        if k in refused_at:
            g.op(B.LOG_SOFTMAX, [t], [out])
        else:
            g.op(B.RELU, [t], [out])
        t = out
    from nnsim.tflite.writer import write_model
    return write_model(g.model())


def test_refused_node_splits_the_graph_with_tflites_line(lines):
    apply_board("imx8mp")
    d = VxDelegate()
    ip = _run(_chain({1}), d)
    assert ("WARNING", "Fallback unsupported op 50 to TfLite") in lines   # LOG_SOFTMAX = 50
    assert ("VERBOSE", "Replacing 2 out of 3 node(s) with delegate (Vx Delegate) node, "
                       "yielding 3 partitions for the whole graph.") in lines
    assert [(i.kind, i.op_name, i.nodes) for i in ip.plan_items()] == [
        ("delegate", "Vx Delegate", (0,)), ("node", "LOG_SOFTMAX", (1,)),
        ("delegate", "Vx Delegate", (2,))]
    assert ip.node_placement() == {0: PLACEMENT, 1: "cpu", 2: PLACEMENT}


def test_no_partition_limit_unlike_nnapi():
    apply_board("imx8mp")
    model = _chain({1, 3, 5}, length=7)           # 4 delegable runs between 3 refused nodes
    d = VxDelegate()
    _run(model, d)
    assert len(d.result.kernels) == 4             # the NNAPI delegate keeps 3 (its default)


def test_nothing_supported_leaves_the_plan_and_logs_no_replacing_line(lines):
    apply_board("imx8mp")
    d = VxDelegate()
    ip = _run(_chain({0}, length=1), d)
    assert ip.delegation is None
    assert not any(m.startswith("Replacing") for _, m in lines)


def test_ssd_and_deeplab_log_the_refusals(shared_dir, lines):
    apply_board("vs680")
    models = shared_dir / "models"
    d = VxDelegate()
    d.prepare(read_model(models / "coco_ssd_mobilenet_v1_1.0_quant_2018_06_29_no_metadata.tflite"))
    assert ("WARNING", "Fallback unsupported op 32 to TfLite") in lines
    d.prepare(read_model(models / "deeplabv3_mnv2_pascal_quant.tflite"))
    assert ("ERROR", "Int64 output is not supported") in lines
    assert [n for n, dec in d.result.decisions.items() if not dec.delegated] == [71]


# -- numerics and time ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["mobilenet_v1_0.25_224_quant", "tf2_mobilenet_v2_1.0_224_ptq"])
def test_outputs_are_the_tflite_cpu_paths(shared_dir, name):
    apply_board("imx8mp")
    path = shared_dir / "models" / f"{name}.tflite"
    vx = _run(path, VxDelegate())
    ref = Interpreter(model_path=str(path))
    ref.allocate_tensors()
    for d, v in zip(ref.get_input_details(), [vx.get_tensor(d["index"])
                                               for d in vx.get_input_details()]):
        ref.set_tensor(d["index"], v)
    ref.invoke()
    for a, b in zip(_outputs(vx), _outputs(ref)):
        np.testing.assert_array_equal(a, b)


def test_first_invoke_compiles_then_steady(shared_dir):
    board = apply_board("vs680")
    path = shared_dir / "models" / "mobilenet_v1_0.25_224_quant.tflite"
    d = VxDelegate()
    ip = _run(path, d)
    (k,) = d.result.kernels
    p = vt.vx_params(board)
    assert k.first_run.kind == "compile"
    compile_ns = p.compile_fixed_ns + p.compile_per_op_ns * 31 + \
        p.compile_per_weight_byte_ns * k.cost.weight_bytes
    assert k.last_simulated_ns == pytest.approx(compile_ns + k.cost.steady_ns)
    ip.invoke()
    assert k.last_simulated_ns == pytest.approx(k.cost.steady_ns)
    # the NPU part is the NNAPI path's per-operation model: same hardware, same cost
    from nnsim.drivers.timing import npu_step_cost
    from tests.drivers.helpers import nnapi_model_of
    assert k.cost.device_ns == pytest.approx(npu_step_cost(nnapi_model_of(str(path)),
                                                           board.npu).device_ns)
    # no HAL: the VX invoke is cheaper than the NNAPI call overhead alone
    assert k.cost.steady_ns - k.cost.device_ns < board.npu.call_overhead_ns


def test_estimate_without_running_equals_the_run(shared_dir):
    board = apply_board("imx8mp")
    path = shared_dir / "models" / "deeplabv3_mnv2_pascal_quant.tflite"
    model = read_model(path)
    d = VxDelegate()
    d.prepare(model)
    est = estimate_plan(model, d.result, board)
    from nnsim.tflite.cpu_timing import cpu_node_ns
    (k,) = d.result.kernels
    assert est.steady_ns == pytest.approx(k.cost.steady_ns + cpu_node_ns(model.main, 71, board))
    assert est.first_ns == pytest.approx(est.steady_ns + k.first_run_estimate().ns)
    assert (est.npu_nodes, est.total_nodes) == (71, 72)


def test_int8_mobilenet_v2_on_imx8mp_convolutions_on_the_npu_with_vx(shared_dir):
    """Issue 15: NNAPI puts the int8 convolutions on nnapi-reference (vsi-npu reports int8 at
    FLT_MAX, npu-drivers.md 2.8), the VX delegate puts them on the NPU."""
    apply_board("imx8mp")
    path = shared_dir / "models" / "tf2_mobilenet_v2_1.0_224_ptq.tflite"
    model = read_model(path)
    convs = [n for n, op in enumerate(model.main.operators) if op.builtin == B.CONV_2D]
    vx = Interpreter(model_path=str(path), experimental_delegates=[VxDelegate()])
    vx.allocate_tensors()
    nn = Interpreter(model_path=str(path),
                     experimental_delegates=[NnApiDelegate(disallow_nnapi_cpu=False)])
    nn.allocate_tensors()
    assert len(convs) == 36
    assert {vx.node_placement()[n] for n in convs} == {PLACEMENT}
    assert {nn.node_placement()[n] for n in convs} == {"nnapi-reference"}


# -- the NBG cache --------------------------------------------------------------------------------
def _cached(cache_file="/data/local/tmp/m.nb"):
    return load_delegate("libvx_delegate.so", {"allowed_cache_mode": "true",
                                               "cache_file_path": cache_file})


def test_nbg_cache_miss_writes_then_hit_loads(shared_dir, state):
    board = apply_board("vs680")
    path = shared_dir / "models" / "mobilenet_v1_0.25_224_quant.tflite"
    first = _run(path, _cached())
    (k1,) = first.delegation.kernels
    nbg = state / "data" / "local" / "tmp" / "m.nb"
    assert k1.first_run.kind == "nbg-store" and nbg.stat().st_size > 0
    p = vt.vx_params(board)
    assert k1.first_run.ns == pytest.approx(vt.compile_ns(k1.cost, board)
                                            + p.nbg_store_per_weight_byte_ns
                                            * k1.cost.weight_bytes)
    second = _run(path, _cached())
    (k2,) = second.delegation.kernels
    assert k2.first_run.kind == "nbg-load"
    assert k2.first_run.ns == pytest.approx(p.nbg_load_fixed_ns + p.nbg_load_per_weight_byte_ns
                                            * k2.cost.weight_bytes)
    assert k2.last_simulated_ns < k1.last_simulated_ns / 10
    np.testing.assert_array_equal(_outputs(first)[0], _outputs(second)[0])


def test_cache_path_is_ignored_without_allowed_cache_mode(shared_dir, state):
    apply_board("vs680")
    path = shared_dir / "models" / "mobilenet_v1_0.25_224_quant.tflite"
    d = load_delegate("libvx_delegate.so", {"cache_file_path": "/data/local/tmp/m.nb"})
    ip = _run(path, d)
    assert ip.delegation.kernels[0].first_run.kind == "compile"
    assert not (state / "data").exists()


def test_empty_cache_file_fails_the_first_invoke(state, lines):
    apply_board("imx8mp")
    nbg = state / "data" / "local" / "tmp" / "m.nb"
    nbg.parent.mkdir(parents=True)
    nbg.touch()
    with pytest.raises(VxInvokeError):
        _run(_chain(set(), 1), _cached())
    assert ("ERROR", "Failed to verify graph") in lines
    assert ("ERROR", "Node number 1 (Vx Delegate) failed to invoke.") in lines


def test_cache_of_another_graph_is_loaded_with_a_warning(state, lines):
    apply_board("imx8mp")
    _run(_chain(set(), 1), _cached())              # writes a 1-node graph's NBG
    ip = _run(_chain(set(), 2), _cached())         # a 2-node graph reads it
    assert ip.delegation.kernels[0].first_run.kind == "nbg-load"
    assert any(lvl == "WARNING" and "holds the NBG of another graph" in m for lvl, m in lines)


def test_one_cache_file_for_two_partitions_fails_the_second(state, lines):
    """[inferred] delegate_main.cc: one cache_file_path per delegate; the first partition's
    Init creates the file empty, the second one's Init then finds it and loads it."""
    apply_board("imx8mp")
    with pytest.raises(VxInvokeError, match="partition 1"):
        _run(_chain({1}), _cached())


def test_board_profiles_have_vx_timing_with_sources():
    for name in ("imx8mp", "vs680"):
        board = get_board(name)
        vt.vx_params(board)
        assert board.npu_title
        for key in board.vx:
            assert board.sources.get(f"vx.{key}"), f"{name}: vx.{key} has no source"


def test_synap_statistics_count_vx_inferences_on_vs680(shared_dir):
    """[inferred] the timvx delegate runs through the SyNAP driver (npu-drivers.md 4.1)."""
    from nnsim.platform import sysfs
    apply_board("vs680")
    sysfs.clear()
    before = int(sysfs.read("inference_count"))
    d = VxDelegate()
    _run(shared_dir / "models" / "mobilenet_v1_0.25_224_quant.tflite", d, invokes=3)
    assert int(sysfs.read("inference_count")) == before + 3
    (k,) = d.result.kernels
    assert f"inference_count: 3, inference_time: {3 * int(k.cost.device_ns // 1000)}" in \
        sysfs.read("networks")
    assert "layers: 31" in sysfs.read("networks")


def test_nnapi_estimate_equals_the_runs_steady_time(shared_dir):
    """The recommendation compares estimates; for NNAPI they must be what a run reports."""
    from nnsim.commands.run import _simulated_ns
    board = apply_board("imx8mp")
    d = NnApiDelegate(disallow_nnapi_cpu=False)
    ip = Interpreter(model_path=str(shared_dir / "models" / "deeplabv3_mnv2_pascal_quant.tflite"))
    ip.modify_graph_with_delegate(d)
    ip.allocate_tensors()
    est = estimate_plan(ip.model, ip.delegation, board)
    ip.invoke()
    ip.invoke()
    assert est.steady_ns == pytest.approx(_simulated_ns(d.result, ip, board))
