"""The JIT switch (nnsim.kernels._jit) and the conventions it guards."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nnsim.kernels import _jit, _native

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
    add the host's, AVX-512 included), and the SIMD mode and FMA follow them."""
    if not _jit.JIT_ENABLED:
        pytest.skip("JIT disabled")
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CPU_FEATURES", "NNSIM_SIMD")}
    env["NUMBA_CPU_NAME"] = cpu
    if features is not None:
        env["NUMBA_CPU_FEATURES"] = features
    code = ("from nnsim.kernels import _jit\nfrom numba.core import config\n"
            "print(_jit.SIMD_MODE, _jit.FMA, repr(config.CPU_FEATURES))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[:2] == [mode, fma]
    assert out[2] == repr(features if features is not None else "")


def test_fma_is_on_unless_turned_off():
    """Float kernels fuse multiply-adds on a CPU with FMA, and round each product as TFLite's
    reference kernels do with NNSIM_FLOAT_FMA=0 (then nothing is cached: numba's cache key does
    not see the setting)."""
    if not _jit.JIT_ENABLED:
        pytest.skip("JIT disabled")
    env = {k: v for k, v in os.environ.items() if k != "NNSIM_FLOAT_FMA"}
    env["NUMBA_CPU_NAME"] = "haswell"
    code = "from nnsim.kernels import _jit; print(_jit.FMA, _jit._FLAGS['cache'])"
    runs = [subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                           check=True).stdout.split()
            for e in (env, {**env, "NNSIM_FLOAT_FMA": "0"})]
    assert runs == [["True", "True"], ["False", "False"]]


_SHARED_CORES = r"""
import numpy as np
from nnsim.kernels import _dw_widened, conv, depthwise, elementwise, _gemm_common
rng = np.random.default_rng(0)
q = dict(in_scale=0.1, w_scales=np.array([0.02]), out_scale=0.2)
for dt in (np.int8, np.uint8):
    info = np.iinfo(dt)
    x = rng.integers(info.min, info.max + 1, (1, 6, 7, 16)).astype(dt)
    elementwise.add(x, x[::-1].copy(), in1_scale=0.1, in1_zp=3, in2_scale=0.2, in2_zp=-1,
                    out_scale=0.3, out_zp=2)
    w = rng.integers(-127, 128, (1, 3, 3, 16)).astype(np.int8)
    # stride 1: the widened core on AVX-512 VNNI, stride 2: its stride-2 one with VBMI too,
    # dilated: the ring core
    for s, d in ((1, 1), (2, 1), (1, 2)):
        depthwise.depthwise_conv_2d(x, w, None, depth_multiplier=1, stride_h=s, stride_w=s,
                                    dilation_h=d, dilation_w=d, pad_top=1, pad_bottom=1,
                                    pad_left=1, pad_right=1, **q)
    w = rng.integers(-127, 128, (8, 3, 3, 16)).astype(np.int8)
    conv.conv_2d(x, w, None, stride_h=1, stride_w=1, pad_top=1, pad_bottom=1, pad_left=1,
                 pad_right=1, **q)
xf = rng.standard_normal((1, 6, 7, 16)).astype(np.float32)
conv.conv_2d(xf, rng.standard_normal((8, 3, 3, 16)).astype(np.float32), None, stride_h=1,
             stride_w=1, pad_top=1, pad_bottom=1, pad_left=1, pad_right=1)
depthwise.depthwise_conv_2d(xf, rng.standard_normal((1, 3, 3, 16)).astype(np.float32), None,
                            depth_multiplier=1, stride_h=1, stride_w=1, pad_top=1,
                            pad_bottom=1, pad_left=1, pad_right=1)
print(len(elementwise._quant_core.signatures), len(depthwise._dw_quant_part.signatures),
      len(depthwise._window_rows.signatures), len(_gemm_common._fill_padded.signatures),
      len(_dw_widened._dw_widened_part.signatures), int(depthwise.SIMD_MODE == "avx512vnni"),
      len(_dw_widened._dw_s2_part.signatures), int(depthwise.VBMI))
"""


@pytest.mark.skipif(not _jit.JIT_ENABLED, reason="needs numba")
def test_byte_cores_compile_once_for_int8_and_uint8(tmp_path):
    """Cold-start economy: the quantized ADD core and the depthwise cores read int8 as uint8
    bytes + 128, and the padding copies work on bytes, so int8, uint8 (and float32, for the
    copies) layers share one compiled variant each (a fresh process on an empty cache counts
    them: with cached callers, a callee is not compiled at all)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", _SHARED_CORES], capture_output=True, text=True,
                         timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    add, dw, rows, fill, widened, vnni, stride2, vbmi = (int(n) for n in out.stdout.split())
    assert (add, dw, fill) == (1, 1, 1)
    assert widened == vnni   # (the widened depthwise core, for int8 and uint8 input alike)
    assert stride2 == vbmi
    # the row copy of the quantized and the float depthwise cores (element sizes 1 and 4)
    assert rows == 1


_CONSTANT_ARGUMENTS = r"""
import numpy as np
from nnsim.kernels import (_gemm_float, _gemm_int, conv, fixed_point, normalization, quantize,
                           softmax)
rng = np.random.default_rng(0)
x = rng.integers(0, 256, (3, 40)).astype(np.uint8)
softmax.softmax(x, 1.0, in_scale=0.1, in_zp=128, out_scale=1 / 256, out_zp=0)
normalization.l2_normalization(x, in_zp=128)
quantize.requantize(x[0, :35], in_scale=0.1, in_zp=3, out_scale=0.3, out_zp=5,
                    out_dtype=np.uint8)   # 35 values: two vectors and a 3-value tail
for h, n in ((1, 200), (5, 40)):   # one pixel (the GEMV loops) and several
    xf = rng.standard_normal((1, h, h, 64)).astype(np.float32)
    conv.conv_2d(xf, rng.standard_normal((n, 1, 1, 64)).astype(np.float32), None, stride_h=1,
                 stride_w=1, pad_top=0, pad_bottom=0, pad_left=0, pad_right=0)
    xq = rng.integers(0, 256, (1, h, h, 64)).astype(np.uint8)
    conv.conv_2d(xq, rng.integers(0, 256, (n, 1, 1, 64)).astype(np.uint8), None, stride_h=1,
                 stride_w=1, pad_top=0, pad_bottom=0, pad_left=0, pad_right=0, in_scale=0.1,
                 in_zp=3, w_scales=[0.01], w_zp=120, out_scale=0.5, out_zp=4)
print(*(len(f.signatures) for f in (
    fixed_point.saturating_rounding_doubling_high_mul, fixed_point.rounding_divide_by_pot,
    fixed_point.saturating_rounding_multiply_by_pot, _gemm_float._emit_f,
    quantize._requantize16)), len(_gemm_int._row_sums.signatures))
"""


@pytest.mark.skipif(not _jit.JIT_ENABLED, reason="needs numba")
@pytest.mark.parametrize("cpu", [None, "haswell"])
def test_callees_compile_once_whatever_the_constants(tmp_path, cpu):
    """Cold-start economy: numba compiles a callee again for each literal argument (a constant
    such as 2 or 715827883 is typed ``Literal[int]``), so the fixed-point helpers, the float
    emit and the 16-value requantization are called with int64 values: one compiled variant
    each for softmax, L2 normalization, requantization and 1x1 convolutions of one pixel and
    of several (a fresh process on an empty cache counts them). The row sums are inlined
    where they are called (numba's ``inline="always"``): no variant of their own."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    if cpu is not None:   # the AVX2 kernels
        env = {k: v for k, v in env.items() if k not in ("NUMBA_CPU_FEATURES", "NNSIM_SIMD")}
        env["NUMBA_CPU_NAME"] = cpu
    out = subprocess.run([sys.executable, "-c", _CONSTANT_ARGUMENTS], capture_output=True,
                         text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    assert [int(n) for n in out.stdout.split()] == [1] * 5 + [0], out.stdout


def test_requant_with_rows_in_registers_equals_requant():
    """vi_requantq(acc, vq_load(qp, c, cpad), ...) computes vi_requant(acc, qp, c, cpad, ...),
    compiled and as numpy (``SIMD_OPS``, int64 arithmetic); multipliers, shifts and
    accumulators across their ranges, the int32 extremes included."""
    import numpy as np

    from nnsim.kernels.gemm import requant_params

    rng = np.random.default_rng(7)
    cout, cpad = 40, 48
    mults = rng.integers(1 << 30, 1 << 31, cout)
    shifts = rng.integers(-12, 3, cout)
    bias = rng.integers(-5000, 5000, cout)
    qp = requant_params(bias, mults, shifts)
    acc = rng.integers(-(1 << 24), 1 << 24, 16 * 8).astype(np.int32)
    acc[:4] = [-(1 << 31), (1 << 31) - 1 - 5000, 0, -1]

    @_jit.njit(cache=False)
    def both(acc, qp, c, cpad, out):
        q = _jit.vq_load(qp, c, cpad)
        for k in range(acc.size // 16):
            v = _jit.vi_load(acc, 16 * k)
            _jit.vi_store(_jit.vi_requant(v, qp, c, cpad, 3, -7, -128, 127), out, 32 * k)
            _jit.vi_store(_jit.vi_requantq(v, q, 3, -7, -128, 127), out, 32 * k + 16)
        return out

    for c in (0, 16, 32):
        out = both(acc, qp, c, cpad, np.zeros(2 * acc.size, np.int32)).reshape(-1, 2, 16)
        np.testing.assert_array_equal(out[:, 1], out[:, 0])
        rows = _jit.SIMD_OPS["vq_load"](qp, c, cpad)
        expected = [_jit.SIMD_OPS["vi_requantq"](acc[16 * k:16 * k + 16], rows, 3, -7, -128, 127)
                    for k in range(acc.size // 16)]
        np.testing.assert_array_equal(out[:, 0], np.array(expected))


def _requant_oracle(x, m, shift, zp, lo, hi):
    """clamp(MultiplyByQuantizedMultiplier(x) + zp) through the scalar port of gemmlowp's two
    steps (nnsim.kernels.fixed_point), x wrapped to int32 first."""
    from nnsim.kernels.fixed_point import multiply_by_quantized_multiplier, wrap_int32
    q = int(multiply_by_quantized_multiplier(wrap_int32(x), m, shift))
    return min(max(q + zp, lo), hi)


def _requant_cases(rng):
    """48 channels (multipliers 0, 2**30, 2**31 - 1 and random ones; shifts -31..3) and 64
    accumulators per channel: int32 extremes, random values, and values whose high product
    s lands on or next to a tie of the rounding division, either sign (the cases where
    the two roundings' sign rules matter)."""
    cout, per = 48, 64
    mults = rng.integers(1 << 30, 1 << 31, cout)
    mults[:3] = [0, 1 << 30, (1 << 31) - 1]
    shifts = np.concatenate([np.arange(-31, 4), rng.integers(-12, 1, cout - 35)])
    acc = np.empty((per, cout), np.int64)
    for c in range(cout):
        m, r = int(mults[c]), max(-int(shifts[c]), 0)
        xs = [-(1 << 31), (1 << 31) - 1, 0, -1, 1]
        xs += rng.integers(-(1 << 31), 1 << 31, 9).tolist()
        xs += rng.integers(-(1 << 14), 1 << 14, 10).tolist()
        for t in (-3, -1, 0, 2):   # s = (2t + 1) * 2**(r - 1): a tie (r >= 1)
            s = ((2 * t + 1) << (r - 1)) if r else t
            centre = (s << 31) // m if m else 0
            xs += [centre + d for d in range(-4, 6)]
        acc[:, c] = np.clip(xs[:per], -(1 << 31), (1 << 31) - 1)
    return mults, shifts, acc


@pytest.mark.skipif(not _jit.JIT_ENABLED, reason="compiles both forms")
@pytest.mark.parametrize("form", ["one division", "two steps"])
def test_requant_forms_equal_gemmlowp(form):
    """Both compiled forms of vi_requant (the one 64-bit floor division AVX-512 uses, the
    two-step form elsewhere) equal TFLite's MultiplyByQuantizedMultiplier computed step by
    step in scalar code, including ties of either sign, shifts -31..3 and int32 extremes."""
    from nnsim.kernels._jit import QP_ROWS
    from nnsim.kernels.gemm import requant_params

    rng = np.random.default_rng(11)
    mults, shifts, acc = _requant_cases(rng)
    bias = rng.integers(-5000, 5000, mults.size)
    qp = requant_params(bias, mults, shifts)
    cpad = qp.size // QP_ROWS
    extra, zp, lo, hi = 3, -7, -128, 127
    # each accumulator minus bias and extra: the intrinsic adds them back (int32 wrap)
    acc32 = ((acc - bias - extra + 2**31) % 2**32 - 2**31).astype(np.int32)

    def build():
        @_jit.njit(cache=False)
        def run(acc, cout, qp, cpad, out):
            for i in range(0, acc.size, cout):
                for c in range(0, cout, 16):
                    v = _jit.vi_load(acc, i + c)
                    _jit.vi_store(_jit.vi_requant(v, qp, c, cpad, extra, zp, lo, hi), out,
                                  i + c)
            return out
        return run

    saved = _jit._QP_ROWS
    _jit._QP_ROWS = _jit._QP_ROWS_WIDE if form == "one division" else _jit._QP_ROWS_NARROW
    try:   # the rows are chosen when the intrinsic compiles
        out = build()(acc32.ravel(), acc.shape[1], qp, cpad, np.zeros(acc32.size, np.int32))
    finally:
        _jit._QP_ROWS = saved
    want = np.array([[_requant_oracle(int(acc[k, c]), int(mults[c]), int(shifts[c]), zp, lo, hi)
                      for c in range(acc.shape[1])] for k in range(acc.shape[0])])
    np.testing.assert_array_equal(out.reshape(acc.shape), want)


@pytest.mark.parametrize("zp, lo, hi", [(0, 0, 255), (255, 0, 255), (-128, -128, 127),
                                        (127, -128, 127), (3, 3, 9), (-5, -5, 127),
                                        (10, 10, 127), (-128, -128, -128), (200, 7, 250)])
def test_pack8q_equals_clamp_then_bytes(zp, lo, hi):
    """vi_pack8q(a, b, c, d, zp, lo, hi) stores the bytes of clamp(v + zp, lo, hi) of a's
    lanes, then b's, c's, d's, for values across the int32 range: the 16-bit saturation
    edges, the 8-bit ones shifted by the zero point, and the extremes."""
    rng = np.random.default_rng((zp + 128) * 1000 + hi + 128)
    edges = np.array([-(1 << 31), (1 << 31) - 1, -32769, -32768, -32767, 32766, 32767, 32768,
                      -1, 0, 1, 127, 128, 255, 256, -128, -129], np.int64)
    near = np.concatenate([edges - zp, lo - zp + np.arange(-2, 3), hi - zp + np.arange(-2, 3)])
    vals = np.concatenate([near, rng.integers(-300, 300, 64 - near.size - 16),
                           rng.integers(-(1 << 31), 1 << 31, 16)])
    vals = np.clip(vals, -(1 << 31), (1 << 31) - 1).astype(np.int32)

    @_jit.njit(cache=False)
    def pack(v, zp, lo, hi, out):
        _jit.vi_store(_jit.vi_pack8q(_jit.vi_load(v, 0), _jit.vi_load(v, 16), _jit.vi_load(v, 32),
                                     _jit.vi_load(v, 48), zp, lo, hi), out, 0)
        return out

    got = pack(vals, zp, lo, hi, np.zeros(64, np.uint8))
    want = np.clip(vals.astype(np.int64) + zp, lo, hi).astype(np.int64) & 0xFF
    np.testing.assert_array_equal(got, want.astype(np.uint8))


@pytest.mark.parametrize("parts", [2, 4])
def test_store_parts_write_pieces_at_stride(parts):
    """vi_store2 / vi_store4 write the 64 bytes of a vector in 2 / 4 equal pieces, piece k at
    i + k * stride, and nothing else."""
    v = np.arange(64, dtype=np.uint8) + 1
    store = _jit.vi_store2 if parts == 2 else _jit.vi_store4

    @_jit.njit(cache=False)
    def run(v, out, i, stride):
        store(_jit.vi_load(v, 0), out, i, stride)
        return out

    out = run(v, np.zeros(300, np.uint8), 5, 70)
    want = np.zeros(300, np.uint8)
    size = 64 // parts
    for k in range(parts):
        want[5 + 70 * k:5 + 70 * k + size] = v[k * size:(k + 1) * size]
    np.testing.assert_array_equal(out, want)


def test_load_t4_transposes_and_copy16_flips():
    """vi_load_t4: lane j of the result holds bytes j, 16 + j, 32 + j, 48 + j of the 64 at
    &a[i] (low to high); vb_copy16 copies 16 bytes XOR f and nothing else. Compiled (vpermb
    with VBMI, a shuffle sequence without) or as numpy with the JIT off."""
    src = ((np.arange(100) * 37 + 11) % 256).astype(np.uint8)

    @_jit.njit(cache=False)
    def run(src, out, copy):
        _jit.vi_store(_jit.vi_load_t4(src, 7), out, 0)
        _jit.vb_copy16(src, 3, copy, 5, 0x80)
        return out, copy

    out, copy = run(src, np.zeros(16, np.int32), np.zeros(32, np.uint8))
    want = src[7:71].reshape(4, 16).T.reshape(-1)
    np.testing.assert_array_equal(out.view(np.uint8), want)
    expected = np.zeros(32, np.uint8)
    expected[5:21] = src[3:19] ^ 0x80
    np.testing.assert_array_equal(copy, expected)


def test_sum64_counts_the_first_n_bytes():
    """vb_sum64(a, i, f, n): the sum of the first n (0..64) of the 64 bytes at &a[i], each XOR
    f, as unsigned values (bytes past n are read but not counted); oracle: numpy."""
    src = ((np.arange(200) * 53 + 7) % 256).astype(np.uint8)

    @_jit.njit(cache=False)
    def run(src, i, f, n):
        return _jit.vb_sum64(src, i, f, n)

    for i in (0, 5, 136):
        for f in (0, 128):
            for n in (0, 1, 15, 16, 31, 32, 33, 63, 64):
                want = int((src[i:i + n] ^ np.uint8(f)).sum(dtype=np.int64))
                assert run(src, i, np.uint8(f), n) == want, (i, f, n)


def test_or_and_shifts_lane_wise():
    """vi_or, vi_shl, vi_lshr against numpy's uint32 arithmetic, shift counts 0..31."""
    rng = np.random.default_rng(3)
    a = rng.integers(-(1 << 31), 1 << 31, 16).astype(np.int32)
    b = rng.integers(-(1 << 31), 1 << 31, 16).astype(np.int32)
    n = np.array([0, 1, 7, 8, 15, 16, 23, 24, 31, 3, 5, 9, 12, 20, 28, 30], np.int32)

    @_jit.njit(cache=False)
    def run(a, b, n, out):
        va, vb, vn = _jit.vi_load(a, 0), _jit.vi_load(b, 0), _jit.vi_load(n, 0)
        _jit.vi_store(_jit.vi_or(va, vb), out, 0)
        _jit.vi_store(_jit.vi_shl(va, vn), out, 16)
        _jit.vi_store(_jit.vi_lshr(va, vn), out, 32)
        return out

    out = run(a, b, n, np.zeros(48, np.int32)).view(np.uint32)
    ua, un = a.view(np.uint32).astype(np.uint64), n.astype(np.uint64)
    np.testing.assert_array_equal(out[:16], (a | b).view(np.uint32))
    np.testing.assert_array_equal(out[16:32], ((ua << un) & 0xFFFFFFFF).astype(np.uint32))
    np.testing.assert_array_equal(out[32:], (ua >> un).astype(np.uint32))


def test_requant_params_rejects_shifts_below_minus_31():
    from nnsim.kernels.gemm import requant_params
    with pytest.raises(ValueError, match="below -31"):
        requant_params([0], [1 << 30], [-32])


_MICRO_KERNELS_NEEDED = r"""
import numpy as np
from nnsim.kernels import _gemm_avx2, _gemm_int, conv, gemm
assert gemm.compile_micro_kernels() == 1
kernels = ((_gemm_avx2._cols_pairs,) if _gemm_int._PAIRS
           else (_gemm_int._mk4, _gemm_int._mk2, _gemm_int._mk1))
g = dict(stride_h=1, stride_w=1, pad_top=1, pad_bottom=1, pad_left=1, pad_right=1)
for cout in (64, 128, 16, 40):
    for dt in (np.uint8, np.int8):
        conv.conv_2d(np.zeros((1, 5, 5, 8), dt), np.ones((cout, 3, 3, 8), np.int8), None, **g,
                     in_scale=0.1, w_scales=np.array([0.02]), out_scale=0.2)
    print(",".join(str(len(fn.signatures)) for fn in kernels))
"""


@pytest.mark.skipif(not _jit.JIT_ENABLED, reason="needs numba")
@pytest.mark.parametrize("cpu", ["host", "haswell"])
def test_convolutions_compile_the_micro_kernels_they_call_only(cpu, tmp_path):
    """The integer GEMM core calls its micro-kernels through their addresses
    (``_gemm_int.micro_kernels``), each compiled once (one variant, uint8 and int8 alike) and
    only when a layer's channel count needs it: 64 and 128 channels whole tiles (``_mk4``),
    16 a 16-channel column (``_mk1``), 40 a 32- and a 16-channel column (``_mk2``, ``_mk1``);
    AVX2 has one for all. ``compile_micro_kernels`` (the cold start's child) compiles the
    whole-tile one first, which the core then uses."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    if cpu != "host":
        env["NUMBA_CPU_NAME"] = cpu
    out = subprocess.run([sys.executable, "-c", _MICRO_KERNELS_NEEDED], capture_output=True,
                         text=True, env=env, timeout=900)
    assert out.returncode == 0, out.stderr
    counts = out.stdout.split()
    vnni = _jit.SIMD_MODE == "avx512vnni" and cpu == "host"
    assert counts == (["1,0,0", "1,0,0", "1,0,1", "1,1,1"] if vnni else ["1"] * 4), counts


_PADDED_COPY = r"""
import numpy as np
from nnsim.kernels import conv, gemm
from nnsim.kernels._gemm_common import _fill_padded
assert gemm.compile_padded_copy() == 1
counts = [len(_fill_padded.signatures)]
g = dict(stride_h=2, stride_w=2, pad_top=1, pad_bottom=1, pad_left=1, pad_right=1)
for dt in (np.uint8, np.int8):
    conv.conv_2d(np.zeros((1, 7, 7, 3), dt), np.ones((32, 3, 3, 3), dt), None, **g,
                 in_scale=0.1, w_scales=np.array([0.02]), out_scale=0.2)
    counts.append(len(_fill_padded.signatures))
conv.conv_2d(np.ones((1, 7, 7, 3), np.float32), np.ones((8, 3, 3, 3), np.float32), None, **g)
counts.append(len(_fill_padded.signatures))
print(*counts)
"""


@pytest.mark.skipif(not _jit.JIT_ENABLED, reason="needs numba")
@pytest.mark.parametrize("cpu", ["host", "haswell"])
def test_padded_copy_compiled_ahead_is_the_one_convolutions_run(cpu, tmp_path):
    """``compile_padded_copy`` (the cold start's child, first) compiles the variant of the
    padded copy that 3x3 stride-2 convolutions of uint8, int8 and float32 then call: one
    variant in all, none compiled after it."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    if cpu != "host":
        env["NUMBA_CPU_NAME"] = cpu
    out = subprocess.run([sys.executable, "-c", _PADDED_COPY], capture_output=True, text=True,
                         env=env, timeout=900)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1"] * 4, out.stdout


_FLOAT_MICRO_KERNELS_NEEDED = r"""
import numpy as np
from nnsim.kernels import _gemm_float as f, conv
kernels = ((f._fh5x16, f._fh6x16, f._fh12x8, f._fh1x8) if f._AVX2
           else (f._fk4, f._fh1x8, f._fk8x1, f._fk8x2))
g = dict(stride_h=1, stride_w=1, pad_top=1, pad_bottom=1, pad_left=1, pad_right=1)
for cout in (64, 128, 8, 32, 16):
    x = np.random.default_rng(cout).standard_normal((1, 5, 5, 8)).astype(np.float32)
    w = np.random.default_rng(cout + 1).standard_normal((cout, 3, 3, 8)).astype(np.float32)
    out = conv.conv_2d(x, w, None, **g)
    ref = np.einsum("yxkc,okc->yxo",
                    np.lib.stride_tricks.sliding_window_view(
                        np.pad(x[0], ((1, 1), (1, 1), (0, 0))), (3, 3), axis=(0, 1)
                    ).transpose(0, 1, 3, 4, 2).reshape(5, 5, 9, 8),
                    w.reshape(cout, 9, 8))
    assert np.allclose(out[0], ref, rtol=1e-5, atol=1e-4), cout
    print(",".join(str(len(fn.signatures)) for fn in kernels))
# a window of 3 rows of 9 taps (3x3 over 3 channels: AVX2's _fh12x8_3x9), compiled when a
# layer of <= 8 channels has one (not for a 1x1 layer of 8)
special = (f._fh12x8_3x9,)
print(",".join(str(len(fn.signatures)) for fn in special))
for w_shape in ((8, 1, 1, 8), (8, 3, 3, 3)):
    x = np.random.default_rng(3).standard_normal((1, 5, 5, w_shape[3])).astype(np.float32)
    w = np.random.default_rng(4).standard_normal(w_shape).astype(np.float32)
    p = w_shape[1] // 2
    out = conv.conv_2d(x, w, None, **dict(g, pad_top=p, pad_bottom=p, pad_left=p,
                                          pad_right=p))
    ref = np.einsum("yxkc,okc->yxo",
                    np.lib.stride_tricks.sliding_window_view(
                        np.pad(x[0], ((p, p), (p, p), (0, 0))), w_shape[1:3], axis=(0, 1)
                    ).transpose(0, 1, 3, 4, 2).reshape(5, 5, -1, w_shape[3]),
                    w.reshape(w_shape[0], -1, w_shape[3]))
    assert np.allclose(out[0], ref, rtol=1e-5, atol=1e-4), w_shape
    print(",".join(str(len(fn.signatures)) for fn in special))
"""


@pytest.mark.skipif(not _jit.JIT_ENABLED, reason="needs numba")
@pytest.mark.parametrize("cpu", ["host", "haswell"])
def test_float_convolutions_compile_the_micro_kernels_they_call_only(cpu, tmp_path):
    """The float GEMM core calls its micro-kernels through their addresses too
    (``_gemm_float.micro_kernels``), each compiled once and only when a layer's channel count
    needs it: on AVX-512 64 and 128 channels whole tiles (``_fk4``), 8 a last tile of <= 8
    (``_fh1x8``), 32 two columns (``_fk8x2``), 16 one (``_fk8x1``); on AVX2 the columns of 16
    (``_fh5x16``, ``_fh6x16``), a last one of <= 8 channels (``_fh12x8``, ``_fh1x8``), and
    for a 3x3 one over 3 channels its variant for that window (``_fh12x8_3x9``), never on
    AVX-512. The results equal a float64 sum of the same products (the kernels sum in
    float32)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    if cpu != "host":
        env["NUMBA_CPU_NAME"] = cpu
    out = subprocess.run([sys.executable, "-c", _FLOAT_MICRO_KERNELS_NEEDED],
                         capture_output=True, text=True, env=env, timeout=900)
    assert out.returncode == 0, out.stderr
    counts = out.stdout.split()
    if _jit.SIMD_MODE != "avx2" and cpu == "host":
        assert counts == ["1,0,0,0", "1,0,0,0", "1,1,0,0", "1,1,0,1", "1,1,1,1",
                          "0", "0", "0"], counts
    else:
        assert counts == ["1,1,0,0", "1,1,0,0", "1,1,1,1", "1,1,1,1", "1,1,1,1",
                          "0", "0", "1"], counts


@pytest.mark.skipif(not _jit.JIT_ENABLED, reason="needs numba")
def test_call_native_checks_the_signature_while_compiling():
    """``call_native`` runs the variant at an address (``native_address``) with the argument
    types its codes name; other types fail to compile (a wrong signature would corrupt memory
    at run time), ints of any width are passed as int64."""
    from numba.core.errors import TypingError

    @_jit.njit(cache=False, inner=True)
    def scaled(a, n, b):
        for i in range(b.size):
            b[i] = a[i] * n

    @_jit.njit(cache=False)
    def caller(address, a, n, b):
        _native.call_native(address, (a, n, b), "u8 i i64")

    @_jit.njit(cache=False)
    def wrong(address, a, n, b):
        _native.call_native(address, (a, n, b.view(np.int32)), "u8 i i64")

    a, b = np.arange(6, dtype=np.uint8), np.zeros(6, np.int64)
    caller(_native.native_address(scaled, "u8 i i64"), a, np.int32(3), b)
    np.testing.assert_array_equal(b, np.arange(6) * 3)
    with pytest.raises(TypingError, match="do not match the signature"):
        wrong(0, a, 3, b)


def test_direct_calls_the_compiled_variant_for_bound_arguments():
    """``_common.direct``: after a first call, a bound core runs its compiled variant without
    numba's dispatch and writes what the dispatcher's call writes; before it (no variant for
    these argument types) or with the JIT off, the call is returned as it was."""
    from functools import partial

    from nnsim.kernels._common import direct

    @_jit.njit(cache=False)
    def add_into(x, n, out):
        for i in range(x.size):
            out[i] = x[i] + n

    x, out = np.arange(5, dtype=np.int64), np.zeros(5, np.int64)
    call = partial(add_into, x, 3, out)
    assert direct(call) is call            # not compiled for these types yet
    call()
    fast = direct(call)
    if not _jit.JIT_ENABLED:
        assert fast is call
        return
    assert fast is not call and fast.func is not add_into
    out[:] = 0
    x[:] = [7, 8, 9, 10, 11]               # the bound arrays' current contents are read
    fast()
    assert out.tolist() == [10, 11, 12, 13, 14]
    other = partial(add_into, x.astype(np.int32), 3, out)
    assert direct(other) is other          # another variant, not compiled yet
    plain = partial(np.add, x, 1)
    assert direct(plain) is plain          # not a compiled core: unchanged


def _njit_calls(names):
    """``file:line call`` of every call, in a compiled (``@njit``) kernel function, of a
    function named in ``names`` (``min``, ``np.empty``...)."""
    import ast
    found = []
    for path in _kernel_sources():
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            if not (isinstance(node, ast.FunctionDef) and any(
                    "njit" in ast.get_source_segment(source, d) for d in node.decorator_list)):
                continue
            for call in ast.walk(node):
                if isinstance(call, ast.Call):
                    name = ast.get_source_segment(source, call.func)
                    if name in names:
                        found.append(f"{path.name}:{call.lineno} {name}")
    return found


def test_kernels_call_no_numba_overload_compiled_in_every_process():
    """Cold-start economy (issue 13): numba compiles its implementations of min, max,
    np.empty, np.zeros and np.ones again in every process, for each argument type; kernels
    call ``_builtins.lesser`` / ``greater`` / ``empty`` / ``zeros`` instead, which compile nothing
    of their own. (``len``, ``range`` and the scalar types are lowered in place.)"""
    assert _njit_calls({"min", "max", "np.empty", "np.zeros", "np.ones", "np.full"}) == []
