"""Fuzz the C-shaped API: no ``ANeuralNetworks*`` function raises, whatever it is given.

Every function in ``nnsim.nnapi`` is called once with plausible arguments and then with each
garbage value (None, a negative number, a string, a list, ``object()``, 2**40) in each
position, the other positions keeping their plausible value so that the garbage reaches the
deeper checks. Each call must return a result code (an int) or a ``(code, value)`` tuple, as
the module's contract states; and no call may end in the catch-all for unexpected Python
errors (logged as "<function>: <ExceptionType>: ...") -- garbage is BAD_DATA / UNEXPECTED_NULL /
BAD_STATE by a check, not OP_FAILED by accident.
"""
from __future__ import annotations

import inspect
import os
import re
import tempfile

import numpy as np
import pytest

from nnsim import nnapi as nn
from nnsim.types import ResultCode

OK = nn.ANEURALNETWORKS_NO_ERROR
OT = nn.ANeuralNetworksOperandType
F32 = OT(nn.ANEURALNETWORKS_TENSOR_FLOAT32, (1, 2))
I32 = OT(nn.ANEURALNETWORKS_INT32)
GARBAGE = [None, -1, "garbage", [1, 2], object(), 2**40]
FUNCTIONS = sorted(n for n in dir(nn) if n.startswith("ANeuralNetworks")
                   and inspect.isfunction(getattr(nn, n)))
CODES = {int(c) for c in ResultCode}
# What the catch-all of nnsim._capi._code logs for an exception no check anticipated.
UNEXPECTED = re.compile(r"^ANeuralNetworks\w+: [A-Z]\w*(Error|Exception): ")


def _model(finish=True):
    _, m = nn.ANeuralNetworksModel_create()
    for t in (F32, F32, I32, F32):
        nn.ANeuralNetworksModel_addOperand(m, t)
    nn.ANeuralNetworksModel_setOperandValue(m, 2, np.array(0, np.int32))
    nn.ANeuralNetworksModel_addOperation(m, nn.ANEURALNETWORKS_ADD, [0, 1, 2], [3])
    nn.ANeuralNetworksModel_identifyInputsAndOutputs(m, [0, 1], [3])
    if finish:
        assert nn.ANeuralNetworksModel_finish(m) == OK
    return m


def _compilation(finish=True):
    _, c = nn.ANeuralNetworksCompilation_create(_model())
    if finish:
        assert nn.ANeuralNetworksCompilation_finish(c) == OK
    return c


def _execution(state):
    """state: "fresh" (nothing bound), "bound" (ready to compute) or "done" (computed)."""
    _, e = nn.ANeuralNetworksExecution_create(_compilation())
    if state != "fresh":
        for k in range(2):
            nn.ANeuralNetworksExecution_setInput(e, k, None, np.ones(2, np.float32))
        nn.ANeuralNetworksExecution_setOutput(e, 0, None, np.zeros(2, np.float32))
    if state == "done":
        assert nn.ANeuralNetworksExecution_compute(e) == OK
    return e


def _desc(finish):
    _, d = nn.ANeuralNetworksMemoryDesc_create()
    nn.ANeuralNetworksMemoryDesc_addInputRole(d, _compilation(), 0, 1.0)
    if finish:
        nn.ANeuralNetworksMemoryDesc_finish(d)
    return d


def plausible(fn: str, param: str, fd: int):
    """A value of the right kind for ``param`` of ``fn`` (built fresh for every call)."""
    device = nn.ANeuralNetworks_getDevice(0)[1]
    if param in ("model", "value"):
        return _model(finish=not fn.startswith("ANeuralNetworksModel_")
                      or fn.endswith("ForDevices") or param == "value")
    if param == "compilation":
        return _compilation(finish=not re.search(r"Compilation_(set|finish|add)", fn))
    if param == "execution":
        if re.search(r"(compute|Compute)", fn):
            return _execution("bound")
        if re.search(r"get(Output|Duration)", fn):
            return _execution("done")
        return _execution("fresh")
    if param == "event":
        return nn.ANeuralNetworksExecution_startCompute(_execution("bound"))[1]
    if param == "burst":
        return nn.ANeuralNetworksBurst_create(_compilation())[1]
    if param in ("memory", "src", "dst"):
        return nn.ANeuralNetworksMemory_createFromBytes(bytes(8))[1]
    if param == "desc":
        return _desc(finish=fn.endswith("createFromDesc"))
    simple = {
        "device": device, "devices": [device], "index": 0, "dev_index": 0,
        "operand_type": F32, "buffer": np.zeros(2, np.float32), "length": 8, "offset": 0,
        "size": 8, "protect": 3, "fd": fd, "sync_fence_fd": 0, "data": bytes(8),
        "dimensions": [1, 2], "frequency": 1.0, "duration_code": 0, "duration_ns": 0,
        "preference": 0, "priority": 100, "cache_dir": tempfile.gettempdir(),
        "token": bytes(32), "allow": True, "enable": True, "measure": True, "reusable": True,
        "inputs": [0, 1, 2], "outputs": [3], "op_type": nn.ANEURALNETWORKS_ADD,
        "params": nn.ANeuralNetworksSymmPerChannelQuantParams(0, [1.0]), "ext": "x",
        "code": 0, "extension_name": "x", "op_code_within": 0, "operand_code_within": 0,
        "ahwb": object(), "dependencies": [],
    }
    return simple[param]


def is_result(value) -> bool:
    if isinstance(value, tuple):
        return len(value) == 2 and is_result(value[0])
    return isinstance(value, int) and not isinstance(value, bool)


@pytest.fixture
def fd(tmp_path):
    path = tmp_path / "mem.bin"
    path.write_bytes(bytes(4096))
    handle = os.open(path, os.O_RDWR)
    yield handle
    os.close(handle)


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_garbage_in_every_position_returns_a_code(fn, fd, logcat):
    func = getattr(nn, fn)
    params = list(inspect.signature(func).parameters)
    calls = 0
    result = func(*[plausible(fn, p, fd) for p in params])
    assert is_result(result), (fn, "plausible", result)
    for pos, param in enumerate(params):
        for junk in GARBAGE:
            args = [plausible(fn, p, fd) for p in params]
            args[pos] = junk
            try:
                result = func(*args)
            except BaseException as e:  # the contract under test: nothing escapes
                pytest.fail(f"{fn}({param}={junk!r}) raised {type(e).__name__}: {e}")
            assert is_result(result), (fn, param, junk, result)
            code = result[0] if isinstance(result, tuple) else result
            if fn.startswith("ANeuralNetworks_get") and not isinstance(result, tuple):
                continue  # getDefaultLoopTimeout & co. return a value, not a code
            assert code in CODES, (fn, param, junk, code)
            calls += 1
    unexpected = [m for m in logcat.lines() if UNEXPECTED.match(m)]
    assert not unexpected, unexpected
    assert calls == len(params) * len(GARBAGE) or not params


def test_every_function_is_fuzzed():
    """The review counted 78 functions; nnsim has at least the NDK's 70-odd entry points."""
    assert len(FUNCTIONS) >= 70
    assert "ANeuralNetworksMemory_createFromBytes" in FUNCTIONS
