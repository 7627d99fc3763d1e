"""Cold start with a compiling child (nnsim/tools/warmup.py, executor.warm_up): forked at the
first invoke's first compilation (none when nothing compiles), the child runs a model's
operations on zeros, kinds the first invoke meets last first, and is stopped when the first
invoke ends; with an empty kernel cache `nnsim run` prints what it prints with a warm one."""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from nnsim.kernels._jit import JIT_ENABLED, njit
from nnsim.kernels.gemm import gemv_runs
from nnsim.ops import executor
from nnsim.tflite import Interpreter, load_delegate
from nnsim.tflite import warm_up as warm_up_module
from nnsim.tools import warmup
from nnsim.types import OperationCode

MODEL = "mobilenet_v1_0.25_224_1_default_1.tflite"
#: MobileNet v1's integer convolutions: 32 (the first), 64, 128, 256, 512 and 1024 channels,
#: and the classifier's 1001 channels of one pixel unless the matrix-vector loops run those
#: (integer GEMV on AVX2 only, kernels.gemm.gemv_runs)
V1_QUANT_COUTS = {32, 64, 128, 256, 512, 1024} | (set() if gemv_runs(False) else {1001})


@pytest.fixture
def shared_models(shared_dir):
    return shared_dir / "models"


def _delegated(path):
    delegate = load_delegate("nnapi", {"accelerator_name": "nnapi-reference"})
    interp = Interpreter(model_path=str(path), experimental_delegates=[delegate])
    interp.allocate_tensors()
    return interp


def test_warm_up_runs_one_operation_per_kind_last_kind_first_but_the_first(shared_models,
                                                                          monkeypatch):
    """The child leaves the kind the first invoke meets first to the invoke (which compiles
    it at once) and takes the others from the last one back, the depthwise ones first."""
    interp = _delegated(shared_models / MODEL)
    model = interp.delegation.kernels[0].compilation.plan.prepared.model
    order = []
    real = executor._warm_step

    def recording(m, step):
        order.append(step.op_index)
        return real(m, step)
    monkeypatch.setattr(executor, "_warm_step", recording)
    kinds, first = [], []   # by first appearance in run order, and where each first appears
    for k, op in enumerate(model.operations):
        variant = None
        if op.type in (OperationCode.CONV_2D, OperationCode.DEPTHWISE_CONV_2D):
            x, w, out = (model.operands[i].dimensions for i in (*op.inputs[:2], op.outputs[0]))
            # the filter's window, the input / output size ratio, a one-pixel output
            variant = (tuple(w[1:3]), (-(-x[1] // out[1]), -(-x[2] // out[2])),
                       tuple(out[1:3]) == (1, 1))
        kind = (op.type, tuple(model.operands[i].type for i in op.inputs), variant)
        if kind not in kinds:
            kinds.append(kind)
            first.append(k)
    # CONV_2D 3x3 stride 2, DEPTHWISE_CONV_2D stride 1, CONV_2D 1x1, DEPTHWISE_CONV_2D stride
    # 2, AVERAGE_POOL_2D, CONV_2D of one pixel (the classifier), SQUEEZE, SOFTMAX
    assert len(kinds) == 8
    assert interp._warm_up() == len(kinds) - 1
    later = first[1:][::-1]
    depthwise = [k for k in later if model.operations[k].type == OperationCode.DEPTHWISE_CONV_2D]
    assert len(depthwise) == 2
    assert order == depthwise + [k for k in later if k not in depthwise]


def _warm_up_recording(path, delegated, events, monkeypatch) -> int:
    """``warm_up`` of ``path``'s interpreter (its operations delegated to nnapi-reference or
    TFLite nodes) with ``"op"`` added to ``events`` for each operation it runs."""
    real_step, real_node = executor._warm_step, warm_up_module._warm_node
    monkeypatch.setattr(executor, "_warm_step",
                        lambda m, step: events.append("op") or real_step(m, step))
    monkeypatch.setattr(warm_up_module, "_warm_node",
                        lambda interp, b, i: events.append("op") or real_node(interp, b, i))
    if delegated:
        interp = _delegated(path)
    else:
        interp = Interpreter(model_path=str(path))
        interp.allocate_tensors()
    return interp._warm_up()


@pytest.mark.parametrize("name, couts", [
    ("mobilenet_v1_1.0_224_quant_reconstructed.tflite", V1_QUANT_COUTS),
    (MODEL, None)])   # float
@pytest.mark.parametrize("delegated", [True, False])
def test_warm_up_compiles_the_integer_gemm_micro_kernels_first(shared_models, monkeypatch,
                                                               name, couts, delegated):
    """A plan with a quantized CONV_2D (NNAPI operation or TFLite node): the integer GEMM
    core's micro-kernels of every quantized convolution's channel count are compiled before
    any operation runs; a float plan leaves them."""
    events = []
    monkeypatch.setattr(warm_up_module, "compile_micro_kernels",
                        lambda channels: events.append(("micro", set(channels))))
    assert _warm_up_recording(shared_models / name, delegated, events, monkeypatch) > 0
    if couts is not None:
        assert events[0] == ("micro", couts) and events.count(("micro", couts)) == 1
    else:
        assert not [e for e in events if e[0] == "micro"]


@pytest.mark.parametrize("name, windowed", [
    ("mobilenet_v1_1.0_224_quant_reconstructed.tflite", True),   # first layer 3x3 stride 2
    (MODEL, True),                                                # the same, float
    ("ad01_int8.tflite", False)])                                 # FULLY_CONNECTED only
@pytest.mark.parametrize("delegated", [True, False])
def test_warm_up_compiles_the_padded_copy_before_anything_else(shared_models, monkeypatch,
                                                               name, windowed, delegated):
    """A plan with a convolution that has a window or a stride: the child compiles the
    padded copy of its input first (the invoke's first layer needs it right after its
    micro-kernel); a plan without one leaves it."""
    events = []
    monkeypatch.setattr(warm_up_module, "compile_padded_copy", lambda: events.append("padded"))
    monkeypatch.setattr(warm_up_module, "compile_micro_kernels",
                        lambda channels: events.append("micro"))
    ran = _warm_up_recording(shared_models / name, delegated, events, monkeypatch)
    if windowed:
        assert ran > 0 and events[0] == "padded" and events.count("padded") == 1
    else:   # (one kind of operation, the invoke's own: the child runs none)
        assert "padded" not in events


#: MobileNet v1 0.25's 1x1 float convolutions, (output, input channels) in sorted order; the
#: classifier (one pixel, 256 -> 1001) too where the float GEMV does not run it (generic
#: SIMD, as with NNSIM_DISABLE_JIT=1: kernels.gemm.gemv_runs)
FLOAT_1X1 = [(16, 8), (32, 16), (32, 32), (64, 32), (64, 64), (128, 64), (128, 128),
             (256, 128), (256, 256)] + ([] if gemv_runs(True) else [(1001, 256)])


@pytest.mark.parametrize("name, expected", [
    # float MobileNet v1 0.25: GEMM convolutions of 8 channels (the first: 3x3 over 3
    # channels, 3 rows of 9 taps), then 1x1 ones (one row of cin taps); then the padded copy
    # of the first one's input
    (MODEL, [("float", ((8, (3, 9)),))]
     + [("float", ((cout, (1, cin)),)) for cout, cin in FLOAT_1X1]
     + [("padded",)]),
    ("mobilenet_v1_1.0_224_quant_reconstructed.tflite", [("micro", V1_QUANT_COUTS), ("padded",)]),
    # FULLY_CONNECTED only, batch 1: on the NNAPI path the integer GEMM core's micro-kernels
    # of its 8, 128 and 640 units unless the matrix-vector loops run them (AVX2); the TFLite
    # CPU path's own FULLY_CONNECTED kernel needs nothing ahead
    ("ad01_int8.tflite", "ad01")])
@pytest.mark.parametrize("delegated", [True, False])
def test_spare_compiles_of_the_first_invoke(shared_models, monkeypatch, name, expected,
                                            delegated):
    """The first invoke's spare work (what it compiles while the child holds a kernel it
    waits for): the float GEMM micro-kernels one channel count at a time (the child's last
    work), then the integer ones and the padded copy (its first), found only when first
    needed and without replacing the steps the invoke's bound layers are checked against."""
    events = []
    monkeypatch.setattr(warm_up_module, "compile_float_micro_kernels",
                        lambda couts: events.append(("float", tuple(couts))))
    monkeypatch.setattr(warm_up_module, "compile_micro_kernels",
                        lambda couts: events.append(("micro", set(couts))))
    monkeypatch.setattr(warm_up_module, "compile_padded_copy",
                        lambda: events.append(("padded",)))
    if delegated:
        interp = _delegated(shared_models / name)
    else:
        interp = Interpreter(model_path=str(shared_models / name))
        interp.allocate_tensors()
    if expected == "ad01":
        expected = ([("micro", {8, 128, 640})] if delegated and not gemv_runs(False) else [])
    interp.invoke()
    steps = interp._steps
    tasks = interp._spare_compiles()
    assert events == []   # nothing found or compiled before the first task is asked for
    for task in tasks:
        task()
    assert events == expected
    assert interp._steps is steps


def test_windowed_convolutions():
    """1x1 at stride 1 reads its input in place; a window or a stride needs the padded copy;
    one output pixel runs the matrix-vector loops (no copy); an unknown shape is none."""
    assert executor.windowed_variant(((3, 3), (2, 2), False))
    assert executor.windowed_variant(((3, 3), (1, 1), False))
    assert executor.windowed_variant(((1, 1), (2, 2), False))
    assert not executor.windowed_variant(((1, 1), (1, 1), False))
    assert not executor.windowed_variant(((7, 7), (7, 7), True))
    assert not executor.windowed_variant(None)


def test_gemm_channel_counts_of_convolutions_and_fully_connected_layers():
    """The channel counts whose GEMM micro-kernels the child compiles: CONV_2D outputs (NHWC)
    and FULLY_CONNECTED ones ([batch, units], a 1x1 convolution over the batch), except one
    output pixel (a 1x1 CONV_2D output, a batch of 1) where the matrix-vector loops run it
    (``kernels.gemm.gemv_runs``: float on AVX-512 and AVX2, integer on AVX2)."""
    from types import SimpleNamespace as NS

    from nnsim.types import OperandType as T

    def model(input_type):
        dims = [(1, 8, 8, 3), (1, 4, 4, 24), (1, 1, 1, 40), (2, 1, 1, 72), (1, 16), (3, 56),
                (24, 3, 3, 3), (40, 1, 1, 3), (72, 1, 1, 3), (16, 3), (56, 3)]
        operands = [NS(type=input_type, dimensions=d) for d in dims]
        ops = [NS(type=OperationCode.CONV_2D, inputs=[0, o + 5], outputs=[o])
               for o in (1, 2, 3)]
        ops += [NS(type=OperationCode.FULLY_CONNECTED, inputs=[0, o + 5], outputs=[o])
                for o in (4, 5)]
        ops.append(NS(type=OperationCode.ADD, inputs=[0, 0], outputs=[1]))
        return NS(operations=ops, operands=operands)

    for channels, input_type, is_float in (
            (executor.quant_conv_channels, T.TENSOR_QUANT8_ASYMM, False),
            (executor.float_conv_channels, T.TENSOR_FLOAT32, True)):
        one_pixel = set() if gemv_runs(is_float) else {40, 16}
        want = {24, 72, 56} | one_pixel
        if is_float:   # with the window of each: 3 rows of 3 pixels x 3 channels, or one row
            windows = {24: (3, 9), 40: (1, 3), 72: (1, 3), 16: (1, 3), 56: (1, 3)}
            want = {(cout, windows[cout]) for cout in want}
        assert channels(model(input_type)) == want
        assert channels(model(T.TENSOR_INT32)) == set()


def test_micro_kernels_of_the_channel_counts_compiled_skipping_a_claimed_one(monkeypatch):
    """``compile_micro_kernels`` compiles the whole-tile micro-kernel, then each other one a
    channel count calls (AVX-512: 40 channels, a 32- and a 16-channel column: ``_mk2`` and
    ``_mk1``), each once, skipping the one the invoke is compiling (claimed)."""
    from nnsim.kernels import _gemm_int, gemm
    from nnsim.kernels._claims import Claimed
    if not JIT_ENABLED:
        assert gemm.compile_micro_kernels([40]) == 0
        return
    seen = []

    def native_address(fn, codes):
        seen.append(fn.__name__)
        if fn.__name__ == "_mk2":
            raise Claimed("_mk2")
        return 1
    monkeypatch.setattr(_gemm_int, "native_address", native_address)
    done = gemm.compile_micro_kernels([40, 16, 40])
    if _gemm_int._PAIRS:   # AVX2: one micro-kernel for every channel count
        assert (done, seen) == (1, ["_cols_pairs"])
    else:
        assert (done, seen) == (2, ["_mk4", "_mk2", "_mk1"])


@pytest.mark.parametrize("name, couts", [
    # MobileNet v1 0.25: convolutions of 8 channels (the first, 3x3 over 3), then the 1x1
    # ones (the classifier's among them only where the float GEMV does not run it)
    (MODEL, {(8, (3, 9))} | {(cout, (1, cin)) for cout, cin in FLOAT_1X1}),
    ("mobilenet_v1_1.0_224_quant_reconstructed.tflite", set())])
@pytest.mark.parametrize("delegated", [True, False])
def test_warm_up_compiles_the_float_gemm_micro_kernels_last(shared_models, monkeypatch, name,
                                                           couts, delegated):
    """After its operations (each binds only its own layer's micro-kernels), the child
    compiles the float GEMM core's micro-kernels of every float convolution's channel count
    and window, which the invoke's later layers then load."""
    events = []
    monkeypatch.setattr(warm_up_module, "compile_float_micro_kernels",
                        lambda channels: events.append(("float micro", set(channels))))
    assert _warm_up_recording(shared_models / name, delegated, events, monkeypatch) > 0
    assert events[-1] == ("float micro", couts) and events[:-1].count("op") == len(events) - 1


def test_float_micro_kernels_skip_a_claimed_channel_count(monkeypatch):
    """A channel count and window whose micro-kernel the invoke is compiling (claimed) is
    skipped, the others are still done, each once."""
    from nnsim.kernels import _gemm_float, gemm
    from nnsim.kernels._claims import Claimed
    if not JIT_ENABLED:
        assert gemm.compile_float_micro_kernels([(8, (3, 9))]) == 0
        return
    seen = []

    def micro_kernels(cout, window):
        seen.append((cout, window))
        if cout == 32:
            raise Claimed("_fk8x2")
        return np.zeros(4, np.int64)
    monkeypatch.setattr(_gemm_float, "micro_kernels", micro_kernels)
    convs = [(64, (1, 8)), (32, (1, 8)), (8, (3, 9)), (64, (1, 8)), (64, (3, 24))]
    assert gemm.compile_float_micro_kernels(convs) == 3
    assert seen == [(8, (3, 9)), (32, (1, 8)), (64, (1, 8)), (64, (3, 24))]


def test_warm_up_leaves_the_interpreter_results_unchanged_in_its_own_process(shared_models):
    """(The child owns its copy; here, in one process, an invoke after a warm-up still
    computes what a fresh interpreter computes.)"""
    x = np.random.default_rng(2).uniform(-1, 1, (1, 224, 224, 3)).astype(np.float32)
    results = []
    for warm in (False, True):
        interp = _delegated(shared_models / MODEL)
        if warm:
            interp._warm_up()
        interp.set_tensor(interp.get_input_details()[0]["index"], x)
        interp.invoke()
        results.append(interp.get_tensor(interp.get_output_details()[0]["index"]))
    np.testing.assert_array_equal(results[0], results[1])


class _SlowInterp:
    """Stands in for an interpreter: its warm-up says it started, then takes long."""

    def __init__(self, marker):
        self.marker = marker

    def _warm_up(self):
        self.marker.write_text(str(os.getpid()))
        time.sleep(60)


def _compiles_now():
    """Compile a function no process has compiled (not cached): a kernel cache miss."""
    @njit(cache=False)
    def fresh(x):
        return x * 3 + 1
    assert fresh(2) == 7


@pytest.mark.skipif(not JIT_ENABLED or not hasattr(os, "fork"), reason="needs numba and fork")
def test_the_child_is_stopped_when_the_first_invoke_ends(tmp_path, monkeypatch):
    monkeypatch.setattr(warmup, "worth_it", lambda: True)
    monkeypatch.setattr(warmup, "_single_threaded", lambda: True)   # (pytest may run threads)
    marker = tmp_path / "child"
    with warmup.compiling_alongside(_SlowInterp(marker)):
        _compiles_now()   # the child is forked here
        deadline = time.monotonic() + 20
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.05)   # the pid written in full
        pid = int(marker.read_text())
        assert pid != os.getpid()
        os.kill(pid, 0)   # running
    with pytest.raises(ProcessLookupError):   # stopped and reaped: no zombie left
        os.kill(pid, 0)


@pytest.mark.skipif(not JIT_ENABLED or not hasattr(os, "fork"), reason="needs numba and fork")
def test_the_heap_is_out_of_the_collectors_reach_while_the_child_runs(tmp_path, monkeypatch):
    """From the fork until the child is stopped, the objects alive at the fork are frozen
    (``gc.freeze``: a collection would mark each one, copying every page it touches in both
    processes); afterwards they are the collector's again."""
    monkeypatch.setattr(warmup, "worth_it", lambda: True)
    monkeypatch.setattr(warmup, "_single_threaded", lambda: True)
    before = gc.get_freeze_count()
    with warmup.compiling_alongside(_SlowInterp(tmp_path / "child")):
        assert gc.get_freeze_count() == before   # no compilation yet: no child
        _compiles_now()
        assert gc.get_freeze_count() > before
    assert gc.get_freeze_count() == 0


@pytest.mark.skipif(not JIT_ENABLED, reason="needs numba")
def test_a_child_only_at_the_first_compilation(monkeypatch):
    """An invoke that compiles nothing (every kernel compiled or cached) starts no child; one
    that compiles starts one, at its first compilation, and only one."""
    forks = []
    monkeypatch.setattr(warmup, "worth_it", lambda: True)
    monkeypatch.setattr(warmup, "_single_threaded", lambda: True)
    monkeypatch.setattr(warmup, "_start", lambda interp: forks.append(interp) and None)
    _compiled_before(1)   # compiled (or loaded from the cache) before the body
    with warmup.compiling_alongside("interp"):
        _compiled_before(2)
    assert forks == []
    with warmup.compiling_alongside("interp"):
        _compiled_before(3)
        assert forks == []
        _compiles_now()
        assert forks == ["interp"]
        _compiles_now()
    assert forks == ["interp"]
    _compiles_now()   # after the body: nothing listens any more
    assert forks == ["interp"]


@njit
def _compiled_before(x):
    return x - 1


def test_no_child_when_turned_off(monkeypatch):
    monkeypatch.setenv(warmup.ENV, "0")
    assert not warmup.worth_it()


@pytest.mark.skipif(not JIT_ENABLED, reason="needs numba")
def test_no_child_while_other_threads_run(monkeypatch):
    """A fork copies the forking thread only: with another thread running, no child."""
    import threading
    forks = []
    monkeypatch.setattr(warmup, "worth_it", lambda: True)
    monkeypatch.setattr(warmup, "_start", lambda interp: forks.append(interp) and None)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with warmup.compiling_alongside("interp"):
            _compiles_now()
    finally:
        stop.set()
        other.join()
    assert forks == []


@pytest.mark.skipif(not JIT_ENABLED or not hasattr(os, "fork"), reason="needs numba and fork")
def test_a_cold_run_prints_what_a_warm_run_prints(shared_models, tmp_path):
    """A first `nnsim run` on an empty kernel cache (a compiling child at work) against the
    same run on the filled cache: the same placement, outputs and top-5 labels."""
    model = shared_models / "mobilenet_v1_1.0_224_quant_reconstructed.tflite"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    env.pop(warmup.ENV, None)

    def run():
        out = subprocess.run([sys.executable, "-m", "nnsim.cli", "run", str(model)], env=env,
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr
        return [line for line in out.stdout.splitlines() if not line.startswith("time:")]
    cold = run()
    assert list((tmp_path / "numba").rglob("*.nbi")), "nothing was cached"
    assert run() == cold
    assert any(line.strip().startswith("top-5:") for line in cold)


@njit
def _cached_for_the_lock_test(x):
    return x + 1


@pytest.mark.skipif(not JIT_ENABLED, reason="needs numba")
def test_cache_stores_wait_for_the_lock():
    """Two processes compiling into one cache: a store waits while another process holds
    the cache directory's lock (the same lock file opened twice conflicts as two processes'
    would)."""
    import fcntl
    import threading
    from pathlib import Path

    from nnsim.kernels import _jit

    f = _cached_for_the_lock_test
    assert f in _jit._SAVES_LOCKED
    cache_file = f._cache._cache_file
    cache_dir = Path(cache_file._cache_path)
    cache_dir.mkdir(parents=True, exist_ok=True)
    stem = Path(cache_file._index_path).name[:-len(".nbi")]
    for old in cache_dir.glob(stem + ".*"):
        old.unlink()
    index = Path(cache_file._index_path)
    with open(cache_dir / "nnsim-jit.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        worker = threading.Thread(target=f, args=(np.int64(41),))
        worker.start()
        time.sleep(3.0)   # the compilation is done long before: only the store is left
        stored_while_locked = index.exists()
        fcntl.flock(lock, fcntl.LOCK_UN)
    worker.join(60)
    assert not stored_while_locked
    assert index.exists()
