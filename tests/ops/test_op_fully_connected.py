"""FULLY_CONNECTED: spec examples (V1_0/fully_connected_*), input reshaping, feature levels."""
import numpy as np
import pytest
from nnsim.kernels.reference.fully_connected import fully_connected as reference

from nnsim.errors import OperationValidationError
from nnsim.ops.executor import ExecutorStatePool
from nnsim.types import FL1, FL3, FL4
from nnsim.types import OperandType as T
from nnsim.types import OperationCode as C

from .ophelp import build, f16, f32, feature_level, i32, i32t, q8, run1, s8, tensor


def test_float_spec_example():
    ins = [f32([3, 1]), f32([1, 1], [2]), f32([1], [4]), i32(0)]
    out = run1(C.FULLY_CONNECTED, ins, [f32([3, 1])], [2, 32, 16])
    np.testing.assert_allclose(out.ravel(), [8, 68, 36])


def quant8(out_scale=1.0):
    ins = [q8([3, 1], 0.5, 0), q8([1, 1], 0.5, 0, [2]), i32t([1], [4], scale=0.25), i32(0)]
    return ins, [q8([3, 1], out_scale, 0)]


def test_quant8_example():
    out = run1(C.FULLY_CONNECTED, *quant8(), [2, 32, 16])
    np.testing.assert_array_equal(out.ravel(), [2, 17, 9])  # 1*1+1, 16*1+1, 8*1+1


def test_4d_input_is_flattened_to_batches_and_relu_applied():
    ins = [f32([1, 2, 1, 3]), f32([2, 3], [1, 1, 1, -1, 0, 0]), f32([2], [0, 0.5]), i32(1)]
    out = run1(C.FULLY_CONNECTED, ins, [f32([2, 2])], [1, 2, 3, -4, 5, -6])
    np.testing.assert_allclose(out, [[6, 0], [0, 4.5]])


def test_feature_levels():
    assert feature_level(C.FULLY_CONNECTED, *quant8()) == FL1
    assert feature_level(C.FULLY_CONNECTED, *quant8(out_scale=0.25)) == FL3  # 0.25 <= 0.5*0.5
    ins = [f16([3, 1]), f16([1, 1], [2]), f16([1], [4]), i32(0)]
    assert feature_level(C.FULLY_CONNECTED, ins, [f16([3, 1])]) == FL3
    ins = [s8([3, 1], 0.5, 0), s8([1, 1], 0.5, 0, [2]), i32t([1], [4], scale=0.25), i32(0)]
    assert feature_level(C.FULLY_CONNECTED, ins, [s8([3, 1], 1.0, 0)]) == FL4


@pytest.mark.parametrize("weights,bias", [
    (f32([2], [1, 1]), f32([1], [0])),          # weights must be 2-D
    (f32([1, 1], [1]), f32([2], [0, 0])),       # bias size != num_units
    (f32([1, 2], [1, 1]), f32([1], [0])),       # 3 elements not a multiple of input_size 2
    (q8([1, 1], 0.5, 0, [1]), f32([1], [0])),   # weights type != input type
])
def test_bad_shapes_and_types_rejected_at_add_operation(weights, bias):
    with pytest.raises(OperationValidationError):
        build(C.FULLY_CONNECTED, [f32([3, 1]), weights, bias, i32(0)], [f32([3, 1])])


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.float32])
@pytest.mark.parametrize("in_dims,fuse", [((1, 40), 0), ((3, 40), 1), ((2, 1, 4, 10), 3)])
def test_prepared_executions_equal_the_reference(dtype, in_dims, fuse):
    """A prepared model's executions (the plan: a 1x1 convolution over [batch, 1, 1, size],
    then a chain of plan calls) with new inputs each time, against the numpy reference kernel
    (int64 sums, AOSP's float32 scale product; float64 sums for float32)."""
    rng = np.random.default_rng(len(in_dims) * 10 + fuse)
    units, size = 24, 40
    batch = int(np.prod(in_dims)) // size
    q = dtype != np.float32
    t = {np.uint8: T.TENSOR_QUANT8_ASYMM, np.int8: T.TENSOR_QUANT8_ASYMM_SIGNED,
         np.float32: T.TENSOR_FLOAT32}[dtype]
    zp = {np.uint8: 131, np.int8: -5, np.float32: 0}[dtype]
    if q:
        info = np.iinfo(dtype)
        w = rng.integers(info.min, info.max + 1, (units, size)).astype(dtype)
        b = rng.integers(-4000, 4000, units).astype(np.int32)
    else:
        w = rng.standard_normal((units, size)).astype(np.float32)
        b = rng.standard_normal(units).astype(np.float32)
    scales = (0.04, 0.015, 0.3) if q else (0.0, 0.0, 0.0)
    model = build(C.FULLY_CONNECTED, [
        tensor(t, in_dims, scales[0], zp), tensor(t, (units, size), scales[1], zp, w),
        i32t((units,), b, scales[0] * scales[1]) if q else f32((units,), b), i32(fuse)],
        [tensor(t, (batch, units), scales[2], zp + 2 if q else 0)])
    executions = ExecutorStatePool(model)   # one prepared model's state, kept between runs
    for _ in range(4):
        x = (rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max + 1, in_dims).astype(dtype)
             if q else rng.standard_normal(in_dims).astype(np.float32))
        out = executions.run([x])[0]
        kw = {"in_scale": 0.04, "in_zp": zp, "w_scales": [0.015], "w_zp": zp,
              "out_scale": 0.3, "out_zp": zp + 2} if q else {}
        want = reference(x.reshape(batch, size), w, b, fuse=fuse, **kw)
        if q:
            np.testing.assert_array_equal(out, want)
        else:
            np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
