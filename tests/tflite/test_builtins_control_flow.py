"""TFLite control flow (IF, WHILE, CALL_ONCE; ``nnsim.tflite.builtins.control_flow``) against
LiteRT's reference kernels (BUILTIN_REF): the models are written by ``ModelWriter`` with several
subgraphs; float32 within 1e-5 relative, integers identical, shapes identical (LiteRT's dynamic
outputs included).
"""
from __future__ import annotations

import numpy as np
import pytest

from nnsim.tflite import Interpreter
from nnsim.tflite import options as O
from nnsim.tflite.builtins import BuiltinError, control_flow
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import TensorType
from nnsim.tflite.writer import ModelWriter
from tests.tflite.test_builtins import assert_same, litert, run_both

TT = {np.float32: TensorType.FLOAT32, np.int32: TensorType.INT32}
BOOL, I32 = TensorType.BOOL, TensorType.INT32


def binop_subgraph(w, name, op, tt, shape) -> int:
    """A subgraph (a, b) -> op(a, b): the IF branches."""
    index = w.add_subgraph(name)
    a, b = w.add_tensor("a", shape, tt), w.add_tensor("b", shape, tt)
    out = w.add_tensor("out", shape, tt)
    opts = O.AddOptions() if op == B.ADD else O.MulOptions()
    w.add_operator(op, [a, b], [out], opts)
    w.set_inputs([a, b])
    w.set_outputs([out])
    return index


def if_model(dtype, shape=(2, 3), pre_add=False) -> bytes:
    """main(cond, a, b) = IF(cond, then: a + b, else: a * b); with ``pre_add`` the first
    operand is a + a (an ADD in subgraph 0 the NNAPI delegate may take)."""
    tt = TT[dtype]
    w = ModelWriter()
    cond = w.add_tensor("cond", (1,), BOOL)
    a, b = w.add_tensor("a", shape, tt), w.add_tensor("b", shape, tt)
    out = w.add_tensor("out", shape, tt)
    first = a
    if pre_add:
        first = w.add_tensor("a2", shape, tt)
        w.add_operator(B.ADD, [a, a], [first], O.AddOptions())
    then = binop_subgraph(w, "then_add", B.ADD, tt, shape)
    other = binop_subgraph(w, "else_mul", B.MUL, tt, shape)
    w.use_subgraph(0)
    w.add_operator(B.IF, [cond, first, b], [out], O.IfOptions(then, other))
    w.set_inputs([cond, a, b])
    w.set_outputs([out])
    return w.finish()


def counter_cond(w, tt, acc_shape) -> int:
    """cond(i, n, acc, step) = i < n."""
    index = w.add_subgraph("cond")
    i, n = w.add_tensor("i", (), I32), w.add_tensor("n", (), I32)
    acc, step = w.add_tensor("acc", acc_shape, tt), w.add_tensor("step", (4,), tt)
    c = w.add_tensor("c", (), BOOL)
    w.add_operator(B.LESS, [i, n], [c], O.LessOptions())
    w.set_inputs([i, n, acc, step])
    w.set_outputs([c])
    return index


def counter_body(w, tt, grow=False, nested=None) -> int:
    """body(i, n, acc, step) = (i + 1, n, acc + step, step); ``grow``: acc ++ step (the loop
    variable grows each iteration); ``nested`` = (then, else): acc' = IF(i < 2, acc, step)."""
    index = w.add_subgraph("body")
    i, n = w.add_tensor("i", (), I32), w.add_tensor("n", (), I32)
    acc, step = w.add_tensor("acc", (4,), tt), w.add_tensor("step", (4,), tt)
    one = w.add_tensor("one", (), I32, data=np.int32(1))
    i2 = w.add_tensor("i2", (), I32)
    acc2 = w.add_tensor("acc2", (8,) if grow else (4,), tt,
                        shape_signature=(-1,) if grow else None)
    w.add_operator(B.ADD, [i, one], [i2], O.AddOptions())
    if grow:
        w.add_operator(B.CONCATENATION, [acc, step], [acc2], O.ConcatenationOptions(axis=0))
    elif nested is not None:
        two = w.add_tensor("two", (), I32, data=np.int32(2))
        c = w.add_tensor("early", (), BOOL)
        w.add_operator(B.LESS, [i, two], [c], O.LessOptions())
        w.add_operator(B.IF, [c, acc, step], [acc2], O.IfOptions(*nested))
    else:
        w.add_operator(B.ADD, [acc, step], [acc2], O.AddOptions())
    w.set_inputs([i, n, acc, step])
    w.set_outputs([i2, n, acc2, step])
    return index


def while_model(dtype, grow=False, nested=False, count=None, pre_add=False) -> bytes:
    """main(n, acc0, step) -> WHILE(0, n, acc0, step): (count, n, sum, step). With ``count``
    n is that constant (no input); with ``pre_add`` the loop gets step + step (an ADD in
    subgraph 0 the NNAPI delegate may take)."""
    tt = TT[dtype]
    w = ModelWriter()
    if count is None:
        n = w.add_tensor("n", (), I32)
    else:
        n = w.add_tensor("n", (), I32, data=np.int32(count))
    acc0, step = w.add_tensor("acc0", (4,), tt), w.add_tensor("step", (4,), tt)
    graph_inputs = [n, acc0, step] if count is None else [acc0, step]
    if pre_add:
        step2 = w.add_tensor("step2", (4,), tt)
        w.add_operator(B.ADD, [step, step], [step2], O.AddOptions())
        step = step2
    zero = w.add_tensor("zero", (), I32, data=np.int32(0))
    outs = [w.add_tensor("count", (), I32), w.add_tensor("n_out", (), I32),
            w.add_tensor("sum", (4,), tt), w.add_tensor("step_out", (4,), tt)]
    branches = None
    if nested:
        branches = (binop_subgraph(w, "then_add", B.ADD, tt, (4,)),
                    binop_subgraph(w, "else_mul", B.MUL, tt, (4,)))
    cond = counter_cond(w, tt, (4,))
    body = counter_body(w, tt, grow=grow, nested=branches)
    w.use_subgraph(0)
    w.add_operator(B.WHILE, [zero, n, acc0, step], outs, O.WhileOptions(cond, body))
    w.set_inputs(graph_inputs)
    w.set_outputs(outs)
    return w.finish()


def feeds_for(dtype, rng, shape):
    if dtype == np.float32:
        return rng.uniform(-4, 4, shape).astype(np.float32)
    return rng.integers(-50, 50, shape).astype(np.int32)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("cond", [True, False])
def test_if_chooses_add_or_mul(dtype, cond):
    rng = np.random.default_rng(1 + cond)
    a, b = feeds_for(dtype, rng, (2, 3)), feeds_for(dtype, rng, (2, 3))
    ours, ref = run_both(if_model(dtype), [np.array([cond]), a, b])
    assert_same(ours, ref)
    np.testing.assert_array_equal(ours[0], a + b if cond else a * b)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("n", [0, 1, 5])
def test_while_counts_to_n_accumulating(dtype, n):
    rng = np.random.default_rng(n)
    acc0, step = feeds_for(dtype, rng, (4,)), feeds_for(dtype, rng, (4,))
    ours, ref = run_both(while_model(dtype), [np.int32(n), acc0, step])
    assert_same(ours, ref)
    assert int(ours[0]) == n
    expected = acc0.copy()
    for _ in range(n):
        expected = (expected + step).astype(dtype)
    np.testing.assert_array_equal(ours[2], expected)   # same order of float additions


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_while_loop_variable_grows_each_iteration(dtype):
    """The body's output is longer than its input: LiteRT's dynamic WHILE (Eval_dynamic)."""
    rng = np.random.default_rng(7)
    acc0, step = feeds_for(dtype, rng, (4,)), feeds_for(dtype, rng, (4,))
    blob = while_model(dtype, grow=True)
    for n in (0, 3):
        ours, ref = run_both(blob, [np.int32(n), acc0, step])
        assert_same(ours, ref)
        assert ours[2].shape == (4 + 4 * n,)
    ip = Interpreter(model_content=blob)
    ip.allocate_tensors()
    assert ip._dynamic   # the WHILE outputs are known at run time only


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_while_with_an_if_in_its_body(dtype):
    """Nested: iterations 0 and 1 add step, later ones multiply by it."""
    rng = np.random.default_rng(3)
    acc0, step = feeds_for(dtype, rng, (4,)), feeds_for(dtype, rng, (4,))
    if dtype == np.int32:
        step = rng.integers(-3, 4, (4,)).astype(np.int32)
    ours, ref = run_both(while_model(dtype, nested=True), [np.int32(4), acc0, step])
    assert_same(ours, ref)
    expected = ((acc0 + step + step) * step * step).astype(dtype)
    np.testing.assert_allclose(ours[2], expected, rtol=1e-6)


def test_if_branches_of_different_shapes_make_the_output_dynamic():
    """then: a + b, [2, 3]; else: a ++ b along axis 0, [4, 3]: LiteRT's dynamic IF output."""
    tt, shape = TensorType.FLOAT32, (2, 3)
    w = ModelWriter()
    cond = w.add_tensor("cond", (1,), BOOL)
    a, b = w.add_tensor("a", shape, tt), w.add_tensor("b", shape, tt)
    out = w.add_tensor("out", shape, tt)
    then = binop_subgraph(w, "then_add", B.ADD, tt, shape)
    other = w.add_subgraph("else_concat")
    x, y = w.add_tensor("x", shape, tt), w.add_tensor("y", shape, tt)
    z = w.add_tensor("z", (4, 3), tt)
    w.add_operator(B.CONCATENATION, [x, y], [z], O.ConcatenationOptions(axis=0))
    w.set_inputs([x, y])
    w.set_outputs([z])
    w.use_subgraph(0)
    w.add_operator(B.IF, [cond, a, b], [out], O.IfOptions(then, other))
    w.set_inputs([cond, a, b])
    w.set_outputs([out])
    blob = w.finish()
    rng = np.random.default_rng(5)
    a_v, b_v = feeds_for(np.float32, rng, shape), feeds_for(np.float32, rng, shape)
    for c, want in ((True, (2, 3)), (False, (4, 3))):
        ours, ref = run_both(blob, [np.array([c]), a_v, b_v])
        assert_same(ours, ref)
        assert ours[0].shape == want


def test_if_after_resize_follows_the_new_input_shape():
    blob = if_model(np.float32)
    rng = np.random.default_rng(11)
    a, b = feeds_for(np.float32, rng, (5, 3)), feeds_for(np.float32, rng, (5, 3))
    results = []
    for ip in (Interpreter(model_content=blob),
               litert.Interpreter(model_content=blob,
                                  experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)):
        for k in (1, 2):
            ip.resize_tensor_input(ip.get_input_details()[k]["index"], [5, 3])
        ip.allocate_tensors()
        for d, v in zip(ip.get_input_details(), [np.array([False]), a, b]):
            ip.set_tensor(d["index"], v)
        ip.invoke()
        results.append([ip.get_tensor(ip.get_output_details()[0]["index"])])
    assert_same(*results)
    assert results[0][0].shape == (5, 3)


def test_invoke_twice_gives_the_same_result():
    """The second invoke of an interpreter runs bound steps; the loop must still run."""
    blob = while_model(np.int32)
    ip = Interpreter(model_content=blob)
    ip.allocate_tensors()
    ins = ip.get_input_details()
    step = np.array([1, 2, 3, 4], np.int32)
    for n in (3, 6):
        ip.set_tensor(ins[0]["index"], np.int32(n))
        ip.set_tensor(ins[1]["index"], np.zeros(4, np.int32))
        ip.set_tensor(ins[2]["index"], step)
        ip.invoke()
        np.testing.assert_array_equal(ip.get_tensor(ip.get_output_details()[2]["index"]),
                                      n * step)


def test_call_once_runs_its_init_subgraph_at_the_first_invoke_only(monkeypatch):
    w = ModelWriter()
    x, y = w.add_tensor("x", (3,), TensorType.FLOAT32), w.add_tensor("y", (3,), TensorType.FLOAT32)
    init = w.add_subgraph("init")
    c = w.add_tensor("c", (1,), TensorType.FLOAT32, data=np.float32([1]))
    d = w.add_tensor("d", (1,), TensorType.FLOAT32)
    w.add_operator(B.ADD, [c, c], [d], O.AddOptions())
    w.use_subgraph(0)
    w.add_operator(B.CALL_ONCE, [], [], O.CallOnceOptions(init))
    w.add_operator(B.ADD, [x, x], [y], O.AddOptions())
    w.set_inputs([x])
    w.set_outputs([y])
    blob = w.finish()
    calls = []
    original = control_flow.SubgraphRunner.invoke
    monkeypatch.setattr(control_flow.SubgraphRunner, "invoke",
                        lambda self, inputs: calls.append(self.index) or original(self, inputs))
    feed = np.float32([1, 2, 3])
    for _ in range(3):
        ours, ref = run_both(blob, [feed])
        assert_same(ours, ref)
    assert calls == [init] * 3            # once per interpreter: three interpreters
    ip = Interpreter(model_content=blob)
    ip.allocate_tensors()
    ip.set_tensor(ip.get_input_details()[0]["index"], feed)
    for _ in range(3):
        ip.invoke()
    assert calls == [init] * 4


def test_a_subgraph_that_calls_itself_is_refused():
    tt = TensorType.FLOAT32
    w = ModelWriter()
    cond = w.add_tensor("cond", (1,), BOOL)
    a, out = w.add_tensor("a", (2,), tt), w.add_tensor("out", (2,), tt)
    w.add_operator(B.IF, [cond, a], [out], O.IfOptions(1, 1))
    w.set_inputs([cond, a])
    w.set_outputs([out])
    w.add_subgraph("loop")
    c2, a2, o2 = w.add_tensor("c", (1,), BOOL), w.add_tensor("a", (2,), tt), w.add_tensor(
        "o", (2,), tt)
    w.add_operator(B.IF, [c2, c2, a2], [c2, o2], O.IfOptions(1, 1))
    w.set_inputs([c2, a2])
    w.set_outputs([c2, o2])
    with pytest.raises(BuiltinError, match="calls itself"):
        Interpreter(model_content=w.finish()).allocate_tensors()


def test_if_with_a_non_bool_condition_is_refused():
    w = ModelWriter()
    cond = w.add_tensor("cond", (1,), I32)
    a, out = w.add_tensor("a", (2,), I32), w.add_tensor("out", (2,), I32)
    then = binop_subgraph(w, "then", B.ADD, I32, (2,))
    w.use_subgraph(0)
    w.add_operator(B.IF, [cond, a, a], [out], O.IfOptions(then, then))
    w.set_inputs([cond, a])
    w.set_outputs([out])
    with pytest.raises(BuiltinError, match="BOOL"):
        Interpreter(model_content=w.finish()).allocate_tensors()


def test_writer_round_trips_several_subgraphs():
    from nnsim.tflite.reader import read_model
    from nnsim.tflite.writer import write_model
    from tests.tflite.conftest import assert_same_model
    model = read_model(while_model(np.float32, nested=True))
    assert [sg.name for sg in model.subgraphs] == ["main", "then_add", "else_mul", "cond",
                                                   "body"]
    assert model.subgraphs[0].operators[0].options == O.WhileOptions(3, 4)
    assert_same_model(read_model(write_model(model)), model)


def test_while_iteration_limit_names_the_node(monkeypatch):
    """nnsim bounds a WHILE (LiteRT loops as long as the model says): a loop count drawn at
    random by `nnsim run` cannot hang the tool."""
    from nnsim.tflite import Interpreter
    from nnsim.tflite.builtins import BuiltinError
    monkeypatch.setenv("NNSIM_MAX_WHILE_ITERATIONS", "3")
    ip = Interpreter(model_content=while_model(np.int32))
    ip.allocate_tensors()
    feeds = [np.int32(4), np.zeros(4, np.int32), np.ones(4, np.int32)]
    for d, v in zip(ip.get_input_details(), feeds):
        ip.set_tensor(d["index"], np.asarray(v, d["dtype"]).reshape(d["shape"]))
    with pytest.raises(BuiltinError, match=r"WHILE.*did not end after 3 iterations"):
        ip.invoke()
    monkeypatch.setenv("NNSIM_MAX_WHILE_ITERATIONS", "4")
    ip.invoke()   # exactly 4 iterations are allowed
