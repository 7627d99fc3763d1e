"""The activation arena (nnsim/ops/arena.py, as TFLite's ArenaPlanner): the planner's
placements, what moves and what keeps its buffer, and the interpreter's and the NNAPI
executor's results with and without it. (tests/tflite/test_interpreter_bound.py checks every
shared model's repeated invokes, which run in the arena, against fresh interpreters.)"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnsim.kernels._common import ALIGN
from nnsim.ops import executor
from nnsim.ops.arena import plan_offsets, share
from nnsim.tflite import Interpreter, load_delegate

litert = pytest.importorskip("ai_edge_litert.interpreter")


def test_plan_offsets_hand_example():
    """Largest first (200 at 0); 100 lives apart from it (0); 64 meets 200 (after it, at the
    next multiple of 64); 50 meets 200 and 100, not 64 (beside 64)."""
    offsets, size = plan_offsets([100, 50, 200, 64], [(0, 1), (1, 2), (2, 3), (3, 4)])
    assert offsets == [0, 256, 0, 256] and size == 320


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5000), st.integers(0, 30), st.integers(0, 6)),
                min_size=1, max_size=40))
def test_plan_offsets_never_overlap_live_buffers(buffers):
    sizes = [b[0] for b in buffers]
    lives = [(b[1], b[1] + b[2]) for b in buffers]
    offsets, size = plan_offsets(sizes, lives)
    for k, (o, n, (f, l)) in enumerate(zip(offsets, sizes, lives)):
        assert o % ALIGN == 0 and o + n <= size
        for o2, n2, (f2, l2) in list(zip(offsets, sizes, lives))[k + 1:]:
            if f <= l2 and f2 <= l:   # alive together: disjoint bytes
                assert o + n <= o2 or o2 + n2 <= o
    assert size <= sum(-(-n // ALIGN) * ALIGN for n in sizes)


def test_share_keeps_views_and_declined_buffers():
    base = np.arange(64, dtype=np.int32)
    values = {0: base, 1: base.reshape(8, 8), 2: np.ones(32, np.int8), 3: np.full(16, 7.0),
              4: np.zeros(10, np.uint8)}
    moved = []

    def adopt(i, old, new):
        if i == 4:
            return False
        moved.append(i)
        return True
    arena = share({0: (0, 1), 1: (1, 2), 2: (0, 2), 3: (2, 3), 4: (3, 3)}, values, adopt)
    assert sorted(moved) == [2, 3]              # 0 and 1 share memory: both keep theirs
    assert values[0] is base and values[1].base is base
    assert np.shares_memory(values[2], arena) and np.shares_memory(values[3], arena)
    assert not np.shares_memory(values[4], arena)
    assert values[3].dtype == np.float64 and values[3].shape == (16,)


def _feed(interp, seed):
    rng = np.random.default_rng(seed)
    for d in interp.get_input_details():
        dtype = np.dtype(d["dtype"])
        x = (rng.integers(np.iinfo(dtype).min, int(np.iinfo(dtype).max) + 1, d["shape"])
             if dtype.kind in "iu" else rng.uniform(-1, 1, d["shape"])).astype(dtype)
        interp.set_tensor(d["index"], x)


def test_interpreter_activations_share_an_arena(shared_models):
    """MobileNet v2's 65 intermediate tensors (7 MB apart) in a 1.5 MB arena once bound, the
    outputs of 4 invokes the same as with every tensor kept apart
    (``experimental_preserve_all_tensors``)."""
    path = str(shared_models / "tf2_mobilenet_v2_1.0_224_ptq.tflite")
    shared, apart = Interpreter(model_path=path), \
        Interpreter(model_path=path, experimental_preserve_all_tensors=True)
    for interp in (shared, apart):
        interp.allocate_tensors()
    for seed in range(4):
        outs = []
        for interp in (shared, apart):
            _feed(interp, seed)
            interp.invoke()
            outs.append(interp.get_tensor(interp.get_output_details()[0]["index"]))
        np.testing.assert_array_equal(*outs)
    assert apart._arena is None
    moved = [i for i, v in shared._values.items() if np.shares_memory(v, shared._arena)]
    assert len(moved) >= 60
    assert shared._arena.nbytes < 0.3 * sum(apart._values[i].nbytes for i in moved)


def test_preserve_all_tensors_keeps_intermediates_as_litert(shared_models):
    """With ``experimental_preserve_all_tensors=True`` every intermediate tensor after the
    second invoke equals LiteRT's (reference kernels, the same flag)."""
    path = str(shared_models / "mobilenet_v1_0.25_128_quant.tflite")
    ours = Interpreter(model_path=path, experimental_preserve_all_tensors=True)
    ref = litert.Interpreter(model_path=path, experimental_preserve_all_tensors=True,
                             experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    for interp in (ours, ref):
        interp.allocate_tensors()
        for seed in (0, 1):
            _feed(interp, seed)
            interp.invoke()
    checked = 0
    for d in ref.get_tensor_details():
        i = d["index"]
        if ours._sg.tensors[i].data is None and i not in ours._sg.inputs:
            np.testing.assert_array_equal(ours.get_tensor(i), ref.get_tensor(i), err_msg=d["name"])
            checked += 1
    assert checked >= 25


def test_nnapi_executions_share_an_arena(shared_models, monkeypatch):
    """The NNAPI path (nnapi-reference): a prepared model's plans move their outputs into an
    arena after the first execution; 4 executions give what they give without it."""
    path = str(shared_models / "mobilenet_v1_1.0_224_quant_reconstructed.tflite")
    states = []
    real = executor._share_buffers

    def spy(model, state, values):
        arena = real(model, state, values)
        states.append(arena)
        return arena

    def outputs(share_fn):
        monkeypatch.setattr(executor, "_share_buffers", share_fn)
        delegate = load_delegate("nnapi", {"accelerator_name": "nnapi-reference"})
        interp = Interpreter(model_path=path, experimental_delegates=[delegate])
        interp.allocate_tensors()
        result = []
        for seed in range(4):
            _feed(interp, seed)
            interp.invoke()
            result.append(interp.get_tensor(interp.get_output_details()[0]["index"]))
        return result

    with_arena = outputs(spy)
    without = outputs(lambda *args: None)
    assert states and states[0] is not None and states[0].nbytes < 3_000_000
    for a, b in zip(with_arena, without):
        np.testing.assert_array_equal(a, b)
