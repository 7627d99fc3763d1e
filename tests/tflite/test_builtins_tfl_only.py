"""TFLite-only CPU builtins (``nnsim.tflite.builtins.tfl_only``) against LiteRT's reference
kernels (BUILTIN_REF): integer outputs identical, float32 within 1e-5 relative (1e-6 absolute).

Each case is a one-node model (``build`` / ``check`` from ``test_builtins``); parameter inputs
are constants unless the test says they are fed at run time (LiteRT's dynamic outputs).
"""
from __future__ import annotations

import dataclasses
import zlib

import flatbuffers
import numpy as np
import pytest
import tflite as fb

from nnsim.tflite import Interpreter
from nnsim.tflite import options as O
from nnsim.tflite.builtins import BuiltinError
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.reader import read_model
from nnsim.tflite.schema import TensorType
from nnsim.tflite.writer import write_model
from nnsim.kernels.densify import DENSE, SPARSE_CSR, densify
from nnsim.kernels.densify import DimensionMetadata as M
from tests.tflite.test_builtins import T, assert_same, build, litert, random_value, run_both


U8, I8, I16, I32, I64, F32, BOOL = (np.uint8, np.int8, np.int16, np.int32, np.int64,
                                    np.float32, np.bool_)
_QUANT = {U8: (0.05, 130), I8: (0.04, -3), I16: (0.001, 0)}


def versioned(blob, version):
    """The one-op model with its operator at ``version`` (LiteRT registers BROADCAST_TO from
    version 2 only)."""
    model = read_model(blob)
    codes = tuple(dataclasses.replace(c, version=version) for c in model.operator_codes)
    sg = model.subgraphs[0]
    ops = tuple(dataclasses.replace(o, version=version) for o in sg.operators)
    sg = dataclasses.replace(sg, operators=ops)
    return write_model(dataclasses.replace(model, operator_codes=codes, subgraphs=(sg,)))


def check(request, op, inputs, outputs, options=None, feeds=None, version=1):
    """``test_builtins.check`` with an operator version: nnsim against LiteRT, same results."""
    rng = np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
    blob = build(op, inputs, outputs, options)
    if version != 1:
        blob = versioned(blob, version)
    if feeds is None:
        feeds = [random_value(rng, s) for s in inputs if s is not None and s.data is None]
    ours, ref = run_both(blob, feeds)
    assert_same(ours, ref)
    return ours


def const(value, dtype=I32):
    value = np.asarray(value, dtype)
    return T(value.shape, dtype, None, value)


def q(dtype, params=None):
    """The quantization of a tensor of ``dtype`` (None for float / plain integer tensors)."""
    return (params or _QUANT.get(dtype)) if dtype in _QUANT else None


def both_fail(blob, feeds=(), match=None):
    """LiteRT and nnsim both refuse the model (at allocate or at invoke)."""
    for make in (lambda: litert.Interpreter(
            model_content=blob, experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF),
            lambda: Interpreter(model_content=blob)):
        with pytest.raises((RuntimeError, ValueError)) as info:
            ip = make()
            ip.allocate_tensors()
            for d, v in zip(ip.get_input_details(), feeds):
                ip.set_tensor(d["index"], v)
            ip.invoke()
        if match and isinstance(info.value, BuiltinError):
            assert match in str(info.value)


# -- SHAPE, ZEROS_LIKE, BROADCAST_TO -----------------------------------------------------------
@pytest.mark.parametrize("dtype", [F32, U8, I8, I32, BOOL])
@pytest.mark.parametrize("out", [I32, I64])
def test_shape(request, dtype, out):
    ours = check(request, B.SHAPE, [T((2, 3, 1, 5), dtype, q(dtype))], [T((4,), out)],
                 O.ShapeOptions(out_type=TensorType.INT32 if out == I32 else TensorType.INT64))
    np.testing.assert_array_equal(ours[0], [2, 3, 1, 5])


@pytest.mark.parametrize("dtype", [F32, I32, I64])
def test_zeros_like(request, dtype):
    ours = check(request, B.ZEROS_LIKE, [T((3, 4, 2), dtype)], [T((3, 4, 2), dtype)],
                 O.ZerosLikeOptions())
    assert not ours[0].any()


@pytest.mark.parametrize("dtype", [F32, I8, U8, I16, I32, I64, BOOL])
@pytest.mark.parametrize("shape_dtype", [I32, I64])
def test_broadcast_to(request, dtype, shape_dtype):
    check(request, B.BROADCAST_TO, [T((3, 1, 4), dtype, q(dtype)),
                                    const([2, 3, 5, 4], shape_dtype)],
          [T((2, 3, 5, 4), dtype, q(dtype))], O.BroadcastToOptions(), version=2)


def test_broadcast_to_nine_dimensions(request):
    shape = (2, 1, 2, 1, 2, 1, 2, 1, 3)
    check(request, B.BROADCAST_TO, [T((1, 3), I8, q(I8)), const(shape)],
          [T(shape, I8, q(I8))], O.BroadcastToOptions(), version=2)


def test_broadcast_to_shape_fed_at_run_time(request):
    check(request, B.BROADCAST_TO, [T((1, 3)), T((3,), I32)], [T((2, 4, 3))],
          O.BroadcastToOptions(), feeds=[np.arange(3, dtype=F32).reshape(1, 3),
                                         np.array([2, 4, 3], I32)], version=2)


def test_broadcast_to_incompatible_shape_fails():
    blob = versioned(build(B.BROADCAST_TO, [T((3, 2)), const([3, 3])], [T((3, 3))],
                           O.BroadcastToOptions()), 2)
    both_fail(blob, match="broadcastable")


# -- RANGE, WHERE, CUMSUM --------------------------------------------------------------------
@pytest.mark.parametrize("dtype,start,limit,delta", [
    (I32, 3, 20, 4), (I32, 10, -7, -3), (I64, -5, 5, 1), (F32, 0.0, 1.0, 0.1),
    (F32, 2.5, -3.7, -0.3)])
def test_range_constant(request, dtype, start, limit, delta):
    ours = check(request, B.RANGE, [const(start, dtype), const(limit, dtype),
                                    const(delta, dtype)], [T((1,), dtype)], O.RangeOptions(),
                 feeds=[])
    assert ours[0].size == len(np.arange(start, limit, delta, dtype=np.float64))


def test_range_float_is_a_running_sum():
    """``value += delta`` at each step: after 10000 steps of 0.1 the float32 running sum is
    0.097 away from ``i * delta``; nnsim's values are LiteRT's, bit for bit."""
    blob = build(B.RANGE, [const(0.0, F32), const(1000.0, F32), const(0.1, F32)], [T((1,))],
                 O.RangeOptions())
    ours, ref = run_both(blob, [])
    assert ours[0].size == 10000
    np.testing.assert_array_equal(ours[0], ref[0])
    assert np.abs(ours[0] - np.arange(10000, dtype=F32) * F32(0.1)).max() > 0.05


def test_range_empty():
    """start == limit gives no elements (LiteRT's size formula; its Python API cannot read
    back an empty tensor, so the oracle here is the formula)."""
    blob = build(B.RANGE, [const(1.0, F32), const(1.0, F32), const(0.5, F32)], [T((1,))],
                 O.RangeOptions())
    ip = Interpreter(model_content=blob)
    ip.allocate_tensors()
    ip.invoke()
    out = ip.get_tensor(ip.get_output_details()[0]["index"])
    assert out.shape == (0,) and out.dtype == F32


@pytest.mark.parametrize("dtype", [I32, F32])
def test_range_fed_at_run_time(request, dtype):
    feeds = [np.array(v, dtype) for v in (1, 40, 3)] if dtype == I32 else \
        [np.array(v, dtype) for v in (-1.5, 7.25, 0.37)]
    check(request, B.RANGE, [T((), dtype), T((), dtype), T((), dtype)], [T((1,), dtype)],
          O.RangeOptions(), feeds=feeds)


def test_range_zero_delta_fails():
    blob = build(B.RANGE, [const(0), const(5), const(0)], [T((1,), I32)], O.RangeOptions())
    both_fail(blob, match="invalid range")


@pytest.mark.parametrize("dtype", [BOOL, F32, I32, I64, I8, U8])
def test_where(request, dtype):
    rng = np.random.default_rng(5)
    cond = (rng.random((3, 4, 5)) < 0.4) * rng.integers(1, 100, (3, 4, 5))
    cond = cond.astype(dtype) if dtype != BOOL else cond.astype(bool)
    if dtype == F32:
        cond[0, 0, :2] = [-0.0, np.nan]
    ours = check(request, B.WHERE, [T(cond.shape, dtype, q(dtype))], [T((1, 3), I64)],
                 O.WhereOptions(), feeds=[cond])
    np.testing.assert_array_equal(ours[0], np.argwhere(cond))


def test_where_constant_condition(request):
    cond = np.array([[True, False, True], [False, False, True]])
    check(request, B.WHERE, [T(cond.shape, BOOL, None, cond)], [T((3, 2), I64)],
          O.WhereOptions(), feeds=[])


@pytest.mark.parametrize("dtype", [F32, I32, I64])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, False), (False, True),
                                               (True, True)])
def test_cumsum(request, dtype, axis, exclusive, reverse):
    check(request, B.CUMSUM, [T((4, 17, 3), dtype), const([axis])], [T((4, 17, 3), dtype)],
          O.CumsumOptions(exclusive=exclusive, reverse=reverse))


@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, True)])
def test_cumsum_float_adds_in_order(exclusive, reverse):
    """Float32 partial sums along a long axis equal LiteRT's bit for bit (one rounding per
    addition, in axis order)."""
    x = (np.random.default_rng(1).standard_normal((3, 1000, 2)) * 100).astype(F32)
    blob = build(B.CUMSUM, [T(x.shape), const([1])], [T(x.shape)],
                 O.CumsumOptions(exclusive=exclusive, reverse=reverse))
    ours, ref = run_both(blob, [x])
    np.testing.assert_array_equal(ours[0], ref[0])


def test_cumsum_int32_wraps(request):
    x = np.full((1, 6), 2**30, I32)
    ours = check(request, B.CUMSUM, [T(x.shape, I32), const([1])], [T(x.shape, I32)],
                 O.CumsumOptions(), feeds=[x])
    assert ours[0][0, 1] == -2**31


def test_cumsum_axis_fed_at_run_time(request):
    check(request, B.CUMSUM, [T((5, 6)), T((1,), I32)], [T((5, 6))],
          O.CumsumOptions(reverse=True),
          feeds=[np.linspace(-3, 7, 30, dtype=F32).reshape(5, 6), np.array([0], I32)])


# -- SCATTER_ND -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [F32, U8, I8, I32, I64, BOOL])
def test_scatter_nd_accumulates_repeated_indices(request, dtype):
    indices = np.array([[1, 0], [3, 2], [1, 0], [0, 4], [1, 0]], I32)
    check(request, B.SCATTER_ND, [const(indices), T((5, 3), dtype, q(dtype)),
                                  const([4, 5, 3])], [T((4, 5, 3), dtype, q(dtype))],
          O.ScatterNdOptions())


def test_scatter_nd_float_sums_in_order():
    """200 updates to 3 places: float32 sums in index order, as LiteRT (bit for bit)."""
    rng = np.random.default_rng(2)
    indices = rng.integers(0, 3, (200, 1)).astype(I32)
    updates = (rng.standard_normal((200, 2)) * 1000).astype(F32)
    blob = build(B.SCATTER_ND, [const(indices), T(updates.shape), const([3, 2])], [T((3, 2))],
                 O.ScatterNdOptions())
    ours, ref = run_both(blob, [updates])
    np.testing.assert_array_equal(ours[0], ref[0])


def test_scatter_nd_int8_wraps(request):
    updates = np.array([100, 100, -7], I8)
    ours = check(request, B.SCATTER_ND, [const([[2], [2], [0]]), T((3,), I8), const([4])],
                 [T((4,), I8)], O.ScatterNdOptions(), feeds=[updates])
    np.testing.assert_array_equal(ours[0], [-7, 0, -56, 0])


def test_scatter_nd_fed_at_run_time(request):
    indices = np.array([[[0], [2]], [[2], [1]]], I32)
    check(request, B.SCATTER_ND, [T(indices.shape, I32), T((2, 2, 3)), T((2,), I32)],
          [T((3, 3))], O.ScatterNdOptions(),
          feeds=[indices, np.arange(12, dtype=F32).reshape(2, 2, 3) - 5,
                 np.array([3, 3], I32)])


def test_scatter_nd_index_out_of_bounds_fails():
    blob = build(B.SCATTER_ND, [const([[1], [4]]), T((2,)), const([4])], [T((4,))],
                 O.ScatterNdOptions())
    both_fail(blob, feeds=[np.ones(2, F32)], match="out of bounds")


# -- UNPACK, SPLIT, SPLIT_V -------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [F32, U8, I8, I16, I32, BOOL])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unpack(request, dtype, axis):
    shape = (3, 4, 2)
    num = shape[axis]
    out = tuple(s for d, s in enumerate(shape) if d != axis % 3)
    check(request, B.UNPACK, [T(shape, dtype, q(dtype))], [T(out, dtype, q(dtype))] * num,
          O.UnpackOptions(num=num, axis=axis))


def test_unpack_requantization_is_refused():
    blob = build(B.UNPACK, [T((2, 3), U8, (0.1, 3))], [T((3,), U8, (0.2, 3))] * 2,
                 O.UnpackOptions(num=2, axis=0))
    both_fail(blob, match="quantization")


@pytest.mark.parametrize("dtype", [F32, U8, I8, I16, I32, I64])
@pytest.mark.parametrize("axis", [1, -3, 2])
def test_split(request, dtype, axis):
    shape = (2, 6, 4)
    parts = 2 if axis == 2 else 3 if axis == 1 else 2
    out = list(shape)
    out[axis] //= parts
    check(request, B.SPLIT, [const([axis]), T(shape, dtype, q(dtype))],
          [T(tuple(out), dtype, q(dtype))] * parts, O.SplitOptions(num_splits=parts))


def test_split_axis_fed_at_run_time(request):
    x = np.arange(24, dtype=F32).reshape(2, 3, 4)
    check(request, B.SPLIT, [T((1,), I32), T(x.shape)], [T((2, 3, 2))] * 2,
          O.SplitOptions(num_splits=2), feeds=[np.array([2], I32), x])


def test_split_uneven_fails():
    blob = build(B.SPLIT, [const([1]), T((2, 5))], [T((2, 2))] * 2, O.SplitOptions(num_splits=2))
    both_fail(blob, match="equal parts")


@pytest.mark.parametrize("dtype", [F32, U8, I8, I16, I32, I64])
@pytest.mark.parametrize("sizes,axis,size_dtype", [([1, -1, 3], 1, I32), ([4, 0, 3], -2, I64),
                                                    ([2, 5], 2, I32)])
def test_split_v(request, dtype, sizes, axis, size_dtype):
    shape = (2, 7, 7)
    full = list(sizes)
    if -1 in full:
        full[full.index(-1)] = shape[axis] - sum(s for s in sizes if s != -1)
    outs = [T(tuple(f if d == axis % 3 else s for d, s in enumerate(shape)), dtype, q(dtype))
            for f in full]
    check(request, B.SPLIT_V, [T(shape, dtype, q(dtype)), const(sizes, size_dtype),
                               const([axis])], outs, O.SplitVOptions(num_splits=len(sizes)))


def test_split_v_sizes_fed_at_run_time(request):
    x = np.arange(30, dtype=I32).reshape(5, 6)
    check(request, B.SPLIT_V, [T(x.shape, I32), T((3,), I32), const([1])],
          [T((5, 1), I32), T((5, 1), I32), T((5, 1), I32)], O.SplitVOptions(num_splits=3),
          feeds=[x, np.array([2, -1, 1], I32)])


def test_split_v_bad_sizes_fail():
    blob = build(B.SPLIT_V, [T((2, 5)), const([2, 2]), const([1])], [T((2, 2))] * 2,
                 O.SplitVOptions(num_splits=2))
    both_fail(blob, match="sum")


# -- SQUARE, SQUARED_DIFFERENCE ---------------------------------------------------------------
def test_square(request):
    check(request, B.SQUARE, [T((3, 5, 7))], [T((3, 5, 7))], O.SquareOptions())


@pytest.mark.parametrize("dtype", [F32, I32, I8])
@pytest.mark.parametrize("shapes", [((2, 3, 4, 5), (2, 3, 4, 5)), ((2, 3, 4, 5), (1, 1, 4, 1)),
                                    ((3, 1), (1, 6)), ((1, 2, 3, 2, 2), (1, 2, 3, 2, 2)),
                                    ((2, 1, 3, 1, 2), (1, 2, 1, 3, 1))])
def test_squared_difference(request, dtype, shapes):
    a, b = shapes
    out = tuple(np.broadcast_shapes(a, b))
    qa, qb, qo = ((0.05, -3), (0.11, 7), (0.4, -100)) if dtype == I8 else (None,) * 3
    check(request, B.SQUARED_DIFFERENCE, [T(a, dtype, qa), T(b, dtype, qb)],
          [T(out, dtype, qo)], O.SquaredDifferenceOptions())


@pytest.mark.parametrize("scales", [(0.02, 0.02, 0.01), (0.3, 0.01, 2.0), (0.01, 0.5, 0.9)])
def test_squared_difference_int8_scales(request, scales):
    s1, s2, so = scales
    check(request, B.SQUARED_DIFFERENCE, [T((4, 64), I8, (s1, 0)), T((4, 64), I8, (s2, 5))],
          [T((4, 64), I8, (so, -128))], O.SquaredDifferenceOptions())


# -- GELU, LEAKY_RELU -------------------------------------------------------------------------
@pytest.mark.parametrize("approximate", [False, True])
@pytest.mark.parametrize("dtype,qin,qout", [
    (F32, None, None), (U8, (0.05, 128), (0.03, 20)), (U8, (0.1, 40), (0.07, 5)),
    (I8, (0.0313, -7), (0.0211, -128)), (I8, (0.05, 0), (0.02, -100)),
    (I16, (0.0005, 0), (0.0004, 0)), (I16, (0.002, 3), (0.0013, -5))])
def test_gelu(request, approximate, dtype, qin, qout):
    if dtype == F32:
        x = np.random.default_rng(9).standard_normal(4000).astype(F32) * 4
        x[:12] = [-30, -12, -9, -5, -0.0, 0, 1e-30, 5, 12, 30, np.inf, 1e-8]
    else:
        info = np.iinfo(dtype)
        x = np.arange(info.min, info.max + 1, dtype=dtype)   # every table entry
    check(request, B.GELU, [T(x.shape, dtype, qin)], [T(x.shape, dtype, qout)],
          O.GeluOptions(approximate=approximate), feeds=[x])


@pytest.mark.parametrize("alpha", [0.2, -0.3, 1.7, -2.5, 0.0])
@pytest.mark.parametrize("dtype,qin,qout", [
    (F32, None, None), (U8, (0.05, 130), (0.07, 120)), (I8, (0.05, -3), (0.07, 5)),
    (I16, (0.0011, 0), (0.0013, 0))])
def test_leaky_relu(request, alpha, dtype, qin, qout):
    if dtype == F32:
        x = np.random.default_rng(3).standard_normal(500).astype(F32) * 5
    else:
        info = np.iinfo(dtype)
        x = np.arange(info.min, info.max + 1, max(1, (info.max - info.min) // 3000),
                      dtype=np.int64).astype(dtype)
    check(request, B.LEAKY_RELU, [T(x.shape, dtype, qin)], [T(x.shape, dtype, qout)],
          O.LeakyReluOptions(alpha=alpha), feeds=[x])


@pytest.mark.parametrize("dtype", [I8, I16])
@pytest.mark.parametrize("alpha", [-0.5, -0.25, 0.5])
def test_leaky_relu_rounding_ties(request, dtype, alpha):
    """Power-of-two multipliers put every odd input on a rounding tie: a negative alpha
    rounds as LiteRT's negated positive multiplier does, not as a negative multiplier."""
    x = np.arange(-101, 100).astype(dtype)
    ours = check(request, B.LEAKY_RELU, [T(x.shape, dtype, (0.05, 0))],
                 [T(x.shape, dtype, (0.05, 0))], O.LeakyReluOptions(alpha=alpha), feeds=[x])
    if alpha == -0.5:   # -SRDHM(-3, 2**30) = -(-1.5 rounded up) = 1; SRDHM(-3, -2**30) = 2
        assert ours[0][x == -3][0] == 1


def test_leaky_relu_int16_needs_zero_points_of_zero():
    blob = build(B.LEAKY_RELU, [T((4,), I16, (0.001, 3))], [T((4,), I16, (0.001, 0))],
                 O.LeakyReluOptions(alpha=0.1))
    both_fail(blob, match="zero points")


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_float16_every_value(approximate):
    """Every float16 bit pattern (Eigen half arithmetic): nnsim equals LiteRT exactly."""
    x = np.arange(65536, dtype=np.uint16).view(np.float16)
    blob = build(B.GELU, [T(x.shape, np.float16)], [T(x.shape, np.float16)],
                 O.GeluOptions(approximate=approximate))
    ours, ref = run_both(blob, [x])
    assert ours[0].dtype == np.float16
    np.testing.assert_array_equal(ours[0], ref[0])


def test_gelu_float_matches_hand_values():
    """GELU(1) = 0.5 * erfc(-1/sqrt(2)) = 0.8413447...; approximate GELU(1) = 0.8411920."""
    blob = build(B.GELU, [T((3,))], [T((3,))], O.GeluOptions(approximate=False))
    ours, _ = run_both(blob, [np.array([1.0, -1.0, 0.0], F32)])
    np.testing.assert_allclose(ours[0], [0.8413447, -0.1586553, 0.0], rtol=1e-6)


# -- DEQUANTIZE of float16 (quantize.Dequantize) -------------------------------------------------
@pytest.mark.parametrize("constant", [True, False])
def test_dequantize_float16_every_value(constant):
    """float16 weights -> float32: all 65536 bit patterns (inf, nan, -0, subnormals) exact."""
    x = np.arange(65536, dtype=np.uint16).view(np.float16).reshape(256, 256)
    spec = T(x.shape, np.float16, None, x if constant else None)
    ours, ref = run_both(build(B.DEQUANTIZE, [spec], [T(x.shape)], O.DequantizeOptions()),
                         [] if constant else [x])
    np.testing.assert_array_equal(ours[0], ref[0])
    np.testing.assert_array_equal(np.signbit(ours[0]), np.signbit(ref[0]))


# -- DENSIFY --------------------------------------------------------------------------------------
_TENSOR_TYPES = {F32: TensorType.FLOAT32, np.float16: TensorType.FLOAT16, I8: TensorType.INT8,
                 I32: TensorType.INT32}
_INDEX_VECTORS = {   # SparseIndexVector tag -> (element dtype, Start, AddValues, End)
    1: (np.int32, fb.Int32VectorStart, fb.Int32VectorAddValues, fb.Int32VectorEnd),
    2: (np.uint16, fb.Uint16VectorStart, fb.Uint16VectorAddValues, fb.Uint16VectorEnd),
    3: (np.uint8, fb.Uint8VectorStart, fb.Uint8VectorAddValues, fb.Uint8VectorEnd),
}


def _sparse_densify_model(values, shape, traversal_order, block_map, dims, dtype=F32,
                          index_type=1) -> bytes:
    """A one-node DENSIFY model whose input is a sparse constant of ``dtype``, written with the
    ``tflite`` package's flatbuffer builders (independently of nnsim's writer); the index
    vectors are SparseIndexVector member ``index_type`` (1 Int32, 2 Uint16, 3 Uint8)."""

    b = flatbuffers.Builder(1024)

    def ints(values_):
        return b.CreateNumpyVector(np.asarray(values_, np.int32))

    def index_vector(values_):
        elem, start, add_values, end = _INDEX_VECTORS[index_type]
        vec = b.CreateNumpyVector(np.asarray(values_, elem))
        start(b)
        add_values(b, vec)
        return end(b)

    metas = []
    for d in dims:
        seg = idx = None
        if d.format == SPARSE_CSR:
            seg, idx = index_vector(d.array_segments), index_vector(d.array_indices)
        fb.DimensionMetadataStart(b)
        fb.DimensionMetadataAddFormat(b, d.format)
        fb.DimensionMetadataAddDenseSize(b, d.dense_size)
        if seg is not None:
            fb.DimensionMetadataAddArraySegmentsType(b, index_type)
            fb.DimensionMetadataAddArraySegments(b, seg)
            fb.DimensionMetadataAddArrayIndicesType(b, index_type)
            fb.DimensionMetadataAddArrayIndices(b, idx)
        metas.append(fb.DimensionMetadataEnd(b))
    order, bmap = ints(traversal_order), ints(block_map)
    fb.SparsityParametersStartDimMetadataVector(b, len(metas))
    for m in reversed(metas):
        b.PrependUOffsetTRelative(m)
    meta_vec = b.EndVector()
    fb.SparsityParametersStart(b)
    fb.SparsityParametersAddTraversalOrder(b, order)
    fb.SparsityParametersAddBlockMap(b, bmap)
    fb.SparsityParametersAddDimMetadata(b, meta_vec)
    sparsity = fb.SparsityParametersEnd(b)

    data = b.CreateNumpyVector(np.asarray(values, dtype).view(np.uint8))
    fb.BufferStart(b)
    fb.BufferAddData(b, data)
    buf1 = fb.BufferEnd(b)
    fb.BufferStart(b)
    buf0 = fb.BufferEnd(b)
    tensors = []
    for k, (name, buffer) in enumerate((("sparse", 1), ("dense", 0))):
        name_off, shape_off = b.CreateString(name), ints(shape)
        fb.TensorStart(b)
        fb.TensorAddShape(b, shape_off)
        fb.TensorAddType(b, _TENSOR_TYPES[dtype])
        fb.TensorAddBuffer(b, buffer)
        fb.TensorAddName(b, name_off)
        if k == 0:
            fb.TensorAddSparsity(b, sparsity)
        tensors.append(fb.TensorEnd(b))

    def table_vector(start, offsets):
        start(b, len(offsets))
        for o in reversed(offsets):
            b.PrependUOffsetTRelative(o)
        return b.EndVector()

    op_in, op_out = ints([0]), ints([1])
    fb.OperatorStart(b)
    fb.OperatorAddOpcodeIndex(b, 0)
    fb.OperatorAddInputs(b, op_in)
    fb.OperatorAddOutputs(b, op_out)
    op = fb.OperatorEnd(b)
    tensor_vec = table_vector(fb.SubGraphStartTensorsVector, tensors)
    op_vec = table_vector(fb.SubGraphStartOperatorsVector, [op])
    sg_in, sg_out = ints([]), ints([1])
    fb.SubGraphStart(b)
    fb.SubGraphAddTensors(b, tensor_vec)
    fb.SubGraphAddInputs(b, sg_in)
    fb.SubGraphAddOutputs(b, sg_out)
    fb.SubGraphAddOperators(b, op_vec)
    sg = fb.SubGraphEnd(b)
    fb.OperatorCodeStart(b)
    fb.OperatorCodeAddDeprecatedBuiltinCode(b, int(B.DENSIFY))
    fb.OperatorCodeAddBuiltinCode(b, int(B.DENSIFY))
    fb.OperatorCodeAddVersion(b, 1)
    code = fb.OperatorCodeEnd(b)
    codes = table_vector(fb.ModelStartOperatorCodesVector, [code])
    sgs = table_vector(fb.ModelStartSubgraphsVector, [sg])
    bufs = table_vector(fb.ModelStartBuffersVector, [buf0, buf1])
    fb.ModelStart(b)
    fb.ModelAddVersion(b, 3)
    fb.ModelAddOperatorCodes(b, codes)
    fb.ModelAddSubgraphs(b, sgs)
    fb.ModelAddBuffers(b, bufs)
    b.Finish(fb.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def csr_last_dimension(dense):
    """``dense`` as TFLite's converter stores sparse weights: every dimension DENSE but the
    last, SPARSE_CSR; returns (values, shape, traversal_order, block_map, dims)."""
    dense = np.asarray(dense)
    rows = dense.reshape(-1, dense.shape[-1])
    nonzero = rows != 0
    segments = np.concatenate([[0], np.cumsum(nonzero.sum(axis=1))])
    columns = np.nonzero(nonzero)[1]
    dims = [M(DENSE, d) for d in dense.shape[:-1]] + [M(SPARSE_CSR, 0, segments, columns)]
    return rows[nonzero], dense.shape, list(range(dense.ndim)), [], dims


_DENSIFY_CASES = {
    "csr": (   # rows dense, columns compressed
        ([6, 9, 8, 5, 7], (3, 4), [0, 1], [],
         [M(DENSE, 3), M(SPARSE_CSR, 0, [0, 3, 3, 5], [0, 2, 3, 0, 3])]),
        [[6, 0, 9, 8], [0, 0, 0, 0], [5, 0, 0, 7]]),
    "blocks": (   # 2x2 blocks, the block columns compressed
        (np.arange(1, 9), (4, 4), [0, 1, 2, 3], [0, 1],
         [M(DENSE, 2), M(SPARSE_CSR, 0, [0, 1, 2], [0, 1]), M(DENSE, 2), M(DENSE, 2)]),
        [[1, 2, 0, 0], [3, 4, 0, 0], [0, 0, 5, 6], [0, 0, 7, 8]]),
    "csr_columns_first": (   # columns traversed first: column-major CSR
        ([1, 2, 3], (2, 3), [1, 0], [],
         [M(DENSE, 3), M(SPARSE_CSR, 0, [0, 1, 1, 3], [1, 0, 1])]),
        [[0, 0, 2], [1, 0, 3]]),
}


@pytest.mark.parametrize("case", sorted(_DENSIFY_CASES))
def test_densify_kernel_matches_litert(case):
    (values, shape, order, block_map, dims), expected = _DENSIFY_CASES[case]
    ours = densify(np.asarray(values, F32), shape, order, block_map, dims)
    np.testing.assert_array_equal(ours, expected)
    ip = litert.Interpreter(model_content=_sparse_densify_model(values, shape, order, block_map,
                                                                dims),
                            experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    ip.allocate_tensors()
    ip.invoke()
    np.testing.assert_array_equal(ours, ip.get_tensor(ip.get_output_details()[0]["index"]))


@pytest.mark.parametrize("case", sorted(_DENSIFY_CASES))
@pytest.mark.parametrize("dtype", [F32, np.float16, I8])
def test_densify(case, dtype):
    """The DENSIFY builtin (the model read by nnsim's reader, run by its interpreter)."""
    (values, *layout), expected = _DENSIFY_CASES[case]
    ours, ref = run_both(_sparse_densify_model(values, *layout, dtype=dtype), [])
    assert ours[0].dtype == dtype and ours[0].shape == ref[0].shape
    np.testing.assert_array_equal(ours[0], ref[0])
    np.testing.assert_array_equal(ours[0], expected)


@pytest.mark.parametrize("index_type", [1, 2, 3])
@pytest.mark.parametrize("dtype", [F32, np.float16, I8])
def test_densify_conv_filter(dtype, index_type):
    """A conv filter, 80 % zeros, stored as the converter does (CSR on the last dimension),
    with int32 / uint16 / uint8 index vectors (uint8: a filter small enough for its segments):
    every value back in its place."""
    rng = np.random.default_rng(index_type)
    shape = (4, 3, 3, 16) if index_type == 3 else (16, 3, 3, 40)
    dense = rng.standard_normal(shape) * (rng.random(shape) < 0.2)
    dense = (dense * 40).astype(dtype) if dtype == I8 else dense.astype(dtype)
    ours, ref = run_both(_sparse_densify_model(*csr_last_dimension(dense), dtype=dtype,
                                               index_type=index_type), [])
    np.testing.assert_array_equal(ours[0], ref[0])
    np.testing.assert_array_equal(ours[0], dense)


def test_densify_is_computed_once():
    """The output is the same (read-only) array at every invoke, as LiteRT's persistent
    output that Eval fills once."""
    (values, *layout), _ = _DENSIFY_CASES["csr"]
    ip = Interpreter(model_content=_sparse_densify_model(values, *layout))
    ip.allocate_tensors()
    out = ip.get_output_details()[0]["index"]
    ip.invoke()
    first = ip.tensor(out)()
    for _ in range(2):
        ip.invoke()
        assert ip.tensor(out)() is first
    assert not first.flags.writeable


def assert_same_details(ours, ref):
    """Nested dicts / lists of int32 arrays and ints, as ``get_tensor_details`` gives them."""
    if isinstance(ref, dict):
        assert isinstance(ours, dict) and sorted(ours) == sorted(ref)
        for key in ref:
            assert_same_details(ours[key], ref[key])
    elif isinstance(ref, list):
        assert isinstance(ours, list) and len(ours) == len(ref)
        for a, b in zip(ours, ref):
            assert_same_details(a, b)
    elif isinstance(ref, np.ndarray):
        assert ours.dtype == ref.dtype
        np.testing.assert_array_equal(ours, ref)
    else:
        assert ours == ref


@pytest.mark.parametrize("case", sorted(_DENSIFY_CASES))
def test_densify_tensor_details_match_litert(case):
    """``get_tensor_details()[i]["sparsity_parameters"]``: LiteRT's dict, {} when dense."""
    (values, *layout), _ = _DENSIFY_CASES[case]
    blob = _sparse_densify_model(values, *layout, index_type=3)
    ours = Interpreter(model_content=blob).get_tensor_details()
    ref = litert.Interpreter(model_content=blob).get_tensor_details()
    assert ours[0]["sparsity_parameters"] and ours[1]["sparsity_parameters"] == {}
    for a, b in zip(ours, ref):
        assert_same_details(a["sparsity_parameters"], b["sparsity_parameters"])


def test_sparse_input_of_another_operator_is_unsupported():
    """Only DENSIFY reads a sparse constant on nnsim's CPU (LiteRT's FULLY_CONNECTED also reads
    sparse weights itself): any other node names the sparse input instead of misreading it."""
    from nnsim.tflite.builtins import UnsupportedOperatorError
    from nnsim.tflite.writer import ModelWriter
    (values, shape, order, block_map, dims), _ = _DENSIFY_CASES["csr"]
    w = ModelWriter()
    x = w.add_tensor("x", shape, TensorType.FLOAT32)
    s = w.add_tensor("s", shape, TensorType.FLOAT32, data=np.asarray(values, F32),
                     sparsity=as_sparsity(order, block_map, dims))
    y = w.add_tensor("y", shape, TensorType.FLOAT32)
    w.add_operator(B.ADD, [x, s], [y], O.AddOptions())
    w.set_inputs([x])
    w.set_outputs([y])
    ip = Interpreter(model_content=w.finish())
    with pytest.raises(UnsupportedOperatorError, match="tensor 1 's'.* is sparse"):
        ip.allocate_tensors()


def as_sparsity(order, block_map, dims, index_dtype=np.int32):
    """The reader's ``Sparsity`` of a kernel-style layout (no index vectors on DENSE levels,
    no block_map when there are no blocks)."""
    from nnsim.tflite.sparsity import DimensionMetadata, Sparsity
    levels = tuple(DimensionMetadata(DENSE, d.dense_size) if d.format == DENSE else
                   DimensionMetadata(SPARSE_CSR, 0, np.asarray(d.array_segments, index_dtype),
                                     np.asarray(d.array_indices, index_dtype))
                   for d in dims)
    return Sparsity(tuple(order), tuple(block_map) or None, levels)


def test_densify_int32_fails():
    """LiteRT's DENSIFY takes float32, float16 and int8 only (Eval: "Type 2 not supported")."""
    (values, *layout), _ = _DENSIFY_CASES["csr"]
    both_fail(_sparse_densify_model(values, *layout, dtype=I32), match="INT32")


# -- numba cores against their numpy references ------------------------------------------------
def test_kernels_match_numpy_references():
    from nnsim.kernels import leaky_relu as lr
    from nnsim.kernels import scatter_nd as sn
    from nnsim.kernels import squared_difference as sd
    from nnsim.kernels.reference import leaky_relu as ref_lr
    from nnsim.kernels.reference import scatter_nd as ref_sn
    from nnsim.kernels.reference import squared_difference as ref_sd
    rng = np.random.default_rng(0)
    for dtype, zp in ((U8, 7), (I8, -3), (I16, 0)):
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max + 1, 5000).astype(dtype)
        for alpha in (0.2, -0.5, -2.5, 1.7):
            kw = dict(in_scale=0.05, in_zp=zp, out_scale=0.06, out_zp=zp)
            np.testing.assert_array_equal(lr.leaky_relu(x, alpha, **kw),
                                          ref_lr.leaky_relu(x, alpha, **kw))
    a = rng.integers(-128, 128, (7, 1, 5)).astype(I8)
    b = rng.integers(-128, 128, (1, 6, 5)).astype(I8)
    kw = dict(in1_scale=0.05, in1_zp=3, in2_scale=0.11, in2_zp=-7, out_scale=0.4, out_zp=-100)
    np.testing.assert_array_equal(sd.squared_difference(a, b, **kw),
                                  ref_sd.squared_difference(a, b, **kw))
    for dtype in (F32, I8, U8, I32, I64, BOOL):
        indices = rng.integers(0, 4, (50, 2)).astype(I32)
        updates = rng.random((50, 3)) < 0.3 if dtype == BOOL else \
            (rng.standard_normal((50, 3)) * 50).astype(dtype)
        ours, ref = sn.scatter_nd(indices, updates, (4, 4, 3)), \
            ref_sn.scatter_nd(indices, updates, (4, 4, 3))
        assert ours.dtype == ref.dtype
        np.testing.assert_array_equal(ours, ref)
