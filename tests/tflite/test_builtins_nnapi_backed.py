"""The NNAPI-backed CPU builtins (``NNAPI_BACKED``) against LiteRT's reference kernels.

Each builtin in ``nnsim.tflite.builtins.NNAPI_BACKED`` runs on nnsim's TFLite CPU path through
its NNAPI lowering; this file is the admission test: a one-node model per builtin and type,
run on nnsim and on LiteRT BUILTIN_REF, integer outputs identical, float32 within 1e-5
relative. ``test_every_nnapi_backed_builtin_is_tested`` fails when a builtin is admitted
without a case here or in the group files listed in ``_GROUP_FILES``.
"""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from nnsim.tflite import options as O
from nnsim.tflite.builtins import NNAPI_BACKED
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import Padding
from nnsim.tflite import Interpreter
from tests.tflite.test_builtins import T, build, check, litert

U8, I8, I16, F32, I32 = np.uint8, np.int8, np.int16, np.float32, np.int32
_HERE = Path(__file__).parent
# Other files whose cases admit NNAPI-backed builtins (one per group of operations).
_GROUP_FILES = ("test_builtins_compare.py", "test_builtins_shape2.py", "test_builtins_lookup.py",
                "test_builtins_norm.py")


def _q(dtype, scale, zp_u8, zp_i8=None):
    if dtype == U8:
        return (scale, zp_u8)
    if dtype == I8:
        return (scale, zp_u8 - 128 if zp_i8 is None else zp_i8)
    return None


# -- elementwise unary (float) ----------------------------------------------------------------
@pytest.mark.parametrize("op,opts", [(B.ABS, O.AbsOptions()), (B.EXP, O.ExpOptions()),
                                     (B.NEG, O.NegOptions()), (B.FLOOR, None)])
def test_float_unary(request, op, opts):
    check(request, op, [T((2, 3, 7), F32)], [T((2, 3, 7), F32)], opts)


def test_elu_float():
    """LiteRT's reference resolver has no ELU: its only kernel (the builtin resolver's,
    ``x < 0 ? expm1(x) : x``) is the oracle."""
    x = np.random.default_rng(2).standard_normal((3, 40)).astype(F32) * 3
    blob = build(B.ELU, [T((3, 40), F32)], [T((3, 40), F32)])
    ours = Interpreter(model_content=blob)
    ref = litert.Interpreter(model_content=blob, num_threads=1)
    for ip in (ours, ref):
        ip.allocate_tensors()
        ip.set_tensor(ip.get_input_details()[0]["index"], x)
        ip.invoke()
    a = ours.get_tensor(ours.get_output_details()[0]["index"])
    b = ref.get_tensor(ref.get_output_details()[0]["index"])
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", [B.LOG, B.SQRT, B.RSQRT])
def test_float_unary_positive(request, op):
    x = np.random.default_rng(3).uniform(0.01, 30, (4, 9)).astype(F32)
    check(request, op, [T((4, 9), F32)], [T((4, 9), F32)], feeds=[x])


@pytest.mark.parametrize("op", [B.ABS, B.NEG])
def test_int32_unary(request, op):
    check(request, op, [T((3, 5), I32)], [T((3, 5), I32)])


# -- binary -----------------------------------------------------------------------------------
def test_div_float(request):
    rng = np.random.default_rng(5)
    b = rng.uniform(0.5, 4, (1, 5)).astype(F32) * np.where(rng.random((1, 5)) < .5, -1, 1)
    check(request, B.DIV, [T((3, 5), F32), T((1, 5), F32, data=b.astype(F32))],
          [T((3, 5), F32)], O.DivOptions())


@pytest.mark.parametrize("op", [B.MAXIMUM, B.MINIMUM])
@pytest.mark.parametrize("dtype", [U8, I8, F32, I32])
def test_maximum_minimum(request, op, dtype):
    q = _q(dtype, 0.05, 128)
    check(request, op, [T((2, 4, 3), dtype, q), T((1, 4, 3), dtype, q)],
          [T((2, 4, 3), dtype, q)], O.MaximumMinimumOptions())


@pytest.mark.parametrize("dtype", [U8, I8, F32])
def test_prelu(request, dtype):
    rng = np.random.default_rng(7)
    if dtype == F32:
        alpha = T((1, 1, 3), F32, None, rng.uniform(-1, 1, (1, 1, 3)).astype(F32))
        x, out = T((1, 4, 5, 3), F32), T((1, 4, 5, 3), F32)
    else:
        alpha = T((1, 1, 3), dtype, _q(dtype, 0.01, 120),
                  rng.integers(0 if dtype == U8 else -128, 256 if dtype == U8 else 128,
                               (1, 1, 3)).astype(dtype))
        x, out = T((1, 4, 5, 3), dtype, _q(dtype, 0.1, 128)), \
            T((1, 4, 5, 3), dtype, _q(dtype, 0.07, 120))
    check(request, B.PRELU, [x, alpha], [out])


# -- space / depth / batch ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [U8, I8, F32])
def test_depth_to_space(request, dtype):
    q = _q(dtype, 0.1, 100)
    check(request, B.DEPTH_TO_SPACE, [T((1, 2, 3, 8), dtype, q)], [T((1, 4, 6, 2), dtype, q)],
          O.DepthToSpaceOptions(block_size=2))


@pytest.mark.parametrize("dtype", [U8, I8, F32])
def test_space_to_depth(request, dtype):
    q = _q(dtype, 0.1, 100)
    check(request, B.SPACE_TO_DEPTH, [T((1, 4, 6, 2), dtype, q)], [T((1, 2, 3, 8), dtype, q)],
          O.SpaceToDepthOptions(block_size=2))


@pytest.mark.parametrize("dtype", [U8, I8, F32])
def test_space_to_batch_nd(request, dtype):
    q = _q(dtype, 0.1, 100)
    block = T((2,), I32, data=np.array([2, 2], I32))
    pads = T((2, 2), I32, data=np.array([[1, 1], [0, 2]], I32))
    check(request, B.SPACE_TO_BATCH_ND, [T((1, 4, 4, 3), dtype, q), block, pads],
          [T((4, 3, 3, 3), dtype, q)], O.SpaceToBatchNDOptions())


@pytest.mark.parametrize("dtype", [U8, I8, F32])
def test_batch_to_space_nd(request, dtype):
    q = _q(dtype, 0.1, 100)
    block = T((2,), I32, data=np.array([2, 2], I32))
    crops = T((2, 2), I32, data=np.zeros((2, 2), I32))
    check(request, B.BATCH_TO_SPACE_ND, [T((4, 2, 3, 3), dtype, q), block, crops],
          [T((1, 4, 6, 3), dtype, q)], O.BatchToSpaceNDOptions())


# -- shape ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [U8, I8, F32, I32])
@pytest.mark.parametrize("axis", [0, -1, 2])
def test_expand_dims(request, dtype, axis):
    q = _q(dtype, 0.1, 100)
    out = {0: (1, 3, 4), -1: (3, 4, 1), 2: (3, 4, 1)}[axis]
    check(request, B.EXPAND_DIMS, [T((3, 4), dtype, q), T((), I32, data=np.array(axis, I32))],
          [T(out, dtype, q)], O.ExpandDimsOptions())


@pytest.mark.parametrize("dtype", [U8, I8, F32, I32])
@pytest.mark.parametrize("axis,num", [(1, 2), (-1, 3), (0, 1)])
def test_split(request, dtype, axis, num):
    q = _q(dtype, 0.1, 100)
    shape = (2, 4, 6)
    part = list(shape)
    part[axis] //= num
    check(request, B.SPLIT, [T((), I32, data=np.array(axis, I32)), T(shape, dtype, q)],
          [T(tuple(part), dtype, q) for _ in range(num)], O.SplitOptions(num_splits=num))


@pytest.mark.parametrize("dtype", [U8, I8, F32])
def test_padv2(request, dtype):
    q = _q(dtype, 0.1, 100)
    pads = T((3, 2), I32, data=np.array([[0, 1], [2, 0], [1, 1]], I32))
    value = np.array([-2.5] if dtype == F32 else [7], dtype)
    check(request, B.PADV2, [T((2, 3, 4), dtype, q), pads, T((1,), dtype, q, value)],
          [T((3, 5, 6), dtype, q)], O.PadV2Options())


# -- normalisation, pooling, softmax -----------------------------------------------------------
@pytest.mark.parametrize("dtype", [U8, I8, F32])
def test_l2_normalization(request, dtype):
    qin = _q(dtype, 0.05, 120)
    qout = {U8: (1 / 128, 128), I8: (1 / 128, 0), F32: None}[dtype]
    check(request, B.L2_NORMALIZATION, [T((2, 3, 16), dtype, qin)], [T((2, 3, 16), dtype, qout)],
          O.L2NormOptions())


@pytest.mark.parametrize("padding", [Padding.SAME, Padding.VALID])
def test_l2_pool(request, padding):
    out = (1, 4, 4, 3) if padding == Padding.SAME else (1, 3, 3, 3)
    check(request, B.L2_POOL_2D, [T((1, 7, 7, 3), F32)], [T(out, F32)],
          O.Pool2DOptions(padding=padding, stride_w=2, stride_h=2, filter_width=3,
                          filter_height=2))


def test_log_softmax_float(request):
    """Quantized LOG_SOFTMAX has no NNAPI form (float only): a dedicated class."""
    check(request, B.LOG_SOFTMAX, [T((3, 17), F32)], [T((3, 17), F32)], O.LogSoftmaxOptions())


# -- reductions -------------------------------------------------------------------------------
# Quantized SUM has no NNAPI form (REDUCE_SUM is float only): a dedicated class.
@pytest.mark.parametrize("op,dtype", [(B.REDUCE_MAX, U8), (B.REDUCE_MAX, I8), (B.REDUCE_MAX, F32),
                                      (B.REDUCE_MIN, U8), (B.REDUCE_MIN, I8), (B.REDUCE_MIN, F32),
                                      (B.SUM, F32)])
@pytest.mark.parametrize("keep", [False, True])
def test_reduce(request, op, dtype, keep):
    q = q_out = _q(dtype, 0.1, 100)
    axes = T((2,), I32, data=np.array([1, -1], I32))
    out = (2, 1, 1) if keep else (2,)
    check(request, op, [T((2, 3, 4), dtype, q), axes], [T(out, dtype, q_out)],
          O.ReducerOptions(keep_dims=keep))


# -- resize, transpose conv ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [U8, I8, F32])
@pytest.mark.parametrize("ac,hp", [(False, False), (True, False), (False, True)])
def test_resize_nearest(request, dtype, ac, hp):
    q = _q(dtype, 0.1, 100)
    size = T((2,), I32, data=np.array([7, 5], I32))
    check(request, B.RESIZE_NEAREST_NEIGHBOR, [T((1, 3, 4, 2), dtype, q), size],
          [T((1, 7, 5, 2), dtype, q)],
          O.ResizeNearestNeighborOptions(align_corners=ac, half_pixel_centers=hp))


@pytest.mark.parametrize("dtype", [U8, F32])
@pytest.mark.parametrize("padding", [Padding.SAME, Padding.VALID])
def test_transpose_conv(request, dtype, padding):
    rng = np.random.default_rng(11)
    out_shape = (1, 8, 8, 3) if padding == Padding.SAME else (1, 9, 9, 3)
    shape = T((4,), I32, data=np.array(out_shape, I32))
    if dtype == F32:
        w = T((3, 3, 3, 2), F32, None, rng.standard_normal((3, 3, 3, 2)).astype(F32))
        x, out = T((1, 4, 4, 2), F32), T(out_shape, F32)
    else:
        w = T((3, 3, 3, 2), U8, (0.02, 128), rng.integers(90, 170, (3, 3, 3, 2)).astype(U8))
        x, out = T((1, 4, 4, 2), U8, (0.05, 120)), T(out_shape, U8, (0.2, 110))
    check(request, B.TRANSPOSE_CONV, [shape, w, x], [out],
          O.TransposeConvOptions(padding=padding, stride_w=2, stride_h=2))


# -- admission --------------------------------------------------------------------------------
def _builtins_named(path: Path) -> set:
    """Every ``B.NAME`` attribute mentioned in a test file."""
    if not path.exists():
        return set()
    tree = ast.parse(path.read_text())
    return {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == "B"}


def test_every_nnapi_backed_builtin_is_tested():
    named = _builtins_named(Path(__file__))
    for name in _GROUP_FILES:
        named |= _builtins_named(_HERE / name)
    missing = sorted(op.name for op in NNAPI_BACKED if op.name not in named)
    assert not missing, f"NNAPI-backed builtins without a LiteRT differential test: {missing}"


@pytest.mark.parametrize("dtype", [I8, F32])
def test_transpose_conv_with_bias(request, dtype):
    """TRANSPOSE_CONV with its optional bias (input 3); int8 with per-channel weights."""
    from nnsim.tflite.reader import Quantization
    rng = np.random.default_rng(13)
    shape = T((4,), I32, data=np.array([1, 9, 9, 3], I32))
    if dtype == F32:
        w = T((3, 3, 3, 2), F32, None, rng.standard_normal((3, 3, 3, 2)).astype(F32))
        bias = T((3,), F32, None, rng.standard_normal(3).astype(F32))
        x, out = T((1, 4, 4, 2), F32), T((1, 9, 9, 3), F32)
    else:
        scales = np.array([0.01, 0.012, 0.009], np.float32)
        w = T((3, 3, 3, 2), I8, Quantization(scales, np.zeros(3, np.int64), 0),
              rng.integers(-127, 128, (3, 3, 3, 2)).astype(I8))
        bias = T((3,), I32, Quantization(scales * 0.05, np.zeros(3, np.int64)),
                 rng.integers(-500, 500, 3).astype(I32))
        x, out = T((1, 4, 4, 2), I8, (0.05, -3)), T((1, 9, 9, 3), I8, (0.1, 4))
    check(request, B.TRANSPOSE_CONV, [shape, w, x, bias], [out],
          O.TransposeConvOptions(padding=Padding.VALID, stride_w=2, stride_h=2))
