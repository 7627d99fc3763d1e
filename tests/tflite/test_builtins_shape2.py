"""TILE, FILL, RANK, REDUCE_ANY, REDUCE_PROD, TOPK_V2, PACK, MIRROR_PAD, REVERSE_V2 and
BATCH_MATMUL on nnsim's TFLite CPU path against LiteRT's reference kernels (BUILTIN_REF):
integer and bool outputs identical, float32 within 1e-5 relative.

TILE, FILL, REDUCE_ANY, PACK and MIRROR_PAD run through their NNAPI lowering (NNAPI-backed);
RANK, TOPK_V2, REVERSE_V2, BATCH_MATMUL and REDUCE_PROD have dedicated builtins
(``nnsim.tflite.builtins.shape2``) because TFLite's kernels differ from the NNAPI operations:
the cases marked "TFLite-only" below are where they differ (ties, negative or several axes,
batch broadcasting, ``0 * inf``).
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from nnsim.tflite import Interpreter
from nnsim.tflite import options as O
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import MirrorPadMode

from .test_builtins import F32, I8, U8, T, build, check, litert

BOOL, I32, I64 = np.bool_, np.int32, np.int64
_Q = {U8: (0.5, 130), I8: (0.25, -3)}


def _rng(request):
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


def _c(values, dtype=I32):
    return np.asarray(values, dtype=dtype)


# -- TILE, FILL, RANK ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [F32, U8, I8, I32])
@pytest.mark.parametrize("shape,multiples", [((2, 3), (2, 3)), ((1, 4, 1, 2), (3, 1, 2, 1)),
                                             ((5,), (1,))])
def test_tile(request, dtype, shape, multiples):
    out = tuple(s * m for s, m in zip(shape, multiples))
    check(request, B.TILE, [T(shape, dtype, _Q.get(dtype)), T((len(shape),), I32,
                                                             data=_c(multiples))],
          [T(out, dtype, _Q.get(dtype))])


@pytest.mark.parametrize("dtype", [F32, I32])
@pytest.mark.parametrize("dims_dtype", [I32, I64])
def test_fill(request, dtype, dims_dtype):
    check(request, B.FILL, [T((3,), dims_dtype, data=_c([2, 1, 3], dims_dtype)), T((), dtype)],
          [T((2, 1, 3), dtype)])
    check(request, B.FILL, [T((1,), dims_dtype, data=_c([4], dims_dtype)),
                            T((), dtype, data=_c(-7, dtype))], [T((4,), dtype)])


@pytest.mark.parametrize("spec", [T((2, 3, 4), F32), T((5,), I8, (0.5, 1)), T((1, 1), BOOL),
                                  T((2, 1, 1, 1, 3), I64)])
def test_rank(request, spec):
    check(request, B.RANK, [spec], [T((), I32)])


# -- REDUCE_ANY, REDUCE_PROD --------------------------------------------------------------------
@pytest.mark.parametrize("axes,keep,out", [([1], False, (2, 4)), ([0, -1], True, (1, 3, 1)),
                                           ([2, 2], False, (2, 3))])
def test_reduce_any(request, axes, keep, out):
    x = _rng(request).random((2, 3, 4)) < 0.15   # mostly false, so rows differ
    check(request, B.REDUCE_ANY, [T((2, 3, 4), BOOL), T((len(axes),), I32, data=_c(axes))],
          [T(out, BOOL)], O.ReducerOptions(keep_dims=keep), feeds=[x])


@pytest.mark.parametrize("axes,keep,out", [([1], False, (2, 4)), ([0, -1], True, (1, 3, 1)),
                                           ([0, 1, 2], False, ())])
def test_reduce_prod_float(request, axes, keep, out):
    x = _rng(request).uniform(0.5, 1.6, (2, 3, 4)).astype(F32)
    x *= np.where(_rng(request).random((2, 3, 4)) < 0.3, -1, 1).astype(F32)
    check(request, B.REDUCE_PROD, [T((2, 3, 4), F32), T((len(axes),), I32, data=_c(axes))],
          [T(out, F32)], O.ReducerOptions(keep_dims=keep), feeds=[x])


def test_reduce_prod_tflite_only_zero_times_inf_and_int32(request):
    x = np.asarray([[0.0, np.inf, 2.0], [3.0, -0.0, 1.0]], F32)
    ours = check(request, B.REDUCE_PROD, [T((2, 3), F32), T((1,), I32, data=_c([1]))],
                 [T((2,), F32)], O.ReducerOptions(), feeds=[x])[0]
    assert np.isnan(ours[0]) and ours[1] == 0   # NNAPI's REDUCE_PROD would give 0
    ints = _rng(request).integers(-5, 6, (3, 4)).astype(I32)
    check(request, B.REDUCE_PROD, [T((3, 4), I32), T((1,), I32, data=_c([0]))], [T((4,), I32)],
          O.ReducerOptions(), feeds=[ints])


# -- TOPK_V2 ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [F32, U8, I8, I32, I64])
@pytest.mark.parametrize("k", [1, 5, 12])
def test_topk_v2_ties_by_index_ascending(request, dtype, k):
    # TFLite-only: values from a small range, so most rows have ties
    x = _rng(request).integers(0, 5, (3, 2, 12)).astype(dtype)
    check(request, B.TOPK_V2, [T((3, 2, 12), dtype, _Q.get(dtype)), T((), I32, data=_c(k))],
          [T((3, 2, k), dtype, _Q.get(dtype)), T((3, 2, k), I32)], feeds=[x])


def test_topk_v2_float(request):
    check(request, B.TOPK_V2, [T((4, 30), F32), T((), I32, data=_c(7))],
          [T((4, 7), F32), T((4, 7), I32)])


# -- PACK, MIRROR_PAD, REVERSE_V2 ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", [F32, U8, I8, I32])
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_pack(request, dtype, axis):
    shape, n = (2, 3), 3
    out = list(shape)
    out.insert(axis % 3, n)
    q = _Q.get(dtype)
    check(request, B.PACK, [T(shape, dtype, q)] * n, [T(tuple(out), dtype, q)],
          O.PackOptions(values_count=n, axis=axis))


@pytest.mark.parametrize("dtype", [F32, U8, I8, I32])
@pytest.mark.parametrize("mode", [MirrorPadMode.REFLECT, MirrorPadMode.SYMMETRIC])
@pytest.mark.parametrize("pads", [[[1, 2], [2, 0], [0, 1]], [[0, 0], [3, 3], [1, 1]]])
def test_mirror_pad(request, dtype, mode, pads):
    shape = (3, 4, 2)
    if mode == MirrorPadMode.REFLECT:   # REFLECT pads at most size - 1 per side
        pads = [[min(b, s - 1), min(a, s - 1)] for (b, a), s in zip(pads, shape)]
    out = tuple(s + b + a for s, (b, a) in zip(shape, pads))
    check(request, B.MIRROR_PAD, [T(shape, dtype, _Q.get(dtype)), T((3, 2), I32,
                                                                   data=_c(pads))],
          [T(out, dtype, _Q.get(dtype))], O.MirrorPadOptions(mode=mode))


@pytest.mark.parametrize("dtype", [F32, U8, I8, I32])
@pytest.mark.parametrize("axes", [[0], [2], [-1], [2, 1], [-3, -2], [0, 1, 2]])
def test_reverse_v2(request, dtype, axes):
    # TFLite-only: negative and several axes (NNAPI REVERSE takes one axis in [0, rank))
    check(request, B.REVERSE_V2, [T((2, 3, 4), dtype, _Q.get(dtype)),
                                  T((len(axes),), I32, data=_c(axes))],
          [T((2, 3, 4), dtype, _Q.get(dtype))])


@pytest.mark.parametrize("axes", [[0, 2], [1, 1], [1, -2]])
def test_reverse_v2_refuses_non_contiguous_axes_like_litert(axes):
    blob = build(B.REVERSE_V2, [T((2, 3, 4), F32), T((len(axes),), I32, data=_c(axes))],
                 [T((2, 3, 4), F32)])
    x = np.zeros((2, 3, 4), F32)
    for make in (lambda: Interpreter(model_content=blob),
                 lambda: litert.Interpreter(model_content=blob, num_threads=1,
                                            experimental_op_resolver_type=litert.OpResolverType
                                            .BUILTIN_REF)):
        ip = make()
        ip.allocate_tensors()
        ip.set_tensor(ip.get_input_details()[0]["index"], x)
        with pytest.raises(RuntimeError, match="(?i)non-contiguous"):
            ip.invoke()


# -- BATCH_MATMUL -------------------------------------------------------------------------------
def _swap(shape, adj):
    return shape[:-2] + shape[-2:][::-1] if adj else shape


_BMM_SHAPES = [((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((2, 2, 3, 4), (2, 1, 4, 5)),
               ((1, 3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5))]   # the last two: TFLite-only


@pytest.mark.parametrize("adj", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("shapes", _BMM_SHAPES)
def test_batch_matmul_float(request, shapes, adj):
    lhs, rhs = _swap(shapes[0], adj[0]), _swap(shapes[1], adj[1])
    batch = np.broadcast_shapes(shapes[0][:-2], shapes[1][:-2])
    out = tuple(batch) + (shapes[0][-2], shapes[1][-1])
    check(request, B.BATCH_MATMUL, [T(lhs, F32), T(rhs, F32)], [T(out, F32)],
          O.BatchMatMulOptions(adj_x=adj[0], adj_y=adj[1]))


@pytest.mark.parametrize("adj", [(False, False), (True, True)])
@pytest.mark.parametrize("q", [((0.05, 3), (0.03, -2), (0.5, 1)),
                               ((0.5, 0), (0.5, 0), (1.0, 0)),   # multiplier 0.25: ties
                               ((0.01, -128), (0.02, 127), (0.003, -5))])
def test_batch_matmul_int8(request, adj, q):
    lhs, rhs = _swap((2, 3, 40), adj[0]), _swap((1, 40, 5), adj[1])
    check(request, B.BATCH_MATMUL, [T(lhs, I8, q[0]), T(rhs, I8, q[1], data=_rng(request)
                                                        .integers(-128, 128, rhs).astype(I8))],
          [T((2, 3, 5), I8, q[2])], O.BatchMatMulOptions(adj_x=adj[0], adj_y=adj[1]))


def test_batch_matmul_int8_rounding_ties(request):
    # acc = 2 * x with multiplier 0.25: every odd x is a .5 tie; LiteRT rounds ties away
    # from zero (gemmlowp double rounding), as NNAPI's CPU executor does
    x = np.arange(-64, 64, dtype=I8).reshape(128, 1)
    check(request, B.BATCH_MATMUL, [T((128, 1), I8, (0.5, 0)),
                                    T((1, 1), I8, (0.5, 0), data=_c([[2]], I8))],
          [T((128, 1), I8, (1.0, 0))], O.BatchMatMulOptions(), feeds=[x])
