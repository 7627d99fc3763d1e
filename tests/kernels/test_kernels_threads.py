"""``num_threads`` in the kernels (nnsim.kernels.threads): CONV_2D's GEMM and DEPTHWISE_CONV_2D
split over output rows or channel blocks give bit-identical results for 1, 2 and 3 threads.

Oracle: the single-thread result of the same plan (itself checked against TFLite's reference
kernels by the conv/depthwise tests). Each case also asserts that the threaded run really was
split (the plan recorded parts), so a plan that silently stays serial fails. Shapes are odd on
purpose: channel counts that are not multiples of 16 or 64, pixel counts that are not multiples
of the 4-pixel micro-kernel, several batches, every patch source (direct 1x1, implicit padded,
im2col for dilation), depth multipliers."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from nnsim.kernels import elementwise, threads
from nnsim.kernels._gemm_common import _fill_part_rows
from nnsim.kernels._jit import JIT_ENABLED, njit
from nnsim.kernels.conv import prepare_conv_2d
from nnsim.kernels.depthwise import prepare_depthwise_conv_2d
from nnsim.kernels.elementwise import prepare_binary

KINDS = ["uint8", "int8", "float32"]


@pytest.fixture(autouse=True)
def split_everything(monkeypatch):
    """Split even tiny layers (the production threshold keeps them serial)."""
    monkeypatch.setattr(threads, "MIN_PARALLEL_WORK", 0)


def _quant(kind, cout, rng):
    if kind == "uint8":
        return dict(in_scale=0.02, in_zp=3, w_scales=np.array([0.01]), w_zp=121,
                    out_scale=0.37, out_zp=9)
    return dict(in_scale=0.02, in_zp=-7, w_scales=rng.uniform(0.002, 0.02, cout), w_zp=0,
                out_scale=0.37, out_zp=-3)


def _data(kind, x_shape, w_shape, cout, rng):
    if kind == "float32":
        return (rng.standard_normal(x_shape).astype(np.float32),
                rng.standard_normal(w_shape).astype(np.float32),
                rng.standard_normal(cout).astype(np.float32), {})
    dt = np.dtype(kind)
    info = np.iinfo(dt)
    x = rng.integers(info.min, info.max + 1, x_shape).astype(dt)
    w = (rng.integers(0, 256, w_shape).astype(np.uint8) if kind == "uint8"
         else rng.integers(-127, 128, w_shape).astype(np.int8))
    bias = rng.integers(-3000, 3000, cout).astype(np.int32)
    return x, w, bias, _quant(kind, cout, rng)


def _run_threads(plan, x, out_shape):
    """``[(threaded, one thread)]`` outputs of the plan for 2 and 3 threads, each thread count
    on an input of its own (``x`` rolled), the threaded run first: a part that did not refresh
    a row of the plan's padded input copy would read the previous input's row."""
    pairs = []
    for n in (2, 3):
        xn = np.roll(x, n)
        outs = []
        for count in (n, 1):
            out = np.full(out_shape, 0x55, plan.out_dtype)
            with threads.num_threads(count):
                plan.bind(xn, out)()
            outs.append(out)
        pairs.append(outs)
        assert plan._split.get(n) is not None, f"{n} threads: the layer was not split"
    return pairs


CONV_CASES = {
    # x shape, filter (cout, kh, kw), geometry
    "1x1_direct_odd": ((1, 13, 11, 32), (70, 1, 1), (1, 1, 0, 0, 0, 0, 1, 1)),
    "1x1_few_pixels_wide": ((1, 3, 3, 40), (200, 1, 1), (1, 1, 0, 0, 0, 0, 1, 1)),
    "1x1_one_pixel": ((1, 1, 1, 24), (150, 1, 1), (1, 1, 0, 0, 0, 0, 1, 1)),
    "3x3_s2_padded_batches": ((2, 15, 11, 3), (37, 3, 3), (2, 2, 1, 1, 0, 1, 1, 1)),
    "3x3_cin6_implicit_widened": ((1, 9, 10, 6), (20, 3, 3), (1, 1, 1, 1, 1, 1, 1, 1)),
    "dilated_gather": ((1, 9, 9, 8), (70, 3, 3), (1, 1, 2, 2, 2, 2, 2, 2)),
    # parts of more than one im2col block (64 pixels): a part's block once followed its
    # padded scratch row (threads.per_part), 496 pixels, and overran the im2col buffer
    "dilated_gather_blocks": ((1, 20, 19, 8), (24, 3, 3), (1, 1, 2, 2, 2, 2, 2, 2)),
    "5x3_s1x2": ((3, 7, 12, 5), (17, 5, 3), (1, 2, 2, 2, 1, 1, 1, 1)),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", list(CONV_CASES))
def test_conv_threads_bit_identical(case, kind, rng):
    x_shape, (cout, kh, kw), g = CONV_CASES[case]
    x, w, bias, q = _data(kind, x_shape, (cout, kh, kw, x_shape[3]), cout, rng)
    plan, out_shape = prepare_conv_2d(
        x.shape, x.dtype, w, bias, stride_h=g[0], stride_w=g[1], pad_top=g[2], pad_bottom=g[3],
        pad_left=g[4], pad_right=g[5], dilation_h=g[6], dilation_w=g[7], fuse=1, **q)
    for threaded, one in _run_threads(plan, x, out_shape):
        np.testing.assert_array_equal(threaded, one)


DW_CASES = {
    # x shape, multiplier, (kh, kw), geometry
    "3x3_ring_rows": ((1, 28, 27, 40), 1, (3, 3), (1, 1, 1, 1, 1, 1, 1, 1)),
    "3x3_s2_batches": ((2, 15, 14, 72), 1, (3, 3), (2, 2, 0, 1, 0, 1, 1, 1)),
    "3x3_few_rows_many_channels": ((1, 5, 6, 200), 1, (3, 3), (1, 1, 1, 1, 1, 1, 1, 1)),
    # split by channels: each part copies only its channels of the rows into its ring
    "3x3_s2_channel_parts": ((1, 9, 8, 232), 1, (3, 3), (2, 2, 0, 1, 0, 1, 1, 1)),
    "channels_not_16": ((1, 11, 9, 21), 1, (3, 3), (1, 1, 1, 1, 1, 1, 1, 1)),
    "dilated": ((1, 17, 15, 24), 1, (3, 3), (1, 1, 2, 2, 2, 2, 2, 2)),
    "multiplier3_5x3": ((1, 19, 17, 12), 3, (5, 3), (1, 2, 2, 2, 1, 1, 2, 1)),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", list(DW_CASES))
def test_depthwise_threads_bit_identical(case, kind, rng):
    x_shape, m, (kh, kw), g = DW_CASES[case]
    cout = x_shape[3] * m
    x, w, bias, q = _data(kind, x_shape, (1, kh, kw, cout), cout, rng)
    plan, out_shape = prepare_depthwise_conv_2d(
        x.shape, x.dtype, w, bias, depth_multiplier=m, stride_h=g[0], stride_w=g[1],
        pad_top=g[2], pad_bottom=g[3], pad_left=g[4], pad_right=g[5], dilation_h=g[6],
        dilation_w=g[7], fuse=3 if kind == "float32" else 1, **q)
    for threaded, one in _run_threads(plan, x, out_shape):
        np.testing.assert_array_equal(threaded, one)


def _balance_of(call):
    """The movable boundary (team.Balance) of a bound layer, looked for inside the calls a
    bound call is made of, or None."""
    if getattr(call, "balance", None) is not None:
        return call.balance
    for inner in getattr(call, "args", ()):
        for c in inner if isinstance(inner, tuple) else (inner,):
            if callable(c) and _balance_of(c) is not None:
                return _balance_of(c)
    return None


MOVABLE_CASES = [("conv", "1x1_direct_odd"), ("conv", "1x1_few_pixels_wide"),
                 ("conv", "1x1_one_pixel"), ("conv", "3x3_s2_padded_batches"),
                 ("conv", "5x3_s1x2"), ("conv", "dilated_gather"), ("dw", "3x3_ring_rows"),
                 ("dw", "3x3_s2_batches"), ("dw", "3x3_s2_channel_parts"), ("dw", "dilated")]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("op, case", MOVABLE_CASES)
def test_every_boundary_the_team_may_move_to_gives_the_same_bits(op, case, kind, rng):
    """A layer in two parts whose boundary the thread team moves toward the faster thread
    (team.Balance: the parts table rewritten between runs): wherever the boundary is, in
    whole units, the output is the single-thread output."""
    if op == "conv":
        x_shape, (cout, kh, kw), g = CONV_CASES[case]
        x, w, bias, q = _data(kind, x_shape, (cout, kh, kw, x_shape[3]), cout, rng)
        plan, out_shape = prepare_conv_2d(
            x.shape, x.dtype, w, bias, stride_h=g[0], stride_w=g[1], pad_top=g[2],
            pad_bottom=g[3], pad_left=g[4], pad_right=g[5], dilation_h=g[6],
            dilation_w=g[7], fuse=1, **q)
    else:
        x_shape, m, (kh, kw), g = DW_CASES[case]
        cout = x_shape[3] * m
        x, w, bias, q = _data(kind, x_shape, (1, kh, kw, cout), cout, rng)
        plan, out_shape = prepare_depthwise_conv_2d(
            x.shape, x.dtype, w, bias, depth_multiplier=m, stride_h=g[0], stride_w=g[1],
            pad_top=g[2], pad_bottom=g[3], pad_left=g[4], pad_right=g[5],
            dilation_h=g[6], dilation_w=g[7], fuse=1, **q)
    one = np.empty(out_shape, plan.out_dtype)
    plan.bind(x, one)()
    out = np.full(out_shape, 0x55, plan.out_dtype)
    with threads.num_threads(2):
        call = plan.bind(x, out)
    balance = _balance_of(call)
    if balance is None:
        pytest.skip("no thread team here (one CPU or no JIT): nothing moves")
    parts, (col, unit) = balance.parts, balance.words[2:4]
    lo, hi = int(parts[0, col]), int(parts[1, col + 1])
    moves = list(range(lo + unit, hi, unit))
    assert moves, "a two-part layer with no boundary to move"
    for b in moves[::max(1, len(moves) // 7)] + [moves[-1]]:
        parts[0, col + 1] = parts[1, col] = b
        out[...] = 0x55
        call()
        np.testing.assert_array_equal(out, one, err_msg=f"boundary at {b}")


@pytest.mark.parametrize("op", [0, 1, 2])   # ADD, SUB, MUL
@pytest.mark.parametrize("kind", ["uint8", "int8"])
@pytest.mark.parametrize("size", [4096, 5003, 16 * 1000 + 9, 64 * 700 + 9])
@pytest.mark.parametrize("form", ["linear", "exact"])
def test_quantized_binary_threads_bit_identical(op, kind, size, form, rng, monkeypatch):
    """ADD/SUB/MUL split into ranges of whole 16-element vectors, or of 64-element blocks for
    ADD/SUB's linear form (the tail in the last part), from their thresholds on."""
    if form == "exact":
        monkeypatch.setattr(elementwise, "_LINEAR_MIN_ELEMENTS", 1 << 40)
    dt = np.dtype(kind)
    info = np.iinfo(dt)
    a = rng.integers(info.min, info.max + 1, (1, size)).astype(dt)
    b = rng.integers(info.min, info.max + 1, (1, size)).astype(dt)
    zp = 3 if kind == "uint8" else -4
    plan = prepare_binary(op, a.shape, b.shape, dt, dt, fuse=1, in1_scale=0.05, in1_zp=zp,
                          in2_scale=0.03, in2_zp=zp + 2, out_scale=0.07, out_zp=zp - 1)
    assert (plan.linear is not None) == (form == "linear" and op != 2)
    least = (elementwise._LINEAR_PARALLEL_ELEMENTS if plan.linear is not None
             else elementwise._PARALLEL_ELEMENTS)
    out_shape = plan.shape
    outs = []
    for n in (1, 2, 3):
        out = np.full(out_shape, 0x55, plan.out_dtype)
        with threads.num_threads(n):
            call = plan.bind(a, b, out)
            # split in n parts (none: serial)
            assert getattr(call, "parts", 1) == (n if size >= least else 1)
            call()
        outs.append(out)
    np.testing.assert_array_equal(outs[1], outs[0])
    np.testing.assert_array_equal(outs[2], outs[0])


def test_rows_and_channel_splits_both_used():
    """Tall layers split by output pixels, small wide ones by channel blocks."""
    rng = np.random.default_rng(0)
    tall = prepare_conv_2d((1, 40, 40, 16), np.float32, rng.standard_normal((32, 1, 1, 16))
                           .astype(np.float32), None, stride_h=1, stride_w=1, pad_top=0,
                           pad_bottom=0, pad_left=0, pad_right=0)[0]
    wide = prepare_conv_2d((1, 1, 1, 64), np.float32, rng.standard_normal((256, 1, 1, 64))
                           .astype(np.float32), None, stride_h=1, stride_w=1, pad_top=0,
                           pad_bottom=0, pad_left=0, pad_right=0)[0]
    # 3x3 stride 2, padding 1: 5x4 output pixels, 5 groups of 4 -> pixels 0:8 (output rows
    # 0-1) and 8:20 (rows 2-4); each part copies the padded rows it reads itself
    window = prepare_conv_2d((1, 9, 8, 3), np.float32, rng.standard_normal((8, 3, 3, 3))
                             .astype(np.float32), None, stride_h=2, stride_w=2, pad_top=1,
                             pad_bottom=1, pad_left=1, pad_right=1)[0]
    with threads.num_threads(2):
        tall_parts, _, tall_copies = tall._parallel((tall.cols, tall.scratch))
        wide_parts, _, wide_copies = wide._parallel((wide.cols, wide.scratch))
        window_parts, _, window_copies = window._parallel((window.cols, window.scratch))
    # 1x1 filters read the input itself, channel parts all of it: no rows copied in parts
    assert tall_parts.tolist() == [[0, 800, 0, 32], [800, 1600, 0, 32]] and not tall_copies
    assert wide_parts.tolist() == [[0, 1, 0, 128], [0, 1, 128, 256]] and not wide_copies
    assert window_parts.tolist() == [[0, 8, 0, 8], [8, 20, 0, 8]] and window_copies


@pytest.mark.skipif(not JIT_ENABLED, reason="a compiled helper")
def test_a_part_copies_the_padded_rows_its_pixels_read():
    """The window layer above: the padded copy has max(9 + 1, 4 * 2 + 3) = 11 rows of 10
    pixels; output pixels 0:8 (output rows 0-1) read padded rows 0 to 1 * 2 + 2 = 4, pixels
    8:20 (rows 2-4) rows 2 * 2 = 4 to 4 * 2 + 2 = 10, pixels 5:6 (row 1) rows 2 to 4: those
    rows' interiors are copied (input row r to padded row r + 1), no other."""
    x = np.arange(1, 9 * 8 * 3 + 1, dtype=np.float32).reshape(1, 9, 8, 3)
    geo = np.array([3, 3, 2, 2, 1, 1, 11, 10], np.int64)   # kh, kw, strides, dilations, hp, wp
    fill = np.array([11, 10, 1, 1, 0, 1], np.int64)
    for (p_lo, p_hi), (first, end) in (((0, 8), (0, 5)), ((8, 20), (4, 11)), ((5, 6), (2, 5))):
        padded = np.zeros((11, 10, 3), np.float32)
        _fill_rows(x.view(np.uint8), fill, geo, 5, 4, padded.view(np.uint8).reshape(-1),
                   p_lo, p_hi)
        want = np.zeros_like(padded)
        for r in range(max(first, 1), min(end, 10)):   # padded rows 1-9 hold input rows 0-8
            want[r, 1:9] = x[0, r - 1]
        np.testing.assert_array_equal(padded, want, err_msg=f"pixels {p_lo}:{p_hi}")
    padded = np.zeros((11, 10, 3), np.float32)   # fill[5] == 0: the rows were copied before
    _fill_rows(x.view(np.uint8), fill * [1, 1, 1, 1, 1, 0], geo, 5, 4,
               padded.view(np.uint8).reshape(-1), 0, 20)
    assert not padded.any()


@njit
def _fill_rows(x, fill, geo, out_h, out_w, padded, p_lo, p_hi):
    _fill_part_rows(x, fill, geo, out_h, out_w, padded, p_lo, p_hi)


def test_rows_preferred_unless_channels_clearly_more_even():
    """Row parts keep a thread on the rows it wrote in the previous layer, so channel parts
    are taken only when they spread the work more than 10% more evenly (threads.py
    ROWS_PREFERENCE). Expected parts worked out by hand from the micro-kernel work of the
    largest part (4-pixel groups x 16-channel columns; depthwise: rows x 16-channel groups)."""
    rng = np.random.default_rng(0)
    # MobileNet v2's 14x14 expansion: 49 pixel groups -> 25 x 24 columns = 600; 6 tiles ->
    # 49 x 12 = 588, 2% more even: rows
    q = dict(in_scale=0.1, in_zp=0, w_scales=0.01, w_zp=0, out_scale=0.2, out_zp=0)
    w = rng.integers(-127, 127, (384, 1, 1, 64)).astype(np.int8)
    plan = prepare_conv_2d((1, 14, 14, 64), np.int8, w, None, stride_h=1, stride_w=1,
                           pad_top=0, pad_bottom=0, pad_left=0, pad_right=0, **q)[0]
    with threads.num_threads(2):
        parts = plan._parallel((plan.cols, plan.sx, *plan.scratch))[0]
    assert parts.tolist() == [[0, 96, 0, 384], [96, 196, 0, 384]]
    # its 7x7 stride-2 depthwise layer: 4 of 7 rows x 36 groups = 144; 7 x 18 = 126, 14%
    # more even: channels
    dw = rng.integers(-127, 127, (1, 3, 3, 576)).astype(np.int8)
    plan, out_shape = prepare_depthwise_conv_2d(
        (1, 14, 14, 576), np.int8, dw, None, depth_multiplier=1, stride_h=2, stride_w=2,
        pad_top=0, pad_bottom=1, pad_left=0, pad_right=1, **q)
    with threads.num_threads(2):
        plan.bind(np.zeros((1, 14, 14, 576), np.int8), np.empty(out_shape, np.int8))
        parts = plan._parallel()[0]
    assert parts.tolist() == [[0, 7, 0, 288], [0, 7, 288, 576]]
    cost = lambda ps: (max(ps), len(ps))   # noqa: E731
    assert threads.rows_or_channels([110, 100], [101, 100], cost) == [110, 100]
    assert threads.rows_or_channels([112, 100], [101, 100], cost) == [101, 100]


def test_small_layers_stay_serial(monkeypatch):
    monkeypatch.setattr(threads, "MIN_PARALLEL_WORK", 200_000)
    rng = np.random.default_rng(0)
    plan = prepare_conv_2d((1, 4, 4, 8), np.float32, rng.standard_normal((8, 1, 1, 8))
                           .astype(np.float32), None, stride_h=1, stride_w=1, pad_top=0,
                           pad_bottom=0, pad_left=0, pad_right=0)[0]
    with threads.num_threads(2):
        assert plan._parallel((plan.cols, plan.scratch)) is None


def test_thread_count_setting():
    assert threads.get_num_threads() == 1
    with threads.num_threads(3):
        assert threads.get_num_threads() == 3
        seen = []
        worker = threading.Thread(target=lambda: seen.append(threads.get_num_threads()))
        worker.start()
        worker.join()
        assert seen == [1]   # per thread (context variable): another thread has its own
    assert threads.get_num_threads() == 1
    token = threads.set_num_threads(-1)   # TFLite's "default"
    assert threads.get_num_threads() == 1
    threads.reset_num_threads(token)
    for bad in (0, -2, 1.5, True, "2"):
        with pytest.raises(ValueError):
            threads.set_num_threads(bad)


def test_split_ranges():
    assert threads.split(13, 2) == [(0, 6), (6, 13)]
    assert threads.split(2, 3) == [(0, 1), (1, 2)]
    assert threads.split(9, 3) == [(0, 3), (3, 6), (6, 9)]


def test_each_binding_moves_its_own_bounds():
    """A plan bound twice (two executions, which may run at once) keeps one split; each
    bound layer moves a copy of it, so neither rewrites the bounds the other is reading."""
    rng = np.random.default_rng(1)
    x, w, bias, q = _data("int8", (1, 13, 11, 32), (70, 1, 1, 32), 70, rng)
    plan, out_shape = prepare_conv_2d(x.shape, x.dtype, w, bias, stride_h=1, stride_w=1,
                                      pad_top=0, pad_bottom=0, pad_left=0, pad_right=0, **q)
    with threads.num_threads(2):
        first = _balance_of(plan.bind(x, np.empty(out_shape, plan.out_dtype)))
        second = _balance_of(plan.bind(x, np.empty(out_shape, plan.out_dtype)))
    if first is None:
        pytest.skip("no thread team here (one CPU or no JIT): nothing moves")
    shared = plan._split[2][1][0]   # (scratch, (parts, ...))
    assert first.parts is not shared and second.parts is not first.parts
    np.testing.assert_array_equal(first.parts, shared)
    first.parts[0, 1] = first.parts[1, 0] = 4
    assert shared[0, 1] != 4 and second.parts[0, 1] != 4


def test_parts_get_copies_of_the_scratch_they_are_given():
    """A plan keeps its split per thread count; asked again with other scratch arrays (of
    another type and size), each part gets copies of those, not of the first call's."""
    rng = np.random.default_rng(2)
    x, w, bias, q = _data("int8", (1, 13, 11, 32), (70, 1, 1, 32), 70, rng)
    plan, _ = prepare_conv_2d(x.shape, x.dtype, w, bias, stride_h=1, stride_w=1, pad_top=0,
                              pad_bottom=0, pad_left=0, pad_right=0, **q)
    small, large = np.zeros(3, np.int32), np.zeros(5000, np.float32)
    with threads.num_threads(2):
        first = plan._parallel((small,))
        again = plan._parallel((small,))
        other = plan._parallel((large,))
    assert first is not None and again is first   # (enough work for two parts, kept)
    assert first[1][0].dtype == np.int32 and first[1][0].shape[1] >= 3
    assert other[1][0].dtype == np.float32 and other[1][0].shape[1] >= 5000
    np.testing.assert_array_equal(other[0], first[0])   # the same parts
