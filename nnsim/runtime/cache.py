"""Compilation caching: token derivation and cache file names (nnapi-runtime.md 6.1).

SIMPLE plan: SHA-256(user token || device name || version string || int32 preference ||
int32 priority). COMPOUND step: SHA-256(user token || per op: uint32 source model index ||
int32 operation index || device name || version || preference || priority). Strings are hashed
without terminator, integers little-endian. File names: 64 letters from the derived token
(each byte -> 'A' + low nibble, 'A' + high nibble), then '1' (model cache) or '2' (data cache),
then the decimal file index.

What a simulated driver keeps in its cache files is its compiled network, which for nnsim is the
step model itself (:mod:`nnsim.common.model_bytes`): the model file holds a JSON owner line
(``{"device", "version"}``) and the model's structure, the data file its constants.
:meth:`DeviceCache.store_model` writes them; :meth:`DeviceCache.load_model` checks the owner and
rebuilds the model through the public ModelBuilder API, so the runtime hands the driver's
``prepare_from_cache`` a rebuilt model, as AOSP's runtime hands a driver a canonical ``Model``.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
from dataclasses import dataclass

from nnsim.common.model_bytes import CACHE_MAGIC, serialize_model
from nnsim.common.operand import OperandTypeSpec, SymmPerChannelQuantParams
from nnsim.runtime.model import ModelBuilder
from nnsim.types import BYTE_SIZE_OF_CACHE_TOKEN, OperandLifeTime


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

    def store_model(self, owner: dict, model) -> None:
        """Write ``model`` as ``owner``'s compiled network into the first model and data file.
        Raises ValueError when the model cannot be cached (control flow; nothing is written)
        and OSError when a file cannot be written."""
        structure, data = serialize_model(model)
        header = json.dumps(owner, sort_keys=True).encode()
        with open(self.model_files[0], "wb") as f:
            f.write(header + b"\n" + structure)
        with open(self.data_files[0], "wb") as f:
            f.write(data)

    def load_model(self, owner: dict) -> ModelBuilder:
        """The finished model ``owner`` stored with :meth:`store_model`. Raises OSError when a
        file cannot be read, ValueError when another device (or version) wrote the files or
        they are malformed."""
        with open(self.model_files[0], "rb") as f:
            structure = f.read()
        with open(self.data_files[0], "rb") as f:
            data = f.read()
        header, _, rest = structure.partition(b"\n")
        written_by = json.loads(header)
        if written_by != owner:
            raise ValueError(f"written by {written_by}")
        return deserialize_model(rest, data)


def deserialize_model(structure: bytes, data: bytes) -> ModelBuilder:
    """Rebuild a model from :func:`~nnsim.common.model_bytes.serialize_model`'s bytes through the
    public ModelBuilder API; ValueError if malformed."""
    if not structure.startswith(CACHE_MAGIC):
        raise ValueError("not an nnsim compiled-network cache file")
    try:
        s = json.loads(structure[len(CACHE_MAGIC):])
        m = ModelBuilder()
        for k, o in enumerate(s["operands"]):
            m.add_operand(OperandTypeSpec(o["type"], tuple(o["dims"]), o["scale"], o["zp"]))
            if "cq" in o:
                m.set_operand_symm_per_channel_quant_params(
                    k, SymmPerChannelQuantParams(o["cq"][0], tuple(o["cq"][1])))
            if "data" in o:
                start, length = o["data"]
                if start + length > len(data):
                    raise ValueError("data cache file is truncated")
                m.set_operand_value(k, data[start:start + length])
            elif o["lifetime"] == OperandLifeTime.NO_VALUE:
                m.set_operand_value(k, None)
        for code, ins, outs in s["operations"]:
            m.add_operation(code, ins, outs)
        m.identify_inputs_and_outputs(s["inputs"], s["outputs"])
        m.relax_computation_float32_to_float16(s["relaxed"])
        m.finish()
        return m
    except (KeyError, TypeError, IndexError, json.JSONDecodeError) as e:
        raise ValueError(f"malformed cache file: {e}") from None
