"""LSH_PROJECTION and RANDOM_MULTINOMIAL on the CPU executor.

Oracles: FarmHash's published Fingerprint64 (farmhashna::Hash64) test values; keys built from
those strings, whose projection bit is the sign of a known hash; AOSP's LSHProjectionTest
example; LiteRT's BUILTIN_REF LSH_PROJECTION on random inputs; the Python-integer reference
(kernels/reference/lsh.py) for the numba core; and for the multinomial, a chi-square test of
the drawn classes against softmax(logits).
"""
import dataclasses
import math

import numpy as np
import pytest

from nnsim.errors import OperationValidationError, OpFailedError
from nnsim.kernels import lsh
from nnsim.kernels.reference import lsh as ref
from nnsim.types import FL1, FL3
from nnsim.types import OperationCode as C

from .ophelp import build, f16, f32, feature_level, i32, i32t, q8, run1, s8

LSH, MULTI = C.LSH_PROJECTION, C.RANDOM_MULTINOMIAL
SPARSE_DEPRECATED, DENSE, SPARSE = 1, 2, 3

# farmhashna::Hash64 of ASCII strings, from FarmHash's test data (as published with its ports,
# e.g. dgryski/go-farm and Guava's FarmHashFingerprint64Test).
PUBLISHED = [
    ("", 0x9AE16A3B2F90404F), ("a", 0xB3454265B6DF75E3), ("abc", 0x24A5B3A074E7F369),
    ("abcd", 0x1A5502DE4A1F8101), ("abcdefgh", 0xFEE9D22990C82909),
    ("test", 8581389452482819506),
    ("0123456789=012345", 0x46A7416ED4861E3B),
    ("C is as portable as Stonehedge!!", 0xB944F8A16261E414),
    ("Discard medicine more than two years old.", 0xE8F89AB6DF9BDD25),
    ("For every action there is an equal and opposite government program.",
     0x55182F8859ECA4CE),
    ("test" * 8, 2 ** 64 - 4196240717365766262),
]


def omitted(o):
    return dataclasses.replace(o, omitted=True)


def seed_of(four: bytes) -> float:
    """The float32 whose bytes are ``four``: the key of a projection starts with them."""
    return float(np.frombuffer(four, dtype="<f4")[0])


def lsh_op(hash_op, input_op, weight_op, kind, n_out, feeds):
    return run1(LSH, [hash_op, input_op, weight_op, i32(kind)], [i32t([n_out])], *feeds)


# -- Fingerprint64 ---------------------------------------------------------------------------
@pytest.mark.parametrize("text,want", PUBLISHED, ids=[str(len(t)) for t, _ in PUBLISHED])
def test_fingerprint64_published_values(text, want):
    assert lsh.fingerprint64(text.encode()) == want
    assert ref.fingerprint64(text.encode()) == want


def test_fingerprint64_kernel_matches_reference_at_every_length():
    rng = np.random.default_rng(5)
    for n in range(300):
        key = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert lsh.fingerprint64(key) == ref.fingerprint64(key), n


# -- LSH_PROJECTION semantics ----------------------------------------------------------------
def test_bit_is_the_sign_of_a_published_hash():
    # key "abcd" + "efgh": Fingerprint64 0xfee9... is negative as an int64 -> bit 0; a
    # negative weight flips it. Key "0123" + "456789=012345" (13 uint8): 0x46a7... > 0 -> 1.
    efgh = int(np.frombuffer(b"efgh", dtype="<i4")[0])
    h = f32([1, 1], value=[seed_of(b"abcd")])
    assert lsh_op(h, i32t([1, 1]), f32([1], value=[1.0]), DENSE, 1, [[efgh]]).tolist() == [0]
    assert lsh_op(h, i32t([1]), f32([1], value=[-2.0]), DENSE, 1, [[efgh]]).tolist() == [1]
    row = np.frombuffer(b"456789=012345", dtype=np.uint8).reshape(1, 13)
    h = f32([1, 1], value=[seed_of(b"0123")])
    assert lsh_op(h, q8([1, 13], 0.5, 3), f32([1], value=[0.5]), DENSE, 1, [row]).tolist() == [1]
    assert lsh_op(h, q8([1, 13], 0.5, 3), f32([1], value=[-0.5]), DENSE, 1, [row]).tolist() \
        == [0]
    # Without weights, sparse: one hash row of one bit; SPARSE adds i << num_bits.
    assert lsh_op(h, q8([1, 13], 1, 0), omitted(f32([1])), SPARSE, 1, [row]).tolist() == [1]


HASH = np.array([0.123, 0.456, -0.321, -0.654, 1.234, 5.678, -4.321, -8.765], np.float32)
ROWS = np.array([[12345, 54321], [67890, 9876], [-12345678, -87654321]], np.int32)
WEIGHT = [0.12, 0.34, 0.56]


def test_aosp_lsh_projection_test_example():
    # common/cpu_operations/LSHProjectionTest.cpp (the same example as TFLite's test).
    h = f32([4, 2], value=HASH)
    assert lsh_op(h, i32t([3, 2]), f32([3], value=WEIGHT), DENSE, 8, [ROWS]).tolist() == \
        [1, 1, 1, 0, 1, 1, 1, 0]
    assert lsh_op(h, i32t([3, 2]), omitted(f32([3])), SPARSE_DEPRECATED, 4, [ROWS]).tolist() \
        == [1, 2, 2, 0]
    assert lsh_op(h, i32t([3, 2]), omitted(f32([3])), SPARSE, 4, [ROWS]).tolist() == \
        [1, 6, 10, 12]


@pytest.mark.parametrize("num_bits", [1, 5, 31, 32])
def test_sparse_is_the_dense_bits_read_as_numbers(num_bits):
    rng = np.random.default_rng(num_bits)
    seeds = rng.standard_normal((3, num_bits)).astype(np.float32)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    h = f32([3, num_bits], value=seeds)
    # weight 1.0 gives the unweighted sums exactly (1.0 * v == v)
    bits = lsh_op(h, f32([4, 3]), f32([4], value=np.ones(4)), DENSE, 3 * num_bits, [x])
    assert 0 < bits.sum() < bits.size
    by_hand = [int("".join(map(str, bits[i * num_bits:(i + 1) * num_bits])), 2)
               for i in range(3)]
    wrap = [((v + 2 ** 31) % 2 ** 32) - 2 ** 31 for v in by_hand]
    got = lsh_op(h, f32([4, 3]), omitted(f32([4])), SPARSE_DEPRECATED, 3, [x])
    assert got.tolist() == wrap
    # i << num_bits, where a 32-bit shift by 32 shifts by 0 (x86 and ARM)
    offset = [i << (num_bits % 32) for i in range(3)]
    got = lsh_op(h, f32([4, 3]), omitted(f32([4])), SPARSE, 3, [x])
    assert got.tolist() == [((v + o + 2 ** 31) % 2 ** 32) - 2 ** 31 for v, o in zip(by_hand, offset)]


def test_weights_negated_flip_every_bit_and_zero_weights_give_zeros():
    rng = np.random.default_rng(1)
    seeds = rng.standard_normal((4, 6)).astype(np.float32)
    x = rng.integers(-1000, 1000, (5, 2)).astype(np.int32)
    w = rng.standard_normal(5).astype(np.float32)
    h = f32([4, 6], value=seeds)
    plus = lsh_op(h, i32t([5, 2]), f32([5], value=w), DENSE, 24, [x])
    minus = lsh_op(h, i32t([5, 2]), f32([5], value=-w), DENSE, 24, [x])
    assert 0 < plus.sum() < 24
    np.testing.assert_array_equal(plus + minus, np.ones(24))
    zero = lsh_op(h, i32t([5, 2]), f32([5], value=np.zeros(5)), DENSE, 24, [x])
    np.testing.assert_array_equal(zero, np.zeros(24))     # score 0 is not > 0


def test_float16_hash_seeds_are_widened_to_float32():
    seeds = HASH.astype(np.float16)
    w = np.asarray(WEIGHT, np.float16)
    got = lsh_op(f16([4, 2], value=seeds), i32t([3, 2]), f16([3], value=w), DENSE, 8, [ROWS])
    want = lsh_op(f32([4, 2], value=seeds.astype(np.float32)), i32t([3, 2]),
                  f32([3], value=w.astype(np.float32)), DENSE, 8, [ROWS])
    np.testing.assert_array_equal(got, want)
    assert got.tolist() == [1, 1, 1, 1, 1, 0, 0, 0]   # V1_2 lsh_projection_float16


@pytest.mark.parametrize("kind", [DENSE, SPARSE, SPARSE_DEPRECATED])
def test_kernel_matches_reference(kind):
    rng = np.random.default_rng(kind)
    for shape, dtype, hash_dtype in [((3,), np.float32, np.float32),
                                     ((2, 40), np.uint8, np.float16),
                                     ((2, 3, 7), np.int32, np.float32),
                                     ((3, 5), np.float16, np.float32)]:
        x = (rng.standard_normal(shape) * 100).astype(dtype)
        seeds = rng.standard_normal((3, 32 if kind == SPARSE else 4)).astype(hash_dtype)
        w = rng.standard_normal(shape[0]).astype(hash_dtype) if kind == DENSE else None
        np.testing.assert_array_equal(lsh.lsh_projection(seeds, x, w, kind),
                                      ref.lsh_projection(seeds, x, w, kind))


@pytest.mark.parametrize("dtype,shape", [(np.float32, (5, 5)), (np.int32, (4,)),
                                         (np.uint8, (6, 40)), (np.float32, (2, 21))])
@pytest.mark.parametrize("dense", [True, False])
def test_matches_litert_builtin_ref(monkeypatch, dtype, shape, dense):
    """TFLite's LSH_PROJECTION (its sparse type is NNAPI SPARSE) with BUILTIN_REF kernels; keys
    of 8, 24, 44 and 88 bytes (4 seed bytes + a row) take every FarmHash length path."""
    litert = pytest.importorskip("ai_edge_litert.interpreter")
    from nnsim.tflite import options as O
    from nnsim.tflite.schema import BuiltinOperator as B
    from nnsim.tflite.schema import BuiltinOptions
    from tests.tflite.test_builtins import T
    from tests.tflite.test_builtins import build as build_tflite

    @dataclasses.dataclass(frozen=True)
    class LshOptions:        # nnsim's writer does not describe LSHProjectionOptions
        type: int = 0
    LshOptions.options_type = BuiltinOptions.LSHProjectionOptions
    monkeypatch.setitem(O._SPECS, LshOptions, (O.FieldSpec("type", 0, "b", 0, None),))

    rng = np.random.default_rng(len(shape) * 7 + shape[0])
    x = (rng.standard_normal(shape) * 50).astype(dtype)
    seeds = rng.standard_normal((4, 6)).astype(np.float32)
    w = rng.standard_normal(shape[0]).astype(np.float32)
    n = 24 if dense else 4
    ins = [T((4, 6), np.float32, data=seeds), T(shape, dtype)]
    ins += [T((shape[0],), np.float32, data=w)] if dense else []
    blob = build_tflite(B.LSH_PROJECTION, ins, [T((n,), np.int32)], LshOptions(2 if dense else 1))
    ip = litert.Interpreter(model_content=blob,
                            experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    ip.allocate_tensors()
    ip.set_tensor(ip.get_input_details()[0]["index"], x)
    ip.invoke()
    want = ip.get_tensor(ip.get_output_details()[0]["index"])
    make = {np.float32: f32, np.int32: i32t, np.uint8: lambda d: q8(d, 0.1, 128)}[dtype]
    weight = f32([shape[0]], value=w) if dense else omitted(f32([shape[0]]))
    got = lsh_op(f32([4, 6], value=seeds), make(list(shape)), weight, DENSE if dense else SPARSE,
                 n, [x])
    np.testing.assert_array_equal(got, want)


def test_weight_omitted_at_execution_is_a_sparse_projection():
    from nnsim.ops.executor import run_model
    model = build(LSH, [f32([4, 2], value=HASH), i32t([3, 2]), f32([3]), i32(SPARSE)],
                  [i32t([4])])
    out, = run_model(model, [ROWS, None])
    assert out.tolist() == [1, 6, 10, 12]


def test_lsh_feature_levels_and_rejections():
    def level(hash_op, input_op, weight_op):
        return feature_level(LSH, [hash_op, input_op, weight_op, i32(DENSE)], [i32t([4])])
    assert level(f32([2, 2]), f32([3]), f32([3])) == FL1
    assert level(f32([2, 2]), q8([3, 2], 0.5, 1), f32([3])) == FL1
    assert level(f32([2, 2]), f16([3]), f32([3])) == FL1     # the input type does not count
    assert level(f16([2, 2]), i32t([3]), f16([3])) == FL3
    bad = [
        [s8([2, 2], 1, 0), f32([3]), s8([3], 1, 0)],        # hash float only
        [f32([2, 2]), s8([3], 0.5, 0), f32([3])],            # no signed quant8 input
        [i32t([2, 2]), i32t([3]), i32t([3])],
        [f32([2, 2]), f32([3]), f16([3])],                   # weight has the hash's type
    ]
    for ins in bad:
        with pytest.raises(OperationValidationError):
            build(LSH, ins + [i32(DENSE)], [i32t([4])])
    with pytest.raises(OperationValidationError):           # output TENSOR_INT32
        build(LSH, [f32([2, 2]), f32([3]), f32([3]), i32(DENSE)], [f32([4])])
    with pytest.raises(OperationValidationError):           # four inputs
        build(LSH, [f32([2, 2]), f32([3]), f32([3])], [i32t([4])])


@pytest.mark.parametrize("hash_dims,weight,kind,why", [
    ([4, 2], True, SPARSE, "sparse projection takes no weight"),
    ([4, 2], False, DENSE, "needs the weight"),
    ([4, 2], True, 0, "unknown projection type"),
    ([4, 2], False, 4, "unknown projection type"),
    ([8], False, SPARSE, "rank 2"),
    ([1, 33], False, SPARSE, "at most 32"),
])
def test_lsh_prepare_failures(hash_dims, weight, kind, why):
    seeds = np.ones(int(np.prod(hash_dims)), np.float32)
    w = f32([3], value=WEIGHT) if weight else omitted(f32([3]))
    with pytest.raises(OpFailedError, match=why):
        run1(LSH, [f32(hash_dims, value=seeds), i32t([3, 2]), w, i32(kind)], [i32t([0])], ROWS)


def test_lsh_dense_weight_length_must_match_the_rows():
    with pytest.raises(OpFailedError, match="weight must have shape"):
        lsh_op(f32([4, 2], value=HASH), i32t([3, 2]), f32([2], value=[1, 1]), DENSE, 8, [ROWS])


# -- RANDOM_MULTINOMIAL ----------------------------------------------------------------------
def multinomial(logits, count, seeds=(37, 42), make=f32):
    logits = np.asarray(logits)
    return run1(MULTI, [make(list(logits.shape)), i32(count), i32t([2], value=list(seeds))],
                [i32t([0, 0])], logits)


def chi_square_p_value_3dof(observed, probabilities) -> float:
    """Upper tail of the chi-square statistic with 3 degrees of freedom (4 classes):
    P(X > x) = erfc(sqrt(x/2)) + sqrt(2x/pi) exp(-x/2)."""
    expected = np.asarray(probabilities) * np.sum(observed)
    x = float(np.sum((np.asarray(observed) - expected) ** 2 / expected))
    return math.erfc(math.sqrt(x / 2)) + math.sqrt(2 * x / math.pi) * math.exp(-x / 2)


@pytest.mark.parametrize("make", [f32, f16])
def test_multinomial_draws_follow_softmax_per_batch(make):
    p = np.array([[0.5, 0.25, 0.125, 0.125], [0.05, 0.15, 0.3, 0.5]])
    logits = np.log(p) + np.array([[100.0], [-3.0]])   # softmax ignores a per-row shift
    logits = logits.astype(np.float16 if make is f16 else np.float32)
    probs = np.exp(logits.astype(np.float64))
    probs /= probs.sum(axis=1, keepdims=True)
    out = multinomial(logits, 20000, make=make)
    assert out.shape == (2, 20000) and out.dtype == np.int32
    for b in range(2):
        counts = np.bincount(out[b], minlength=4)
        assert counts.size == 4
        assert chi_square_p_value_3dof(counts, probs[b]) > 1e-6, counts
    # a uniform or logit-proportional sampler is rejected by the same test
    assert chi_square_p_value_3dof(np.bincount(out[1], minlength=4), [0.25] * 4) < 1e-6


def test_multinomial_is_deterministic_per_seed():
    logits = np.zeros((3, 50), np.float32)
    a = multinomial(logits, 64, seeds=(37, 42))
    np.testing.assert_array_equal(a, multinomial(logits, 64, seeds=(37, 42)))
    assert (a != multinomial(logits, 64, seeds=(37, 43))).any()
    assert not (a[0] == a[1]).all()     # batches draw different samples


def test_multinomial_leaves_out_non_finite_logits():
    x = np.array([[0.0, -np.inf, np.nan, np.inf, np.log(3.0)]], np.float32)
    out = multinomial(x, 4000)
    counts = np.bincount(out[0], minlength=5)
    assert counts[1:4].sum() == 0
    assert 0.2 < counts[0] / 4000 < 0.3                  # 1 / (1 + 3)
    none = multinomial(np.full((1, 3), np.nan, np.float32), 5)
    np.testing.assert_array_equal(none, [[3] * 5])       # upper_bound past the end, as AOSP


def test_multinomial_feature_level_and_rejections():
    def ins(make):
        return [make([1, 4]), i32(2), i32t([2], value=[1, 2])]
    assert feature_level(MULTI, ins(f32), [i32t([1, 2])]) == FL3
    assert feature_level(MULTI, ins(f16), [i32t([1, 2])]) == FL3
    with pytest.raises(OperationValidationError):
        build(MULTI, ins(i32t), [i32t([1, 2])])
    with pytest.raises(OperationValidationError):
        build(MULTI, ins(lambda d: q8(d, 0.1, 0)), [i32t([1, 2])])
    with pytest.raises(OperationValidationError):
        build(MULTI, ins(f32), [f32([1, 2])])
    with pytest.raises(OperationValidationError):
        build(MULTI, [f32([1, 4]), i32(2), i32t([2], value=[1, 2]), i32(0)], [i32t([1, 2])])


@pytest.mark.parametrize("logits,count,seeds,why", [
    (np.zeros(4, np.float32), 2, [1, 2], "rank 2"),
    (np.zeros((1, 4), np.float32), -1, [1, 2], ">= 0"),
    (np.zeros((1, 4), np.float32), 2, [1], "2 values"),
])
def test_multinomial_execution_failures(logits, count, seeds, why):
    with pytest.raises(OpFailedError, match=why):
        run1(MULTI, [f32(list(logits.shape)), i32(count), i32t([len(seeds)], value=seeds)],
             [i32t([0, 0])], logits)
