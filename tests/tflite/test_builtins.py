"""CPU builtins, one operator at a time, against LiteRT's reference kernels (BUILTIN_REF).

Every case builds a one-node model with ``ModelWriter``, runs it on ``nnsim.tflite.Interpreter``
and on ``ai_edge_litert`` with the reference op resolver, and compares: integer outputs must be
identical, float outputs within 1e-5 relative (1e-6 absolute).
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pytest
from flatbuffers import flexbuffers

from nnsim.tflite import Interpreter
from nnsim.tflite import options as O
from nnsim.tflite.builtins import UnsupportedOperatorError, supported_operators
from nnsim.tflite.reader import Quantization
from nnsim.tflite.schema import ActivationFunctionType as Act
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import Padding, TensorType
from nnsim.tflite.writer import ModelWriter

litert = pytest.importorskip("ai_edge_litert.interpreter")

_TT = {np.dtype(np.float32): TensorType.FLOAT32, np.dtype(np.float16): TensorType.FLOAT16,
       np.dtype(np.int32): TensorType.INT32, np.dtype(np.uint8): TensorType.UINT8,
       np.dtype(np.int64): TensorType.INT64, np.dtype(np.int8): TensorType.INT8,
       np.dtype(np.int16): TensorType.INT16, np.dtype(np.bool_): TensorType.BOOL}


@dataclass
class T:
    """A tensor of a one-op model: constant when ``data`` is given, else a graph input."""
    shape: tuple
    dtype: object = np.float32
    q: object = None          # (scale, zp) or Quantization
    data: object = None


def build(op, inputs, outputs, options=None, custom_code=None, custom_options=None) -> bytes:
    w = ModelWriter()
    ids, graph_inputs = [], []
    for k, spec in enumerate(inputs):
        if spec is None:
            ids.append(-1)
            continue
        q = spec.q if spec.q is None or isinstance(spec.q, Quantization) else tuple(spec.q)
        i = w.add_tensor(f"in{k}", spec.shape, _TT[np.dtype(spec.dtype)], data=spec.data,
                         quantization=q)
        ids.append(i)
        if spec.data is None:
            graph_inputs.append(i)
    outs = []
    for k, spec in enumerate(outputs):
        q = spec.q if spec.q is None or isinstance(spec.q, Quantization) else tuple(spec.q)
        outs.append(w.add_tensor(f"out{k}", spec.shape, _TT[np.dtype(spec.dtype)],
                                 quantization=q))
    w.add_operator(op, ids, outs, options, custom_code=custom_code,
                   custom_options=custom_options)
    w.set_inputs(graph_inputs)
    w.set_outputs(outs)
    return w.finish()


def random_value(rng, spec):
    dt = np.dtype(spec.dtype)
    if dt.kind == "f":
        return rng.standard_normal(spec.shape).astype(dt) * 3
    if dt == np.bool_:
        return rng.integers(0, 2, spec.shape).astype(bool)
    info = np.iinfo(dt)
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    return rng.integers(lo, hi + 1, spec.shape).astype(dt)


def run_both(blob, feeds):
    ours = Interpreter(model_content=blob)
    ref = litert.Interpreter(model_content=blob, num_threads=1,
                             experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    results = []
    for ip in (ours, ref):
        ip.allocate_tensors()
        for d, v in zip(ip.get_input_details(), feeds):
            ip.set_tensor(d["index"], v)
        ip.invoke()
        results.append([ip.get_tensor(d["index"]) for d in ip.get_output_details()])
    return results


def assert_same(ours, ref, rtol=1e-5):
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref):
        assert a.shape == b.shape, (a.shape, b.shape)
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-6)
        else:
            diff = int(np.count_nonzero(a != b))
            assert diff == 0, \
                f"{diff} of {a.size} values differ:\n{a.ravel()[:24]}\n{b.ravel()[:24]}"


def check(request, op, inputs, outputs, options=None, feeds=None, **kw):
    rng = np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
    blob = build(op, inputs, outputs, options, **kw)
    if feeds is None:
        feeds = [random_value(rng, s) for s in inputs if s is not None and s.data is None]
    ours, ref = run_both(blob, feeds)
    assert_same(ours, ref)
    return ours


U8, I8, F32 = np.uint8, np.int8, np.float32


# -- elementwise ------------------------------------------------------------------------------
@pytest.mark.parametrize("op,opts", [(B.ADD, O.AddOptions), (B.SUB, O.SubOptions),
                                     (B.MUL, O.MulOptions)])
@pytest.mark.parametrize("dtype", [U8, I8, F32, np.int32])
@pytest.mark.parametrize("act", [Act.NONE, Act.RELU6])
def test_add_sub_mul(request, op, opts, dtype, act):
    q = (lambda s, z: (s, z)) if dtype in (U8, I8) else (lambda s, z: None)
    z = 3 if dtype == I8 else 130
    check(request, op, [T((1, 4, 5, 3), dtype, q(0.05, z)), T((1, 1, 5, 3), dtype, q(0.11, z - 7))],
          [T((1, 4, 5, 3), dtype, q(0.07, z + 2))], opts(fused_activation_function=act))


@pytest.mark.parametrize("dtype", [np.int32, F32])
def test_floor_div(request, dtype):
    rng = np.random.default_rng(1)
    b = rng.integers(1, 7, (1, 3)).astype(dtype) * np.where(rng.random((1, 3)) < .5, -1, 1)
    check(request, B.FLOOR_DIV, [T((2, 3), dtype), T((1, 3), dtype, data=b.astype(dtype))],
          [T((2, 3), dtype)], O.FloorDivOptions())


# -- activations ------------------------------------------------------------------------------
@pytest.mark.parametrize("op", [B.RELU, B.RELU6, B.RELU_N1_TO_1])
@pytest.mark.parametrize("dtype", [U8, I8, F32])
def test_relu_family(request, op, dtype):
    quant = dtype != F32
    check(request, op, [T((2, 7, 5), dtype, (0.03, 120 if dtype == U8 else -5) if quant else None)],
          [T((2, 7, 5), dtype, (0.025, 10 if dtype == U8 else -100) if quant else None)])


@pytest.mark.parametrize("op", [B.LOGISTIC, B.TANH])
@pytest.mark.parametrize("dtype", [U8, I8, F32])
def test_logistic_tanh(request, op, dtype):
    if dtype == F32:
        qin = qout = None
    else:
        zp = 128 if dtype == U8 else 0
        qin = (0.07, zp - 20)
        if op == B.LOGISTIC:
            qout = (1 / 256, 0 if dtype == U8 else -128)
        else:
            qout = (1 / 128, zp)
    check(request, op, [T((3, 50), dtype, qin)], [T((3, 50), dtype, qout)])


@pytest.mark.parametrize("dtype", [U8, I8, F32])
def test_hard_swish(request, dtype):
    quant = dtype != F32
    check(request, B.HARD_SWISH,
          [T((4, 64), dtype, (0.05, 100 if dtype == U8 else -10) if quant else None)],
          [T((4, 64), dtype, (0.03, 20 if dtype == U8 else -100) if quant else None)],
          O.HardSwishOptions())


@pytest.mark.parametrize("dtype", [U8, I8, F32])
@pytest.mark.parametrize("beta", [1.0, 0.5])
def test_softmax(request, dtype, beta):
    qin = {U8: (0.1, 120), I8: (0.1, -3), F32: None}[dtype]
    qout = {U8: (1 / 256, 0), I8: (1 / 256, -128), F32: None}[dtype]
    check(request, B.SOFTMAX, [T((2, 3, 17), dtype, qin)], [T((2, 3, 17), dtype, qout)],
          O.SoftmaxOptions(beta=beta))


# -- convolutions -----------------------------------------------------------------------------
def _conv_case(rng, dtype, cout, cin, kh, kw, per_channel, depthwise=False):
    shape = (1, kh, kw, cout) if depthwise else (cout, kh, kw, cin)
    if dtype == F32:
        w = T(shape, F32, None, rng.standard_normal(shape).astype(F32))
        b = T((cout,), F32, None, rng.standard_normal(cout).astype(F32))
        return (None, w, b, None)
    if dtype == U8:
        wq = Quantization([0.02], [128], 0)
        w = T(shape, U8, wq, rng.integers(100, 157, shape).astype(U8))
        bq, in_q, out_q = Quantization([0.05 * 0.02], [0]), (0.05, 120), (0.3, 110)
    else:
        scales = (0.01 * (1 + 0.05 * np.arange(cout))) if per_channel else np.array([0.01])
        dim = 3 if depthwise else 0
        wq = Quantization(scales.astype(np.float32), np.zeros(scales.size, np.int64), dim)
        w = T(shape, I8, wq, rng.integers(-127, 128, shape).astype(I8))
        bq = Quantization((0.05 * scales).astype(np.float32), np.zeros(scales.size, np.int64))
        in_q, out_q = (0.05, -3), (0.4, 5)
    b = T((cout,), np.int32, bq, rng.integers(-3000, 3000, cout).astype(np.int32))
    return in_q, w, b, out_q


@pytest.mark.parametrize("dtype,per_channel", [(U8, False), (I8, True), (I8, False), (F32, False)])
@pytest.mark.parametrize("padding,stride,dilation", [(Padding.SAME, 1, 1), (Padding.SAME, 2, 1),
                                                     (Padding.VALID, 2, 1), (Padding.SAME, 1, 2)])
def test_conv_2d(request, dtype, per_channel, padding, stride, dilation):
    rng = np.random.default_rng(7)
    in_q, w, b, out_q = _conv_case(rng, dtype, 6, 4, 3, 3, per_channel)
    out_hw = {(Padding.SAME, 1): 9, (Padding.SAME, 2): 5, (Padding.VALID, 2): 4}[(padding, stride)]
    check(request, B.CONV_2D, [T((1, 9, 9, 4), dtype, in_q), w, b],
          [T((1, out_hw, out_hw, 6), dtype, out_q)],
          O.Conv2DOptions(padding=padding, stride_w=stride, stride_h=stride,
                          dilation_w_factor=dilation, dilation_h_factor=dilation,
                          fused_activation_function=Act.RELU6))


def test_conv_2d_without_bias_fails_to_prepare_like_litert():
    w = T((5, 2, 2, 3), F32, None, np.ones((5, 2, 2, 3), F32))
    blob = build(B.CONV_2D, [T((1, 6, 7, 3)), w], [T((1, 6, 7, 5))],
                 O.Conv2DOptions(stride_w=1, stride_h=1))
    ref = litert.Interpreter(model_content=blob,
                             experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    with pytest.raises(RuntimeError, match="has_bias"):
        ref.allocate_tensors()
    with pytest.raises(RuntimeError, match=r"node 0 \(CONV_2D v1\).*has_bias"):
        Interpreter(model_content=blob).allocate_tensors()


@pytest.mark.parametrize("dtype", [I8, F32])
def test_depthwise_conv_2d_without_bias(request, dtype):
    rng = np.random.default_rng(8)
    in_q, w, _, out_q = _conv_case(rng, dtype, 3, 3, 2, 2, True, depthwise=True)
    check(request, B.DEPTHWISE_CONV_2D, [T((2, 6, 7, 3), dtype, in_q), w],
          [T((2, 6, 7, 3), dtype, out_q)],
          O.DepthwiseConv2DOptions(stride_w=1, stride_h=1, depth_multiplier=1))


def test_conv_2d_hybrid(request):
    rng = np.random.default_rng(9)
    w = T((8, 3, 3, 2), I8, Quantization([0.02], [0]),
          rng.integers(-127, 128, (8, 3, 3, 2)).astype(I8))
    b = T((8,), F32, None, rng.standard_normal(8).astype(F32))
    check(request, B.CONV_2D, [T((2, 7, 7, 2), F32), w, b], [T((2, 4, 4, 8), F32)],
          O.Conv2DOptions(stride_w=2, stride_h=2, fused_activation_function=Act.RELU))


@pytest.mark.parametrize("dtype,per_channel", [(U8, False), (I8, True), (F32, False)])
@pytest.mark.parametrize("multiplier", [1, 2])
def test_depthwise_conv_2d(request, dtype, per_channel, multiplier):
    rng = np.random.default_rng(10)
    cin, cout = 4, 4 * multiplier
    in_q, w, b, out_q = _conv_case(rng, dtype, cout, cin, 3, 3, per_channel, depthwise=True)
    check(request, B.DEPTHWISE_CONV_2D, [T((1, 8, 8, cin), dtype, in_q), w, b],
          [T((1, 4, 4, cout), dtype, out_q)],
          O.DepthwiseConv2DOptions(padding=Padding.SAME, stride_w=2, stride_h=2,
                                   depth_multiplier=multiplier,
                                   fused_activation_function=Act.RELU))


@pytest.mark.parametrize("dtype,per_channel", [(U8, False), (I8, False), (I8, True), (F32, False)])
@pytest.mark.parametrize("keep_num_dims,with_bias", [(False, True), (True, True), (False, False)])
def test_fully_connected(request, dtype, per_channel, keep_num_dims, with_bias):
    rng = np.random.default_rng(11)
    in_q, w, b, out_q = _conv_case(rng, dtype, 7, 12, 1, 1, per_channel)
    w = T((7, 12), w.dtype, w.q, w.data.reshape(7, 12))
    out_shape = (2, 3, 7) if keep_num_dims else (6, 7)
    check(request, B.FULLY_CONNECTED, [T((2, 3, 12), dtype, in_q), w, b if with_bias else None],
          [T(out_shape, dtype, out_q)],
          O.FullyConnectedOptions(keep_num_dims=keep_num_dims,
                                  fused_activation_function=Act.RELU))


# -- pooling, reductions ----------------------------------------------------------------------
@pytest.mark.parametrize("op", [B.AVERAGE_POOL_2D, B.MAX_POOL_2D])
@pytest.mark.parametrize("dtype", [U8, I8, F32])
@pytest.mark.parametrize("padding", [Padding.SAME, Padding.VALID])
def test_pooling(request, op, dtype, padding):
    q = {U8: (0.1, 128), I8: (0.1, -2), F32: None}[dtype]
    out = 4 if padding == Padding.SAME else 3
    check(request, op, [T((2, 7, 7, 3), dtype, q)], [T((2, out, out, 3), dtype, q)],
          O.Pool2DOptions(padding=padding, stride_w=2, stride_h=2, filter_width=3,
                          filter_height=3, fused_activation_function=Act.RELU))


@pytest.mark.parametrize("dtype", [U8, I8, F32])
@pytest.mark.parametrize("axes,keep", [((1, 2), True), ((1,), False), ((-1, 0), False)])
def test_mean(request, dtype, axes, keep):
    q_in = {U8: (0.1, 128), I8: (0.1, -2), F32: None}[dtype]
    q_out = {U8: (0.07, 120), I8: (0.05, 3), F32: None}[dtype]
    shape = (2, 5, 6, 3)
    red = {a % 4 for a in axes}
    out = tuple(1 if d in red else s for d, s in enumerate(shape)) if keep else \
        tuple(s for d, s in enumerate(shape) if d not in red)
    check(request, B.MEAN, [T(shape, dtype, q_in), T((len(axes),), np.int32, None,
                                                      np.array(axes, np.int32))],
          [T(out, dtype, q_out)], O.ReducerOptions(keep_dims=keep))


@pytest.mark.parametrize("dtype", [U8, F32, np.int32])
@pytest.mark.parametrize("out_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("axis", [1, -1])
def test_arg_max(request, dtype, out_dtype, axis):
    shape = (2, 5, 4)
    out = tuple(s for d, s in enumerate(shape) if d != axis % 3)
    q = (0.1, 0) if dtype == U8 else None
    check(request, B.ARG_MAX, [T(shape, dtype, q), T((1,), np.int32, None,
                                                    np.array([axis], np.int32))],
          [T(out, out_dtype)], O.ArgMaxOptions(output_type=_TT[np.dtype(out_dtype)]))


# -- resize -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [U8, I8, F32])
@pytest.mark.parametrize("align,half", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("size", [(13, 17), (3, 2)])
def test_resize_bilinear(request, dtype, align, half, size):
    q = {U8: (0.1, 128), I8: (0.1, 0), F32: None}[dtype]
    check(request, B.RESIZE_BILINEAR,
          [T((2, 5, 7, 3), dtype, q), T((2,), np.int32, None, np.array(size, np.int32))],
          [T((2, *size, 3), dtype, q)],
          O.ResizeBilinearOptions(align_corners=align, half_pixel_centers=half))


# -- shape and data movement ------------------------------------------------------------------
def test_reshape_from_tensor_and_option(request):
    check(request, B.RESHAPE, [T((2, 3, 4)), T((2,), np.int32, None, np.array([-1, 4], np.int32))],
          [T((6, 4))])
    check(request, B.RESHAPE, [T((2, 3, 4), U8, (0.1, 3))], [T((4, 6), U8, (0.1, 3))],
          O.ReshapeOptions(new_shape=(4, -1)))


@pytest.mark.parametrize("dims,out", [((), (3, 4)), ((0, 3), (3, 4)), ((-1,), (1, 3, 4))])
def test_squeeze(request, dims, out):
    check(request, B.SQUEEZE, [T((1, 3, 4, 1))], [T(out)], O.SqueezeOptions(squeeze_dims=dims))


@pytest.mark.parametrize("dtype", [U8, F32])
def test_concatenation_requantizes_uint8(request, dtype):
    q = (lambda s, z: (s, z)) if dtype == U8 else (lambda s, z: None)
    check(request, B.CONCATENATION,
          [T((1, 4, 4, 3), dtype, q(0.1, 128)), T((1, 4, 4, 5), dtype, q(0.2, 100))],
          [T((1, 4, 4, 8), dtype, q(0.15, 120))], O.ConcatenationOptions(axis=-1))


@pytest.mark.parametrize("dtype", [I8, F32])
def test_pad(request, dtype):
    q = (0.1, -7) if dtype == I8 else None
    check(request, B.PAD, [T((1, 3, 4, 2), dtype, q),
                           T((4, 2), np.int32, None, np.array([[0, 0], [1, 2], [2, 0], [0, 1]],
                                                              np.int32))],
          [T((1, 6, 6, 3), dtype, q)], O.PadOptions())


@pytest.mark.parametrize("perm", [(0, 2, 3, 1), (3, 1, 0, 2)])
def test_transpose(request, perm):
    shape = (2, 3, 4, 5)
    check(request, B.TRANSPOSE, [T(shape, I8, (0.1, 0)), T((4,), np.int32, None,
                                                           np.array(perm, np.int32))],
          [T(tuple(shape[p] for p in perm), I8, (0.1, 0))], O.TransposeOptions())


def test_slice(request):
    check(request, B.SLICE, [T((4, 5, 6)), T((3,), np.int32, None, np.array([1, 0, 2], np.int32)),
                             T((3,), np.int32, None, np.array([2, -1, 3], np.int32))],
          [T((2, 5, 3))], O.SliceOptions())


@pytest.mark.parametrize("begin,end,strides,masks,out", [
    ((1, 0, 0), (3, 5, 6), (1, 2, 3), {}, (2, 3, 2)),
    ((0, -1, 0), (0, 0, 0), (1, -1, 1), dict(begin_mask=1, end_mask=7), (4, 5, 6)),
    ((2, 1, 0), (3, 4, 6), (1, 1, 2), dict(shrink_axis_mask=1), (3, 3)),
    ((-3, 0, 1), (-1, 5, 5), (1, 1, 1), dict(end_mask=2), (2, 5, 4)),
])
def test_strided_slice(request, begin, end, strides, masks, out):
    vec = lambda v: T((3,), np.int32, None, np.array(v, np.int32))  # noqa: E731
    check(request, B.STRIDED_SLICE, [T((4, 5, 6)), vec(begin), vec(end), vec(strides)],
          [T(out)], O.StridedSliceOptions(**masks))


def test_strided_slice_offset():
    """``offset``: the end is relative to the begin (LiteRT 2.3 crashes on it; numpy oracle)."""
    from nnsim.kernels.transform import strided_slice
    x = np.arange(120).reshape(4, 5, 6)
    out = strided_slice(x, (1, 2, 0), (2, 3, 0), (1, 1, 1), end_mask=4, offset=True)
    np.testing.assert_array_equal(out, x[1:3, 2:5, :])


def test_strided_slice_ellipsis_and_new_axis(request):
    vec = lambda v: T((2,), np.int32, None, np.array(v, np.int32))  # noqa: E731
    check(request, B.STRIDED_SLICE, [T((4, 5, 6)), vec((0, 1)), vec((0, 4)), vec((1, 2))],
          [T((4, 5, 2))], O.StridedSliceOptions(ellipsis_mask=1))
    check(request, B.STRIDED_SLICE, [T((4, 5, 6)), vec((0, 1)), vec((0, 3)), vec((1, 1))],
          [T((1, 2, 5, 6))], O.StridedSliceOptions(new_axis_mask=1))


@pytest.mark.parametrize("axis,batch_dims,idx_dtype", [(0, 0, np.int32), (1, 0, np.int64),
                                                        (1, 1, np.int32)])
def test_gather(request, axis, batch_dims, idx_dtype):
    params = T((3, 4, 5), I8, (0.1, 2))
    if batch_dims:
        idx = np.array([[0, 3], [1, 1], [2, 0]], idx_dtype)
        out = (3, 2, 5)
    else:
        idx = np.array([[0, 2], [1, 0]], idx_dtype) if axis == 0 else np.array([3, 0, 1], idx_dtype)
        out = (2, 2, 4, 5) if axis == 0 else (3, 3, 5)
    check(request, B.GATHER, [params, T(idx.shape, idx_dtype, None, idx)],
          [T(out, I8, (0.1, 2))], O.GatherOptions(axis=axis, batch_dims=batch_dims))


def test_gather_nd(request):
    idx = np.array([[[0, 1], [2, 3]], [[1, 0], [0, 0]]], np.int32)
    check(request, B.GATHER_ND, [T((3, 4, 5)), T(idx.shape, np.int32, None, idx)],
          [T((2, 2, 5))], O.GatherNdOptions())


@pytest.mark.parametrize("src,dst", [(F32, np.int32), (np.int32, F32), (U8, F32), (F32, U8),
                                     (np.int32, np.int64), (F32, np.bool_), (np.bool_, F32)])
def test_cast(request, src, dst):
    rng = np.random.default_rng(3)
    value = random_value(rng, T((3, 7), src))
    if src == F32 and dst == U8:
        value = np.abs(value) * 20
    check(request, B.CAST, [T((3, 7), src)], [T((3, 7), dst)],
          O.CastOptions(in_data_type=_TT[np.dtype(src)], out_data_type=_TT[np.dtype(dst)]),
          feeds=[value])


# -- (de)quantize -----------------------------------------------------------------------------
@pytest.mark.parametrize("src,dst", [((F32, None), (U8, (0.05, 128))),
                                     ((F32, None), (I8, (0.03, -4))),
                                     ((U8, (0.05, 128)), (I8, (0.05, 0))),
                                     ((I8, (0.05, 3)), (I8, (0.11, -9))),
                                     ((U8, (0.02, 100)), (U8, (0.07, 120)))])
def test_quantize(request, src, dst):
    check(request, B.QUANTIZE, [T((4, 33), *src)], [T((4, 33), *dst)], O.QuantizeOptions())


@pytest.mark.parametrize("src", [(U8, (0.05, 128)), (I8, (0.03, -4)), (np.int16, (0.001, 0))])
def test_dequantize(request, src):
    check(request, B.DEQUANTIZE, [T((4, 33), *src)], [T((4, 33), F32)], O.DequantizeOptions())


def test_dequantize_float16_constant(request):
    data = np.linspace(-3, 3, 12).astype(np.float16).reshape(3, 4)
    out = check(request, B.DEQUANTIZE, [T((3, 4), np.float16, None, data)], [T((3, 4), F32)],
                O.DequantizeOptions(), feeds=[])
    np.testing.assert_array_equal(out[0], data.astype(F32))


# -- TFLite_Detection_PostProcess --------------------------------------------------------------
def _detection_options(regular, max_classes=1):
    return flexbuffers.Dumps({
        "max_detections": 6, "max_classes_per_detection": max_classes,
        "detections_per_class": 4, "use_regular_nms": regular, "nms_score_threshold": 0.3,
        "nms_iou_threshold": 0.45, "num_classes": 3, "y_scale": 10.0, "x_scale": 10.0,
        "h_scale": 5.0, "w_scale": 5.0})


def _anchors(rng, n):
    centers = rng.uniform(0.2, 0.8, (n, 2))
    sizes = rng.uniform(0.1, 0.4, (n, 2))
    return np.concatenate([centers, sizes], axis=1).astype(F32)


@pytest.mark.parametrize("regular", [False, True])
def test_detection_postprocess_float(request, regular):
    rng = np.random.default_rng(4)
    n = 40
    anchors = T((n, 4), F32, None, _anchors(rng, n))
    boxes = rng.standard_normal((1, n, 4)).astype(F32)
    scores = rng.uniform(0, 1, (1, n, 4)).astype(F32)
    outs = [T((1, 6, 4)), T((1, 6)), T((1, 6)), T((1,))]
    ours = check(request, B.CUSTOM, [T((1, n, 4)), T((1, n, 4)), anchors], outs,
                 custom_code="TFLite_Detection_PostProcess",
                 custom_options=_detection_options(regular), feeds=[boxes, scores])
    assert 0 < ours[3][0] <= 6


def test_detection_postprocess_uint8(request):
    rng = np.random.default_rng(5)
    n = 60
    anchors = T((n, 4), U8, (0.005, 0), np.clip(_anchors(rng, n) / 0.005, 0, 255).astype(U8))
    outs = [T((1, 6, 4)), T((1, 6)), T((1, 6)), T((1,))]
    feeds = [rng.integers(0, 256, (1, n, 4)).astype(U8), rng.integers(0, 256, (1, n, 4)).astype(U8)]
    check(request, B.CUSTOM, [T((1, n, 4), U8, (0.08, 128)), T((1, n, 4), U8, (1 / 256, 0)),
                              anchors], outs,
          custom_code="TFLite_Detection_PostProcess", custom_options=_detection_options(False),
          feeds=feeds)


# -- errors -----------------------------------------------------------------------------------
def test_missing_operator_names_op_and_node():
    blob = build(B.ATAN2, [T((2, 3)), T((2, 3))], [T((2, 3))])   # no nnsim kernel
    ip = Interpreter(model_content=blob)
    with pytest.raises(UnsupportedOperatorError, match=r"node 0 \(ATAN2 v1\).*ATAN2"):
        ip.allocate_tensors()


def test_missing_custom_operator():
    blob = build(B.CUSTOM, [T((2, 3))], [T((2, 3))], custom_code="MyCustomOp")
    with pytest.raises(UnsupportedOperatorError, match=r"node 0 \(MyCustomOp v1\).*custom"):
        Interpreter(model_content=blob).allocate_tensors()


def test_supported_operators_cover_the_brief():
    names = set(supported_operators())
    for op in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D",
               "MAX_POOL_2D", "ADD", "SUB", "MUL", "RESHAPE", "SQUEEZE", "SOFTMAX",
               "CONCATENATION", "QUANTIZE", "DEQUANTIZE", "LOGISTIC", "RELU", "RELU6", "PAD",
               "MEAN", "TRANSPOSE", "RESIZE_BILINEAR", "ARG_MAX", "CAST", "GATHER", "GATHER_ND",
               "FLOOR_DIV", "STRIDED_SLICE", "SLICE", "HARD_SWISH", "TANH",
               "TFLite_Detection_PostProcess"):
        assert op in names


def test_cos(request):
    """COS on the CPU path is LiteRT's ``std::cos``, not the delegate's SIN(pi/2 - x)."""
    x = np.linspace(-20, 20, 3 * 41, dtype=np.float32).reshape(3, 41)
    check(request, B.COS, [T((3, 41))], [T((3, 41))], O.CosOptions(), feeds=[x])
