"""Comparisons, LOGICAL_*, SELECT / SELECT_V2, POW and SIN on nnsim's TFLite CPU path against
LiteRT's reference kernels (BUILTIN_REF): integer and bool outputs identical, float32 within
1e-5 relative.

Quantized comparisons use scales where TFLite's integer rescaling and NNAPI's float compare
disagree (1e-3: neighbouring values compare equal in TFLite), quantized SELECT uses inputs whose
parameters differ from the output's (TFLite copies raw values, NNAPI requantizes).
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from nnsim.tflite.schema import BuiltinOperator as B

from .test_builtins import I8, F32, U8, T, check

BOOL, I16, I32, I64 = np.bool_, np.int16, np.int32, np.int64
COMPARISONS = [B.EQUAL, B.NOT_EQUAL, B.GREATER, B.GREATER_EQUAL, B.LESS, B.LESS_EQUAL]
_SHAPES = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 5)), ((2, 1, 2, 1, 3), (2, 1))]


def _rng(request):
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


def _small(rng, shape, dtype):
    """Values from a small range, so that equal values occur."""
    if np.dtype(dtype) == BOOL:
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind == "f":
        return rng.integers(-3, 4, shape).astype(dtype) / np.asarray(2, dtype)
    return rng.integers(-3, 4, shape).astype(dtype)


@pytest.mark.parametrize("op", COMPARISONS)
@pytest.mark.parametrize("dtype", [F32, I32, I64])
@pytest.mark.parametrize("shapes", _SHAPES)
def test_comparison_values(request, op, dtype, shapes):
    rng = _rng(request)
    a, b = _small(rng, shapes[0], dtype), _small(rng, shapes[1], dtype)
    out = np.broadcast_shapes(*shapes)
    check(request, op, [T(shapes[0], dtype), T(shapes[1], dtype)], [T(out, BOOL)], feeds=[a, b])


@pytest.mark.parametrize("op,dtype", [(B.EQUAL, BOOL), (B.NOT_EQUAL, BOOL), (B.EQUAL, I16),
                                      (B.GREATER_EQUAL, I16), (B.LESS, I16)])
def test_comparison_bool_and_int16(request, op, dtype):
    rng = _rng(request)
    a, b = _small(rng, (3, 4), dtype), _small(rng, (4,), dtype)
    check(request, op, [T((3, 4), dtype), T((4,), dtype)], [T((3, 4), BOOL)], feeds=[a, b])


@pytest.mark.parametrize("op", COMPARISONS)
@pytest.mark.parametrize("dtype", [U8, I8])
@pytest.mark.parametrize("q1,q2", [((0.05, 10), (0.0031, -3)), ((1e-3, 0), (1e-3, 0)),
                                   ((0.5, 7), (0.25, 7))])
def test_quantized_comparison_rescales_in_integers(request, op, dtype, q1, q2):
    rng = _rng(request)
    zp1, zp2 = (q1[1] + 128, q2[1] + 128) if dtype == U8 else (q1[1], q2[1])
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max + 1, (4, 8)).astype(dtype)
    b = rng.integers(info.min, info.max + 1, (8,)).astype(dtype)
    b[:4] = a[0, :4] + np.array([0, 1, -1, 2]).astype(dtype)  # near-ties with row 0
    check(request, op, [T((4, 8), dtype, (q1[0], zp1)), T((8,), dtype, (q2[0], zp2))],
          [T((4, 8), BOOL)], feeds=[a, b])


@pytest.mark.parametrize("op", [B.LOGICAL_AND, B.LOGICAL_OR])
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1), (1, 5))])
def test_logical_and_or(request, op, shapes):
    out = np.broadcast_shapes(*shapes)
    check(request, op, [T(shapes[0], BOOL), T(shapes[1], BOOL)], [T(out, BOOL)])


def test_logical_not(request):
    check(request, B.LOGICAL_NOT, [T((3, 5), BOOL)], [T((3, 5), BOOL)])


@pytest.mark.parametrize("dtype,q", [(F32, None), (I32, None), (I64, None), (I16, None),
                                     (BOOL, None), (U8, ((1.5, 129), (0.5, 127), (1.0, 128))),
                                     (I8, ((1.5, 1), (0.5, -1), (1.0, 0)))])
@pytest.mark.parametrize("cond", [(2, 3), (2,), ()])
def test_select_copies_raw_values(request, dtype, q, cond):
    qx, qy, qo = q if q is not None else (None, None, None)
    check(request, B.SELECT, [T(cond, BOOL), T((2, 3), dtype, qx), T((2, 3), dtype, qy)],
          [T((2, 3), dtype, qo)])


@pytest.mark.parametrize("dtype,q", [(F32, None), (I32, None),
                                     (U8, ((1.5, 129), (0.5, 127), (1.0, 128))),
                                     (I8, ((1.5, 1), (0.5, -1), (1.0, 0)))])
@pytest.mark.parametrize("shapes", [((2, 1), (3,), (1, 3)), ((), (2, 3), (2, 3)),
                                    ((2, 3), (1,), ())])
def test_select_v2_broadcasts(request, dtype, q, shapes):
    qx, qy, qo = q if q is not None else (None, None, None)
    out = np.broadcast_shapes(*shapes)
    check(request, B.SELECT_V2, [T(shapes[0], BOOL), T(shapes[1], dtype, qx),
                                 T(shapes[2], dtype, qy)], [T(out, dtype, qo)])


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 3), (4, 1))])
def test_pow_float32(request, shapes):
    rng = _rng(request)
    base = rng.uniform(0.05, 6, shapes[0]).astype(F32)
    base.flat[0] = -2.0   # negative base, integral exponent below
    exp = rng.uniform(-3, 3, shapes[1]).astype(F32)
    exp.flat[0] = 3.0
    out = np.broadcast_shapes(*shapes)
    check(request, B.POW, [T(shapes[0], F32), T(shapes[1], F32)], [T(out, F32)],
          feeds=[base, exp])


def test_pow_int32_truncates_and_overflows_like_litert(request):
    base = np.int32([[2, 3, -2, 2, 46341, -3, 0, 7]])
    exp = np.int32([10, 0, 3, 31, 2, 3, 0, 11])
    check(request, B.POW, [T((1, 8), I32), T((8,), I32)], [T((1, 8), I32)], feeds=[base, exp])


def test_sin(request):
    rng = _rng(request)
    x = rng.uniform(-20, 20, (4, 6)).astype(F32)
    check(request, B.SIN, [T((4, 6), F32)], [T((4, 6), F32)], feeds=[x])
