"""Corrupted models: read_model either succeeds or raises ModelFileError, quickly.

Mutations aim at the flatbuffer structure (tables, vtables, offsets, vector lengths), not at
weight bytes, where any value is a valid model. Two deterministic sweeps over the smallest
shared model (every truncation, every byte of its structure flipped) plus ~100 hypothesis
examples over all shared models; each read is bounded by TIME_LIMIT seconds.
"""
from __future__ import annotations

import struct
import time
from functools import lru_cache
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nnsim.errors import ModelFileError
from nnsim.tflite.reader import TfliteModel, read_model

TIME_LIMIT = 2.0
FUZZ = settings(max_examples=35, deadline=int(TIME_LIMIT * 1000), derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


@lru_cache(maxsize=None)
def load(path: Path) -> tuple[bytes, np.ndarray]:
    """The file's bytes and the positions that are not buffer data (the structure)."""
    blob = path.read_bytes()
    model = read_model(blob)
    base = np.frombuffer(blob, np.uint8).ctypes.data
    structure = np.ones(len(blob), bool)
    for buf in model.buffers:
        if buf.size:
            start = buf.ctypes.data - base
            structure[start:start + buf.size] = False
    return blob, np.flatnonzero(structure)


def read_or_refuse(data: bytes) -> TfliteModel | None:
    start = time.perf_counter()
    try:
        model = read_model(data)
    except ModelFileError as err:
        assert err.path == "<memory>" and err.what
        model = None
    assert time.perf_counter() - start < TIME_LIMIT
    return model


def test_every_truncation_of_a_small_model(shared_models):
    blob, _ = load(shared_models / "hello_world_int8.tflite")
    for size in range(len(blob)):
        read_or_refuse(blob[:size])


def test_every_structure_byte_flipped(shared_models):
    blob, structure = load(shared_models / "hello_world_int8.tflite")
    for pos in structure:
        data = bytearray(blob)
        data[pos] ^= 0xFF
        read_or_refuse(bytes(data))


def _models(shared_models) -> list[Path]:
    return sorted(shared_models.glob("*.tflite"))


@FUZZ
@given(data=st.data())
def test_bit_flips_in_structure(shared_models, data):
    blob, structure = load(data.draw(st.sampled_from(_models(shared_models))))
    mutated = bytearray(blob)
    for pos in data.draw(st.lists(st.sampled_from(structure.tolist()), min_size=1, max_size=8)):
        mutated[pos] ^= 1 << data.draw(st.integers(0, 7))
    read_or_refuse(bytes(mutated))


@FUZZ
@given(data=st.data())
def test_offset_words_corrupted(shared_models, data):
    """Overwrite one aligned 32-bit word of the structure (an offset, a length, a vtable
    entry...) with a boundary value, a nearby value or noise; position 0 is the root offset."""
    blob, structure = load(data.draw(st.sampled_from(_models(shared_models))))
    pos = data.draw(st.sampled_from([0] + structure.tolist())) & ~3
    old = struct.unpack_from("<I", blob, pos)[0]
    new = data.draw(st.one_of(
        st.sampled_from([0, 1, 4, 0x7FFFFFFF, 0xFFFFFFFF, len(blob), len(blob) - 4]),
        st.integers(-64, 64).map(lambda d: (old + d) & 0xFFFFFFFF),
        st.integers(0, 0xFFFFFFFF)))
    read_or_refuse(blob[:pos] + struct.pack("<I", new) + blob[pos + 4:])


@settings(FUZZ, max_examples=30)
@given(data=st.data())
def test_truncated_anywhere(shared_models, data):
    blob, _ = load(data.draw(st.sampled_from(_models(shared_models))))
    # Every access is bounds-checked, so a truncated file that still reads has lost only
    # bytes nothing refers to (padding).
    read_or_refuse(blob[:data.draw(st.integers(0, len(blob) - 1))])
