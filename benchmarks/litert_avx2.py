"""LiteRT's XNNPACK held to its AVX2 kernels in this process, for CPUs without CPUID faulting.

``benchmarks/avx2_only.py`` hides AVX-512 from a whole process by answering CPUID itself, which
needs CPUID faulting (``cpuid_fault`` in /proc/cpuinfo). Where the CPU or hypervisor does not
offer it (an AMD EPYC KVM guest, for one), the next best AVX2-only comparison is nnsim compiled
for Haswell (``NUMBA_CPU_NAME=haswell``) against LiteRT with XNNPACK's hardware flags cut down to
what an AVX2 CPU reports. This module does the latter: it calls XNNPACK's own
``xnn_init_hardware_config`` (a local symbol of LiteRT's ``libpywrap_litert_common.so``, found in
its ELF symbol table with ``nm``), then clears every ``arch_flags`` bit above AVX2 (AVX-512*,
AVX-VNNI, AVX256*) before any LiteRT interpreter exists, so every XNNPACK kernel configuration,
which reads the flags on first use, picks its AVX2 (or older) micro-kernels.

``arch_flags`` is the 64-bit word at offset 8 of ``struct xnn_hardware_config`` (XNNPACK's
src/xnnpack/hardware-config.h); its low bits are, in order: two always-set x86 base bits, SSSE3,
SSE4.1, AVX, F16C, FMA3, AVX2, then AVX512SKX (bit 8) and AVX512F (bit 9) and the newer ones.
Before writing, ``pin()`` checks the word it found against /proc/cpuinfo (bits 2-7 and 9 must
match the host's ssse3, sse4_1, avx, f16c, fma, avx2, avx512f), so a LiteRT build with another
layout is refused rather than silently mis-patched.

TFLite's own builtin kernels (ops XNNPACK does not take) are compiled for a fixed ISA and do not
dispatch on CPUID, so they are the same on either kind of machine.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

AVX2_FLAGS = 0xFF   # base bits 0-1, SSSE3, SSE4.1, AVX, F16C, FMA3, AVX2
_HOST_BITS = {"ssse3": 2, "sse4_1": 3, "avx": 4, "f16c": 5, "fma": 6, "avx2": 7, "avx512f": 9}


class PinError(RuntimeError):
    """XNNPACK could not be held to AVX2 in this process (the reason says why)."""


def _library() -> Path:
    import ai_edge_litert.interpreter  # noqa: F401  (loads the library into this process)
    import ai_edge_litert
    lib = Path(ai_edge_litert.__file__).with_name("libpywrap_litert_common.so")
    if not lib.exists():
        raise PinError(f"no {lib.name} in {lib.parent}")
    return lib


def _symbol(lib: Path, name: str) -> int:
    nm = shutil.which("nm")
    if nm is None:
        raise PinError("no `nm` (binutils) on PATH to read LiteRT's symbol table")
    out = subprocess.run([nm, str(lib)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16)
    raise PinError(f"{name} not in {lib.name}'s symbol table")


def _load_base(lib: Path) -> int:
    real = os.path.realpath(lib)
    for line in Path("/proc/self/maps").read_text().splitlines():
        fields = line.split()
        if len(fields) >= 6 and os.path.realpath(fields[5]) == real and int(fields[2], 16) == 0:
            return int(fields[0].split("-")[0], 16)
    raise PinError(f"{lib.name} is not mapped in this process")


def _host_flags() -> set:
    text = Path("/proc/cpuinfo").read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("flags"))
    return set(line.split(":", 1)[1].split())


def pin() -> tuple[int, int]:
    """Hold XNNPACK to AVX2 in this process; returns (arch_flags before, after).

    Must run before the process creates its first LiteRT interpreter (XNNPACK reads the flags
    when it first configures each kind of kernel). Raises PinError where it cannot."""
    lib = _library()
    init = ctypes.CFUNCTYPE(ctypes.c_void_p)(_load_base(lib)
                                              + _symbol(lib, "xnn_init_hardware_config"))
    config = init()
    if not config:
        raise PinError("xnn_init_hardware_config returned NULL (cpuinfo failed)")
    word = ctypes.c_uint64.from_address(config + 8)
    before, host = word.value, _host_flags()
    for flag, bit in _HOST_BITS.items():
        if bool(before >> bit & 1) != (flag in host):
            raise PinError(f"arch_flags {before:#x}: bit {bit} does not match the host's "
                           f"{flag!r}; this LiteRT build lays xnn_hardware_config out otherwise")
    word.value = before & AVX2_FLAGS
    return before, word.value
