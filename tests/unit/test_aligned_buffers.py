"""Buffers the compiled cores read with 64-byte vector loads start on a cache line
(nnsim/kernels/_common.py ``ALIGN``, as TFLite's arena: ``kDefaultTensorAlignment = 64``).

numpy's own buffers are 16-byte aligned, so without this a whole-vector load at a multiple of
64 bytes from their start is split over two cache lines; measured with 2 threads on a widened
depthwise layer, the second thread then ran its half 40% slower. The checks here are on
addresses, with the contents compared to plain numpy arrays; that the results of the kernels
do not change is checked by the kernel tests (tests/kernels), which run on these buffers."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nnsim.kernels import _common as cm
from nnsim.kernels import conv, depthwise, threads
from nnsim.tflite import Interpreter
from nnsim.tflite.builtins._base import is_view_of

SHAPES = [(), 0, 1, 7, (3, 5), (2, 3, 4, 5), (1, 0, 4)]
DTYPES = [np.uint8, np.int8, np.int32, np.int64, np.float32, np.float64]


def aligned(a) -> bool:
    return a.ctypes.data % 64 == 0


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_aligned_arrays_match_numpy(shape, dtype):
    for _ in range(8):   # several allocations: numpy's addresses vary by 16
        empty = cm.aligned_empty(shape, dtype)
        # (an empty array has nothing to load: numpy may point it anywhere)
        assert (empty.size == 0 or aligned(empty)) and empty.flags.c_contiguous
        assert empty.flags.writeable
        assert empty.shape == np.empty(shape).shape and empty.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(cm.aligned_zeros(shape, dtype), np.zeros(shape, dtype))
        np.testing.assert_array_equal(cm.aligned_full(shape, 3, dtype), np.full(shape, 3, dtype))


def test_object_arrays_are_plain_and_safe():
    """A dtype of Python objects gets numpy's own buffer (filled with None): uninitialised
    bytes read as object references would crash the interpreter."""
    empty = cm.aligned_empty((2, 3), object)
    assert empty.tolist() == [[None] * 3] * 2
    copy = cm.aligned_copy(np.array(["a", 1, None], object)[::-1])
    assert copy.tolist() == [None, 1, "a"]


def test_aligned_copy():
    rng = np.random.default_rng(0)
    src = rng.integers(-100, 100, (5, 6, 7)).astype(np.int16)
    for view in (src, src[:, 1:], src.transpose(2, 0, 1), src.reshape(-1)[3:]):
        copy = cm.aligned_copy(view)
        assert aligned(copy) and copy.flags.c_contiguous
        np.testing.assert_array_equal(copy, view)
    done = cm.aligned_copy(src)
    assert cm.aligned_copy(done) is done   # already aligned and contiguous: kept
    own = cm.aligned_copy(done, own=True)   # a buffer of its own all the same
    assert aligned(own) and not np.shares_memory(own, done)
    np.testing.assert_array_equal(own, done)


def test_per_part_rows_start_on_cache_lines_pages_apart():
    """Each part's row starts on a cache line, a whole number of 4 KB pages after the previous
    one (threads.per_part: rings closer together slowed one of two threads by half)."""
    template = np.arange(37, dtype=np.int32)
    for copy in (False, True):
        rows = threads.per_part(3, template, copy=copy)
        assert aligned(rows) and rows.strides[0] % 4096 == 0
        expected = template if copy else np.zeros_like(template)
        for row in rows:
            np.testing.assert_array_equal(row[:template.size], expected)


def test_plan_buffers_are_aligned():
    rng = np.random.default_rng(1)
    w = rng.integers(-127, 127, (24, 3, 3, 8)).astype(np.int8)
    plan, _ = conv.prepare_conv_2d((1, 9, 9, 8), np.int8, w, np.zeros(24, np.int32),
                                   stride_h=1, stride_w=1, pad_top=1, pad_bottom=1, pad_left=1,
                                   pad_right=1, in_scale=0.1, in_zp=0, w_scales=0.01, w_zp=0,
                                   out_scale=0.2, out_zp=0)
    for name in ("wp", "qp", "padded", "cols"):
        assert aligned(getattr(plan, name)), name
    dw = rng.integers(-127, 127, (1, 3, 3, 40)).astype(np.int8)
    plan, out_shape = depthwise.prepare_depthwise_conv_2d(
        (1, 30, 30, 40), np.int8, dw, np.zeros(40, np.int32), depth_multiplier=1, stride_h=1,
        stride_w=1, pad_top=1, pad_bottom=1, pad_left=1, pad_right=1, in_scale=0.1, in_zp=0,
        w_scales=0.01, w_zp=0, out_scale=0.2, out_zp=0)
    assert aligned(plan.src) and aligned(plan.weights) and aligned(plan.qp)
    if plan.widened is not None:
        assert aligned(plan.widened[0]) and aligned(plan.widened[2])
    x, out = np.zeros((1, 30, 30, 40), np.int8), np.empty(out_shape, np.int8)
    with threads.num_threads(2):
        plan.bind(x, out)
        split = plan._parallel()
    assert split is not None
    for per_part in split[1:]:
        if per_part is not None:
            assert aligned(per_part) and per_part.strides[0] % 64 == 0


def test_is_view_of_follows_numpy_collapsed_bases():
    """numpy points a view of a view at the memory's owner: a reshape of an aligned buffer
    (a view of a larger allocation) is still a view of that buffer."""
    buf = cm.aligned_empty((1, 1, 1, 10), np.int8)
    assert buf.base is not None
    assert is_view_of(buf.reshape(1, 10), buf)
    assert is_view_of(buf.reshape(1, 10).reshape(10), buf)
    assert not is_view_of(buf.reshape(1, 10)[:, :5], buf)     # part of it only
    assert not is_view_of(buf.reshape(1, 10).copy(), buf)
    plain = np.empty((2, 5), np.int8)
    assert is_view_of(plain.reshape(10), plain)
    assert not is_view_of(np.empty(10, np.int8), plain)


MODEL = (Path(__file__).resolve().parents[2].parent / "shared" / "models"
         / "tf2_mobilenet_v2_1.0_224_ptq.tflite")


@pytest.mark.skipif(not MODEL.exists(), reason="shared model absent")
def test_interpreter_buffers_aligned_and_reshape_stays_a_view():
    """The input buffer (allocated, then replaced by a set_tensor of a new shape's worth)
    and the CONV_2D / DEPTHWISE_CONV_2D / ADD outputs start on cache lines; the final RESHAPE
    (of the aligned logits buffer) is bound as a view of it, not as a copy per invoke."""
    it = Interpreter(model_path=str(MODEL))
    it.allocate_tensors()
    (inp,) = it.get_input_details()
    assert aligned(it.tensor(inp["index"])())
    it.set_tensor(inp["index"], np.zeros(inp["shape"], inp["dtype"]))
    it.invoke()
    it.invoke()
    ops = it._get_ops_details()
    kinds = {"CONV_2D", "DEPTHWISE_CONV_2D", "ADD"}
    outputs = [op["outputs"][0] for op in ops if op["op_name"] in kinds]
    assert len(outputs) > 50
    assert all(aligned(it.tensor(int(o))()) for o in outputs)
    (reshape,) = [op for op in ops if op["op_name"] == "RESHAPE"]
    src, dst = it.tensor(int(reshape["inputs"][0]))(), it.tensor(int(reshape["outputs"][0]))()
    assert np.shares_memory(src, dst)
