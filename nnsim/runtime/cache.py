"""Compilation caching: token derivation and cache file names (nnapi-runtime.md 6.1).

SIMPLE plan: SHA-256(user token || device name || version string || int32 preference ||
int32 priority). COMPOUND step: SHA-256(user token || per op: uint32 source model index ||
int32 operation index || device name || version || preference || priority). Strings are hashed
without terminator, integers little-endian. File names: 64 letters from the derived token
(each byte -> 'A' + low nibble, 'A' + high nibble), then '1' (model cache) or '2' (data cache),
then the decimal file index.
"""
from __future__ import annotations

import hashlib
import os
import struct
from dataclasses import dataclass

from nnsim.types import BYTE_SIZE_OF_CACHE_TOKEN


@dataclass(frozen=True)
class CacheInfo:
    cache_dir: str
    token: bytes


def _hasher(user_token: bytes):
    if len(user_token) != BYTE_SIZE_OF_CACHE_TOKEN:
        raise ValueError("cache token must be 32 bytes")
    h = hashlib.sha256()
    h.update(user_token)
    return h


def _finish(h, device, preference: int, priority: int) -> bytes:
    h.update(device.name.encode())
    h.update(device.version_string.encode())
    h.update(struct.pack("<i", int(preference)))
    h.update(struct.pack("<i", int(priority)))
    return h.digest()


def derive_token_simple(user_token: bytes, device, preference: int, priority: int) -> bytes:
    return _finish(_hasher(user_token), device, preference, priority)


def derive_token_step(user_token: bytes, operations, device, preference: int,
                      priority: int) -> bytes:
    """``operations``: (source model index, operation index) pairs of the step."""
    h = _hasher(user_token)
    for source_model, op_index in operations:
        h.update(struct.pack("<I", int(source_model)))
        h.update(struct.pack("<i", int(op_index)))
    return _finish(h, device, preference, priority)


def token_to_name(token: bytes) -> str:
    return "".join(chr(ord("A") + (b & 0x0F)) + chr(ord("A") + (b >> 4)) for b in token)


def cache_file_paths(cache_dir: str, token: bytes, n_model: int, n_data: int) -> tuple[list, list]:
    """(model cache paths, data cache paths) for ``token`` in ``cache_dir``."""
    base = os.path.join(cache_dir, token_to_name(token))
    return ([f"{base}1{i}" for i in range(n_model)], [f"{base}2{i}" for i in range(n_data)])


@dataclass
class DeviceCache:
    """What a driver's prepare receives: the derived token and its file paths."""
    token: bytes
    model_files: list
    data_files: list

    def exists(self) -> bool:
        return all(os.path.exists(p) for p in self.model_files + self.data_files)
