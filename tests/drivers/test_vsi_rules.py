"""vsi-npu / synap-npu support rules on small hand-built models (npu-drivers.md 2.2-2.5, 10.2)."""
from __future__ import annotations

import numpy as np
import pytest

import nnsim
from nnsim.drivers.synap_npu import SynapNpuDriver
from nnsim.drivers.vsi_npu import VsiNpuDriver, block_entries_for
from nnsim.types import FLT_MAX, FeatureLevel, OperandType as T, OperationCode as C
from tests.drivers.helpers import (F16, F32, I8, U8, Builder, conv_model, resize_model,
                                   unary_model)

TAG13 = "android.hardware.neuralnetworks@1.3-service-vsi-npu-server"


def decisions(driver, model):
    return driver.supported_operations_with_reasons(model)


def only(driver, model):
    (d,) = decisions(driver, model)
    return d


@pytest.mark.parametrize("bsp", ["android-12.1.0_1.0.0", "android-13.0.0_1.0.0",
                                 "android-14.0.0_1.0.0"])
def test_resize_nearest_refused_from_12_1(bsp):
    d = only(VsiNpuDriver(bsp=bsp), resize_model(C.RESIZE_NEAREST_NEIGHBOR))
    assert not d.supported
    assert "reject RESIZE_NEAREST_NEIGHBOR" in d.reason


def test_resize_nearest_accepted_before_12_1():
    assert only(VsiNpuDriver(bsp="android-12.0.0_2.0.0"),
                resize_model(C.RESIZE_NEAREST_NEIGHBOR)).supported


def test_resize_nearest_refused_on_synap():
    d = only(SynapNpuDriver(), resize_model(C.RESIZE_NEAREST_NEIGHBOR))
    assert not d.supported and "RESIZE_NEAREST_NEIGHBOR" in d.reason


@pytest.mark.parametrize("bsp,accepted", [("android-11.0.0_2.0.0", False),
                                          ("android-12.0.0_2.0.0", False),
                                          ("android-12.1.0_1.0.0", True),
                                          ("android-14.0.0_1.0.0", True)])
def test_resize_bilinear_align_corners_depends_on_bsp(bsp, accepted):
    driver = VsiNpuDriver(bsp=bsp)
    d = only(driver, resize_model(C.RESIZE_BILINEAR, align_corners=True))
    assert d.supported is accepted
    if not accepted:
        assert "align_corners" in d.reason
    # without the flags the op is accepted everywhere
    assert only(driver, resize_model(C.RESIZE_BILINEAR)).supported


def test_bsp_property_switches_rules():
    driver = VsiNpuDriver()
    model = resize_model(C.RESIZE_BILINEAR, align_corners=True)
    assert driver.bsp == "android-12.1.0_1.0.0" and only(driver, model).supported
    nnsim.setprop("vendor.nnsim.vsi.bsp", "android-12.0.0_2.0.0")
    assert not only(driver, model).supported
    assert only(driver, resize_model(C.RESIZE_NEAREST_NEIGHBOR)).supported


def test_tanh_only_float32():
    driver = VsiNpuDriver()
    d = only(driver, unary_model(C.TANH, U8))
    assert not d.supported
    assert d.reason == "reject TANH because only support input_type = FLOAT32 tensor"
    assert only(driver, unary_model(C.TANH, F32)).supported


def test_conv_float16_refused_depthwise_float16_accepted():
    driver = VsiNpuDriver()
    conv = only(driver, conv_model(F16))
    assert not conv.supported
    assert conv.reason == "reject CONVOLUTION_2D because input data type not support"
    assert only(driver, conv_model(F16, depthwise=True)).supported
    for t in (F32, U8, I8):
        assert only(driver, conv_model(t)).supported
        assert only(driver, conv_model(t, depthwise=True)).supported


def test_float16_fails_the_tail_filter():
    d = only(VsiNpuDriver(), unary_model(C.RELU, F16))
    assert not d.supported
    assert "reject op because its operand data type is not supported yet" in d.reason


def test_constant_input0_refused():
    # RELU of a constant, then ADD with a real input
    b = Builder()
    c = b.tensor(F32, (1, 4), np.ones(4))
    x = b.tensor(F32, (1, 4))
    y = b.tensor(F32, (1, 4))
    b.add_operation(C.RELU, [c], [y])
    z = b.tensor(F32, (1, 4))
    b.add_operation(C.ADD, [y, x, b.scalar(T.INT32, 0)], [z])
    model = b.done([x], [z])
    ds = decisions(VsiNpuDriver(), model)
    names = [C(op.type).name for op in model.operations]
    relu = ds[names.index("RELU")]
    assert not relu.supported and "input[0] is constant tensor" in relu.reason
    assert ds[names.index("ADD")].supported


def test_dynamic_dimension_refused():
    d = only(VsiNpuDriver(), unary_model(C.RELU, F32, dims=(1, 0, 4, 2)))
    assert not d.supported
    assert "shape not determined which require shape inference" in d.reason


def test_add_int32_and_broadcast_rules():
    b = Builder()
    x = b.tensor(F32, (1, 4, 4, 3))
    y = b.tensor(F32, (1, 4, 2, 3))
    z = b.tensor(F32, (1, 4, 4, 3))
    b.add_operation(C.ADD, [x, y, b.scalar(T.INT32, 0)], [z])
    try:
        model = b.done([x, y], [z])
    except nnsim.errors.NnapiError:
        pytest.skip("the ADD validator refuses the shapes before the driver sees them")
    d = only(VsiNpuDriver(), model)
    assert not d.supported and "inputs shape is invalidated" in d.reason


def test_capabilities_int8_flt_max_and_disable_float():
    driver = VsiNpuDriver()
    caps = driver.capabilities()
    assert caps.lookup(T.TENSOR_QUANT8_ASYMM).exec_time == pytest.approx(0.9)
    assert caps.lookup(T.TENSOR_FLOAT32).exec_time == pytest.approx(0.9)
    for t in (T.TENSOR_QUANT8_ASYMM_SIGNED, T.TENSOR_QUANT8_SYMM_PER_CHANNEL, T.INT32,
              T.FLOAT32, T.TENSOR_QUANT16_SYMM):
        assert caps.lookup(t).exec_time == FLT_MAX
    assert caps.if_performance.exec_time == FLT_MAX
    nnsim.setprop("vendor.DISABLE_FLOAT_FEATURE", "1")
    caps = driver.capabilities()
    assert caps.lookup(T.TENSOR_FLOAT32).exec_time == FLT_MAX
    assert caps.lookup(T.TENSOR_QUANT8_ASYMM).exec_time == pytest.approx(0.9)


def test_hal_version_follows_bsp():
    assert VsiNpuDriver(bsp="android-11.0.0_1.2.0").feature_level == FeatureLevel.FEATURE_LEVEL_3
    old = VsiNpuDriver(bsp="android-10.0.0_2.6.0")
    assert old.hal_version == "1.2" and "@1.2-service" in old.log_tag
    new = VsiNpuDriver(bsp="android-11.0.0_2.0.0")
    assert new.feature_level == FeatureLevel.FEATURE_LEVEL_4 and new.log_tag == TAG13


def test_hal_1_2_never_sees_int8():
    d = only(VsiNpuDriver(bsp="android-10.0.0_2.6.0"), conv_model(I8))
    assert not d.supported and "MetaModel slice" in d.reason


def test_model_block_level_rejects_the_whole_model(logcat):
    model = conv_model(U8)
    driver = VsiNpuDriver(model_block_list=block_entries_for(model, "XS", "test-net"))
    assert all(d.supported for d in decisions(driver, model))
    nnsim.setprop("vendor.MODEL_BLOCK_LEVEL", "5")  # XXL..S: the XS entry is not active
    assert all(d.supported for d in decisions(driver, model))
    nnsim.setprop("vendor.MODEL_BLOCK_LEVEL", "6")
    ds = decisions(driver, model)
    assert ds and not any(d.supported for d in ds)
    assert "test-net" in ds[0].reason
    assert "Weight MD5 matched, reject the whole model." in logcat.lines(TAG13)
    # another model is not blocked
    assert all(d.supported for d in decisions(driver, conv_model(U8, kernel=1)))


def test_model_block_list_from_property_file(tmp_path):
    import json
    model = conv_model(U8)
    path = tmp_path / "blocked.json"
    path.write_text(json.dumps(block_entries_for(model, "D")))
    nnsim.setprop("vendor.nnsim.vsi.model_block_list", str(path))
    nnsim.setprop("vendor.MODEL_BLOCK_LEVEL", "1")  # the D list is checked at any level
    assert not any(d.supported for d in decisions(VsiNpuDriver(), model))


def test_debug_op_block_list(tmp_path, logcat):
    path = tmp_path / "blk.txt"
    path.write_text("3,19,\n")
    driver = VsiNpuDriver()
    nnsim.setprop("vendor.NN_DBG_OP_BLK_LIST", str(path))
    d = only(driver, conv_model(U8))
    assert not d.supported and "blocked by debug blacklist file" in d.reason
    assert only(driver, conv_model(U8, depthwise=True)).supported
    path.write_text("4")  # a number without its trailing ',' is ignored, as by the HAL
    assert only(driver, conv_model(U8, depthwise=True)).supported
    nnsim.setprop("vendor.NN_DBG_OP_BLK_LIST", str(tmp_path / "missing"))
    assert only(driver, conv_model(U8)).supported
    assert any("can not open blacklist file" in m for m in logcat.lines(TAG13))


def test_reasons_logged_under_the_service_tag(logcat):
    decisions(VsiNpuDriver(), unary_model(C.TANH, U8))
    lines = logcat.lines(TAG13)
    assert lines[0] == "getSupportedOperations_1_3"
    assert "reject TANH because only support input_type = FLOAT32 tensor" in lines
    assert lines[-1] == "getSupportedOperations_1_3 exit"


def test_always_rejected_and_pad_transpose_rules():
    driver = VsiNpuDriver()
    b = Builder()
    x = b.tensor(F32, (1, 4, 4, 2))
    y = b.tensor(F32, (1, 6, 6, 4))
    pads = b.tensor(T.TENSOR_INT32, (4, 2), [[0, 0], [1, 1], [1, 1], [1, 1]])
    b.add_operation(C.PAD, [x, pads], [y])
    d = only(driver, b.done([x], [y]))
    assert not d.supported and "pad value for 3rd or 0rd/3rd dimensions" in d.reason
    b = Builder()
    x = b.tensor(F32, (1, 4, 4, 2))
    y = b.tensor(F32, (1, 6, 6, 2))
    pads = b.tensor(T.TENSOR_INT32, (4, 2), [[0, 0], [1, 1], [1, 1], [0, 0]])
    b.add_operation(C.PAD, [x, pads], [y])
    assert only(driver, b.done([x], [y])).supported


def test_synap_int8_perf_is_configurable():
    driver = SynapNpuDriver()
    assert driver.capabilities().lookup(T.TENSOR_QUANT8_ASYMM_SIGNED).exec_time == FLT_MAX
    nnsim.setprop("vendor.nnsim.synap.int8_perf", "0.9")
    assert driver.capabilities().lookup(T.TENSOR_QUANT8_ASYMM_SIGNED).exec_time == 0.9


def test_malformed_bsp_property_falls_back_to_the_default_with_one_error(logcat):
    # a bad vendor.nnsim.vsi.bsp once recursed (the error's logcat tag parsed the bad value again)
    nnsim.setprop("vendor.nnsim.vsi.bsp", "garbage")
    driver = VsiNpuDriver()
    assert driver.feature_level == FeatureLevel.FEATURE_LEVEL_4   # the default BSP's HAL 1.3
    d = only(driver, resize_model(C.RESIZE_NEAREST_NEIGHBOR))
    assert not d.supported                                       # default BSP's table applies
    errors = [(tag, m) for (level, tag, m) in logcat.records if level == "E"]
    assert errors == [(TAG13, "not an nn-imx BSP tag: 'garbage' (expected e.g. "
                              "android-12.1.0_1.0.0); using android-12.1.0_1.0.0")]
