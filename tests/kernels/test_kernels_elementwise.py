"""ADD, SUB, MUL: hand cases, broadcasting, numba == reference, LiteRT."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .kernel_litert import T, run_op
from .kernel_testutil import assert_same, random_q, requires_litert
from nnsim.kernels import elementwise, threads
from nnsim.kernels._jit import njit, vi_load, vi_splat, vi_store
from nnsim.kernels.fixed_point import multiply_by_quantized_multiplier, quantize_multiplier
from nnsim.kernels.reference import elementwise as ref_elementwise

OPS = [(elementwise.add, ref_elementwise.add, "ADD"),
       (elementwise.sub, ref_elementwise.sub, "SUB"),
       (elementwise.mul, ref_elementwise.mul, "MUL")]


def test_add_quant8_example():
    a = np.array([1, 2], np.uint8)   # scale 2.0
    b = np.array([3, 4], np.uint8)   # scale 1.0
    args = dict(in1_scale=2.0, in1_zp=0, in2_scale=1.0, in2_zp=0, out_scale=1.0, out_zp=0)
    for fn in (elementwise.add, ref_elementwise.add):
        assert fn(a, b, **args).tolist() == [5, 8]


@pytest.mark.parametrize("dtype, zp", [(np.uint8, 0), (np.int8, -128)])
def test_add_broadcast_example(dtype, zp):
    a = (np.array([[1, 2]]) + zp).astype(dtype)            # [1, 2] scale 2.0
    b = (np.array([[1, 2], [3, 4]]) + zp).astype(dtype)    # [2, 2] scale 1.0
    args = dict(in1_scale=2.0, in1_zp=zp, in2_scale=1.0, in2_zp=zp, out_scale=1.0, out_zp=zp)
    out = elementwise.add(a, b, **args)
    assert (out.astype(int) - zp).tolist() == [[3, 6], [5, 8]]


def test_mul_and_sub_hand_cases():
    a = np.array([10, 20, 30], np.uint8)  # scale 0.5 zp 10 -> 0, 5, 10
    b = np.array([12, 8, 14], np.uint8)   # scale 0.25 zp 8 -> 1, 0, 1.5
    q = dict(in1_scale=0.5, in1_zp=10, in2_scale=0.25, in2_zp=8, out_scale=0.5, out_zp=20)
    assert elementwise.mul(a, b, **q).tolist() == [20, 20, 50]       # 0, 0, 15 real
    assert elementwise.sub(a, b, **q).tolist() == [18, 30, 37]       # -1, 5, 8.5 real
    assert elementwise.add(a, b, **q, fuse=1).tolist() == [22, 30, 43]  # 1, 5, 11.5 real


def test_float_with_fused_relu1_and_broadcast():
    a = np.array([[-3.0], [0.25]], np.float32)
    b = np.array([1.0, -2.0, 0.5], np.float32)
    out = elementwise.add(a, b, fuse=2)
    assert out.shape == (2, 3)
    assert out.tolist() == [[-1.0, -1.0, -1.0], [1.0, -1.0, 0.75]]


def test_float16_in_float16_out():
    a = np.array([1.5, 2.25], np.float16)
    out = elementwise.mul(a, a)
    assert out.dtype == np.float16 and out.tolist() == [2.25, 5.0625]


@st.composite
def binary_cases(draw):
    dtype = draw(st.sampled_from([np.uint8, np.int8, np.float32]))
    rank = draw(st.integers(1, 4))
    shape = [draw(st.integers(1, 4)) for _ in range(rank)]
    other = [d if draw(st.booleans()) else 1 for d in shape][draw(st.integers(0, rank - 1)):]
    shapes = (shape, other) if draw(st.booleans()) else (other, shape)
    scales = [draw(st.floats(0.001, 1.0)) for _ in range(3)]
    return dtype, shapes, scales, draw(st.integers(0, 3)), draw(st.integers(0, 2**32 - 1))


@settings(max_examples=80, deadline=None)
@given(binary_cases())
def test_numba_matches_reference(case):
    dtype, (sa, sb), scales, fuse, seed = case
    rng = np.random.default_rng(seed)
    if dtype == np.float32:
        a, b, quant = rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype), {}
    else:
        info = np.iinfo(dtype)
        a, b = random_q(rng, dtype, sa), random_q(rng, dtype, sb)
        zps = rng.integers(info.min, info.max + 1, 3).tolist()
        quant = dict(in1_scale=scales[0], in1_zp=zps[0], in2_scale=scales[1], in2_zp=zps[1],
                     out_scale=scales[2], out_zp=zps[2])
    for fast, ref, _ in OPS:
        assert_same(fast(a, b, fuse=fuse, **quant), ref(a, b, fuse=fuse, **quant))


def test_mixed_output_type():
    a = np.array([0, 128, 255], np.uint8)
    out = elementwise.add(a, a, in1_scale=0.1, in1_zp=128, in2_scale=0.1, in2_zp=128,
                          out_scale=0.2, out_zp=0, out_dtype=np.int8)
    assert out.dtype == np.int8
    assert out.tolist() == [-128, 0, 127]  # -25.6 / 0.2, 0, 25.4 / 0.2


@requires_litert
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.float32])
@pytest.mark.parametrize("fast, _, op", OPS)
def test_matches_litert(rng, dtype, fast, _, op):
    """Broadcasts, and same-shape rows from 64 to 4099 elements: the quantized core's whole
    vectors of 16 and its partial last vector (through scratch buffers)."""
    shapes = [((1, 3, 4, 2), (1, 3, 4, 2)), ((1, 3, 4, 2), (1, 1, 1, 2)), ((1, 3, 1, 2), (1, 1, 4, 1)),
              ((5, 3), (3,)), ((2, 1, 3), (4, 1))]
    shapes += [((1, n), (1, n)) for n in (64, 80, 127, 1000, 4099)]
    for i in range(30):
        sa, sb = shapes[i % len(shapes)]
        fuse = int(rng.integers(0, 4))
        if dtype == np.float32:
            a, b = rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype)
            q = [(None, 0)] * 3
        else:
            info = np.iinfo(dtype)
            a, b = random_q(rng, dtype, sa), random_q(rng, dtype, sb)
            q = [(float(np.float32(rng.uniform(0.005, 0.3))), int(rng.integers(info.min, info.max)))
                 for _ in range(3)]
        ours = fast(a, b, fuse=fuse, in1_scale=q[0][0], in1_zp=q[0][1], in2_scale=q[1][0],
                    in2_zp=q[1][1], out_scale=q[2][0], out_zp=q[2][1])
        (expected,) = run_op(op, [T(a.shape, dtype, *q[0]), T(b.shape, dtype, *q[1])],
                             [T(ours.shape, dtype, *q[2])], [a, b],
                             dict(FusedActivationFunction=fuse))
        assert_same(ours, expected, rtol=0, atol=0)


@njit(cache=False)   # a cached copy would keep the inlined stage of an older elementwise.py
def _input_stage_lanes(v, stage, out):
    """The quantized ADD core's vector input stage (``_input_stage16``) over ``v`` (int32,
    a multiple of 16 long), for one stage ``(mh, ml, ch, dm, r)``."""
    splats = (vi_splat(stage[0]), vi_splat(stage[1]), vi_splat(stage[2]), vi_splat(stage[3]),
              vi_splat(stage[4]))
    low = (vi_splat(1024), vi_splat(11), vi_splat(31))
    for i in range(0, v.size, 16):
        vi_store(elementwise._input_stage16(vi_load(v, i), splats, low), out, i)
    return out


def test_add_sub_input_stage_in_int32_lanes_is_exact():
    """``_input_stage``'s int32 form of MBQM(v << 20, m, shift), in integers and through the
    core's vector code, against the gemmlowp port, for every v in [-256, 255] and multipliers
    of every right shift (0..31): powers of two (m = 2**30), the largest m, random ones, and
    m = 0. (ADD's outputs hardly show an input stage off by one: the output stage divides by
    about 2**20.)"""
    rng = np.random.default_rng(7)
    v = np.arange(-256, 256, dtype=np.int64)
    ms = [1 << 30, (1 << 31) - 1, (1 << 30) + 1] + rng.integers(1 << 30, 1 << 31, 12).tolist()
    for r, m in [(r, m) for r in range(32) for m in ms] + [(0, 0)]:
        stage = elementwise._input_stage(m, -r)
        mh, ml, ch, dm, rr = stage
        high = v * mh + ch + ((v >> 31) & dm)
        assert np.abs(high).max() < 2**31 and np.abs(v * ml).max() < 2**31
        got = (high + ((v * ml + 1024) >> 11)) >> rr
        want = [multiply_by_quantized_multiplier(int(x) << 20, m, -r) for x in v]
        assert got.tolist() == want, (m, r)
        lanes = _input_stage_lanes(v.astype(np.int32), np.array(stage, np.int64),
                                   np.zeros(v.size, np.int32))
        assert lanes.tolist() == want, (m, r)
    with pytest.raises(ValueError):
        elementwise._input_stage(1 << 30, 1)   # a left shift: never an input's
    # the larger input's multiplier is 0.5 exactly: m = 2**30, shift 0
    assert quantize_multiplier(0.5) == (1 << 30, 0)


@requires_litert
@pytest.mark.parametrize("form", ["linear", "exact"])
@pytest.mark.parametrize("larger", [1, 2])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("ratio", [1.0, 3.7, 1000.0, 5000.0, 1e6])
def test_add_sub_every_byte_pair_matches_litert(dtype, ratio, larger, form, monkeypatch):
    """Every pair of input bytes (65,536 elements) through ADD and SUB, input scales ``ratio``
    apart (equal scales: a right shift of 0 for both; then up to 20), the larger scale on
    input ``larger`` (its stage is a shift: ADD's plan swaps the inputs to put it second),
    against LiteRT; by the linear form (every case here has one) and by the exact core."""
    if form == "exact":
        monkeypatch.setattr(elementwise, "_LINEAR_MIN_ELEMENTS", 1 << 40)
    info = np.iinfo(dtype)
    a = np.repeat(np.arange(info.min, info.max + 1), 256).astype(dtype).reshape(1, -1)
    b = np.tile(np.arange(info.min, info.max + 1), 256).astype(dtype).reshape(1, -1)
    q = [(0.02, 3), (float(np.float32(0.02 / ratio)), -5 if dtype == np.int8 else 250),
         (0.03, -1 if dtype == np.int8 else 128)]
    if larger == 2:
        q[:2] = q[1::-1]
    for code, (fast, _, op) in enumerate(OPS[:2]):
        plan = elementwise.prepare_binary(code, a.shape, b.shape, a.dtype, b.dtype,
                                          in1_scale=q[0][0], in1_zp=q[0][1], in2_scale=q[1][0],
                                          in2_zp=q[1][1], out_scale=q[2][0], out_zp=q[2][1])
        assert (plan.linear is not None) == (form == "linear")
        ours = fast(a, b, in1_scale=q[0][0], in1_zp=q[0][1], in2_scale=q[1][0], in2_zp=q[1][1],
                    out_scale=q[2][0], out_zp=q[2][1])
        (expected,) = run_op(op, [T(a.shape, dtype, *q[0]), T(b.shape, dtype, *q[1])],
                             [T(ours.shape, dtype, *q[2])], [a, b], {})
        assert_same(ours, expected, rtol=0, atol=0)


def _byte_pairs(dtype, extra=0):
    """Every pair of ``dtype`` values as two inputs (65,536 elements), plus ``extra`` more
    from the start."""
    info = np.iinfo(dtype)
    values = np.arange(info.min, info.max + 1)
    return [np.concatenate([grid, grid[:extra]]).astype(dtype)
            for grid in (np.repeat(values, 256), np.tile(values, 256))]


# tf2_mobilenet_v2_1.0_224_ptq's ADD of 14x14x64 (int8): scales and zero points of input 1,
# input 2 and the output. Its exact outputs are the floor of no linear function.
_NO_LINEAR_FORM = [(0.18986915051937103, -6), (0.1699049174785614, -31),
                   (0.18754954636096954, -14)]


@requires_litert
@pytest.mark.parametrize("count", [1, 2])
def test_add_sub_linear_form_on_every_pair_matches_litert(rng, count):
    """ADD and SUB bound (fixed buffers, ``count`` threads: parts of whole 64-element
    blocks) over every pair of input values plus 37 more (a partial last block), random
    types, scales, zero points and fused activations, and the one real ADD without a
    linear form, against LiteRT. The plans' linear forms must cover most random cases."""
    cases = [(np.int8, _NO_LINEAR_FORM, 0)]
    for _ in range(12):
        dtype = (np.uint8, np.int8)[int(rng.integers(0, 2))]
        info = np.iinfo(dtype)
        q = [(float(np.float32(rng.uniform(0.002, 0.3))), int(rng.integers(info.min, info.max)))
             for _ in range(3)]
        cases.append((dtype, q, int(rng.integers(0, 4))))
    found = 0
    for dtype, q, fuse in cases:
        a, b = _byte_pairs(dtype, extra=37)
        for code, op in ((0, "ADD"), (1, "SUB")):
            plan = elementwise.prepare_binary(code, a.shape, b.shape, a.dtype, b.dtype, fuse=fuse,
                                              in1_scale=q[0][0], in1_zp=q[0][1],
                                              in2_scale=q[1][0], in2_zp=q[1][1],
                                              out_scale=q[2][0], out_zp=q[2][1])
            if q is _NO_LINEAR_FORM:
                assert plan.linear is None or op == "SUB"
            else:
                found += plan.linear is not None
            out = np.zeros(a.shape, dtype)
            with threads.num_threads(count):
                call = plan.bind(a, b, out)
            call()
            (expected,) = run_op(op, [T(a.shape, dtype, *q[0]), T(b.shape, dtype, *q[1])],
                                 [T(a.shape, dtype, *q[2])], [a, b],
                                 dict(FusedActivationFunction=fuse))
            assert_same(out, expected, rtol=0, atol=0)
    assert found >= 20   # of the 24 random plans
