"""Test graphs in the style of AOSP TestPartitioning: eight operation kinds (ADD or MUL with one
of four fuse codes), float32 tensors of shape [1]; devices that support a subset of kinds."""
from __future__ import annotations

import numpy as np

from nnsim.drivers.base import PerformanceInfo
from nnsim.drivers.limited import LimitedDriver
from nnsim.runtime.model import ModelBuilder
from nnsim.common.operand import OperandTypeSpec
from nnsim.types import OperandType, OperationCode

NUM_FUSE_CODES = 4


def operation_kind(model, i) -> int:
    """0..3 = ADD with fuse code k, 4..7 = MUL with fuse code k-4 (lookupOperation)."""
    op = model.operations[i]
    fuse = int(model.operands[op.inputs[2]].array())
    return fuse + (NUM_FUSE_CODES if op.type == OperationCode.MUL else 0)


def make_device(name: str, perf: float, mask: int) -> LimitedDriver:
    return LimitedDriver(name, PerformanceInfo(perf, perf),
                         lambda model, i: bool(mask & (1 << operation_kind(model, i))))


class PartitioningModel(ModelBuilder):
    def add_float_operand(self, dims=(1,)) -> int:
        return self.add_operand(OperandTypeSpec(OperandType.TENSOR_FLOAT32, dims))

    def add_operation_2to1(self, kind: int, a: int, b: int) -> int:
        code = OperationCode.ADD if kind < NUM_FUSE_CODES else OperationCode.MUL
        fuse = self.add_operand(OperandTypeSpec(OperandType.INT32))
        self.set_operand_value(fuse, np.array(kind % NUM_FUSE_CODES, np.int32))
        out = self.add_operand(OperandTypeSpec(self.operands[a].type, self.operands[a].dimensions))
        self.add_operation(code, [a, b, fuse], [out])
        return out
