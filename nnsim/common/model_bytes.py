"""The canonical bytes of a finished model: what a compilation cache stores and what keys it.

``serialize_model(model)`` -> (structure, constant data): the structure is ``CACHE_MAGIC``
followed by sorted-key JSON of the operands (type, dims, scale, zero point, lifetime,
per-channel quantization, the [offset, length] of a constant's bytes in the data part), the
operations ([code, inputs, outputs]), the model inputs and outputs and the fp16 relaxation.
``model_fingerprint(model)`` is the SHA-256 of both parts: the SyNAP compile-cache key.

It reads only the canonical model surface (``operands``, ``operations``, ``input_indexes``,
``output_indexes``, ``relax_float32_to_float16``), so drivers and the runtime share it, as AOSP's
``common/`` holds the canonical ``Model`` both sides see. Rebuilding a model from these bytes
needs a ModelBuilder and lives with the runtime (:func:`nnsim.runtime.cache.deserialize_model`).
The bytes are a stable format: cache files and SyNAP keys written by one nnsim version are
read by the next, so a change here needs a new ``CACHE_MAGIC``.
"""
from __future__ import annotations

import hashlib
import json

from nnsim.types import OperandLifeTime

L = OperandLifeTime
CACHE_MAGIC = b"NNSIM-COMPILED-NETWORK 1\n"
_CONST = (L.CONSTANT_COPY, L.CONSTANT_REFERENCE, L.POINTER)


def serialize_model(model) -> tuple[bytes, bytes]:
    """(structure, constant data) of a finished model; raises ValueError for control flow."""
    blob = bytearray()
    operands = []
    for o in model.operands:
        entry = {"type": int(o.type), "dims": [int(d) for d in o.dimensions], "scale": o.scale,
                 "zp": int(o.zero_point), "lifetime": int(o.lifetime)}
        if o.channel_quant is not None:
            entry["cq"] = [int(o.channel_quant.channelDim), list(o.channel_quant.scales)]
        if o.lifetime == L.SUBGRAPH:
            raise ValueError("models with control flow are not cached")
        if o.lifetime in _CONST and o.value is not None:
            data = bytes(o.value)
            entry["data"] = [len(blob), len(data)]
            blob += data
        operands.append(entry)
    struct = {"operands": operands,
              "operations": [[int(op.type), list(op.inputs), list(op.outputs)]
                             for op in model.operations],
              "inputs": list(model.input_indexes), "outputs": list(model.output_indexes),
              "relaxed": bool(model.relax_float32_to_float16)}
    return CACHE_MAGIC + json.dumps(struct, sort_keys=True).encode(), bytes(blob)


def model_fingerprint(model) -> str:
    """SHA-256 of a model's structure and constants (the SyNAP compile-cache key); raises
    ValueError for a model with control flow."""
    struct, data = serialize_model(model)
    return hashlib.sha256(struct + data).hexdigest()
