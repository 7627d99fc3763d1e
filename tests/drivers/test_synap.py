"""synap-npu: conversion at the first execution, caches, knobs and sysfs (npu-drivers.md 4, 10.3)."""
from __future__ import annotations

import gc
import os
import re

import numpy as np
import pytest

import nnsim
from nnsim.platform import sysfs
from nnsim.runtime.board import apply_board
from nnsim.drivers.synap_npu import SynapNpuDriver
from nnsim.errors import OpFailedError
from nnsim.runtime.cache import cache_file_paths, derive_token_simple
from nnsim.runtime.compilation import CompilationBuilder
from nnsim.runtime.execution import Execution
from nnsim.types import PreferenceCode, PriorityCode
from tests.drivers.helpers import U8, conv_model

MODEL = "mobilenet_v1_0.25_128_quant.tflite"
NETWORK_LINE = re.compile(r"pid: \d+, nid: \d+, inference_count: \d+, inference_time: \d+, "
                          r"inference_last: \d+, iobuf_count: \d+, iobuf_size: \d+, layers: \d+")


def compile_on(model, driver, cache=None):
    comp = CompilationBuilder.create_for_devices(model, [driver])
    if cache is not None:
        comp.set_caching(*cache)
    comp.finish()
    return comp


def run(comp, model, seed=0):
    x = np.random.default_rng(seed).integers(0, 255, model.operands[model.input_indexes[0]]
                                             .dimensions, dtype=np.uint8)
    ex = Execution(comp)
    ex.set_input(0, None, x)
    out = np.zeros(model.operands[model.output_indexes[0]].dimensions, np.uint8)
    ex.set_output(0, None, out)
    ex.compute()
    return ex.timing, out


def prepared_of(comp):
    return comp.plan.prepared


def test_conversion_happens_at_the_first_execution(load_nnapi):
    model = load_nnapi(MODEL)
    comp = compile_on(model, SynapNpuDriver())
    prepared = prepared_of(comp)
    assert not prepared.compiled and sysfs.read("networks") == ""  # nothing at prepare
    first, _ = run(comp, model)
    second, _ = run(comp, model)
    assert prepared.first_run_kind == "compile"
    assert first.driver_ns - second.driver_ns == prepared.first_run_ns > 100_000_000
    assert first.device_ns == second.device_ns  # conversion is driver time, not NPU time
    assert NETWORK_LINE.fullmatch(sysfs.read("networks").strip())


def test_second_process_with_warm_synap_cache_is_faster(load_nnapi, tmp_path):
    model = load_nnapi(MODEL)
    cold = compile_on(model, SynapNpuDriver())
    run(cold, model)
    assert list((tmp_path / "state" / "data" / "vendor" / "synap").iterdir())
    warm = compile_on(model, SynapNpuDriver())  # "another process": a fresh driver, same disk
    first_warm, _ = run(warm, model)
    p_cold, p_warm = prepared_of(cold), prepared_of(warm)
    assert p_warm.first_run_kind == "synap-cache"
    assert p_warm.first_run_ns == pytest.approx(p_cold.first_run_ns / 3, rel=1e-6)
    assert first_warm.driver_ns < p_cold.first_run_ns


def test_synap_cache_capacity_and_path(load_nnapi, tmp_path):
    model = load_nnapi(MODEL)
    nnsim.setprop("vendor.SYNAP_CACHE_CAPACITY", "0")
    for _ in range(2):
        comp = compile_on(model, SynapNpuDriver())
        run(comp, model)
        assert prepared_of(comp).first_run_kind == "compile"
    assert not (tmp_path / "state" / "data").exists()
    nnsim.setprop("vendor.SYNAP_CACHE_CAPACITY", "1")
    nnsim.setprop("vendor.SYNAP_CACHE_PATH", str(tmp_path / "my.cache"))
    small = conv_model(U8)
    driver = SynapNpuDriver()
    for m in (model, small, model):  # capacity 1: the small model evicts the big one
        comp = compile_on(m, driver)
        if m is model:
            run(comp, m)
        else:
            comp.plan.prepared.execute([np.zeros((1, 8, 8, 4), np.uint8)])
        assert prepared_of(comp).first_run_kind == "compile"
    assert len(driver.compile_cache().keys()) == 1


def test_nnapi_compilation_cache(load_nnapi, tmp_path):
    model = load_nnapi(MODEL)
    token = bytes(range(32))
    cache_dir = str(tmp_path / "nnapi-cache")
    os.makedirs(cache_dir)
    # without vendor.npu.cache.model the driver asks for no cache files
    comp = compile_on(model, SynapNpuDriver(), (cache_dir, token))
    run(comp, model)
    assert os.listdir(cache_dir) == []
    nnsim.setprop("vendor.npu.cache.model", "1")
    nnsim.setprop("vendor.SYNAP_CACHE_CAPACITY", "0")  # isolate the NNAPI cache
    driver = SynapNpuDriver()
    comp = compile_on(model, driver, (cache_dir, token))
    cold, out_cold = run(comp, model)
    derived = derive_token_simple(token, driver, PreferenceCode.PREFER_FAST_SINGLE_ANSWER,
                                  PriorityCode.PRIORITY_DEFAULT)
    models, datas = cache_file_paths(cache_dir + "/", derived, 1, 1)
    assert sorted(os.listdir(cache_dir)) == sorted(os.path.basename(p) for p in models + datas)
    again = compile_on(model, SynapNpuDriver(), (cache_dir, token))
    prepared = prepared_of(again)
    assert prepared.from_cache
    cached, out_cached = run(again, model)
    assert prepared.first_run_kind == "nnapi-cache"
    assert cached.driver_ns < cold.driver_ns / 3
    np.testing.assert_array_equal(out_cold, out_cached)


def test_nnapi_synap_disable_routes_everything_to_the_cpu(load_nnapi):
    model = load_nnapi(MODEL)
    apply_board("vs680")
    nnsim.setprop("vendor.NNAPI_SYNAP_DISABLE", "1")
    comp = CompilationBuilder(model)
    comp.finish()
    assert comp.plan.kind == comp.plan.SIMPLE and comp.plan.device.name == "nnapi-reference"
    run(comp, model)
    assert sysfs.read("inference_count") == "0\n"
    nnsim.setprop("vendor.NNAPI_SYNAP_DISABLE", "0")
    comp = CompilationBuilder(model)
    comp.finish()
    assert comp.plan.device.name == "synap-npu"
    run(comp, model)
    run(comp, model)
    assert sysfs.read("inference_count") == "2\n"


def test_sysfs_statistics(load_nnapi):
    model = load_nnapi(MODEL)
    comp = compile_on(model, SynapNpuDriver())
    timings = [run(comp, model)[0] for _ in range(3)]
    total = sum(t.device_ns // 1000 for t in timings)
    assert sysfs.read("inference_count") == "3\n"
    assert sysfs.read(sysfs.SYNAP_STATISTICS_DIR + "/inference_time") == f"{total}\n"
    line = sysfs.read("networks").strip()
    assert NETWORK_LINE.fullmatch(line)
    assert f"pid: {os.getpid()}," in line and "inference_count: 3," in line
    assert f"layers: {len(model.operations)}" in line
    assert "iobuf_count: 2, iobuf_size: %d" % (128 * 128 * 3 + 1001) in line
    assert sysfs.read("network_profile") == line + "\n"  # no profiling: no table
    sysfs.write("inference_time")  # echo > inference_time clears both counters
    assert sysfs.read("inference_count") == "0\n" and sysfs.read("inference_time") == "0\n"
    assert sorted(sysfs.listdir()) == ["inference_count", "inference_time", "network_profile",
                                       "networks"]
    del comp
    gc.collect()
    assert sysfs.read("networks") == ""


def test_profile_mode_fills_network_profile(load_nnapi):
    model = load_nnapi(MODEL)
    plain = compile_on(model, SynapNpuDriver())
    run(plain, model)
    normal, _ = run(plain, model)
    nnsim.setprop("vendor.NNAPI_SYNAP_PROFILE", "1")
    comp = compile_on(model, SynapNpuDriver())
    run(comp, model)
    profiled, _ = run(comp, model)
    assert profiled.device_ns > normal.device_ns  # step by step
    text = sysfs.read("network_profile")
    assert "| lyr |    cycle | time_us |  byte_rd |  byte_wr | ot | name\n" in text
    rows = [r for r in text.splitlines() if re.match(r"\|\s+\d+ \|", r)]
    assert len(rows) == len(model.operations)
    assert re.fullmatch(r"\|   0 \|\s+\d+ \|\s+\d+ \|\s+\d+ \|\s+\d+ \| NN \| "
                        r"ConvolutionReluPoolingLayer2", rows[0])
    assert any(" -- | " in r for r in rows)  # RESHAPE is not executed


def test_input_shapes_frozen_after_first_inference():
    driver = SynapNpuDriver()
    prepared = driver.prepare(conv_model(U8), 1, 100, None)
    prepared.execute([np.zeros((1, 8, 8, 4), np.uint8)])
    with pytest.raises(OpFailedError, match="first inference"):
        prepared.execute([np.zeros((1, 4, 4, 4), np.uint8)])
