"""The "norm" group's CPU builtins against LiteRT's reference kernels (BUILTIN_REF).

LOCAL_RESPONSE_NORMALIZATION (float), grouped CONV_2D (uint8, int8 per-tensor / per-channel,
float32) and the quantized SUM and LOG_SOFTMAX (``nnsim.tflite.builtins.norm``), one-node
models run on nnsim and on LiteRT: integer outputs identical, float32 within 1e-5 relative
(float convolutions: within the rounding error of their sums, see ``_check_float_sums``).

LiteRT's BUILTIN_REF SUM reads int8 and int16 tensors as uint8 (reduce.cc), so those are
checked against independent oracles instead: LiteRT's uint8 result on the same data shifted by
128 (int8: the same arithmetic, exactly), LiteRT's uint8 SUM on int16 data that fits in uint8,
and hand-computed values.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from nnsim.kernels.log_softmax_quant import log_softmax_quantized
from nnsim.kernels.reduce_sum_quant import sum_quantized
from nnsim.kernels.reference import log_softmax_quant as ref_log_softmax
from nnsim.kernels.reference import reduce_sum_quant as ref_sum
from nnsim.tflite import Interpreter
from nnsim.tflite import builtins as tflite_builtins
from nnsim.tflite import options as O
from nnsim.tflite.builtins import Node, norm
from nnsim.tflite.builtins.nnapi_backed import NnapiBacked
from nnsim.tflite.reader import Quantization, read_model
from nnsim.tflite.schema import ActivationFunctionType as Act
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import Padding
from tests.kernels.kernel_testutil import assert_float_sums_close
from tests.tflite.test_builtins import (T, assert_same, build, check, litert, random_value,
                                        run_both)


U8, I8, I16, F32, I32 = np.uint8, np.int8, np.int16, np.float32, np.int32


def _run_ours(blob, feeds):
    ip = Interpreter(model_content=blob)
    ip.allocate_tensors()
    for d, v in zip(ip.get_input_details(), feeds):
        ip.set_tensor(d["index"], v)
    ip.invoke()
    return [ip.get_tensor(d["index"]) for d in ip.get_output_details()], ip


def _run_ref(blob, feeds):
    ip = litert.Interpreter(model_content=blob, num_threads=1,
                            experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    ip.allocate_tensors()
    for d, v in zip(ip.get_input_details(), feeds):
        ip.set_tensor(d["index"], v)
    ip.invoke()
    return [ip.get_tensor(d["index"]) for d in ip.get_output_details()]


# -- LOCAL_RESPONSE_NORMALIZATION ---------------------------------------------------------------
@pytest.mark.parametrize("radius", [0, 1, 2, 5, 20])
@pytest.mark.parametrize("beta", [0.75, 0.5, 1.0])
def test_local_response_norm(request, radius, beta):
    check(request, B.LOCAL_RESPONSE_NORMALIZATION, [T((2, 3, 4, 9), F32)],
          [T((2, 3, 4, 9), F32)],
          O.LocalResponseNormalizationOptions(radius=radius, bias=1.5, alpha=0.3, beta=beta))


def test_local_response_norm_window_is_tflites():
    """TFLite's window is [c - r, c + r): one element shorter than NNAPI's, hand-computed."""
    blob = build(B.LOCAL_RESPONSE_NORMALIZATION, [T((1, 1, 1, 4), F32)], [T((1, 1, 1, 4), F32)],
                 O.LocalResponseNormalizationOptions(radius=1, bias=0.0, alpha=1.0, beta=1.0))
    x = np.array([1, 2, 3, 4], F32).reshape(1, 1, 1, 4)
    want = np.array([1 / 1, 2 / 5, 3 / 13, 4 / 25], F32)   # NNAPI: 1/5, 2/14, 3/29, 4/25
    ours, _ = _run_ours(blob, [x])
    np.testing.assert_allclose(ours[0].ravel(), want, rtol=1e-6)
    np.testing.assert_allclose(_run_ref(blob, [x])[0].ravel(), want, rtol=1e-6)


@pytest.mark.parametrize("radius,beta", [(0, 0.75), (2, 0.5), (3, 1.0), (20, 0.6)])
def test_local_response_norm_nnapi_lowering_equals_litert_default_kernel(radius, beta):
    """LiteRT's default (optimized) kernel sums over [c - r, c + r] like NNAPI: the node's NNAPI
    lowering (what a phone's delegate runs) matches it, not the reference kernel."""
    blob = build(B.LOCAL_RESPONSE_NORMALIZATION, [T((2, 3, 4, 9), F32)], [T((2, 3, 4, 9), F32)],
                 O.LocalResponseNormalizationOptions(radius=radius, bias=1.5, alpha=0.3,
                                                     beta=beta))
    x = np.random.default_rng(radius).standard_normal((2, 3, 4, 9)).astype(F32) * 3
    ours = NnapiBacked(Node(read_model(blob), 0, 0)).eval([x])
    ip = litert.Interpreter(model_content=blob, num_threads=1, experimental_op_resolver_type=(
        litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES))
    ip.allocate_tensors()
    ip.set_tensor(ip.get_input_details()[0]["index"], x)
    ip.invoke()
    assert_same(ours, [ip.get_tensor(ip.get_output_details()[0]["index"])])


def test_local_response_norm_needs_4d_like_litert():
    blob = build(B.LOCAL_RESPONSE_NORMALIZATION, [T((3, 9), F32)], [T((3, 9), F32)],
                 O.LocalResponseNormalizationOptions(radius=1, bias=1.0, alpha=1.0, beta=0.5))
    with pytest.raises(RuntimeError):
        _run_ref(blob, [np.zeros((3, 9), F32)])
    with pytest.raises(RuntimeError, match="4-D"):
        _run_ours(blob, [np.zeros((3, 9), F32)])


# -- grouped CONV_2D ----------------------------------------------------------------------------
def _grouped_case(rng, dtype, per_channel, cout, cg, kh, kw):
    shape = (cout, kh, kw, cg)
    if dtype == F32:
        w = T(shape, F32, None, rng.standard_normal(shape).astype(F32))
        b = T((cout,), F32, None, rng.standard_normal(cout).astype(F32))
        return None, w, b, None
    if dtype == U8:
        w = T(shape, U8, Quantization([0.02], [131]), rng.integers(90, 170, shape).astype(U8))
        bq, in_q, out_q = Quantization([np.float32(0.05) * np.float32(0.02)], [0]), (0.05, 120), \
            (0.3, 110)
    else:
        scales = (0.01 * (1 + 0.07 * np.arange(cout))) if per_channel else np.array([0.013])
        wq = Quantization(scales.astype(F32), np.zeros(scales.size, np.int64), 0)
        w = T(shape, I8, wq, rng.integers(-127, 128, shape).astype(I8))
        bq = Quantization((0.05 * scales).astype(F32), np.zeros(scales.size, np.int64))
        in_q, out_q = (0.05, -3), (0.2, 5)
    b = T((cout,), I32, bq, rng.integers(-3000, 3000, cout).astype(I32))
    return in_q, w, b, out_q


@pytest.mark.parametrize("dtype,per_channel", [(U8, False), (I8, True), (I8, False),
                                               (F32, False)])
@pytest.mark.parametrize("groups", [2, 3])
@pytest.mark.parametrize("padding,stride,dilation", [(Padding.SAME, 1, 1), (Padding.VALID, 2, 1),
                                                     (Padding.SAME, 2, 1), (Padding.SAME, 1, 2)])
def test_grouped_conv_2d(request, dtype, per_channel, groups, padding, stride, dilation):
    rng = np.random.default_rng(17)
    cg, cout = 3, 2 * groups
    in_q, w, b, out_q = _grouped_case(rng, dtype, per_channel, cout, cg, 3, 3)
    out_hw = {(Padding.SAME, 1): 8, (Padding.SAME, 2): 4, (Padding.VALID, 2): 3}[(padding, stride)]
    inputs = [T((2, 8, 8, groups * cg), dtype, in_q), w, b]
    outputs = [T((2, out_hw, out_hw, cout), dtype, out_q)]
    options = O.Conv2DOptions(padding=padding, stride_w=stride, stride_h=stride,
                              dilation_w_factor=dilation, dilation_h_factor=dilation,
                              fused_activation_function=Act.RELU)
    if dtype == F32:
        _check_float_sums(request, inputs, outputs, options, taps=3 * 3 * cg)
    else:
        check(request, B.CONV_2D, inputs, outputs, options)


def _check_float_sums(request, inputs, outputs, options, taps):
    """A float convolution against BUILTIN_REF, within the rounding error of its sums.

    Each result is the exact sum of ``taps`` products and the bias within Higham's bound
    ``(taps + 1) * 2**-24 * M`` (M: the sum of their absolute values, which BUILTIN_REF computes
    on |x|, |w|, |b|). nnsim fuses each multiply-add (``nnsim.kernels._jit.FMA``, as XNNPACK
    does) where the reference rounds each product first, so where a sum cancels the two can
    differ by more than 1e-5 of the result, never by more than twice that bound."""
    rng = np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
    x = random_value(rng, inputs[0])
    ours, ref = run_both(build(B.CONV_2D, inputs, outputs, options), [x])
    absolute = [inputs[0]] + [T(s.shape, s.dtype, s.q, np.abs(s.data)) for s in inputs[1:]]
    mag = _run_ref(build(B.CONV_2D, absolute, outputs, options), [np.abs(x)])[0]
    assert_float_sums_close(ours[0], ref[0], mag, taps + 1)


def test_grouped_conv_2d_depthwise_shaped(request):
    """One input channel per group (a depthwise convolution written as CONV_2D)."""
    rng = np.random.default_rng(18)
    in_q, w, b, out_q = _grouped_case(rng, I8, True, 8, 1, 3, 3)
    check(request, B.CONV_2D, [T((1, 6, 6, 4), I8, in_q), w, b], [T((1, 6, 6, 8), I8, out_q)],
          O.Conv2DOptions(padding=Padding.SAME, stride_w=1, stride_h=1))


def test_grouped_conv_2d_bad_groups_fail_like_litert():
    w = T((5, 1, 1, 2), F32, None, np.ones((5, 1, 1, 2), F32))     # 5 outputs, 2 groups
    b = T((5,), F32, None, np.zeros(5, F32))
    blob = build(B.CONV_2D, [T((1, 3, 3, 4), F32), w, b], [T((1, 3, 3, 5), F32)],
                 O.Conv2DOptions(stride_w=1, stride_h=1))
    ref = litert.Interpreter(model_content=blob,
                             experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    with pytest.raises(RuntimeError):
        ref.allocate_tensors()
    with pytest.raises(RuntimeError, match="multiple"):
        Interpreter(model_content=blob).allocate_tensors()


# -- SUM ----------------------------------------------------------------------------------------
_AXES = [([-1], False, (3, 5)), ([0, 2], True, (1, 5, 1)), ([1, 1, -2], False, (3, 7)),
         ([0, -1, 1], True, (1, 1, 1))]


def _sum_model(dtype, axes, keep, out_shape, qin, qout):
    ax = T((len(axes),), I32, data=np.array(axes, I32))
    return build(B.SUM, [T((3, 5, 7), dtype, qin), ax], [T(out_shape, dtype, qout)],
                 O.ReducerOptions(keep_dims=keep))


@pytest.mark.parametrize("axes,keep,out_shape", _AXES)
@pytest.mark.parametrize("qin,qout", [((0.1, 100), (0.3, 90)), ((0.37, 3), (0.05, 250)),
                                      ((0.5, 128), (2.0, 128))])
def test_sum_uint8(request, axes, keep, out_shape, qin, qout):
    check(request, B.SUM, [T((3, 5, 7), U8, qin), T((len(axes),), I32,
                                                      data=np.array(axes, I32))],
          [T(out_shape, U8, qout)], O.ReducerOptions(keep_dims=keep))


@pytest.mark.parametrize("axes,keep,out_shape", _AXES)
@pytest.mark.parametrize("qin,qout", [((0.1, 100), (0.3, 90)), ((0.37, 3), (0.05, 250)),
                                      ((0.5, 128), (2.0, 128))])
def test_sum_int8_equals_litert_uint8_shifted(axes, keep, out_shape, qin, qout):
    rng = np.random.default_rng(5)
    xu = rng.integers(0, 256, (3, 5, 7)).astype(U8)
    ref = _run_ref(_sum_model(U8, axes, keep, out_shape, qin, qout), [xu])[0]
    xs = (xu.astype(np.int16) - 128).astype(I8)
    ours, _ = _run_ours(_sum_model(I8, axes, keep, out_shape, (qin[0], qin[1] - 128),
                                   (qout[0], qout[1] - 128)), [xs])
    assert_same(ours, [(ref.astype(np.int16) - 128).astype(I8)])


@pytest.mark.parametrize("axes,keep,out_shape", _AXES)
@pytest.mark.parametrize("in_scale,headroom", [(0.1, 1.3), (0.013, 2.7)])
def test_sum_int16_equals_litert_uint8_on_small_values(axes, keep, out_shape, in_scale,
                                                        headroom):
    """int16 and uint8 are one arithmetic with different clamps: on values in [0, 255] whose
    sums stay below 255 the results equal LiteRT's (correct) uint8 kernel's."""
    count = int(np.prod(np.array((3, 5, 7))[sorted({a % 3 for a in axes})]))
    qin, qout = (in_scale, 0), (in_scale * count * headroom, 0)
    x = np.random.default_rng(6).integers(0, 256, (3, 5, 7))
    ref = _run_ref(_sum_model(U8, axes, keep, out_shape, qin, qout), [x.astype(U8)])[0]
    assert ref.max() < 255
    ours, _ = _run_ours(_sum_model(I16, axes, keep, out_shape, qin, qout), [x.astype(I16)])
    assert_same(ours, [ref.astype(I16)])


def test_sum_int16_hand_computed():
    # in 0.5 / out 2.0 -> M = 2**30, S = -1: MBQM rounds twice (1 -> 0.5 -> 1 -> 1)
    blob = build(B.SUM, [T((3, 3), I16, (0.5, 0)), T((1,), I32, data=np.array([1], I32))],
                 [T((3,), I16, (2.0, 0))], O.ReducerOptions())
    ours, _ = _run_ours(blob, [np.array([[1, 0, 0], [5, 0, 0], [30000, 30000, -2]], I16)])
    assert ours[0].tolist() == [1, 2, 15000]      # 0.25, 1.25 and 14999.5, rounded twice
    blob = build(B.SUM, [T((2, 3), I16, (1.0, 0)), T((1,), I32, data=np.array([1], I32))],
                 [T((2,), I16, (1.0, 0))], O.ReducerOptions())
    ours, _ = _run_ours(blob, [np.array([[30000, 30000, 1], [-30000, -30000, 7]], I16)])
    assert ours[0].tolist() == [32767, -32768]     # clamped to int16


def test_sum_int16_needs_zero_points_0():
    blob = build(B.SUM, [T((2, 3), I16, (0.5, 3)), T((1,), I32, data=np.array([1], I32))],
                 [T((2,), I16, (2.0, 0))], O.ReducerOptions())
    with pytest.raises(RuntimeError):
        _run_ref(blob, [np.zeros((2, 3), I16)])
    with pytest.raises(RuntimeError, match="zero points"):
        _run_ours(blob, [np.zeros((2, 3), I16)])


def test_sum_uint8_axes_at_run_time():
    blob = build(B.SUM, [T((4, 6), U8, (0.2, 10)), T((1,), I32)], [T((4,), U8, (0.9, 3))],
                 O.ReducerOptions())
    x = np.random.default_rng(7).integers(0, 256, (4, 6)).astype(U8)
    ours, ref = run_both(blob, [x, np.array([1], I32)])
    assert_same(ours, ref)


def test_sum_float_keeps_the_nnapi_path(request):
    inputs = [T((2, 3, 4), F32), T((2,), I32, data=np.array([0, 2], I32))]
    check(request, B.SUM, inputs, [T((3,), F32)], O.ReducerOptions())
    builtin = _builtin(build(B.SUM, inputs, [T((3,), F32)], O.ReducerOptions()))
    assert isinstance(builtin, norm.Sum) and builtin.nnapi is not None


def _builtin(blob):
    """The CPU builtin of the only node of a one-node model."""
    return tflite_builtins.create_builtin(read_model(blob), 0, 0)


# -- LOG_SOFTMAX ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [U8, I8])
@pytest.mark.parametrize("scale", [0.01, 0.05, 0.3, 2.5])
@pytest.mark.parametrize("depth", [1, 17, 300])
def test_log_softmax_quantized(dtype, scale, depth):
    zp = 255 if dtype == U8 else 127
    blob = build(B.LOG_SOFTMAX, [T((4, depth), dtype, (scale, 3))],
                 [T((4, depth), dtype, (16 / 256, zp))], O.LogSoftmaxOptions())
    info = np.iinfo(dtype)
    x = np.random.default_rng(depth).integers(info.min, info.max + 1, (4, depth)).astype(dtype)
    x[1] = x[1, 0]                                  # a flat row
    x[2, : depth // 2] = info.min                   # half the row far below its maximum
    ours, _ = _run_ours(blob, [x])
    assert_same(ours, _run_ref(blob, [x]))


def test_log_softmax_float_keeps_the_nnapi_path(request):
    check(request, B.LOG_SOFTMAX, [T((3, 17), F32)], [T((3, 17), F32)], O.LogSoftmaxOptions())
    builtin = _builtin(build(B.LOG_SOFTMAX, [T((3, 17), F32)], [T((3, 17), F32)],
                             O.LogSoftmaxOptions()))
    assert isinstance(builtin, norm.LogSoftmax) and builtin.nnapi is not None


def test_log_softmax_quantized_4d(request):
    check(request, B.LOG_SOFTMAX, [T((2, 3, 4, 10), I8, (0.1, -5))],
          [T((2, 3, 4, 10), I8, (16 / 256, 127))], O.LogSoftmaxOptions())


@pytest.mark.parametrize("dtype,zp", [(U8, 254), (I8, 0)])
def test_log_softmax_output_quantization_is_checked_like_litert(dtype, zp):
    blob = build(B.LOG_SOFTMAX, [T((2, 5), dtype, (0.1, 3))], [T((2, 5), dtype, (16 / 256, zp))],
                 O.LogSoftmaxOptions())
    with pytest.raises(RuntimeError):
        _run_ref(blob, [np.zeros((2, 5), dtype)])
    with pytest.raises(RuntimeError, match="zero point"):
        _run_ours(blob, [np.zeros((2, 5), dtype)])


# -- the quantized kernels against their numpy references ---------------------------------------
@pytest.mark.parametrize("dtype", [U8, I8])
@pytest.mark.parametrize("scale", [0.003, 0.02, 0.1, 0.5, 3.0, 40.0])
def test_log_softmax_kernel_equals_reference(dtype, scale):
    info = np.iinfo(dtype)
    x = np.random.default_rng(9).integers(info.min, info.max + 1, (40, 33)).astype(dtype)
    x[3] = x[3, 0]
    got = log_softmax_quantized(x, scale)
    assert np.array_equal(got, ref_log_softmax.log_softmax_quantized(x, scale))
    assert got[3].tolist() == [int(np.clip(round(-np.log(33) * 16) + info.max, info.min,
                                           info.max))] * 33      # a flat row: -log(33)


@pytest.mark.parametrize("dtype", [U8, I8, I16])
@pytest.mark.parametrize("axes,keep", [([1], False), ([0, -1], True), ([], False),
                                       ([0, 1, 2, 1], False)])
def test_sum_kernel_equals_reference(dtype, axes, keep):
    info = np.iinfo(dtype)
    x = np.random.default_rng(10).integers(info.min, info.max + 1, (4, 5, 6)).astype(dtype)
    q = dict(in_scale=0.3, in_zp=3, out_scale=0.7, out_zp=-1 if dtype != U8 else 9)
    got = sum_quantized(x, axes, keep, **q)
    want = ref_sum.sum_quantized(x, axes, keep, **q)
    assert got.shape == want.shape and np.array_equal(got, want)


def test_sum_kernel_zero_sized_input_gives_zeros():
    out = sum_quantized(np.zeros((2, 0, 3), U8), [1], False, in_scale=1.0, in_zp=3,
                        out_scale=1.0, out_zp=7)
    assert out.shape == (2, 3) and not out.any()    # TFLite clears the output, then returns
