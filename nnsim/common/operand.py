"""Operand and Operation records of a model (the canonical ``Operand`` / ``Operation``)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from nnsim.types import (ELEMENT_SIZE, NUMPY_DTYPE, SCALAR_TYPES, OperandLifeTime, OperandType)

#: ``NUMPY_DTYPE`` keyed by the plain int code: ``dtype()`` runs at every execution of a
#: prepared model (the enum lookup and ``np.dtype`` took 1.5 us of it, issue 13)
_DTYPES = {int(t): np.dtype(d) for t, d in NUMPY_DTYPE.items()}


@dataclass(frozen=True)
class OperandTypeSpec:
    """``ANeuralNetworksOperandType``: type, dimensions (0 = unknown), scale, zeroPoint."""
    type: int
    dimensions: tuple = ()
    scale: float = 0.0
    zeroPoint: int = 0

    def __post_init__(self):
        object.__setattr__(self, "dimensions", tuple(int(d) for d in (self.dimensions or ())))


@dataclass(frozen=True)
class SymmPerChannelQuantParams:
    """``ANeuralNetworksSymmPerChannelQuantParams``."""
    channelDim: int
    scales: tuple

    def __post_init__(self):
        object.__setattr__(self, "scales", tuple(float(s) for s in self.scales))


@dataclass
class Operand:
    type: int
    dimensions: tuple
    scale: float = 0.0
    zero_point: int = 0
    lifetime: OperandLifeTime = OperandLifeTime.TEMPORARY_VARIABLE
    channel_quant: SymmPerChannelQuantParams | None = None
    # Constant value as raw bytes (COPY and REFERENCE); ``subgraph`` for SUBGRAPH lifetime.
    value: bytes | memoryview | None = None
    subgraph: object | None = None
    number_of_consumers: int = 0

    @property
    def is_scalar(self) -> bool:
        return self.type in SCALAR_TYPES

    @property
    def is_constant(self) -> bool:
        return self.lifetime in (OperandLifeTime.CONSTANT_COPY, OperandLifeTime.CONSTANT_REFERENCE,
                                 OperandLifeTime.POINTER)

    @property
    def is_fully_specified(self) -> bool:
        if self.is_scalar:
            return True
        return len(self.dimensions) > 0 and all(d > 0 for d in self.dimensions)

    def element_size(self) -> int:
        return ELEMENT_SIZE.get(self.type, 0)

    def byte_size(self) -> int:
        """Size of the fully specified value in bytes (0 if not fully specified)."""
        n = self.element_size()
        if self.is_scalar:
            return n
        for d in self.dimensions:
            n *= d
        return n if self.dimensions else 0

    def dtype(self) -> np.dtype:
        dtype = _DTYPES.get(self.type)
        if dtype is None:   # not a type with values: OperandType's ValueError or a KeyError
            return np.dtype(NUMPY_DTYPE[OperandType(self.type)])
        return dtype

    def array(self) -> np.ndarray | None:
        """The constant value as a typed, shaped, read-only numpy array (None if no value)."""
        if self.value is None:
            return None
        arr = np.frombuffer(self.value, dtype=self.dtype())
        if self.is_scalar:
            return arr[0] if arr.size else None
        return arr.reshape(self.dimensions)

    def type_spec(self) -> OperandTypeSpec:
        return OperandTypeSpec(self.type, self.dimensions, self.scale, self.zero_point)


@dataclass
class Operation:
    type: int
    inputs: tuple
    outputs: tuple
    # Filled at finish: minimum feature level of this concrete use (validator result).
    min_feature_level: int = 0
    extra: dict = field(default_factory=dict)
