"""``ANeuralNetworksMemory`` from bytes or from a file (runtime/Memory.cpp, reference 6.3)."""
from __future__ import annotations

import mmap
import os

from nnsim.errors import BadDataError, UnmappableError


class Memory:
    """A block of shared memory: a writable buffer viewed by offset and length."""

    def __init__(self, buffer):
        self._buffer = buffer
        self._view = memoryview(buffer)
        self.size = len(self._view)

    @classmethod
    def from_bytes(cls, data) -> "Memory":
        return cls(bytearray(data))

    @classmethod
    def create_from_fd(cls, size: int, protect: int, fd: int, offset: int) -> "Memory":
        """mmap ``size`` bytes of ``fd`` at ``offset`` (PROT_READ=1, PROT_WRITE=2)."""
        if size <= 0:
            raise BadDataError("ANeuralNetworksMemory_createFromFd size must be positive")
        access = mmap.ACCESS_WRITE if protect & 2 else mmap.ACCESS_READ
        try:
            if offset % mmap.ALLOCATIONGRANULARITY:
                raise UnmappableError("offset is not page aligned")
            mapped = mmap.mmap(fd, size, access=access, offset=offset)
        except (OSError, ValueError) as e:
            raise UnmappableError(f"ANeuralNetworksMemory_createFromFd: can't mmap: {e}") from None
        return cls(mapped)

    @classmethod
    def from_file(cls, path: str, writable: bool = False) -> "Memory":
        flags = os.O_RDWR if writable else os.O_RDONLY
        fd = os.open(path, flags)
        try:
            return cls.create_from_fd(os.fstat(fd).st_size, 3 if writable else 1, fd, 0)
        finally:
            os.close(fd)

    def check_range(self, offset: int, length: int) -> None:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise BadDataError(f"request size ({offset}+{length}) larger than the memory size "
                               f"({self.size})")

    def view(self, offset: int, length: int) -> memoryview:
        self.check_range(offset, length)
        return self._view[offset:offset + length]
