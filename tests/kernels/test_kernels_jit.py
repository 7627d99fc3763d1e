"""The JIT switch (nnsim.kernels._jit) and the conventions it guards."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from nnsim.kernels import _jit

KERNELS_DIR = Path(_jit.__file__).parent


def _kernel_sources():
    return sorted(p for p in KERNELS_DIR.rglob("*.py") if p.name != "_jit.py")


def test_numba_is_imported_only_by_jit_module():
    offenders = [
        str(p.relative_to(KERNELS_DIR))
        for p in _kernel_sources()
        if re.search(r"^\s*(import numba|from numba)", p.read_text(), re.MULTILINE)
    ]
    assert offenders == []


def test_no_fastmath_flag_outside_jit_module():
    offenders = [str(p.relative_to(KERNELS_DIR)) for p in _kernel_sources()
                 if "fastmath=" in p.read_text()]
    assert offenders == []


def test_reference_kernels_are_not_jitted():
    reference = KERNELS_DIR / "reference"
    offenders = [p.name for p in reference.glob("*.py")
                 if re.search(r"^\s*@njit|_jit import", p.read_text(), re.MULTILINE)]
    assert offenders == []


def test_cores_are_private_and_named_core():
    # every @njit function in a kernel family module is either a _..._core or a shared helper
    for path in _kernel_sources():
        text = path.read_text()
        for match in re.finditer(r"@njit\s*\ndef (\w+)", text):
            name = match.group(1)
            if path.name in ("fixed_point.py", "fixed_point16.py"):   # shared helpers
                continue
            assert name.startswith("_"), f"{path.name}: jitted {name} must be private"


def test_njit_usable_bare_and_with_arguments():
    @_jit.njit
    def f(a):
        return a + 1

    @_jit.njit()
    def g(a):
        return a * 2

    assert f(1) == 2
    assert g(3) == 6


def test_fastmath_cannot_be_enabled():
    with pytest.raises(ValueError):
        _jit.njit(fastmath=True)


@pytest.mark.parametrize("value, expected", [("1", "False"), ("0", "True")])
def test_disable_jit_environment_variable(value, expected):
    env = dict(os.environ, NNSIM_DISABLE_JIT=value)
    code = (
        "from nnsim.kernels import _jit, fixed_point as fp\n"
        "print(_jit.JIT_ENABLED, type(fp.rounding_divide_by_pot).__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    if _jit._numba is None:  # pragma: no cover
        pytest.skip("numba not installed")
    assert out[0] == expected
    assert (out[1] == "function") == (expected == "False")


def test_cache_stamp_tracks_kernel_sources():
    if not _jit.JIT_ENABLED:
        pytest.skip("JIT disabled: no numba caches")
    stamp = _jit._cache_dir(KERNELS_DIR) / "nnsim-jit-sources.sha1"
    if not stamp.exists():
        pytest.skip("kernels package is not writable")
    import hashlib

    digest = hashlib.sha1()   # (not the SIMD mode: numba keys variants by CPU already)
    for path in sorted(KERNELS_DIR.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    assert stamp.read_text() == digest.hexdigest()


@pytest.mark.parametrize("cpu, features, mode, fma", [
    ("haswell", None, "avx2", "True"),            # the CPU's own features: AVX2 + FMA
    ("icelake-server", None, "avx512vnni", "True"),
    ("nehalem", None, "generic", "False"),
    ("haswell", "+avx2", "avx2", "False"),        # explicit features are taken as given
])
def test_named_cpu_picks_its_own_features(cpu, features, mode, fma):
    """NUMBA_CPU_NAME alone compiles for that CPU with its features (numba would otherwise
    add the host's, AVX-512 included), and the SIMD mode and FMA (when opted in) follow them."""
    if not _jit.JIT_ENABLED:
        pytest.skip("JIT disabled")
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CPU_FEATURES", "NNSIM_SIMD")}
    env["NUMBA_CPU_NAME"] = cpu
    env["NNSIM_FLOAT_FMA"] = "1"    # opted in: FMA then follows the features
    if features is not None:
        env["NUMBA_CPU_FEATURES"] = features
    code = ("from nnsim.kernels import _jit\nfrom numba.core import config\n"
            "print(_jit.SIMD_MODE, _jit.FMA, repr(config.CPU_FEATURES))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[:2] == [mode, fma]
    assert out[2] == repr(features if features is not None else "")


def test_fma_is_off_unless_asked():
    """Float kernels round each product as TFLite's reference kernels do, unless
    NNSIM_FLOAT_FMA=1 asks for fused multiply-adds."""
    if not _jit.JIT_ENABLED:
        pytest.skip("JIT disabled")
    env = {k: v for k, v in os.environ.items() if k != "NNSIM_FLOAT_FMA"}
    env["NUMBA_CPU_NAME"] = "haswell"
    out = subprocess.run([sys.executable, "-c", "from nnsim.kernels import _jit; print(_jit.FMA)"],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False"]
