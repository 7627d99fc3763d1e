"""The SyNAP compile cache file as board state that cannot break the board (review D7).

Every malformed content of D7 is set aside with one warning and the cache starts empty; writes
are atomic; two processes inserting at once keep every key; an invalid capacity warns; hits
and misses are logged and recorded for `nnsim run`."""
from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import numpy as np
import pytest
from nnsim.drivers import synap_cache
from nnsim.drivers.synap_cache import (
    CACHE_FORMAT,
    DEFAULT_CACHE_CAPACITY,
    LOG_TAG,
    MalformedCache,
    SynapCompileCache,
    parse_cache,
)
from nnsim.drivers.synap_npu import SynapNpuDriver, compile_cache_summary

import nnsim
from nnsim.runtime.compilation import CompilationBuilder
from tests.drivers.helpers import U8, conv_model


def valid(entries=None, clock=None) -> dict:
    entries = entries or {}
    return {"format": CACHE_FORMAT,
            "clock": max((e["used"] for e in entries.values()), default=0) if clock is None
            else clock,
            "entries": entries}


GOOD_ENTRY = {"used": 1, "layers": 3}
# D7's table (null, [], missing keys, "clock":"x", "entries":[], an entry {"a": 5}, truncated,
# random bytes, invalid UTF-8) and the other ways a file can be malformed
MALFORMED = {
    "null": b"null",
    "list": b"[]",
    "format only": json.dumps({"format": CACHE_FORMAT}).encode(),
    "clock is a string": json.dumps({**valid(), "clock": "x"}).encode(),
    "entries is a list": json.dumps({**valid(), "entries": []}).encode(),
    "entry of the wrong type": json.dumps(valid({"k0": GOOD_ENTRY}) | {
        "entries": {"k0": GOOD_ENTRY, "a": 5}}).encode(),
    "truncated": json.dumps(valid({"k0": GOOD_ENTRY}))[:-7].encode(),
    "random bytes": bytes(np.random.default_rng(7).integers(0, 256, 300, dtype=np.uint8)),
    "invalid utf-8": b'{"format": "\xff\xfe"}',
    "whitespace only": b"  \n",
    "a number": b"5",
    "a string": b'"nnsim-synap-cache 1"',
    "other format": json.dumps({**valid(), "format": "nnsim-synap-cache 2"}).encode(),
    "extra key": json.dumps({**valid(), "version": 2}).encode(),
    "clock negative": json.dumps({**valid(), "clock": -1}).encode(),
    "clock a bool": json.dumps({**valid(), "clock": True}).encode(),
    "clock a float": json.dumps({**valid(), "clock": 1.5}).encode(),
    "entry missing layers": json.dumps(valid({"k0": {"used": 1}})).encode(),
    "entry extra key": json.dumps(valid({"k0": {**GOOD_ENTRY, "x": 1}})).encode(),
    "entry used a string": json.dumps(valid({"k0": {"used": "1", "layers": 3}}, 1)).encode(),
    "entry layers null": json.dumps(valid({"k0": {"used": 1, "layers": None}})).encode(),
    "entry model a number": json.dumps(valid({"k0": {**GOOD_ENTRY, "model": 3}})).encode(),
    "entry inserted a string": json.dumps(valid({"k0": {**GOOD_ENTRY,
                                                         "inserted": "today"}})).encode(),
}


def warnings_of(logcat):
    return [m for (level, tag, m) in logcat.records if level == "W" and tag == LOG_TAG]


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_content_is_set_aside_with_one_warning(name, tmp_path, logcat):
    path = tmp_path / "nnhal.cache"
    path.write_bytes(MALFORMED[name])
    with pytest.raises(MalformedCache):
        parse_cache(MALFORMED[name])
    cache = SynapCompileCache(str(path), 10)
    assert cache.keys() == []                # a reader neither fails nor moves the file
    assert path.read_bytes() == MALFORMED[name]
    assert cache.lookup_or_insert("k1", 3) is False   # the cache started empty
    warnings = warnings_of(logcat)
    assert len(warnings) == 1 and warnings == cache.warnings
    assert warnings[0].startswith(f"malformed SyNAP cache {path} (")
    aside = cache.set_aside_files()
    assert len(aside) == 1 and aside[0].name.startswith("nnhal.cache.corrupt-")
    assert f"set aside as {aside[0].name}, starting with an empty cache" in warnings[0]
    assert aside[0].read_bytes() == MALFORMED[name]   # kept for the user to look at
    raw = parse_cache(path.read_bytes())
    assert list(raw["entries"]) == ["k1"] and raw["clock"] == 1
    assert cache.lookup_or_insert("k1", 3) is True
    assert len(warnings_of(logcat)) == 1             # once, not at every run


def test_old_and_empty_files_are_valid(tmp_path, logcat):
    path = tmp_path / "nnhal.cache"
    path.write_bytes(b"")                    # 0 bytes: an empty cache, quietly
    cache = SynapCompileCache(str(path), 10)
    assert cache.lookup_or_insert("k1", 3) is False
    # entries written before "model"/"inserted" existed stay valid
    path.write_text(json.dumps(valid({"old": {"used": 4, "layers": 2}})))
    assert cache.lookup_or_insert("old", 2) is True
    assert warnings_of(logcat) == [] and cache.set_aside_files() == []
    entry = parse_cache(path.read_bytes())["entries"]["old"]
    assert entry == {"used": 5, "layers": 2}


def test_two_malformed_files_in_one_second_get_two_names(tmp_path):
    path = tmp_path / "nnhal.cache"
    cache = SynapCompileCache(str(path), 10)
    for content in (b"null", b"[]"):
        path.write_bytes(content)
        cache.lookup_or_insert("k", 1)
    assert sorted(p.read_bytes() for p in cache.set_aside_files()) == [b"[]", b"null"]


def test_wrong_entry_no_longer_breaks_eviction(tmp_path):
    """D7: ``{"a": 5}`` survived until eviction, then TypeError with capacity 1."""
    path = tmp_path / "nnhal.cache"
    path.write_text(json.dumps(valid() | {"entries": {"a": 5}}))
    cache = SynapCompileCache(str(path), 1)
    assert cache.lookup_or_insert("k1", 1) is False
    assert cache.lookup_or_insert("k2", 1) is False   # evicts k1
    assert cache.keys() == ["k2"]


def test_unreadable_cache_path_does_not_raise(tmp_path, logcat):
    path = tmp_path / "nnhal.cache"
    path.mkdir()                              # a directory where the file should be
    cache = SynapCompileCache(str(path), 10)
    assert cache.lookup_or_insert("k", 1) is False
    assert any("cannot read the SyNAP cache" in w for w in warnings_of(logcat))
    assert any(level == "E" and "cannot write the SyNAP cache" in m
               for level, _, m in logcat.records)
    assert path.is_dir()


# -- atomic write under a lock ------------------------------------------------------------------
def test_failed_write_leaves_the_old_file_intact(tmp_path, monkeypatch, logcat):
    path = tmp_path / "nnhal.cache"
    cache = SynapCompileCache(str(path), 10)
    cache.lookup_or_insert("k1", 1)
    before = path.read_bytes()

    def half_then_fail(obj, f):               # e.g. the disk fills up mid-write
        f.write(json.dumps(obj)[:20])
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(synap_cache.json, "dump", half_then_fail)
    assert cache.lookup_or_insert("k2", 1) is False
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nnhal.cache", "nnhal.cache.lock"]
    assert any("No space left on device" in m for _, _, m in logcat.records)


def test_write_goes_through_a_temporary_file_and_os_replace(tmp_path, monkeypatch):
    path = tmp_path / "nnhal.cache"
    seen = []
    real_replace = os.replace

    def spy(src, dst):
        # the new content is complete in the temporary file before it becomes the cache
        seen.append((os.path.dirname(src), str(dst), parse_cache(Path(src).read_bytes())))
        real_replace(src, dst)
    monkeypatch.setattr(synap_cache.os, "replace", spy)
    SynapCompileCache(str(path), 10).lookup_or_insert("k1", 1)
    assert len(seen) == 1
    directory, dst, raw = seen[0]
    assert directory == str(tmp_path) and dst == str(path) and list(raw["entries"]) == ["k1"]


def _insert_many(path: str, tag: str, count: int, start) -> None:
    start.wait()
    cache = SynapCompileCache(path, 10000)
    for i in range(count):
        cache.lookup_or_insert(f"{tag}-{i}", 1)


def test_two_processes_inserting_at_once_keep_every_key(tmp_path):
    """D7: with a thread lock only, 300 or 301 of 600 keys survived."""
    path = str(tmp_path / "nnhal.cache")
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    start = ctx.Event()
    procs = [ctx.Process(target=_insert_many, args=(path, tag, 300, start)) for tag in "ab"]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    raw = parse_cache(Path(path).read_bytes())
    assert len(raw["entries"]) == 600 and raw["clock"] == 600
    assert {e["used"] for e in raw["entries"].values()} == set(range(1, 601))


def test_without_fcntl_the_cache_still_works(tmp_path, monkeypatch):
    monkeypatch.setattr(synap_cache, "fcntl", None)
    cache = SynapCompileCache(str(tmp_path / "nnhal.cache"), 10)
    assert cache.lookup_or_insert("k", 1) is False and cache.lookup_or_insert("k", 1) is True
    assert not (tmp_path / "nnhal.cache.lock").exists()


def test_clear(tmp_path):
    path = tmp_path / "nnhal.cache"
    cache = SynapCompileCache(str(path), 10)
    path.write_bytes(b"null")
    cache.lookup_or_insert("k", 1)
    assert cache.clear() == [path] and not path.exists()
    assert len(cache.set_aside_files()) == 1
    assert cache.clear() == []
    aside = cache.set_aside_files()
    assert cache.clear(set_aside_too=True) == aside and cache.set_aside_files() == []


# -- properties ---------------------------------------------------------------------------------
@pytest.mark.parametrize("value, capacity, warned", [
    ("abc", DEFAULT_CACHE_CAPACITY, "is not an integer; using the default capacity 10000"),
    ("", DEFAULT_CACHE_CAPACITY, None),
    ("0x10", 16, None),                       # base 0, as base::GetIntProperty
    ("0", 0, None),
    ("-3", 0, "is negative; the SyNAP cache is disabled"),
])
def test_capacity_property(value, capacity, warned, logcat):
    nnsim.setprop("vendor.SYNAP_CACHE_CAPACITY", value)
    cache = SynapNpuDriver().compile_cache()
    assert cache.capacity == capacity
    if warned:
        assert cache.warnings == warnings_of(logcat)
        assert len(cache.warnings) == 1 and warned in cache.warnings[0]
        assert cache.warnings[0].startswith(f"vendor.SYNAP_CACHE_CAPACITY={value!r}")
    else:
        assert cache.warnings == [] == warnings_of(logcat)


# -- through the driver -----------------------------------------------------------------------------
class _Result:
    """The part of a TFLite delegate result that compile_cache_summary reads."""

    def __init__(self, comps):
        self.kernels = [type("K", (), {"compilation": c})() for c in comps]


def _first_run(driver):
    comp = CompilationBuilder.create_for_devices(conv_model(U8), [driver])
    comp.finish()
    comp.plan.prepared.execute([np.zeros((1, 8, 8, 4), np.uint8)])
    return comp


def test_driver_logs_and_records_miss_then_hit(tmp_path, logcat):
    path = tmp_path / "state" / "data" / "vendor" / "synap" / "nnhal.cache"
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"format": "nnsim-synap-cache 1"}')       # D7: KeyError 'clock'
    cold = _first_run(SynapNpuDriver())
    warm = _first_run(SynapNpuDriver())                          # "another process"
    note_cold = cold.plan.prepared.state["synap_cache"]
    note_warm = warm.plan.prepared.state["synap_cache"]
    assert note_cold["result"] == "miss" and note_warm["result"] == "hit"
    assert note_warm["ns"] == pytest.approx(note_cold["ns"] / 3)  # synap_cache_speedup 3
    assert warm.plan.prepared.first_run_kind == "synap-cache"
    infos = [m for (level, tag, m) in logcat.records
             if level == "I" and tag == LOG_TAG and m.startswith("SyNAP cache")]
    assert len(infos) == 2
    assert infos[0].startswith("SyNAP cache miss: model ") and str(path) in infos[0]
    assert infos[1].startswith("SyNAP cache hit: model ") and str(path) in infos[1]
    lines, warnings = compile_cache_summary(_Result([cold]))
    assert len(warnings) == 1 and "keys missing clock, entries" in warnings[0]
    assert lines == [(f"SyNAP compile cache: miss in {path}: the first inference converted the "
                      f"model ({note_cold['ns'] / 1e6:.1f} ms) and stored it; a later run saves "
                      f"{(note_cold['ns'] - note_warm['ns']) / 1e6:.1f} ms")]
    lines, warnings = compile_cache_summary(_Result([warm]))
    assert warnings == [] and len(lines) == 1
    assert lines[0].startswith(f"SyNAP compile cache: hit in {path}: ")
    assert f"(saved {(note_cold['ns'] - note_warm['ns']) / 1e6:.1f} ms)" in lines[0]
    model = json.loads(path.read_text())["entries"]
    assert [e["model"] for e in model.values()] == [
        "1 operation (CONV_2D x1); input 1x8x8x4 TENSOR_QUANT8_ASYMM"]


def test_summary_of_a_disabled_cache(tmp_path):
    nnsim.setprop("vendor.SYNAP_CACHE_CAPACITY", "0")
    comp = _first_run(SynapNpuDriver())
    lines, warnings = compile_cache_summary(_Result([comp]))
    assert warnings == [] and len(lines) == 1
    assert lines[0].startswith("SyNAP compile cache: disabled (vendor.SYNAP_CACHE_CAPACITY=0)")
    assert compile_cache_summary(None) == ([], [])
