"""``nnsim.tflite.Interpreter`` has LiteRT's Python surface: same details dicts, same errors,
same results; delegates are applied in ``allocate_tensors``; a LiteRT script runs unchanged."""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from nnsim.errors import ModelFileError
from nnsim.tflite import Interpreter, NnApiDelegate, OpResolverType, load_delegate, tflog
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import TensorType
from nnsim.tflite.writer import ModelWriter

litert = pytest.importorskip("ai_edge_litert.interpreter")

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
MODELS = SHARED / "models"


def model(name: str) -> str:
    path = MODELS / f"{name}.tflite"
    if not path.is_file():
        pytest.skip(f"shared model not found: {path}")
    return str(path)


def ref_interpreter(**kwargs):
    return litert.Interpreter(experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
                              num_threads=1, **kwargs)


def assert_same_details(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.keys() == b.keys()
        for key in a:
            x, y = a[key], b[key]
            assert type(x) is type(y), (key, type(x), type(y))
            if isinstance(x, dict):
                assert x.keys() == y.keys()
                for k in x:
                    assert type(x[k]) is type(y[k]), (key, k)
                    np.testing.assert_array_equal(x[k], y[k])
                    if isinstance(x[k], np.ndarray):
                        assert x[k].dtype == y[k].dtype, (key, k)
            elif isinstance(x, np.ndarray):
                assert x.dtype == y.dtype, key
                np.testing.assert_array_equal(x, y, err_msg=key)
            elif isinstance(x, tuple):
                assert [type(v) for v in x] == [type(v) for v in y], key
                assert x == y, key
            else:
                assert x == y, key


# -- details ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["hello_world_float", "vww_96_int8",
                                  "coco_ssd_mobilenet_v1_1.0_quant_2018_06_29_no_metadata"])
def test_details_match_litert_before_and_after_allocation(name):
    path = model(name)
    ours, theirs = Interpreter(model_path=path), ref_interpreter(model_path=path)
    for allocate in (False, True):
        if allocate:
            ours.allocate_tensors()
            theirs.allocate_tensors()
        assert_same_details(ours.get_input_details(), theirs.get_input_details())
        assert_same_details(ours.get_output_details(), theirs.get_output_details())
    # LiteRT appends the temporaries some kernels add (the SSD op's decoded boxes and scores).
    details = ours.get_tensor_details()
    assert_same_details(details, theirs.get_tensor_details()[:len(details)])


def test_ops_details_match_litert():
    path = model("mobilenet_v2_quantized_1x3x224x224")
    ours, theirs = Interpreter(model_path=path), ref_interpreter(model_path=path)
    ours.allocate_tensors()
    theirs.allocate_tensors()
    a, b = ours._get_ops_details(), theirs._get_ops_details()
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.keys() == y.keys()
        assert (x["index"], x["op_name"]) == (y["index"], y["op_name"])
        np.testing.assert_array_equal(x["inputs"], y["inputs"])
        assert x["inputs"].dtype == y["inputs"].dtype
        assert x["operand_types"] == y["operand_types"]
        assert x["result_types"] == y["result_types"]


def test_constant_tensors_readable_before_allocation():
    path = model("vww_96_int8")
    ours, theirs = Interpreter(model_path=path), ref_interpreter(model_path=path)
    for d in theirs.get_tensor_details()[:12]:
        try:
            want = theirs.get_tensor(d["index"])
        except ValueError:
            with pytest.raises(ValueError, match="allocate_tensors"):
                ours.get_tensor(d["index"])
            continue
        np.testing.assert_array_equal(ours.get_tensor(d["index"]), want)


# -- set_tensor / get_tensor / tensor ---------------------------------------------------------
def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - compare whatever LiteRT raises
        return type(e), str(e)
    return None


@pytest.mark.parametrize("value", [np.zeros((1, 1), np.float64), np.zeros((1, 2), np.float32),
                                   np.zeros((2, 1), np.float32), np.zeros((1,), np.float32),
                                   np.zeros((1, 1, 1), np.float32), np.zeros((1, 1), np.int32),
                                   [[1.0]], 3.0])
def test_set_tensor_errors_are_litert_s(value):
    path = model("hello_world_float")
    ours, theirs = Interpreter(model_path=path), ref_interpreter(model_path=path)
    index = theirs.get_input_details()[0]["index"]
    assert _error(lambda: ours.set_tensor(index, value)) == \
        _error(lambda: theirs.set_tensor(index, value))  # before allocation
    ours.allocate_tensors()
    theirs.allocate_tensors()
    expected = _error(lambda: theirs.set_tensor(index, value))
    assert expected is not None and expected[0] is ValueError
    assert _error(lambda: ours.set_tensor(index, value)) == expected


def test_index_and_state_errors_are_litert_s():
    path = model("hello_world_float")
    ours, theirs = Interpreter(model_path=path), ref_interpreter(model_path=path)
    out = theirs.get_output_details()[0]["index"]
    assert _error(lambda: ours.get_tensor(out)) == _error(lambda: theirs.get_tensor(out))
    assert _error(ours.invoke) == _error(theirs.invoke)
    ours.allocate_tensors()
    theirs.allocate_tensors()
    for fn in ("get_tensor", "set_tensor"):
        args = (99,) if fn == "get_tensor" else (99, np.zeros((1, 1), np.float32))
        kind, message = _error(lambda: getattr(ours, fn)(*args))
        # LiteRT's bound counts the tensors its kernels add; nnsim's the model's tensors.
        assert (kind, message.split(" max ")[0]) == \
            (lambda e: (e[0], e[1].split(" max ")[0]))(_error(lambda: getattr(theirs, fn)(*args)))


def test_set_constant_tensor_is_an_error():
    ip = Interpreter(model_path=model("hello_world_float"))
    ip.allocate_tensors()
    const = next(d["index"] for d in ip.get_tensor_details()
                 if ip.model.main.tensors[d["index"]].is_constant)
    with pytest.raises(ValueError, match="constant"):
        ip.set_tensor(const, np.zeros(ip.get_tensor(const).shape, np.float32))


def test_get_tensor_is_a_copy_and_tensor_is_a_view():
    ip = Interpreter(model_path=model("hello_world_float"))
    ip.allocate_tensors()
    i, o = ip.get_input_details()[0]["index"], ip.get_output_details()[0]["index"]
    view = ip.tensor(i)
    view()[...] = 1.5
    ip.invoke()
    first = ip.get_tensor(o)
    first[...] = -7
    assert ip.get_tensor(o)[0, 0] != -7
    ip.set_tensor(i, np.full((1, 1), 1.5, np.float32))
    ip.invoke()
    np.testing.assert_array_equal(ip.tensor(o)(), ip.get_tensor(o))
    assert ip.get_tensor(o)[0, 0] != -7


# -- resize, signatures -----------------------------------------------------------------------
def test_resize_tensor_input_matches_litert():
    path = model("hello_world_float")
    ours, theirs = Interpreter(model_path=path), ref_interpreter(model_path=path)
    x = np.linspace(0, 6, 5, dtype=np.float32).reshape(5, 1)
    for ip in (ours, theirs):
        ip.allocate_tensors()
        ip.resize_tensor_input(0, [5, 1])
    np.testing.assert_array_equal(ours.get_input_details()[0]["shape"], [5, 1])
    for ip in (ours, theirs):
        ip.allocate_tensors()
        ip.set_tensor(0, x)
        ip.invoke()
    assert_same_details(ours.get_output_details(), theirs.get_output_details())
    np.testing.assert_allclose(ours.get_tensor(9), theirs.get_tensor(9), rtol=1e-5)
    assert _error(lambda: ours.resize_tensor_input(0, [3, 2], strict=True)) == \
        _error(lambda: theirs.resize_tensor_input(0, [3, 2], strict=True))
    with pytest.raises(RuntimeError, match="fixed-size"):
        ours.resize_tensor_input(5, [3, 2])


def test_resize_then_invoke_without_allocate_fails():
    ip = Interpreter(model_path=model("hello_world_float"))
    ip.allocate_tensors()
    ip.resize_tensor_input(0, [2, 1])
    with pytest.raises(RuntimeError, match="not ready"):
        ip.invoke()


def test_signature_runner_matches_litert():
    path = model("hello_world_float")
    ours, theirs = Interpreter(model_path=path), ref_interpreter(model_path=path)
    assert ours.get_signature_list() == theirs.get_signature_list()
    x = np.array([[0.5], [1.0], [2.0]], np.float32)
    a = ours.get_signature_runner()(dense_input=x)
    b = theirs.get_signature_runner()(dense_input=x)
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_allclose(a[k], b[k], rtol=1e-5)
    assert_same_details(list(ours.get_signature_runner().get_input_details().values()),
                        list(theirs.get_signature_runner().get_input_details().values()))
    for bad in (lambda ip: ip.get_signature_runner("nope"),
                lambda ip: ip.get_signature_runner()(wrong=x)):
        assert _error(lambda: bad(ours)) == _error(lambda: bad(theirs))


def test_dynamic_reshape_prepares_at_invoke():
    """RESHAPE whose shape is a graph input: the output shape is known only when running."""
    w = ModelWriter()
    x = w.add_tensor("x", (2, 6), TensorType.FLOAT32)
    s = w.add_tensor("shape", (2,), TensorType.INT32)
    y = w.add_tensor("y", (1, 1), TensorType.FLOAT32)
    z = w.add_tensor("z", (1, 1), TensorType.FLOAT32)
    w.add_operator(B.RESHAPE, [x, s], [y])
    w.add_operator(B.RELU, [y], [z])
    w.set_inputs([x, s])
    w.set_outputs([z])
    blob = w.finish()
    ours, theirs = Interpreter(model_content=blob), ref_interpreter(model_content=blob)
    xv = np.arange(-6, 6, dtype=np.float32).reshape(2, 6)
    for ip in (ours, theirs):
        ip.allocate_tensors()
        ip.set_tensor(0, xv)
        ip.set_tensor(1, np.array([3, 4], np.int32))
        ip.invoke()
    np.testing.assert_array_equal(ours.get_tensor(3), theirs.get_tensor(3))
    assert ours.get_output_details()[0]["shape"].tolist() == [3, 4]


# -- construction errors ----------------------------------------------------------------------
def test_missing_and_corrupt_files_raise_model_file_error(tmp_path):
    with pytest.raises(ModelFileError, match="cannot open"):
        Interpreter(model_path=str(tmp_path / "missing.tflite"))
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x10\x00\x00\x00TFL3" + b"\xff" * 40)
    with pytest.raises(ModelFileError):
        Interpreter(model_path=str(bad))
    with pytest.raises(ModelFileError):
        Interpreter(model_content=b"1234567890abcdef")


def test_constructor_argument_errors_are_litert_s():
    path = model("hello_world_float")
    for kwargs in ({}, {"model_path": path, "model_content": b"x"},
                   {"model_path": path, "num_threads": 0},
                   {"model_path": path, "num_threads": "2"}):
        assert _error(lambda: Interpreter(**kwargs)) == \
            _error(lambda: litert.Interpreter(**kwargs))


def test_op_resolver_types_are_accepted():
    path = model("hello_world_float")
    for kind in (OpResolverType.BUILTIN_REF, litert.OpResolverType.BUILTIN,
                 litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES):
        Interpreter(model_path=path, experimental_op_resolver_type=kind).allocate_tensors()
    with pytest.raises(ValueError, match="op resolver"):
        Interpreter(model_path=path, experimental_op_resolver_type="fast")


# -- delegates --------------------------------------------------------------------------------
def test_load_delegate():
    d = load_delegate("nnapi", {"accelerator_name": "vsi-npu", "disallow_nnapi_cpu": "false",
                                "max_number_delegated_partitions": "2"})
    assert isinstance(d, NnApiDelegate)
    assert d.options.accelerator_name == "vsi-npu"
    assert d.options.disallow_nnapi_cpu is False
    assert d.options.max_number_delegated_partitions == 2
    with pytest.raises(ValueError, match="Failed to load delegate from libedgetpu.so.1"):
        load_delegate("libedgetpu.so.1")
    with pytest.raises(ValueError, match="unknown NNAPI delegate option"):
        load_delegate("nnapi", {"no_such_option": 1})


def test_foreign_delegate_objects_are_refused():
    with pytest.raises(ValueError, match="not an nnsim delegate"):
        Interpreter(model_path=model("hello_world_float"), experimental_delegates=[object()])


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(1)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def _delegated(path, **options):
    options.setdefault("accelerator_name", "nnapi-reference")
    return Interpreter(model_path=path, experimental_delegates=[load_delegate("nnapi", options)])


def test_delegate_applied_at_construction_and_introspection():
    ip = _delegated(model("mobilenet_v1_0.25_128_quant"))
    # applied in the constructor, as LiteRT's ModifyGraphWithDelegate
    assert ip.delegation.nodes_replaced == 31
    ip.allocate_tensors()
    assert ip.delegation.nodes_replaced == 31
    assert [i.kind for i in ip.plan_items()] == ["delegate"]
    assert set(ip.node_placement().values()) == {"nnapi-reference"}
    ops = ip._get_ops_details()
    assert len(ops) == 32 and ops[-1]["op_name"] == "DELEGATE"
    d = ip.get_input_details()[0]
    ip.set_tensor(d["index"], np.full(d["shape"], 128, np.uint8))
    ip.invoke()
    assert len(ip.last_profile) == 1 and ip.last_profile[0].host_ns > 0
    assert ip.last_profile[0].item.op_name == "TfLiteNnapiDelegate"
    (execution,) = ip.last_delegate_executions
    assert execution.step_report and execution.step_report[0][0] == "nnapi-reference"


def test_cpu_profile_has_one_entry_per_node():
    ip = Interpreter(model_path=model("mobilenet_v1_0.25_128_quant"))
    ip.allocate_tensors()
    ip.invoke()
    assert [p.item.op_name for p in ip.last_profile] == \
        [op.name for op in ip.model.main.operators]
    assert ip.delegation is None and ip.last_delegate_executions == []


def test_failed_delegate_raises_as_litert_and_logs_once(caplog, capsys):
    """LiteRT's Interpreter raises when ModifyGraphWithDelegate fails, after the ERROR lines
    on stderr; applied after construction (benchmark_model's order) the failure is not fatal:
    the plan is restored."""
    path = model("hello_world_float")
    with pytest.raises(RuntimeError, match="no-such-device"):
        _delegated(path, accelerator_name="no-such-device")
    err = capsys.readouterr().err
    assert "ERROR: Could not find the specified NNAPI accelerator: no-such-device" in err
    ip = Interpreter(model_path=path)
    ip.modify_graph_with_delegate(load_delegate("nnapi",
                                                options={"accelerator_name": "no-such-device"}))
    handler = _Records()
    tflog.LOGGER.addHandler(handler)
    try:
        ip.allocate_tensors()
    finally:
        tflog.LOGGER.removeHandler(handler)
    messages = [r.getMessage() for r in handler.records]
    assert messages.count("Restored original execution plan after delegate application "
                          "failure.") == 1
    assert any("Could not find the specified NNAPI accelerator: no-such-device" in m
               for m in messages)
    assert ip.delegation is None and "no-such-device" in ip.delegation_error
    assert [i.kind for i in ip.plan_items()] == ["node"] * 3
    ip.set_tensor(0, np.ones((1, 1), np.float32))
    ip.invoke()


def test_resize_re_prepares_the_delegated_graph():
    path = model("hello_world_float")
    ours, theirs = _delegated(path), ref_interpreter(model_path=path)
    ours.allocate_tensors()
    first = ours.delegation
    x = np.linspace(0, 6, 4, dtype=np.float32).reshape(4, 1)
    for ip in (ours, theirs):
        ip.resize_tensor_input(0, [4, 1])
        ip.allocate_tensors()
        ip.set_tensor(0, x)
        ip.invoke()
    assert ours.delegation is not first and ours.delegation.nodes_replaced == 3
    np.testing.assert_allclose(ours.get_tensor(9), theirs.get_tensor(9), rtol=1e-5)


# -- a LiteRT script runs unchanged -----------------------------------------------------------
def litert_style_script(interpreter_module, model_path):
    """A typical LiteRT classification script, parameterised only by the imported module."""
    Interpreter = interpreter_module.Interpreter
    OpResolverType = interpreter_module.OpResolverType
    interpreter = Interpreter(model_path=model_path,
                              experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interpreter.allocate_tensors()
    input_details = interpreter.get_input_details()
    output_details = interpreter.get_output_details()
    shape = input_details[0]["shape"]
    rng = np.random.default_rng(42)
    results = []
    for _ in range(2):
        data = rng.integers(0, 256, size=shape, dtype=np.uint8)
        interpreter.set_tensor(input_details[0]["index"], data)
        interpreter.invoke()
        scores = interpreter.get_tensor(output_details[0]["index"])[0]
        scale, zero_point = output_details[0]["quantization"]
        probs = scale * (scores.astype(np.float32) - zero_point)
        results.append((int(np.argmax(probs)), scores.copy()))
    names = [t["name"] for t in interpreter.get_tensor_details()]
    return results, names, output_details[0]["shape"].tolist()


def test_litert_script_runs_unchanged():
    import nnsim.tflite as nnsim_tflite

    path = model("mobilenet_v1_0.25_224_quant")
    ours = litert_style_script(nnsim_tflite, path)
    theirs = litert_style_script(litert, path)
    assert ours[1:] == theirs[1:]
    for (top_a, a), (top_b, b) in zip(ours[0], theirs[0]):
        assert top_a == top_b
        np.testing.assert_array_equal(a, b)


def test_kernel_plans_are_built_at_allocate_or_deferred_for_shape_only_tools():
    """TFLite's Prepare packs filters and allocates buffers at allocate_tensors; `nnsim graph`
    (prepare_kernels=False) only needs shapes and builds no plan until an invoke."""
    path = model("mobilenet_v1_0.25_128_quant")
    ip = Interpreter(model_path=path)
    ip.allocate_tensors()
    assert ip._builtins[0].plan is not None          # node 0: CONV_2D
    lazy = Interpreter(model_path=path)
    lazy.prepare_kernels = False
    lazy.allocate_tensors()
    weighted = [b for b in lazy._builtins.values() if hasattr(b, "_ensure_plan")]
    assert len(weighted) == 28 and all(b.plan is None for b in weighted)   # CONV / DEPTHWISE
    lazy.set_tensor(0, np.full((1, 128, 128, 3), 100, np.uint8))
    ip.set_tensor(0, np.full((1, 128, 128, 3), 100, np.uint8))
    lazy.invoke()
    ip.invoke()
    np.testing.assert_array_equal(lazy.get_tensor(lazy.get_output_details()[0]["index"]),
                                  ip.get_tensor(ip.get_output_details()[0]["index"]))
    assert lazy._builtins[0].plan is not None        # built at the first invoke
