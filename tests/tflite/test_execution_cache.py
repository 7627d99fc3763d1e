"""The delegate's NNAPIExecutionCache (nnapi_delegate.cc Invoke): from a runtime feature level
above 30 (Android 12) a partition's execution is made reusable and kept, keyed by the request
signature, so later invokes compute again without creating and binding an execution; before
that, every invoke creates a new one. Either way the results must be what a first execution
computes. Oracle: a fresh interpreter's first invoke per input."""
from __future__ import annotations

import numpy as np
import pytest

import nnsim
from nnsim.tflite import Interpreter, load_delegate

MODEL = "mobilenet_v1_0.25_224_1_default_1.tflite"   # float32, all on nnapi-reference
CREATED = "ExecutionBuilder::ExecutionBuilder with"


def _interp(path, **options):
    delegate = load_delegate("nnapi", {"accelerator_name": "nnapi-reference", **options})
    interp = Interpreter(model_path=str(path), experimental_delegates=[delegate])
    interp.allocate_tensors()
    return interp


def _invoke(interp, x):
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    return interp.get_tensor(interp.get_output_details()[0]["index"])


def _inputs(n):
    rng = np.random.default_rng(5)
    return [rng.uniform(-1, 1, (1, 224, 224, 3)).astype(np.float32) for _ in range(n)]


@pytest.fixture
def model(shared_models):
    return shared_models / MODEL


@pytest.mark.parametrize("sdk, reused", [(31, True), (30, False)])
def test_executions_are_reused_from_android_12(model, logcat, sdk, reused):
    nnsim.setprop("debug.nn.vlog", "1")
    xs = _inputs(3)
    expected = [_invoke(_interp(model, android_sdk_version=sdk), x) for x in xs]
    interp = _interp(model, android_sdk_version=sdk)
    kernel = interp.delegation.kernels[0]
    executions, outputs = [], []
    logcat.records.clear()
    for x in xs + xs[::-1]:
        outputs.append(_invoke(interp, x))
        executions.append(kernel.last_execution)
    for got, want in zip(outputs, expected + expected[::-1]):
        np.testing.assert_array_equal(got, want)
    created = [m for m in logcat.lines() if m.startswith(CREATED)]
    if reused:
        assert all(e is executions[0] for e in executions)
        assert len(created) == 1
    else:
        assert len({id(e) for e in executions}) == len(executions)
        assert len(created) == len(executions)


def test_a_cache_size_of_zero_turns_reuse_off(model):
    interp = _interp(model, max_execution_cache_size=0)
    kernel = interp.delegation.kernels[0]
    x = _inputs(1)[0]
    _invoke(interp, x)
    first = kernel.last_execution
    _invoke(interp, x)
    assert kernel.last_execution is not first


def test_outputs_already_read_are_left_alone(model):
    """get_tensor hands out copies: the next invoke, which rewrites the partition's output
    pool, does not change them."""
    interp = _interp(model)
    a, b = _inputs(2)
    out_a = _invoke(interp, a)
    kept = out_a.copy()
    out_b = _invoke(interp, b)
    np.testing.assert_array_equal(out_a, kept)
    assert not np.array_equal(out_a, out_b)


def test_an_input_written_in_place_is_read_anew(model):
    """A reused execution reads the input tensor's own buffer: values written into it
    through ``tensor()`` (no set_tensor) are what the next invoke computes on."""
    a, b = _inputs(2)
    want = _invoke(_interp(model), b)
    interp = _interp(model)
    _invoke(interp, a)
    view = interp.tensor(interp.get_input_details()[0]["index"])
    view()[...] = b
    interp.invoke()
    np.testing.assert_array_equal(
        interp.get_tensor(interp.get_output_details()[0]["index"]), want)
