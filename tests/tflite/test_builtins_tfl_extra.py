"""TFLite-only builtins of ``tfl_extra`` / ``tfl_segment`` against LiteRT: integer outputs
identical, float32 within 1e-5 relative (1e-6 absolute).

The oracle is LiteRT's BUILTIN_REF resolver, except for CEIL, ROUND and SEGMENT_SUM, which
BUILTIN_REF does not register: their only LiteRT kernels are the builtin resolver's, run here
without the default (XNNPACK) delegate (``ref=False`` below). Types LiteRT refuses are refused
by nnsim with UnsupportedOperatorError naming the operator.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from nnsim.tflite import Interpreter
from nnsim.tflite import options as O
from nnsim.tflite.builtins import UnsupportedOperatorError
from nnsim.tflite.schema import BuiltinOperator as B
from nnsim.tflite.schema import TensorType
from tests.tflite import test_builtins as tb
from tests.tflite.test_builtins import T, assert_same, build, litert, random_value
from tests.tflite.test_builtins_tfl_only import both_fail, const, q

U8, I8, I16, I32, I64, F16, F32, F64, BOOL = (np.uint8, np.int8, np.int16, np.int32, np.int64,
                                              np.float16, np.float32, np.float64, np.bool_)
tb._TT.setdefault(np.dtype(F64), TensorType.FLOAT64)    # SIGN takes float64


def run(blob, feeds, ref=True):
    """nnsim's outputs and LiteRT's (BUILTIN_REF, or the builtin kernels without XNNPACK)."""
    kind = litert.OpResolverType.BUILTIN_REF if ref else \
        litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    results = []
    for ip in (Interpreter(model_content=blob),
               litert.Interpreter(model_content=blob, num_threads=1,
                                  experimental_op_resolver_type=kind)):
        ip.allocate_tensors()
        for d, v in zip(ip.get_input_details(), feeds):
            ip.set_tensor(d["index"], v)
        ip.invoke()
        results.append([ip.get_tensor(d["index"]) for d in ip.get_output_details()])
    return results


def check(request, op, inputs, outputs, options=None, feeds=None, ref=True):
    rng = np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
    if feeds is None:
        feeds = [random_value(rng, s) for s in inputs if s is not None and s.data is None]
    ours, theirs = run(build(op, inputs, outputs, options), feeds, ref)
    assert_same(ours, theirs)
    return ours


def refused(op, inputs, outputs, options=None):
    """LiteRT rejects the model; nnsim refuses it with UnsupportedOperatorError naming op."""
    blob = build(op, inputs, outputs, options)
    both_fail(blob, [np.zeros(s.shape, s.dtype) for s in inputs if s.data is None])
    with pytest.raises(UnsupportedOperatorError, match=op.name):
        Interpreter(model_content=blob).allocate_tensors()


# -- ADD_N, CEIL, ROUND, SIGN, RELU_0_TO_1 ----------------------------------------------------
@pytest.mark.parametrize("dtype", [F32, I32])
@pytest.mark.parametrize("n", [2, 5])
def test_add_n(request, dtype, n):
    check(request, B.ADD_N, [T((3, 4, 5), dtype)] * n, [T((3, 4, 5), dtype)], O.AddNOptions())


def test_add_n_float_clamps_to_finite_and_int_wraps(request):
    big = np.array([3e38, np.inf, -np.inf, 1.0], F32)
    ours = check(request, B.ADD_N, [T((4,))] * 3, [T((4,))], O.AddNOptions(),
                 feeds=[big, big, np.ones(4, F32)])
    assert np.isfinite(ours[0]).all()       # each partial sum is clamped to +-FLT_MAX
    ours = check(request, B.ADD_N, [T((2,), I32)] * 2, [T((2,), I32)], O.AddNOptions(),
                 feeds=[np.array([2**31 - 1, 5], I32), np.array([1, -7], I32)])
    np.testing.assert_array_equal(ours[0], [-2**31, -2])


def test_ceil(request):
    x = np.array([-2.5, -0.5, -0.0, 0.2, 1.0, 7.0001, np.inf, -3e9], F32)
    check(request, B.CEIL, [T(x.shape)], [T(x.shape)], feeds=[x], ref=False)
    check(request, B.CEIL, [T((4, 9))], [T((4, 9))], ref=False)


@pytest.mark.parametrize("dtype", [F32, F16])
def test_round_half_to_even(request, dtype):
    x = np.array([-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 1.49, -1.51, 1000.5, np.inf,
                  -0.3], dtype)
    ours = check(request, B.ROUND, [T(x.shape, dtype)], [T(x.shape, dtype)], feeds=[x],
                 ref=False)
    np.testing.assert_array_equal(ours[0][:8], [-4, -2, -2, 0, 0, 2, 2, 4])
    check(request, B.ROUND, [T((6, 7), dtype)], [T((6, 7), dtype)], ref=False)


@pytest.mark.parametrize("dtype", [F32, F64, I32])
def test_sign(request, dtype):
    x = (np.arange(-6, 6) * 0.75).astype(dtype)
    if dtype != I32:
        x[:2] = [np.nan, -0.0]
    ours = check(request, B.SIGN, [T(x.shape, dtype)], [T(x.shape, dtype)], feeds=[x])
    assert np.isnan(ours[0][0]) if dtype != I32 else True


@pytest.mark.parametrize("dtype,qin,qout", [
    (F32, None, None), (U8, (0.01, 120), (0.005, 3)), (I8, (0.02, -10), (1 / 255, -128)),
    (I8, (0.004, 5), (0.1, 2))])
def test_relu_0_to_1(request, dtype, qin, qout):
    check(request, B.RELU_0_TO_1, [T((4, 64), dtype, qin)], [T((4, 64), dtype, qout)])


@pytest.mark.parametrize("op,dtype", [(B.ADD_N, I8), (B.SIGN, I8), (B.RELU_0_TO_1, I16),
                                      (B.FLOOR_MOD, U8)])
def test_unsupported_types_are_refused(op, dtype):
    n = 2 if op in (B.ADD_N, B.FLOOR_MOD) else 1
    quant = (0.01, 0) if op == B.RELU_0_TO_1 else None
    refused(op, [T((3,), dtype, quant)] * n, [T((3,), dtype, quant)])


# -- FLOOR_MOD --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [I8, I16, I32, I64, F32])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((1, 4), (3, 1))])
def test_floor_mod(request, dtype, shapes):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(shapes[0]) * 40).astype(dtype)
    b = (rng.integers(1, 9, shapes[1]) * rng.choice([-1, 1], shapes[1])).astype(dtype)
    if dtype == F32:
        b = b * F32(0.75)
    out = tuple(np.broadcast_shapes(*shapes))
    check(request, B.FLOOR_MOD, [T(shapes[0], dtype), T(shapes[1], dtype)], [T(out, dtype)],
          O.FloorModOptions(), feeds=[a, b])


def test_floor_mod_by_zero_fails():
    blob = build(B.FLOOR_MOD, [T((3,), I32), const([1, 0, 2])], [T((3,), I32)])
    both_fail(blob, [np.array([5, 6, 7], I32)], match="division by 0")


# -- REDUCE_ALL, ONE_HOT ----------------------------------------------------------------------
@pytest.mark.parametrize("axes", [[1], [0, -1], [2, 0, 1], [-2, 1]])
@pytest.mark.parametrize("keep_dims", [False, True])
def test_reduce_all(request, axes, keep_dims):
    x = np.random.default_rng(4).random((3, 4, 5)) < 0.9
    x[1] = True
    check(request, B.REDUCE_ALL, [T(x.shape, BOOL), const(axes)], [T((1,), BOOL)],
          O.ReducerOptions(keep_dims=keep_dims), feeds=[x])


def test_reduce_all_axes_fed_at_run_time(request):
    x = np.ones((2, 3, 4), bool)
    x[1, 2, 3] = False
    check(request, B.REDUCE_ALL, [T(x.shape, BOOL), T((2,), I32)], [T((1,), BOOL)],
          O.ReducerOptions(), feeds=[x, np.array([2, 0], I32)])


def test_reduce_all_refuses_float():
    refused(B.REDUCE_ALL, [T((2, 3)), const([1])], [T((2,))], O.ReducerOptions())


@pytest.mark.parametrize("dtype", [F32, I32, I64, I8, U8, BOOL])
@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("idx_dtype", [I32, I64])
def test_one_hot(request, dtype, axis, idx_dtype):
    idx = np.array([[0, 3, -1, 4], [2, 7, 1, 1]], idx_dtype)    # -1 and 7 are off
    on, off = (np.array(v, dtype) for v in ((True, False) if dtype == BOOL else (5, -2 if
                                            dtype != U8 else 9)))
    check(request, B.ONE_HOT, [T(idx.shape, idx_dtype), const(5), const(on, dtype),
                               const(off, dtype)], [T((1,), dtype)],
          O.OneHotOptions(axis=axis), feeds=[idx])


def test_one_hot_int16_and_unique_bool_are_refused():
    refused(B.ONE_HOT, [T((3,), I32), const(4), const(1, I16), const(0, I16)],
            [T((3, 4), I16)], O.OneHotOptions(axis=-1))
    refused(B.UNIQUE, [T((3,), BOOL)], [T((3,), BOOL), T((3,), I32)], O.UniqueOptions())


def test_one_hot_depth_fed_at_run_time(request):
    idx = np.array([0, 2, 1, 5], I32)
    check(request, B.ONE_HOT, [T((4,), I32), T((), I32), const(1.5, F32), const(0.0, F32)],
          [T((1,))], O.OneHotOptions(axis=-1), feeds=[idx, np.array(6, I32)])


# -- REVERSE_SEQUENCE, MATRIX_DIAG, MATRIX_SET_DIAG, DYNAMIC_UPDATE_SLICE -----------------------
@pytest.mark.parametrize("dtype", [F32, U8, I16, I32, I64])
@pytest.mark.parametrize("seq_dim,batch_dim", [(1, 0), (0, 2), (2, 1), (3, 0)])
@pytest.mark.parametrize("len_dtype", [I32, I64])
def test_reverse_sequence(request, dtype, seq_dim, batch_dim, len_dtype):
    shape = (3, 4, 5, 4)
    lengths = np.array([shape[seq_dim], 0, 2, 1, 3][:shape[batch_dim]], len_dtype)
    check(request, B.REVERSE_SEQUENCE, [T(shape, dtype), const(lengths, len_dtype)],
          [T(shape, dtype)], O.ReverseSequenceOptions(seq_dim=seq_dim, batch_dim=batch_dim))


def test_reverse_sequence_refuses_int8():
    refused(B.REVERSE_SEQUENCE, [T((2, 3), I8), const([1, 2])], [T((2, 3), I8)],
            O.ReverseSequenceOptions(seq_dim=1, batch_dim=0))


@pytest.mark.parametrize("dtype", [F32, I64, I32, I16, I8, U8])
@pytest.mark.parametrize("shape", [(5,), (2, 3, 4)])
def test_matrix_diag(request, dtype, shape):
    check(request, B.MATRIX_DIAG, [T(shape, dtype)], [T(shape + shape[-1:], dtype)],
          O.MatrixDiagOptions())


@pytest.mark.parametrize("dtype", [F32, I64, I32, I16, I8, U8])
@pytest.mark.parametrize("shape", [(3, 4), (2, 5, 3), (2, 2, 4, 4)])
def test_matrix_set_diag(request, dtype, shape):
    diag = shape[:-2] + (min(shape[-2:]),)
    check(request, B.MATRIX_SET_DIAG, [T(shape, dtype), T(diag, dtype)], [T(shape, dtype)],
          O.MatrixSetDiagOptions())


def test_matrix_diag_refuses_bool():
    # LiteRT would copy the bools as 4-byte floats; nnsim refuses them
    with pytest.raises(UnsupportedOperatorError, match="MATRIX_DIAG"):
        Interpreter(model_content=build(B.MATRIX_DIAG, [T((3,), BOOL)],
                                        [T((3, 3), BOOL)])).allocate_tensors()


@pytest.mark.parametrize("dtype", [F32, F16, I8, U8, I16, I32, I64, BOOL])
@pytest.mark.parametrize("start", [[1, 2, 0], [0, -3, 9], [5, 1, 1]])
def test_dynamic_update_slice(request, dtype, start):
    check(request, B.DYNAMIC_UPDATE_SLICE,
          [T((4, 5, 3), dtype, q(dtype)), T((2, 3, 3), dtype, q(dtype)), const(start)],
          [T((4, 5, 3), dtype, q(dtype))], O.DynamicUpdateSliceOptions())


@pytest.mark.parametrize("idx_dtype", [I32, I64])
def test_dynamic_update_slice_start_fed_at_run_time(request, idx_dtype):
    check(request, B.DYNAMIC_UPDATE_SLICE, [T((6, 7)), T((2, 4)), T((2,), idx_dtype)],
          [T((6, 7))], O.DynamicUpdateSliceOptions(),
          feeds=[np.zeros((6, 7), F32), np.ones((2, 4), F32), np.array([3, 5], idx_dtype)])


# -- SEGMENT_SUM, UNSORTED_SEGMENT_* ----------------------------------------------------------
@pytest.mark.parametrize("dtype", [F32, I32])
def test_segment_sum(request, dtype):
    ids = np.array([0, 0, 0, 1, 2, 2, 3, 3], I32)
    check(request, B.SEGMENT_SUM, [T((8, 3, 2), dtype), const(ids)], [T((4, 3, 2), dtype)],
          O.SegmentSumOptions(), ref=False)


def test_segment_sum_ids_fed_at_run_time(request):
    check(request, B.SEGMENT_SUM, [T((5, 2)), T((5,), I32)], [T((1, 2))],
          O.SegmentSumOptions(), ref=False,
          feeds=[np.arange(10, dtype=F32).reshape(5, 2), np.array([0, 1, 1, 2, 2], I32)])


def test_segment_sum_unsorted_ids_fail():
    blob = build(B.SEGMENT_SUM, [T((3,)), const([0, 2, 1])], [T((3,))], O.SegmentSumOptions())
    with pytest.raises((RuntimeError, ValueError)):
        Interpreter(model_content=blob).allocate_tensors()


_UNSORTED = [(B.UNSORTED_SEGMENT_SUM, O.UnsortedSegmentSumOptions),
             (B.UNSORTED_SEGMENT_PROD, O.UnsortedSegmentProdOptions),
             (B.UNSORTED_SEGMENT_MAX, O.UnsortedSegmentMaxOptions),
             (B.UNSORTED_SEGMENT_MIN, O.UnsortedSegmentMinOptions)]


@pytest.mark.parametrize("op,opts", _UNSORTED)
@pytest.mark.parametrize("dtype", [F32, I32])
@pytest.mark.parametrize("ids", [[3, 0, -1, 3, 1, 0, 3], [[1, -2, 1], [0, 4, 4]]])
def test_unsorted_segment(request, op, opts, dtype, ids):
    ids = np.array(ids, I32)
    shape = ids.shape + (3,)
    data = (np.random.default_rng(6).standard_normal(shape) * 4).astype(dtype)
    check(request, op, [T(shape, dtype), const(ids), const(6)], [T((6, 3), dtype)], opts(),
          feeds=[data])


@pytest.mark.parametrize("op,opts", _UNSORTED)
def test_unsorted_segment_fed_at_run_time(request, op, opts):
    rng = np.random.default_rng(7)
    ids = rng.integers(-1, 5, 300).astype(I32)
    data = (rng.standard_normal((300, 2)) * 100).astype(F32)   # long float sums / products
    if op == B.UNSORTED_SEGMENT_PROD:
        data = (1 + data / 1000).astype(F32)
    check(request, op, [T((300, 2)), T((300,), I32), T((), I32)], [T((1, 2))], opts(),
          feeds=[data, ids, np.array(7, I32)])


# -- UNIQUE ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [I8, I16, I32, I64, F32, U8])
@pytest.mark.parametrize("idx", [I32, I64])
def test_unique(request, dtype, idx):
    x = np.random.default_rng(8).integers(0, 12, 40).astype(dtype)
    if dtype == F32:
        x[[3, 9]] = [-0.0, 0.0]
    check(request, B.UNIQUE, [T(x.shape, dtype)], [T((1,), dtype), T(x.shape, idx)],
          O.UniqueOptions(idx_out_type=TensorType.INT32 if idx == I32 else TensorType.INT64),
          feeds=[x])


# -- NON_MAX_SUPPRESSION_V4 / V5 --------------------------------------------------------------
def _boxes(rng, n, ties):
    centre = rng.random((n, 2)) * 10
    size = rng.random((n, 2)) * 4 + 0.5
    boxes = np.concatenate([centre - size / 2, centre + size / 2], 1)
    boxes[::3] = boxes[::3][:, [2, 3, 0, 1]]            # flipped corners
    scores = rng.random(n)
    if ties:
        scores = np.round(scores * 4) / 4               # many equal scores
    return boxes.astype(F32), scores.astype(F32)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("max_out,iou,score_thr", [(10, 0.5, 0.2), (40, 0.3, -1.0),
                                                    (3, 0.7, 0.6), (0, 0.5, 0.0)])
def test_nms_v4(request, ties, max_out, iou, score_thr):
    boxes, scores = _boxes(np.random.default_rng(9), 60, ties)
    check(request, B.NON_MAX_SUPPRESSION_V4,
          [T(boxes.shape), T(scores.shape), const(max_out), const(iou, F32),
           const(score_thr, F32)], [T((max_out,), I32), T((), I32)],
          O.NonMaxSuppressionV4Options(), feeds=[boxes, scores])


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("sigma,iou,score_thr", [(0.0, 0.5, 0.1), (0.5, 1.0, 0.05),
                                                 (0.3, 0.6, 0.3), (2.0, 0.4, 0.0)])
def test_nms_v5(ties, sigma, iou, score_thr):
    """Decayed scores are bit-identical too (float32 arithmetic in TFLite's order, C's
    expf)."""
    boxes, scores = _boxes(np.random.default_rng(10), 80, ties)
    blob = build(B.NON_MAX_SUPPRESSION_V5,
                 [T(boxes.shape), T(scores.shape), const(25), const(iou, F32),
                  const(score_thr, F32), const(sigma, F32)],
                 [T((25,), I32), T((25,)), T((), I32)], O.NonMaxSuppressionV5Options())
    ours, theirs = run(blob, [boxes, scores])
    assert_same(ours, theirs)
    np.testing.assert_array_equal(ours[1], theirs[1])


def test_nms_max_output_size_fed_at_run_time(request):
    boxes, scores = _boxes(np.random.default_rng(11), 30, True)
    check(request, B.NON_MAX_SUPPRESSION_V5,
          [T(boxes.shape), T(scores.shape), T((), I32), const(0.5, F32), const(0.1, F32),
           const(0.4, F32)], [T((1,), I32), T((1,)), T((), I32)],
          O.NonMaxSuppressionV5Options(), feeds=[boxes, scores, np.array(7, I32)])


def test_nms_negative_sigma_fails():
    boxes, scores = _boxes(np.random.default_rng(12), 5, False)
    blob = build(B.NON_MAX_SUPPRESSION_V5,
                 [T(boxes.shape), T(scores.shape), const(3), const(0.5, F32), const(0.0, F32),
                  const(-1.0, F32)], [T((3,), I32), T((3,)), T((), I32)],
                 O.NonMaxSuppressionV5Options())
    both_fail(blob, [boxes, scores], match="sigma")


@pytest.mark.parametrize("sigma", [0.0, 0.5])
def test_nms_kernel_matches_its_reference(sigma):
    from nnsim.kernels.reference.non_max_suppression import non_max_suppression as ref_nms
    from nnsim.kernels.non_max_suppression import non_max_suppression as nms
    for seed in range(6):
        boxes, scores = _boxes(np.random.default_rng(100 + seed), 50, seed % 2 == 0)
        got, want = nms(boxes, scores, 30, 0.45, 0.05, sigma), \
            ref_nms(boxes, scores, 30, 0.45, 0.05, sigma)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        assert got[2] == want[2]
