"""``ANeuralNetworksMemoryDesc`` (FL4 memory domains, reference 6.3), CPU-backed.

Roles (compilation, input/output index, frequency in (0, 1]) must agree on type, scale and
zero point; the memory is allocated with the logical size on the host, as the runtime's
fallback (ashmem/BLOB) allocation does when no single device can allocate it.
"""
from __future__ import annotations

import numpy as np

from nnsim.errors import BadDataError, BadStateError
from nnsim.runtime.memory import Memory


class MemoryDesc:
    def __init__(self):
        self.roles: list = []
        self.operand = None
        self.dimensions: tuple | None = None
        self.finished = False

    def add_role(self, compilation, index: int, frequency: float, is_input: bool) -> None:
        fn = "ANeuralNetworksMemoryDesc_add" + ("InputRole" if is_input else "OutputRole")
        if self.finished:
            raise BadStateError(f"{fn} called after the memory descriptor has been finished")
        if compilation is None or not getattr(compilation, "is_valid", False):
            raise BadDataError(f"{fn} passed an invalid compilation")
        model = compilation.model
        indexes = model.input_indexes if is_input else model.output_indexes
        if not 0 <= index < len(indexes):
            raise BadDataError(f"{fn} -- invalid index {index}")
        if not 0.0 < frequency <= 1.0:
            raise BadDataError(f"{fn} -- invalid frequency {frequency}")
        key = (id(compilation), index, is_input)
        if any(r[0] == key for r in self.roles):
            raise BadDataError(f"{fn} -- the same role is specified twice")
        operand = model.operands[indexes[index]]
        if self.operand is not None:
            o = self.operand
            if (o.type, o.scale, o.zero_point) != (operand.type, operand.scale,
                                                   operand.zero_point):
                raise BadDataError(f"{fn} -- incompatible operand metadata")
        else:
            self.operand = operand
        self.dimensions = _combine(self.dimensions, operand.dimensions, fn)
        self.roles.append((key, compilation, frequency))

    def set_dimensions(self, dimensions) -> None:
        fn = "ANeuralNetworksMemoryDesc_setDimensions"
        if self.finished:
            raise BadStateError(f"{fn} called after the memory descriptor has been finished")
        self.dimensions = _combine(self.dimensions, tuple(dimensions), fn)

    def finish(self) -> None:
        if self.finished:
            raise BadStateError("ANeuralNetworksMemoryDesc_finish called twice")
        if not self.roles:
            raise BadDataError("ANeuralNetworksMemoryDesc_finish -- no role has been specified")
        self.finished = True

    def allocate(self) -> Memory:
        if not self.finished:
            raise BadStateError("ANeuralNetworksMemory_createFromDesc passed an unfinished "
                                "descriptor")
        dims = self.dimensions or ()
        size = self.operand.element_size() * int(np.prod(dims)) if dims else 0
        if size == 0:
            raise BadDataError("ANeuralNetworksMemory_createFromDesc: memory of unknown size")
        memory = Memory(bytearray(size))
        memory.initialized = False
        return memory


def _combine(a, b, fn):
    if a is None or not a:
        return tuple(b)
    if not b:
        return tuple(a)
    if len(a) != len(b):
        raise BadDataError(f"{fn} -- incompatible dimensions")
    out = []
    for x, y in zip(a, b):
        if x and y and x != y:
            raise BadDataError(f"{fn} -- incompatible dimensions")
        out.append(x or y)
    return tuple(out)
