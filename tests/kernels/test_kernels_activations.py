"""RELU / RELU1 / RELU6 / LOGISTIC / SOFTMAX: hand cases, numba == reference, LiteRT."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .kernel_litert import T, run_op
from .kernel_testutil import assert_same, random_q, requires_litert
from nnsim.kernels import activations, softmax
from nnsim.kernels.reference import activations as ref_activations
from nnsim.kernels.reference import softmax as ref_softmax

RELUS = [(activations.relu, ref_activations.relu, "RELU"),
         (activations.relu1, ref_activations.relu1, "RELU_N1_TO_1"),
         (activations.relu6, ref_activations.relu6, "RELU6")]


def test_relu_family_float():
    x = np.array([-7.0, -1.5, -0.5, 0.0, 0.5, 1.5, 7.0], np.float32)
    assert activations.relu(x).tolist() == [0, 0, 0, 0, 0.5, 1.5, 7.0]
    assert activations.relu1(x).tolist() == [-1, -1, -0.5, 0, 0.5, 1, 1]
    assert activations.relu6(x).tolist() == [0, 0, 0, 0, 0.5, 1.5, 6.0]


def test_relu_family_quantized_same_params_is_a_clamp():
    x = np.arange(256, dtype=np.uint8)
    q = dict(in_scale=0.1, in_zp=100)
    assert activations.relu(x, **q).tolist() == np.maximum(x, 100).tolist()
    assert activations.relu6(x, **q).tolist() == np.clip(x, 100, 160).tolist()
    assert activations.relu1(x, **q).tolist() == np.clip(x, 90, 110).tolist()


def test_relu_requantizes_when_output_params_differ():
    x = np.array([0, 10, 20, 30], np.uint8)  # scale 0.5 zp 10 -> -5, 0, 5, 10
    out = activations.relu(x, in_scale=0.5, in_zp=10, out_scale=0.25, out_zp=0)
    assert out.tolist() == [0, 0, 20, 40]


def test_logistic_quantized_defaults_to_nnapi_output_params():
    x = np.array([128, 0, 255], np.uint8)  # scale 0.1 zp 128: 0, -12.8, 12.7
    # 0.5 * 256 = 128; sigmoid(-12.8) * 256 = 0.0007 -> 0; sigmoid(12.7) * 256 = 255.9992 -> 256
    assert activations.logistic(x, in_scale=0.1, in_zp=128).tolist() == [128, 0, 255]
    xs = np.array([0, -128, 127], np.int8)  # zp 0: 0, -12.8, 12.7; output zp -128
    assert activations.logistic(xs, in_scale=0.1, in_zp=0).tolist() == [0, -128, 127]


def test_logistic_float():
    x = np.array([-20.0, -1.0, 0.0, 2.0, 20.0], np.float32)
    expected = 1.0 / (1.0 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(activations.logistic(x), expected, rtol=1e-6)


def test_softmax_float_rows_sum_to_one():
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], np.float32)
    out = softmax.softmax(x, 1.0)
    np.testing.assert_allclose(out.sum(axis=-1), [1.0, 1.0], rtol=1e-6)
    np.testing.assert_allclose(out[1], [1 / 3] * 3, rtol=1e-6)


def test_softmax_quantized_uniform_row():
    x = np.full((1, 4), 77, np.uint8)
    assert softmax.softmax(x, 1.0, in_scale=0.1, in_zp=0).tolist() == [[64, 64, 64, 64]]
    xs = np.full((1, 4), 5, np.int8)
    assert softmax.softmax(xs, 1.0, in_scale=0.1, in_zp=0).tolist() == [[-64, -64, -64, -64]]


def test_softmax_quantized_tiny_entries_flush_to_type_min():
    # diff of -255 * 1.0: far below diff_min, the output is exactly the type minimum
    x = np.array([[255, 0]], np.uint8)
    assert softmax.softmax(x, 1.0, in_scale=1.0, in_zp=0).tolist() == [[255, 0]]


def test_softmax_rejects_wrong_output_scale():
    with pytest.raises(ValueError):
        softmax.softmax(np.zeros((1, 2), np.uint8), 1.0, in_scale=0.1, out_scale=0.1, out_zp=0)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([np.uint8, np.int8, np.float32]), st.integers(1, 3),
       st.lists(st.integers(1, 6), min_size=1, max_size=4), st.floats(0.001, 1.0),
       st.integers(0, 2**32 - 1))
def test_activations_numba_match_reference(dtype, rank, dims, scale, seed):
    rng = np.random.default_rng(seed)
    shape = tuple(dims[:rank])
    if dtype == np.float32:
        x = (rng.standard_normal(shape) * 8).astype(dtype)
        cases = [{}]
    else:
        x = random_q(rng, dtype, shape)
        info = np.iinfo(dtype)
        zp = int(rng.integers(info.min, info.max + 1))
        cases = [dict(in_scale=scale, in_zp=zp),
                 dict(in_scale=scale, in_zp=zp, out_scale=float(rng.uniform(0.001, 1)),
                      out_zp=int(rng.integers(info.min, info.max + 1)))]
    for q in cases:
        for fast, ref, _ in RELUS:
            assert_same(fast(x, **q), ref(x, **q))
    q = cases[0]
    assert_same(activations.logistic(x, **q), ref_activations.logistic(x, **q))
    beta = float(rng.uniform(0.1, 3.0))
    axis = int(rng.integers(-x.ndim, x.ndim))
    assert_same(softmax.softmax(x, beta, axis=axis, **q),
                ref_softmax.softmax(x, beta, axis=axis, **q))


@requires_litert
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.float32])
def test_relu_family_and_logistic_match_litert(rng, dtype):
    for _ in range(10):
        if dtype == np.float32:
            x = (rng.standard_normal((3, 40)) * 8).astype(dtype)
            params = [((None, 0), (None, 0))]
        else:
            info = np.iinfo(dtype)
            x = np.arange(info.min, info.max + 1, dtype=dtype).reshape(2, 128)
            qin = (float(np.float32(rng.uniform(0.005, 0.3))), int(rng.integers(info.min, info.max)))
            qout = (float(np.float32(rng.uniform(0.005, 0.3))), int(rng.integers(info.min, info.max)))
            params = [(qin, qin), (qin, qout)]
        for qin, qout in params:
            for fast, _, op in RELUS:
                ours = fast(x, in_scale=qin[0], in_zp=qin[1], out_scale=qout[0], out_zp=qout[1])
                (expected,) = run_op(op, [T(x.shape, dtype, *qin)], [T(x.shape, dtype, *qout)], [x])
                assert_same(ours, expected, rtol=0, atol=0)
        qin = params[0][0]
        qout = (None, 0) if dtype == np.float32 else (1 / 256, int(np.iinfo(dtype).min))
        ours = activations.logistic(x, in_scale=qin[0], in_zp=qin[1])
        (expected,) = run_op("LOGISTIC", [T(x.shape, dtype, *qin)], [T(x.shape, dtype, *qout)], [x])
        assert_same(ours, expected, rtol=1e-6, atol=0)


@requires_litert
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.float32])
def test_softmax_matches_litert(rng, dtype):
    for _ in range(25):
        depth = int(rng.integers(1, 40))
        beta = float(np.float32(rng.choice([1.0, 0.5, 2.0, rng.uniform(0.05, 4.0)])))
        if dtype == np.float32:
            x = (rng.standard_normal((3, depth)) * 4).astype(dtype)
            qin, qout = (None, 0), (None, 0)
        else:
            info = np.iinfo(dtype)
            x = random_q(rng, dtype, (3, depth))
            qin = (float(np.float32(rng.uniform(0.001, 0.5))), int(rng.integers(info.min, info.max)))
            qout = (1 / 256, int(info.min))
        ours = softmax.softmax(x, beta, in_scale=qin[0], in_zp=qin[1])
        (expected,) = run_op("SOFTMAX", [T(x.shape, dtype, *qin)], [T(x.shape, dtype, *qout)], [x],
                             dict(Beta=beta))
        assert_same(ours, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("depth, expected", [(300, 1), (600, 0), (2000, 0)])
def test_softmax_long_flat_rows(depth, expected):
    # 600 and 2000 equal logits sum past 512, where TFLite's reference kernel aborts
    x = np.full((1, depth), 7, np.uint8)
    out = softmax.softmax(x, 1.0, in_scale=0.1, in_zp=0)
    assert_same(out, ref_softmax.softmax(x, 1.0, in_scale=0.1, in_zp=0))
    assert set(out.ravel().tolist()) == {expected}


def test_softmax_rejects_too_small_beta_times_scale():
    with pytest.raises(ValueError):
        softmax.softmax(np.zeros((1, 3), np.uint8), 1e-9, in_scale=0.01)
