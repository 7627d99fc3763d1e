"""Operand validation (T13 common/types/src/Validation.cpp, nnapi-runtime.md 1.2 and 1.5)."""
from __future__ import annotations

from nnsim.errors import BadDataError
from nnsim.common.operand import Operand, OperandTypeSpec
from nnsim.types import (ELEMENT_SIZE, FL1, FL3, FL4, SCALAR_TYPES, OperandLifeTime,
                         OperandType)

T = OperandType
L = OperandLifeTime

# Types introduced after FL1 (nnapi-runtime.md 5.3).
_FL3_TYPES = {T.BOOL, T.TENSOR_QUANT16_SYMM, T.TENSOR_FLOAT16, T.TENSOR_BOOL8, T.FLOAT16,
              T.TENSOR_QUANT8_SYMM_PER_CHANNEL, T.TENSOR_QUANT16_ASYMM, T.TENSOR_QUANT8_SYMM}
_FL4_TYPES = {T.TENSOR_QUANT8_ASYMM_SIGNED, T.MODEL}

# (scale rule, zero point range) per type; None = not checked.
_QUANT_RULES = {
    T.TENSOR_QUANT8_ASYMM: ("positive", (0, 255)),
    T.TENSOR_QUANT8_ASYMM_SIGNED: ("positive", (-128, 127)),
    T.TENSOR_QUANT8_SYMM: ("positive", (0, 0)),
    T.TENSOR_QUANT16_ASYMM: ("positive", (0, 65535)),
    T.TENSOR_QUANT16_SYMM: ("positive", (0, 0)),
}


def _type_name(t: int) -> str:
    try:
        return T(t).name
    except ValueError:
        return str(t)


def _known_type(t) -> bool:
    try:
        T(int(t))
        return True
    except (ValueError, TypeError):
        return False


def validate_operand_type(spec: OperandTypeSpec, tag: str, allow_partial: bool) -> None:
    """addOperand-time check (``validateOperandType`` with partial dimensions allowed)."""
    t = spec.type
    if not _known_type(t):
        if isinstance(t, int) and (t >> 16) != 0:
            raise BadDataError(f"{tag}: Extensions are not supported: operand type {t}")
        raise BadDataError(f"{tag}: Invalid OperandType {t}")
    t = T(t)
    dims = spec.dimensions
    if any(d < 0 for d in dims):
        raise BadDataError(f"{tag}: negative dimension in {dims}")
    if t in SCALAR_TYPES:
        if t in (T.OEM_SCALAR,):
            return
        if dims:
            raise BadDataError(f"{tag}: Invalid dimensions for scalar type {t.name}")
        if spec.scale != 0.0:
            raise BadDataError(f"{tag}: Operand of type {t.name} with a non-zero scale "
                               f"({spec.scale})")
        if spec.zeroPoint != 0:
            raise BadDataError(f"{tag}: Operand of type {t.name} with a non-zero zeroPoint "
                               f"{spec.zeroPoint}")
        return
    if t == T.TENSOR_OEM_BYTE:
        return
    if not allow_partial and (not dims or 0 in dims):
        raise BadDataError(f"{tag}: tensor of type {t.name} is not fully specified")
    size = ELEMENT_SIZE[t]
    for d in dims:
        if d:
            size *= d
    if size > 0xFFFFFFFF:
        raise BadDataError(f"{tag}: operand byte size overflows uint32_t")
    _check_quant(t, spec.scale, spec.zeroPoint, tag, at_finish=False)


def _check_quant(t: T, scale: float, zp: int, tag: str, at_finish: bool) -> None:
    if t in (T.TENSOR_FLOAT32, T.TENSOR_FLOAT16, T.TENSOR_BOOL8,
             T.TENSOR_QUANT8_SYMM_PER_CHANNEL):
        if scale != 0.0:
            raise BadDataError(f"{tag}: Operand of type {t.name} with a non-zero scale ({scale})")
        if zp != 0:
            raise BadDataError(f"{tag}: Operand of type {t.name} with a non-zero zeroPoint {zp}")
        return
    if t == T.TENSOR_INT32:
        if at_finish:
            if not scale >= 0.0:
                raise BadDataError(f"{tag}: Operand of type {t.name} with a negative scale")
            if zp != 0:
                raise BadDataError(f"{tag}: Operand of type {t.name} with a non-zero zeroPoint "
                                   f"{zp}")
        return
    rule = _QUANT_RULES.get(t)
    if rule is None:
        return
    if not scale > 0.0:
        raise BadDataError(f"{tag}: Operand of type {t.name} with a non-positive scale")
    lo, hi = rule[1]
    if not lo <= zp <= hi:
        raise BadDataError(f"{tag}: Operand of type {t.name} with an invalid zeroPoint {zp}, "
                           f"must be in range [{lo}, {hi}]")


def validate_operand_finish(index: int, operand: Operand) -> int:
    """Model_finish-time operand check; returns the feature level the operand needs."""
    tag = f"Operand {index}"
    t = operand.type
    if not _known_type(t):
        raise BadDataError(f"{tag}: Invalid OperandType {t}")
    t = T(t)
    if (t == T.MODEL) != (operand.lifetime == L.SUBGRAPH):
        raise BadDataError(f"{tag}: MODEL type and SUBGRAPH lifetime must go together")
    if t in SCALAR_TYPES and t != T.OEM_SCALAR and operand.dimensions:
        raise BadDataError(f"{tag}: scalar with dimensions")
    if operand.is_constant and t not in SCALAR_TYPES:
        if not operand.dimensions or 0 in operand.dimensions:
            raise BadDataError(f"{tag}: constant tensor is not fully specified")
    if t not in SCALAR_TYPES and t != T.TENSOR_OEM_BYTE:
        _check_quant(t, operand.scale, operand.zero_point, tag, at_finish=True)
    if t == T.TENSOR_QUANT8_SYMM_PER_CHANNEL and operand.channel_quant is None:
        raise BadDataError(f"{tag}: TENSOR_QUANT8_SYMM_PER_CHANNEL without a Channel "
                           f"Quantization params")
    if operand.channel_quant is not None and t != T.TENSOR_QUANT8_SYMM_PER_CHANNEL:
        raise BadDataError(f"{tag}: per-channel params on a {t.name} operand")
    if operand.is_constant and t != T.OEM_SCALAR:
        if operand.value is None or len(operand.value) != operand.byte_size():
            raise BadDataError(f"{tag}: constant value has the wrong length")
    return operand_type_feature_level(operand)


def operand_type_feature_level(operand: Operand) -> int:
    t = operand.type
    level = FL1
    if t in _FL3_TYPES:
        level = FL3
    elif t in _FL4_TYPES:
        level = FL4
    if t not in SCALAR_TYPES and not operand.dimensions:
        level = max(level, FL3)  # unknown rank
    if operand.lifetime == L.SUBGRAPH:
        level = max(level, FL4)
    return int(level)
