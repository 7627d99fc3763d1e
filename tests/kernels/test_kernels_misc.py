"""CONCATENATION, PAD, MEAN, QUANTIZE / DEQUANTIZE / requantize."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .kernel_litert import T, run_op
from .kernel_testutil import assert_same, random_q, requires_litert
from nnsim.kernels import pad, quantize, reduce, reshape
from nnsim.kernels.reference import pad as ref_pad
from nnsim.kernels.reference import quantize as ref_quantize
from nnsim.kernels.reference import reduce as ref_reduce
from nnsim.kernels.reference import reshape as ref_reshape

Q8 = [np.uint8, np.int8]


# --- concatenation -----------------------------------------------------------------------------

def test_concatenation_float_and_plain_quantized():
    a, b = np.ones((2, 1), np.float32), np.zeros((2, 2), np.float32)
    assert reshape.concatenation([a, b], -1).tolist() == [[1, 0, 0], [1, 0, 0]]
    qa, qb = np.array([[1]], np.uint8), np.array([[2]], np.uint8)
    assert reshape.concatenation([qa, qb], 0).tolist() == [[1], [2]]


def test_concatenation_requantizes_mismatched_inputs():
    a = np.array([10, 20], np.uint8)    # scale 0.5 zp 10 -> 0, 5
    b = np.array([4, 6], np.uint8)      # scale 1.0 zp 0 -> 4, 6 (same as output: copied)
    out = reshape.concatenation([a, b], 0, in_scales=[0.5, 1.0], in_zps=[10, 0], out_scale=1.0,
                                out_zp=0)
    assert out.tolist() == [0, 5, 4, 6]
    c = np.array([11, 13], np.uint8)    # scale 0.5 zp 10 -> 0.5, 1.5: rounds half away
    out = reshape.concatenation([c], 0, in_scales=[0.5], in_zps=[10], out_scale=1.0, out_zp=0)
    assert out.tolist() == [1, 2]


def test_concatenation_checks_inputs():
    with pytest.raises(ValueError):
        reshape.concatenation([np.zeros((1,), np.uint8), np.zeros((1,), np.int8)], 0)
    with pytest.raises(ValueError):
        reshape.concatenation([], 0)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(Q8), st.integers(1, 4), st.integers(1, 4),
       st.lists(st.tuples(st.floats(0.001, 1.0), st.integers(-128, 127)), min_size=1,
                max_size=4), st.integers(0, 2**32 - 1))
def test_concatenation_numba_matches_reference(dtype, rows, axis_rank, params, seed):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    params = [(s, int(np.clip(z, info.min, info.max))) for s, z in params]
    arrays = [random_q(rng, dtype, (rows, int(rng.integers(1, 4)), 2)) for _ in params]
    q = dict(in_scales=[p[0] for p in params], in_zps=[p[1] for p in params],
             out_scale=params[0][0] if axis_rank == 1 else float(rng.uniform(0.001, 1)),
             out_zp=params[0][1])
    assert_same(reshape.concatenation(arrays, 1, **q), ref_reshape.concatenation(arrays, 1, **q))


# --- pad ---------------------------------------------------------------------------------------

def test_pad_hand_case():
    x = np.array([[1, 2]], np.uint8)
    out = pad.pad(x, [[1, 0], [0, 2]], pad_value=9)
    assert out.tolist() == [[9, 9, 9, 9], [1, 2, 9, 9]]


def test_pad_rejects_bad_paddings():
    with pytest.raises(ValueError):
        pad.pad(np.zeros((2, 2)), [[0, 1]])
    with pytest.raises(ValueError):
        pad.pad(np.zeros((2,)), [[-1, 0]])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.integers(0, 2**32 - 1),
       st.sampled_from([np.uint8, np.int8, np.float32, np.float16]))
def test_pad_matches_reference(dims, seed, dtype):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(dims) * 50).astype(dtype)
    paddings = rng.integers(0, 3, (len(dims), 2))
    assert_same(pad.pad(x, paddings, pad_value=3), ref_pad.pad(x, paddings, pad_value=3))


# --- mean --------------------------------------------------------------------------------------

def test_mean_hand_cases():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_allclose(reduce.mean(x, [1, -1], False), [5.5, 17.5])
    assert reduce.mean(x, [1], True).shape == (2, 1, 4)
    q = np.array([[1, 2], [3, 5]], np.uint8)
    # same params: (1 + 2 + 3 + 5) / 4 = 2.75 -> 3
    assert reduce.mean(q, [0, 1], False, in_scale=0.5, in_zp=0).item() == 3


def test_mean_variants_differ_only_on_the_4d_fast_path():
    x = np.random.default_rng(3).integers(0, 256, (1, 5, 5, 3)).astype(np.uint8)
    q = dict(in_scale=0.037, in_zp=14, out_scale=0.021, out_zp=120)
    fast = reduce.mean(x, [1, 2], True, **q, variant="optimized")
    ref = reduce.mean(x, [1, 2], True, **q, variant="reference")
    assert fast.shape == ref.shape == (1, 1, 1, 3)
    assert_same(reduce.mean(x, [3], True, **q, variant="optimized"),
                reduce.mean(x, [3], True, **q, variant="reference"))
    with pytest.raises(ValueError):
        reduce.mean(x, [1], True, **q, variant="other")


def test_mean_aosp_variant_truncates_the_raw_sum():
    """AOSP's meanGeneric: int32 sum of the raw values, C++ '/' (toward zero); no zero point,
    no requantization (docs/numerics.md)."""
    q = np.array([[-3, -2], [-2, -2]], np.int8)        # -9 / 4 = -2.25 -> -2
    assert reduce.mean(q, [0, 1], False, variant="aosp").item() == -2
    q = np.array([[-2, -2], [-2, -1]], np.int8)        # -7 / 4 = -1.75 -> -1 (TFLite: -2)
    assert reduce.mean(q, [0, 1], False, variant="aosp").item() == -1
    assert reduce.mean(q, [0, 1], False, in_scale=1.0, in_zp=0).item() == -2
    u = np.array([[130, 130], [130, 129]], np.uint8)   # 519 / 4 = 129.75 -> 129
    assert reduce.mean(u, [0, 1], False, variant="aosp").item() == 129


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([np.uint8, np.int8, np.float32]),
       st.lists(st.integers(1, 5), min_size=1, max_size=4), st.data(), st.booleans(),
       st.sampled_from(["reference", "optimized", "aosp"]), st.integers(0, 2**32 - 1))
def test_mean_numba_matches_reference(dtype, dims, data, keep_dims, variant, seed):
    rng = np.random.default_rng(seed)
    rank = len(dims)
    axes = data.draw(st.lists(st.integers(-rank, rank - 1), min_size=1, max_size=rank + 1))
    if dtype == np.float32:
        x, q = rng.standard_normal(dims).astype(dtype), {}
    else:
        info = np.iinfo(dtype)
        x = random_q(rng, dtype, dims)
        zps = rng.integers(info.min, info.max + 1, 2).tolist()
        q = dict(in_scale=float(rng.uniform(0.001, 1)), in_zp=zps[0],
                 out_scale=float(rng.uniform(0.001, 1)), out_zp=zps[1], variant=variant)
    assert_same(reduce.mean(x, axes, keep_dims, **q), ref_reduce.mean(x, axes, keep_dims, **q))


@requires_litert
@pytest.mark.parametrize("dtype", Q8 + [np.float32])
@pytest.mark.parametrize("variant", ["reference", "optimized"])
def test_mean_matches_litert(rng, dtype, variant):
    axes_choices = [[1, 2], [2, 1], [1, -2], [1, 2, 2], [1], [3], [0, 1, 2], [-1], [0, 3]]
    for i in range(36):
        axes = axes_choices[i % len(axes_choices)]
        keep_dims = bool(rng.random() < 0.6)
        shape = (2,) + tuple(int(v) for v in rng.integers(1, 7, 3))
        if dtype == np.float32:
            x = rng.standard_normal(shape).astype(dtype)
            qin = qout = (None, 0)
        else:
            info = np.iinfo(dtype)
            x = random_q(rng, dtype, shape)
            qin = (float(np.float32(rng.uniform(0.005, 0.3))), int(rng.integers(info.min, info.max)))
            qout = qin if rng.random() < 0.3 else (float(np.float32(rng.uniform(0.005, 0.3))),
                                                   int(rng.integers(info.min, info.max)))
        ours = reduce.mean(x, axes, keep_dims, in_scale=qin[0], in_zp=qin[1], out_scale=qout[0],
                           out_zp=qout[1], variant=variant)
        ax = np.array(axes, np.int32)
        (expected,) = run_op("MEAN", [T(x.shape, dtype, *qin), T(ax.shape, np.int32, data=ax)],
                             [T(ours.shape, dtype, *qout)], [x], dict(KeepDims=keep_dims),
                             reference=(variant == "reference"))
        assert_same(ours, expected, rtol=1e-6, atol=1e-7)


# --- quantize / dequantize / requantize --------------------------------------------------------

def test_quantize_rounds_half_away_from_zero_and_clamps():
    x = np.array([0.25, 0.75, -0.25, -0.75, 100.0, -100.0, np.nan], np.float32)
    out = quantize.quantize(x, out_scale=0.5, out_zp=10, out_dtype=np.uint8)
    assert out.tolist() == [11, 12, 9, 8, 210, 0, 0]
    out = quantize.quantize(x[:6], out_scale=0.5, out_zp=0, out_dtype=np.int8)
    assert out.tolist() == [1, 2, -1, -2, 127, -128]


def test_quantize_ties_near_ties_and_extremes_match_float64_rounding():
    """TFLite rounds the float32 quotient half away from zero. Ties (k + 0.5 exactly), the
    floats next to them (0.5 - 2**-25 must round to 0: |v| + 0.5 computed in float32 would
    round up to 1.0), quotients past 2**23 and 2**31, infinities and NaN, against the
    reference and hand-computed values."""
    ks = np.arange(-300, 300, dtype=np.float64)
    ties = np.concatenate([ks + 0.5, ks - 0.5]).astype(np.float32)
    near = np.concatenate([np.nextafter(ties, np.float32(np.inf)),
                           np.nextafter(ties, np.float32(-np.inf))])
    big = np.array([2.0 ** 23 + 1, -(2.0 ** 23) - 3, 2.0 ** 24, 3e9, -3e9, 1e38, -1e38],
                   np.float32)
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0], np.float32)
    for scale in (np.float32(1.0), np.float32(0.25), np.float32(1 / 127.5)):
        x = np.concatenate([ties, near, big, special]) * scale
        for out_dtype, zp in ((np.uint8, 128), (np.int8, -1), (np.int8, 0), (np.uint8, 0)):
            ours = quantize.quantize(x, out_scale=scale, out_zp=zp, out_dtype=out_dtype)
            np.testing.assert_array_equal(
                ours, ref_quantize.quantize(x, out_scale=scale, out_zp=zp, out_dtype=out_dtype))
    half_below = np.float32(0.5) - np.float32(2.0 ** -25)
    assert quantize.quantize(np.array([half_below, np.float32(0.5), -half_below], np.float32),
                             out_scale=1.0, out_zp=0, out_dtype=np.int8).tolist() == [0, 1, 0]


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16, np.int32])
def test_dequantize_every_value_matches_the_float64_product(dtype):
    """8- and 16-bit inputs are computed in float32 (exact: the float64 product is rounded
    once either way), wider ones in float64; every 8/16-bit value, odd scales, both paths
    (``dequantize`` and a plan's ``dequantize_into``)."""
    info = np.iinfo(dtype)
    if info.bits <= 16:
        x = np.arange(info.min, info.max + 1).astype(dtype)
    else:
        x = np.array([info.min, info.min + 1, -1, 0, 1, 12345678, info.max], dtype)
    for scale, zp in ((0.1, 0), (1 / 3, 7), (3.0e-5, -100), (123.456, 255)):
        want = (float(np.float32(scale)) * (x.astype(np.float64) - zp)).astype(np.float32)
        np.testing.assert_array_equal(quantize.dequantize(x, in_scale=scale, in_zp=zp), want)
        if info.bits == 8:
            out = np.empty(x.shape, np.float32)
            assert quantize.dequantize_into(x, out, in_scale=scale, in_zp=zp)
            np.testing.assert_array_equal(out, want)


def test_dequantize_compiles_one_variant_for_writable_and_read_only_inputs():
    """A bound DEQUANTIZE of a writable tensor and one of a model's read-only constants (int8
    and uint8 alike, read as uint8) run the same compiled variant of the small-integer core:
    numba compiles one, not a second for writable inputs (issue 13's cold start); the
    results are those of the float64 product."""
    from nnsim.kernels._jit import JIT_ENABLED

    if not JIT_ENABLED:
        pytest.skip("no compiled variants with the JIT off")
    rng = np.random.default_rng(3)
    for dtype in (np.uint8, np.int8):
        x = random_q(rng, dtype, (5, 7))
        constant = x.copy()
        constant.flags.writeable = False
        want = (float(np.float32(0.05)) * (x.astype(np.float64) - 3)).astype(np.float32)
        out = np.empty(x.shape, np.float32)
        quantize.bind_dequantize(x, out, in_scale=0.05, in_zp=3)()
        np.testing.assert_array_equal(out, want)
        np.testing.assert_array_equal(quantize.dequantize(constant, in_scale=0.05, in_zp=3),
                                      want)
    # (other tests compile the 16-bit variants)
    bytes_in = [sig for sig in quantize._dequantize_small_core.signatures
                if str(sig[0].dtype) == "uint8"]
    assert len(bytes_in) == 1 and bytes_in[0][0].mutable is False


def test_dequantize_per_tensor_and_per_channel():
    x = np.array([[0, 1], [2, 3]], np.uint8)
    assert quantize.dequantize(x, in_scale=0.5, in_zp=1).tolist() == [[-0.5, 0], [0.5, 1.0]]
    s = np.array([[1, -1], [2, -2]], np.int8)
    out = quantize.dequantize(s, channel_scales=[0.5, 0.25], channel_axis=0)
    assert out.tolist() == [[0.5, -0.5], [0.5, -0.5]]
    assert quantize.dequantize(x, in_scale=0.5, in_zp=1, out_dtype=np.float16).dtype == np.float16


def test_requantize_uint8_int8_shift_is_exact():
    x = np.arange(256, dtype=np.uint8)
    out = quantize.requantize(x, in_scale=0.1, in_zp=128, out_scale=0.1, out_zp=0,
                              out_dtype=np.int8)
    assert out.tolist() == (np.arange(256) - 128).tolist()


@pytest.mark.parametrize("dtype", Q8)
@pytest.mark.parametrize("out_dtype", Q8)
def test_requantize_with_equal_scales_takes_the_byte_shift_and_matches_reference(dtype,
                                                                                out_dtype):
    """Equal scales (TF2 int8 models' input QUANTIZE: uint8 -> int8 at 1/127.5) run the byte
    loop clamp(q - in_zp + out_zp); the fixed-point reference requantization agrees for every
    input value, with zero points that clamp at both ends."""
    x = np.arange(np.iinfo(dtype).min, np.iinfo(dtype).max + 1).astype(dtype).reshape(2, 128)
    oinfo = np.iinfo(out_dtype)
    for in_zp, out_zp in ((int(np.iinfo(dtype).max), int(oinfo.min) + 1), (3, int(oinfo.max) - 7),
                          (int(np.iinfo(dtype).min), int(oinfo.min))):
        q = dict(in_scale=np.float32(1 / 127.5), in_zp=in_zp, out_scale=np.float32(1 / 127.5),
                 out_zp=out_zp, out_dtype=out_dtype)
        assert quantize.prepare_requantize(**q).same_scale
        out = quantize.requantize(x, **q)
        assert out.dtype == out_dtype
        expected = np.clip(x.astype(np.int64) - in_zp + out_zp, oinfo.min, oinfo.max)
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(out, ref_quantize.requantize(x, **q))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(Q8), st.sampled_from(Q8), st.floats(0.001, 1), st.floats(0.001, 1),
       st.integers(0, 2**32 - 1))
def test_quantize_family_numba_matches_reference(dtype, out_dtype, s_in, s_out, seed):
    rng = np.random.default_rng(seed)
    info, oinfo = np.iinfo(dtype), np.iinfo(out_dtype)
    zp, ozp = int(rng.integers(info.min, info.max + 1)), int(rng.integers(oinfo.min, oinfo.max + 1))
    x = random_q(rng, dtype, (3, 17))
    f = (rng.standard_normal((3, 17)) * 100 * s_out).astype(np.float32)
    f[0, :4] = np.array([0.5, -0.5, 1.5, -2.5], np.float32) * np.float32(s_out)
    assert_same(quantize.quantize(f, out_scale=s_out, out_zp=ozp, out_dtype=out_dtype),
                ref_quantize.quantize(f, out_scale=s_out, out_zp=ozp, out_dtype=out_dtype))
    assert_same(quantize.dequantize(x, in_scale=s_in, in_zp=zp),
                ref_quantize.dequantize(x, in_scale=s_in, in_zp=zp), rtol=0, atol=0)
    scales = rng.uniform(0.01, 1, 17)
    assert_same(quantize.dequantize(x, channel_scales=scales, channel_axis=-1),
                ref_quantize.dequantize(x, channel_scales=scales, channel_axis=-1), rtol=0, atol=0)
    q = dict(in_scale=s_in, in_zp=zp, out_scale=s_out, out_zp=ozp, out_dtype=out_dtype)
    assert_same(quantize.requantize(x, **q), ref_quantize.requantize(x, **q))


@requires_litert
@pytest.mark.parametrize("dtype", Q8)
def test_quantize_family_matches_litert(rng, dtype):
    info = np.iinfo(dtype)
    for _ in range(20):
        s, zp = float(np.float32(rng.uniform(0.005, 0.3))), int(rng.integers(info.min, info.max))
        f = (rng.standard_normal((3, 50)) * 100 * s).astype(np.float32)
        f[0, :5] = np.array([0.5, 1.5, -0.5, -2.5, 2.5], np.float32) * np.float32(s)
        (expected,) = run_op("QUANTIZE", [T(f.shape, np.float32)], [T(f.shape, dtype, s, zp)], [f])
        assert_same(quantize.quantize(f, out_scale=s, out_zp=zp, out_dtype=dtype), expected)
        x = random_q(rng, dtype, (4, 33))
        (expected,) = run_op("DEQUANTIZE", [T(x.shape, dtype, s, zp)], [T(x.shape, np.float32)], [x])
        assert_same(quantize.dequantize(x, in_scale=s, in_zp=zp), expected, rtol=0, atol=0)
        for out_dtype in Q8:
            oinfo = np.iinfo(out_dtype)
            so, zo = float(np.float32(rng.uniform(0.005, 0.3))), int(rng.integers(oinfo.min, oinfo.max))
            (expected,) = run_op("QUANTIZE", [T(x.shape, dtype, s, zp)], [T(x.shape, out_dtype, so, zo)],
                                 [x])
            assert_same(quantize.requantize(x, in_scale=s, in_zp=zp, out_scale=so, out_zp=zo,
                                            out_dtype=out_dtype), expected)


@requires_litert
def test_concatenation_and_pad_match_litert(rng):
    for _ in range(20):
        h, w, c = (int(v) for v in rng.integers(1, 6, 3))
        x = random_q(rng, np.uint8, (1, h, w, c))
        parts = [x, x[:, :, :1], random_q(rng, np.uint8, (1, h, 2, c))]
        q = [(float(np.float32(rng.uniform(0.005, 0.3))), int(rng.integers(0, 255))) for _ in range(4)]
        ours = reshape.concatenation(parts, 2, in_scales=[p[0] for p in q[:3]],
                                     in_zps=[p[1] for p in q[:3]], out_scale=q[3][0],
                                     out_zp=q[3][1])
        (expected,) = run_op("CONCATENATION", [T(p.shape, np.uint8, *qq) for p, qq in zip(parts, q)],
                             [T(ours.shape, np.uint8, *q[3])], parts, dict(Axis=2))
        assert_same(ours, expected)
        paddings = rng.integers(0, 3, (4, 2)).astype(np.int32)
        ours = pad.pad(x, paddings, pad_value=q[0][1])
        (expected,) = run_op("PAD", [T(x.shape, np.uint8, *q[0]),
                                     T(paddings.shape, np.int32, data=paddings)],
                             [T(ours.shape, np.uint8, *q[0])], [x])
        assert_same(ours, expected)
