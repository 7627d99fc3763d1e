"""The compiled builtins of :mod:`nnsim.kernels._builtins` (``lesser``, ``greater``,
``empty``, ``zeros``, ``flat``): the same results as numba's and numpy's own, compiled or not,
with nothing of numba's compiled again in each process (issue 13's cold start)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from nnsim.kernels import _jit
from nnsim.kernels._builtins import empty, flat, greater, lesser, zeros


_NUMBERS = [np.int32(5), np.int64(-3), np.uint8(200), np.uint64(7), np.float32(1.5),
            np.float32(-0.0), np.float32(0.0), np.float32(np.nan), np.float64(2.25),
            np.float64(np.nan), np.int64(5)]


@pytest.mark.parametrize("a", _NUMBERS, ids=repr)
def test_lesser_and_greater_are_min_and_max_of_two(a):
    """``lesser(a, b)`` / ``greater(a, b)`` return what ``min(a, b)`` / ``max(a, b)`` do
    (numba's builtins compiled in the same function, and Python's when the JIT is off): the
    common type of both, the first argument unless the second compares lower (higher); so
    a NaN first is returned, a NaN second never, and of -0.0 and 0.0 the first."""
    @_jit.njit(cache=False)
    def both(a, b):
        return lesser(a, b), greater(a, b), min(a, b), max(a, b)

    for b in _NUMBERS:
        lo, hi, want_lo, want_hi = both(a, b)
        assert type(lo) is type(want_lo) and type(hi) is type(want_hi), (a, b)
        for got, want, python in ((lo, want_lo, min(a, b)), (hi, want_hi, max(a, b))):
            assert np.array_equal(got, want, equal_nan=True), (a, b)
            assert np.signbit(got) == np.signbit(want), (a, b)
            assert np.array_equal(np.float64(got), np.float64(python), equal_nan=True), (a, b)


def test_lesser_and_greater_take_constants_without_literal_variants():
    """A constant argument (numba's ``Literal[int]``) is typed as its plain type: the result
    of ``lesser(n, 16)`` is an int64 whatever the constant."""
    @_jit.njit(cache=False)
    def clamp(n):
        return lesser(n, 16), greater(n, 3), lesser(np.uint8(9), 4), greater(2, np.float32(2.5))

    assert clamp(20) == (16, 20, 4, 2.5)
    assert clamp(np.int64(1)) == (1, 3, 4, 2.5)


@pytest.mark.parametrize("shape", [7, (2, 3), (0,), (2, 1, 4)], ids=str)
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int32, np.int64, np.float32,
                                   np.float64, np.bool_], ids=lambda d: np.dtype(d).name)
def test_empty_and_zeros_allocate_as_numpy(shape, dtype):
    """``empty(shape, dtype)`` / ``zeros(shape, dtype)`` in a compiled kernel: a new C-contiguous
    array of that shape and dtype (numpy scalar type or an array's dtype), zeros filled with
    0; writable, each call a new array."""
    @_jit.njit(cache=False)
    def make(shape, like):
        a, b = empty(shape, like.dtype), zeros(shape, like.dtype)
        c = zeros(shape, like.dtype)
        c.ravel()[:] = 1
        return a, b, c

    like = np.ones(1, dtype)
    a, b, c = make(shape, like)
    want_shape = (shape,) if isinstance(shape, int) else shape
    for arr in (a, b, c):
        assert arr.dtype == np.dtype(dtype) and arr.shape == want_shape
        assert arr.flags.c_contiguous and arr.flags.writeable
    assert np.array_equal(b, np.zeros(want_shape, dtype))
    assert np.array_equal(c, np.ones(want_shape, dtype))
    a2, b2, _ = make(shape, like)
    assert not np.shares_memory(b, b2) or b.size == 0


_NO_OVERLOADS = r"""
import numpy as np
from numba.core import event
compiled = []
class Listener(event.Listener):
    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        compiled.append(f.__module__ + "." + f.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Listener())
from nnsim.kernels import argminmax, elementwise, pooling, resize
rng = np.random.default_rng(0)
x = rng.integers(0, 256, (1, 9, 9, 8)).astype(np.uint8)
pooling.average_pool_2d(x, filter_h=3, filter_w=3, stride_h=2, stride_w=2, pad_top=0,
                        pad_bottom=0, pad_left=0, pad_right=0)
pooling.average_pool_2d(x.astype(np.float32), filter_h=3, filter_w=3, stride_h=2, stride_w=2,
                        pad_top=0, pad_bottom=0, pad_left=0, pad_right=0)
argminmax.arg_max(x, 3)
resize.resize_bilinear(x.astype(np.float32), 5, 5)
elementwise.add(x, x[:, :, :1], in1_scale=0.1, in1_zp=3, in2_scale=0.2, in2_zp=5,
                out_scale=0.3, out_zp=7)
print("\n".join(name for name in compiled if name.startswith("numba.")))
"""


@pytest.mark.skipif(not _jit.JIT_ENABLED, reason="needs numba")
def test_kernels_compile_no_min_max_or_array_overload(tmp_path):
    """What ``test_kernels_jit.test_kernels_call_no_numba_overload_compiled_in_every_process``
    is for: a fresh process on an empty cache compiling the pooling, argmax, resize and
    quantized add kernels (which take minima, maxima and allocate) compiles none of numba's
    min, max, np.empty, np.zeros or np.ones implementations; only numba's allocator, once."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", _NO_OVERLOADS], capture_output=True,
                         text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    numba_own = out.stdout.split()
    assert not [n for n in numba_own if re.search(r"ol_(min|max|np_empty|np_zeros|np_ones)\.",
                                                  n)], numba_own
    assert len(numba_own) <= 1, numba_own   # the allocator (16 of them before)


@pytest.mark.parametrize("shape", [7, (2, 3), (0, 5), (2, 1, 4)], ids=str)
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64],
                         ids=lambda d: np.dtype(d).name)
def test_flat_is_reshape_minus_one(shape, dtype):
    """``flat(a)`` in a compiled kernel is ``a.reshape(-1)`` of a C-contiguous array (numba's
    own, compiled in the same function; numpy's when the JIT is off): the same values in
    order, the same memory (a write through it is a write to ``a``), also when returned."""
    @_jit.njit(cache=False)
    def both(a):
        f = flat(a)
        values, want = f.copy(), a.reshape(-1).copy()
        if f.size:
            f[f.size - 1] = 3
        return values, want, flat(a)

    a = np.arange(int(np.prod(shape))).astype(dtype).reshape(shape)
    original = a.copy()
    values, want, view = both(a)
    assert values.dtype == want.dtype == a.dtype and values.shape == (a.size,)
    assert np.array_equal(values, want) and np.array_equal(values, original.reshape(-1))
    if a.size:
        assert a.reshape(-1)[-1] == 3
    view[...] = 1
    assert (a == 1).all()


_FREED = r"""
import numpy as np
from numba.core.runtime import rtsys
from nnsim.kernels._builtins import empty, flat, zeros
from nnsim.kernels._jit import njit

@njit(cache=False)
def scratch(n):
    total = 0.0
    for _ in range(10):
        a, b = empty(n, np.float32), zeros((n, 2), np.int64)
        a[:] = 1
        total += a.sum() + b.sum()
    return total

@njit(cache=False)
def returned(n):
    return empty(n, np.float32)

@njit(cache=False)
def flattened(n):
    return flat(zeros((n, 2), np.int64))

scratch(4), returned(4), flattened(4)
before = rtsys.get_allocation_stats()
for _ in range(50):
    scratch(4)
    returned(3)
    flattened(3)
after = rtsys.get_allocation_stats()
print(after.alloc - before.alloc, after.free - before.free)
"""


@pytest.mark.skipif(not _jit.JIT_ENABLED, reason="needs numba")
def test_empty_and_zeros_arrays_are_freed(tmp_path):
    """Every array ``empty`` / ``zeros`` allocate in a kernel is freed, the scratch ones when
    the kernel ends, a returned one (also through ``flat``) with its Python object (numba's
    allocation counters, on in a fresh process)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NUMBA_NRT_STATS="1")
    out = subprocess.run([sys.executable, "-c", _FREED], capture_output=True, text=True,
                         timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    allocated, freed = (int(n) for n in out.stdout.split())
    assert allocated == freed == 50 * (2 * 10 + 2)
