"""The one place where nnsim touches numba.

Every fast kernel core is decorated with :func:`njit` from this module, never with
``numba.njit`` directly, so that the JIT flags are set once:

* ``fastmath=False`` always: reassociating float sums would break agreement with the TFLite
  reference kernels, and integer paths do not need it to vectorise.
* ``cache=True``: compiled cores are stored next to the module (``__pycache__``) and reused by
  later processes. numba only checks the file that defines a core, but a core also contains
  the helpers it calls from other modules (``fixed_point``, ``conv``...), so this module drops
  the package's cache files whenever any kernel source changes: a hash of them is kept in
  ``nnsim-jit-sources.sha1`` in the package's numba cache directory (``__pycache__``, or the
  one under ``NUMBA_CACHE_DIR`` when that is set). numba keys each cached variant by the CPU
  name and features it was compiled for, and the SIMD mode follows from those, so runs for
  different CPUs (``NUMBA_CPU_NAME=haswell`` on an AVX-512 machine) share the directory
  without invalidating each other; a mode forced with ``NNSIM_SIMD`` is not cached (its code
  would be stored under the host CPU's key).
* ``NNSIM_DISABLE_JIT=1`` in the environment (read at import time), or numba not being
  installed, turns :func:`njit` into a no-op so the cores run as plain Python (coverage,
  debugging, platforms without numba).

It also provides the few 16-lane vector operations the GEMM-style cores are written with
(:data:`SIMD_OPS`, their contracts in :mod:`nnsim.kernels._simd_np`): numba intrinsics when
compiling (values live in registers), numpy arrays of 16 lanes when not (``_simd_np``: same
results, slowly). The LLVM IR of the longer ones is built in :mod:`nnsim.kernels._simd_ir`.
Compiled code calling compiled code by address (the thread team, the compiled program, the
GEMM cores' micro-kernels) is :mod:`nnsim.kernels._native`'s.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from pathlib import Path

from nnsim.kernels import _claims
from nnsim.kernels._simd_np import SIMD_OPS

try:
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - not POSIX
    _fcntl = None

try:  # numba is a hard dependency, but a missing install must not break imports.
    import llvmlite.binding as _llvm
    import numba as _numba
    from numba.core import config as _numba_config
    from numba.core import event as _numba_event
except ImportError:  # pragma: no cover - exercised only on installs without numba
    _numba = _numba_config = _numba_event = _llvm = None

__all__ = ["JIT_ENABLED", "SIMD_MODE", "FMA", "MASKED_BYTES", "VBMI", "njit",
           "vi_zero", "vi_splat", "vi_load", "vi_load8", "vi_bcast4", "vi_dpbusd", "vi_dpwssd",
           "vi_xor", "vi_add", "vi_mul", "vi_or", "vi_and", "vi_shl", "vi_lshr", "vi_ashr",
           "vi_requant", "vq_load",
           "vi_load_t4", "vb_copy16",
           "vi_requantq", "vi_requantb", "vi_requantqb", "vi_requantr",
           "vi_requantqr", "vi_pack8", "vi_pack8q",
           "vi_store", "vi_store8", "vi_store8n", "vi_store2", "vi_store2n", "vi_store4",
           "vb_copy",
           "vf_zero", "vf_load", "vf_bcast", "vf_muladd", "vf_add", "vf_clamp", "vf_store",
           "vf_storen", "vh_zero", "vh_load", "vh_bcast", "vh_store", "vd_zero", "vd_dpbusd",
           "vd_dpbssd", "vd_sum", "vb_sum64", "vb_prefetch"]

#: True when cores are compiled by numba; False when they run as plain Python.
JIT_ENABLED: bool = _numba is not None and os.environ.get("NNSIM_DISABLE_JIT", "") != "1"

#: Every kernel: no fast math, cached, GIL released, and no C-callable wrapper
#: (``no_cfunc_wrapper``): nothing calls a kernel through one (Python calls the CPython
#: wrapper, compiled code the function itself, the thread team callbacks it compiles for
#: itself, nnsim.kernels._native.callback), and numba typed, lowered, optimised and compiled
#: one to machine code with every variant (41 in the shared models' first runs, issue 13).
_FLAGS = {"fastmath": False, "cache": True, "nogil": True, "no_cfunc_wrapper": True}


_VNNI = "+avx2,+fma,+avx512f,+avx512bw,+avx512vnni"
#: The features that decide the SIMD mode for LLVM CPU names (``NUMBA_CPU_NAME`` without
#: ``NUMBA_CPU_FEATURES``): AVX-512 with VNNI, or AVX2 (AVX-512 without VNNI runs the AVX2 code).
_NAMED_CPU_FEATURES = {
    **{name: _VNNI for name in (
        "cascadelake", "cooperlake", "icelake-client", "icelake-server", "tigerlake",
        "rocketlake", "sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d",
        "diamondrapids", "znver4", "znver5")},
    **{name: "+avx2,+fma" for name in (
        "haswell", "broadwell", "skylake", "skylake-avx512", "cannonlake", "alderlake",
        "raptorlake", "meteorlake", "arrowlake", "arrowlake-s", "lunarlake", "gracemont",
        "sierraforest", "grandridge", "clearwaterforest", "pantherlake", "bdver4", "znver1",
        "znver2", "znver3", "x86-64-v3", "x86-64-v4")},
}


def _target_features() -> set:
    """The CPU features numba compiles for (``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES``, else
    the host's), as a set of ``+feature`` strings."""
    config = _numba_config
    if config.CPU_NAME not in (None, "host"):
        # a named CPU without explicit features gets the ones LLVM gives that CPU
        features = config.CPU_FEATURES or _NAMED_CPU_FEATURES.get(config.CPU_NAME, "")
    else:
        features = config.CPU_FEATURES or _llvm.get_host_cpu_features().flatten()
    return set(features.split(","))


def _simd_mode() -> str:
    """``"avx512vnni"`` when numba compiles for a CPU with AVX-512 VNNI (and BW), ``"avx2"``
    with AVX2 only, else ``"generic"`` (plain LLVM vector IR, any CPU).

    ``NNSIM_SIMD=generic`` (or ``avx2``) forces that code (to test it on any machine). The
    features are the ones numba compiles for (``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES``, else
    the host's).
    """
    forced = os.environ.get("NNSIM_SIMD", "")
    if not JIT_ENABLED or forced == "generic":
        return "generic"
    flags = _target_features()
    if forced != "avx2" and {"+avx512vnni", "+avx512bw", "+avx512f"} <= flags:
        return "avx512vnni"
    return "avx2" if "+avx2" in flags else "generic"


def _named_cpu_features() -> None:
    """``NUMBA_CPU_NAME=haswell`` alone makes numba compile for Haswell *with the host's
    features* (AVX-512 included, on an AVX-512 machine); nnsim takes a CPU name to mean that
    CPU, its own features (what ``NUMBA_CPU_FEATURES=""`` asks numba for), so that naming an
    AVX2 CPU runs and measures the AVX2 code. Set before any compilation reads it."""
    if not JIT_ENABLED:
        return
    if _numba_config.CPU_NAME not in (None, "host") and _numba_config.CPU_FEATURES is None:
        _numba_config.CPU_FEATURES = ""


_named_cpu_features()

#: How the integer dot products compile: ``"avx512vnni"`` (one ``vpdpbusd`` / ``vpdpwssd``),
#: ``"avx2"`` (``vpmaddwd`` based) or ``"generic"``.
SIMD_MODE: str = _simd_mode()

if os.environ.get("NNSIM_SIMD", ""):   # see the module docstring: forced modes compile afresh
    _FLAGS["cache"] = False

#: True when float multiply-adds compile to fused multiply-adds (one rounding), the default
#: on a CPU with FMA (issue 13: XNNPACK's float kernels fuse too). TFLite's reference kernels
#: round each product of ``total += x * w``; fusing keeps that order and skips those roundings,
#: so float sums differ from BUILTIN_REF's within the rounding error of the sum
#: (``NNSIM_FLOAT_FMA=0`` reproduces the reference's roundings; it is not cached, as forced
#: SIMD modes are: numba's cache key does not see the setting).
FMA: bool = (JIT_ENABLED and os.environ.get("NNSIM_FLOAT_FMA", "1") != "0"
             and "+fma" in _target_features())
if os.environ.get("NNSIM_FLOAT_FMA", "1") == "0":
    _FLAGS["cache"] = False

#: True when byte-masked loads and stores (:func:`vb_copy`) compile to single instructions;
#: cores copy the tails of runs byte by byte otherwise.
MASKED_BYTES: bool = SIMD_MODE == "avx512vnni"

#: True when :func:`vi_load_t4` compiles to one ``vpermb`` (AVX-512 VBMI with VNNI: Ice Lake,
#: Sapphire Rapids, Zen 4; not Cascade Lake).
VBMI: bool = SIMD_MODE == "avx512vnni" and "+avx512vbmi" in _target_features()

#: Rows of a requantization table (:func:`nnsim.kernels.gemm.requant_params`).
QP_ROWS = 13

#: The rows of a requantization table that
#: :func:`vi_requant` reads: the two-step form (rows 0-6) where 64-bit arithmetic shifts are
#: emulated (AVX2, generic), the one-division form (rows 0-3, 7-12) on AVX-512.
_QP_ROWS_NARROW = (0, 1, 2, 3, 4, 5, 6)
_QP_ROWS_WIDE = (0, 1, 2, 3, 7, 8, 9, 10, 11, 12)
_QP_ROWS = _QP_ROWS_WIDE if SIMD_MODE == "avx512vnni" else _QP_ROWS_NARROW


def _cache_dir(root: Path) -> Path:
    """Where numba keeps this package's caches: ``NUMBA_CACHE_DIR/<dir>_<sha1 of the source
    directory>`` when that is set (numba's UserProvidedCacheLocator), else ``__pycache__``."""
    if _numba_config is not None and _numba_config.CACHE_DIR:
        source_dir = os.path.dirname(os.path.abspath(__file__))
        name = os.path.split(source_dir)[-1]
        return Path(_numba_config.CACHE_DIR) / f"{name}_{hashlib.sha1(source_dir.encode()).hexdigest()}"
    return root / "__pycache__"


def _drop_stale_caches() -> None:
    """Delete this package's numba cache files if any kernel source changed since they were
    made."""
    root = Path(__file__).resolve().parent
    cache_dir = _cache_dir(root)
    digest = hashlib.sha1()
    for path in sorted(root.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    stamp = cache_dir / "nnsim-jit-sources.sha1"
    SOURCES[:] = [cache_dir, digest.hexdigest()]
    try:
        if stamp.read_text() == digest.hexdigest():
            return
    except OSError:
        pass  # no stamp yet: treat the caches as stale
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        for cached in list(cache_dir.glob("*.nbi")) + list(cache_dir.glob("*.nbc")):
            cached.unlink(missing_ok=True)
        for generated in cache_dir.glob("team-*"):   # nnsim.kernels.team's, for old sources
            shutil.rmtree(generated, ignore_errors=True)
        stamp.write_text(digest.hexdigest())
    except OSError:  # read-only install: numba falls back to its own cache directory
        pass


#: ``[cache directory, sha1 of the kernel sources]`` (set when the JIT is on): where
#: :mod:`nnsim.kernels.team` writes the sources it generates, named by the digest.
SOURCES: list = []


if JIT_ENABLED:
    _drop_stale_caches()


def njit(*args, **kwargs):
    """Decorate a kernel core; usable as ``@njit`` and ``@njit(...)``.

    Keyword arguments other than ``fastmath`` are passed to ``numba.njit`` (e.g. an explicit
    signature is not needed and should be avoided); ``fastmath`` cannot be turned on.

    ``_nrt=False`` (no numba runtime: the core allocates nothing) for every core that calls
    other compiled functions in its loops: in a function with the runtime, numba increments
    and decrements the reference count of each array argument around every such call (a
    float 3x3 depthwise layer made 8 of these calls per 16-channel row: 14x14x128 10.4 ->
    6.6 us without them, Zen 5). Scratch such a core needs comes from its plan.

    ``inner=True`` for a helper that only compiled code calls (a micro-kernel, a row loop):
    numba then does not build the wrapper through which Python calls a compiled function
    (``no_cpython_wrapper``; no kernel has the C one, see ``_FLAGS``), which it otherwise
    types, lowers, optimises and compiles to machine code with every variant, for nothing
    here: 0.05-0.15 s a variant with many array arguments, about a fifth of MobileNet v1's
    cold start (issue 13). A call from Python (a test, an oracle) still works: it runs a
    wrapped twin of the function, compiled on its first such call and not cached (numba's
    cache key does not tell the two apart).
    """
    if kwargs.get("fastmath"):
        raise ValueError("nnsim kernels never use fastmath (see nnsim.kernels._jit)")
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return _decorate(args[0], {})
    if args:
        raise TypeError("njit takes the function or keyword arguments only")

    def decorator(func):
        return _decorate(func, kwargs)

    return decorator


def _decorate(func, kwargs):
    if not JIT_ENABLED:
        return func
    flags = dict(_FLAGS)
    flags.update(kwargs)
    flags["fastmath"] = False
    inner = flags.pop("inner", False)
    if inner:
        flags["no_cpython_wrapper"] = True
    dispatcher = _numba.njit(**flags)(func)
    if inner:
        dispatcher.__class__ = _InnerDispatcher   # the same object, Python calls redirected
    if flags["cache"]:
        _lock_cache_saves(dispatcher)
    return dispatcher


if JIT_ENABLED:
    from numba.core.registry import CPUDispatcher as _CPUDispatcher

    class _InnerDispatcher(_CPUDispatcher):
        """An ``inner=True`` helper (see :func:`njit`): its variants have no CPython wrapper,
        so a call from Python goes to a wrapped twin (numba's dispatch table would call a
        missing wrapper), compiled on its first such call and kept out of the cache, whose
        key would not tell the twin's variants from the helper's."""

        _twin = None

        def __call__(self, *args, **kwargs):
            if self._twin is None:
                flags = dict(self.targetoptions, cache=False)
                flags.pop("no_cpython_wrapper", None)
                flags.pop("no_cfunc_wrapper", None)
                flags.pop("nopython", None)   # (numba's njit sets it itself)
                self._twin = _numba.njit(**flags)(self.py_func)
            return self._twin(*args, **kwargs)


# -- the cache across processes --------------------------------------------------------------
# numba stores a compiled variant by reading the function's cache index, adding the variant
# under the first free data-file number, writing the index, then the data file. Two processes
# storing variants of one function at the same moment could give two variants the same number,
# and the index one variant's key with the other's code. nnsim.tools.warmup compiles in a
# second process, so every store of a kernel takes an exclusive lock on a file of the cache
# directory first (an advisory fcntl lock: POSIX only). Its compilations also take claims
# (nnsim.kernels._claims), so that the two processes do not compile the same variant at once.

_SAVES_LOCKED: list = []   # dispatchers whose cache stores take the lock


def _lock_cache_saves(dispatcher) -> None:
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    save = getattr(cache_file, "save", None)
    if save is None or _fcntl is None:   # another numba: stores stay unlocked
        return

    def locked_save(key, data):
        path = Path(cache_file._cache_path) / "nnsim-jit.lock"
        with open(path, "a") as lock:
            _fcntl.flock(lock, _fcntl.LOCK_EX)
            try:
                save(key, data)
            finally:
                _fcntl.flock(lock, _fcntl.LOCK_UN)
    cache_file.save = locked_save
    _SAVES_LOCKED.append(dispatcher)
    _claims.wrap(dispatcher, cache_file._cache_path)


def cache_shared_safely() -> bool:
    """True when compiled kernels are cached and every kernel's cache store takes the lock
    (so that another process may compile into the same cache at the same time)."""
    return JIT_ENABLED and bool(_FLAGS["cache"]) and _fcntl is not None and bool(_SAVES_LOCKED)


@contextlib.contextmanager
def on_first_compile(callback):
    """Run the body; the first time numba starts compiling a function in it (a cache miss: a
    kernel neither compiled in this process nor found in the cache), call ``callback()`` from
    there, once. Nothing is called when nothing compiles, with the JIT off, or when the
    installed numba has no compile events."""
    register = getattr(_numba_event, "register", None)
    unregister = getattr(_numba_event, "unregister", None)
    if not JIT_ENABLED or register is None or unregister is None:
        yield
        return

    class _First(_numba_event.Listener):
        fired = False

        def on_start(self, event):
            if not self.fired:
                self.fired = True   # before the call: what the callback compiles is not "first"
                callback()

        def on_end(self, event):
            pass

    listener = _First()
    register("numba:compile", listener)
    try:
        yield
    finally:
        unregister("numba:compile", listener)


# -- SIMD vectors: the operations and their contracts are listed in nnsim.kernels._simd_np,
# whose numpy versions run them with the JIT off ------------------------------------------



if JIT_ENABLED:
    import llvmlite.ir as _ir
    from numba.core import cgutils as _cgutils  # noqa: F401 (for _native and _builtins)
    from numba.core.imputils import impl_ret_borrowed as _borrowed  # noqa: F401 (_builtins)
    from numba.core.typing import signature as _signature  # noqa: F401 (for _builtins)
    try:   # numba's allocation internals (for nnsim.kernels._builtins)
        from numba.core.typing.npydecl import parse_dtype as _parse_dtype  # noqa: F401
        from numba.core.typing.npydecl import parse_shape as _parse_shape_type  # noqa: F401
        from numba.np.arrayobj import _empty_nd_impl, _parse_shape  # noqa: F401
    except ImportError:  # pragma: no cover - another numba: _builtins uses numpy's functions
        _empty_nd_impl = _parse_dtype = _parse_shape = _parse_shape_type = None
    from numba.core import types as _types
    from numba.extending import intrinsic as _intrinsic
    from numba.extending import models as _models
    from numba.extending import register_model as _register_model

    from nnsim.kernels import _simd_ir
    from nnsim.kernels._simd_ir import I8 as _I8
    from nnsim.kernels._simd_ir import I32 as _I32
    from nnsim.kernels._simd_ir import VI as _VI
    from nnsim.kernels._simd_ir import splat as _splat

    _F32 = _ir.FloatType()
    _AVX2 = SIMD_MODE == "avx2"   # pmaddwd as vpmaddwd on 16-lane pieces
    _VF, _VH = _ir.VectorType(_F32, 16), _ir.VectorType(_F32, 8)
    _VD = _ir.VectorType(_I32, 32)

    class _Vec(_types.Type):
        def __init__(self, name):
            super().__init__(name=name)

    _vi, _vf, _vh = _Vec("nnsim_vi32x16"), _Vec("nnsim_vf32x16"), _Vec("nnsim_vf32x8")
    _vd = _Vec("nnsim_vi32x32")
    _LLVM = {_vi: _VI, _vf: _VF, _vh: _VH, _vd: _VD}
    _NUMBA = {id(_VI): _vi, id(_VF): _vf, id(_VH): _vh, id(_VD): _vd}

    @_register_model(_Vec)
    class _VecModel(_models.PrimitiveModel):
        def __init__(self, dmm, fe_type):
            super().__init__(dmm, fe_type, _LLVM[fe_type])

    def _address(context, builder, aryty, ary, idxty, idx):
        data = context.make_array(aryty)(context, builder, ary).data
        return builder.gep(data, [context.cast(builder, idx, idxty, _types.intp)])

    def _load(vtype):
        def typer(typingctx, a, i):
            def codegen(context, builder, sig, args):
                ptr = _address(context, builder, sig.args[0], args[0], sig.args[1], args[1])
                return builder.load(builder.bitcast(ptr, vtype.as_pointer()), align=1)
            return _NUMBA[id(vtype)](a, i), codegen
        return _intrinsic(typer)

    def _store(vtype):
        def typer(typingctx, v, a, i):
            def codegen(context, builder, sig, args):
                ptr = _address(context, builder, sig.args[1], args[1], sig.args[2], args[2])
                builder.store(args[0], builder.bitcast(ptr, vtype.as_pointer()), align=1)
                return context.get_dummy_value()
            return _types.none(v, a, i), codegen
        return _intrinsic(typer)

    def _zero(vtype):
        def typer(typingctx):
            def codegen(context, builder, sig, args):
                return _ir.Constant(vtype, None)
            return _NUMBA[id(vtype)](), codegen
        return _intrinsic(typer)

    def _binary(name):
        def typer(typingctx, a, b):
            def codegen(context, builder, sig, args):
                return getattr(builder, name)(args[0], args[1])
            return a(a, b), codegen
        return _intrinsic(typer)

    @_intrinsic
    def _vi_splat(typingctx, v):
        def codegen(context, builder, sig, args):
            return _splat(builder, _VI, context.cast(builder, args[0], sig.args[0], _types.int32))
        return _vi(v), codegen

    @_intrinsic
    def _vi_bcast4(typingctx, a, i):
        def codegen(context, builder, sig, args):
            ptr = _address(context, builder, sig.args[0], args[0], sig.args[1], args[1])
            word = builder.load(builder.bitcast(ptr, _I32.as_pointer()), align=1)
            return _splat(builder, _VI, word)
        return _vi(a, i), codegen

    def _fbcast(vtype):
        def typer(typingctx, a, i):
            def codegen(context, builder, sig, args):
                ptr = _address(context, builder, sig.args[0], args[0], sig.args[1], args[1])
                value = builder.load(builder.bitcast(ptr, _F32.as_pointer()))
                return _splat(builder, vtype, value)
            return _NUMBA[id(vtype)](a, i), codegen
        return _intrinsic(typer)

    @_intrinsic
    def _vb_prefetch(typingctx, a, i):
        def codegen(context, builder, sig, args):
            _simd_ir.prefetch(builder, _address(context, builder, sig.args[0], args[0],
                                                sig.args[1], args[1]))
            return context.get_dummy_value()
        return _types.none(a, i), codegen

    @_intrinsic
    def _vi_dpbusd(typingctx, acc, u, s):
        def codegen(context, builder, sig, args):
            if SIMD_MODE == "avx512vnni":
                return _simd_ir.call(builder, "llvm.x86.avx512.vpdpbusd.512", _VI, args)
            # uint8 * int8 products are exact in int16 (|p| <= 32640): pairs summed in int32
            # (vpmaddwd on AVX2), then adjacent pair sums
            u16, s16 = _simd_ir.words(builder, args[1], False), _simd_ir.words(builder, args[2])
            products = _simd_ir.pmaddwd(builder, u16, s16, 64, _AVX2)
            return builder.add(args[0], _simd_ir.pair_sums(builder, products, 32, False))
        return _vi(_vi, _vi, _vi), codegen

    def _vd_dp(signed):
        def typer(typingctx, acc, u, s):
            def codegen(context, builder, sig, args):
                u16 = _simd_ir.words(builder, args[1], signed)
                s16 = _simd_ir.words(builder, args[2])
                return builder.add(args[0], _simd_ir.pmaddwd(builder, u16, s16, 64, _AVX2))
            return _vd(_vd, _vi, _vi), codegen
        return _intrinsic(typer)

    @_intrinsic
    def _vb_sum64(typingctx, a, i, f, n):
        def codegen(context, builder, sig, args):
            ptr = _address(context, builder, sig.args[0], args[0], sig.args[1], args[1])
            return _simd_ir.sum_bytes(builder, ptr, context.cast(builder, args[2], sig.args[2],
                                                                 _types.uint8),
                                      context.cast(builder, args[3], sig.args[3], _types.int64))
        return _types.int64(a, i, f, n), codegen

    @_intrinsic
    def _vd_sum(typingctx, acc):
        def codegen(context, builder, sig, args):
            return _simd_ir.pair_sums(builder, args[0], 32, False)
        return _vi(_vd), codegen

    @_intrinsic
    def _vi_dpwssd(typingctx, acc, a, b):
        def codegen(context, builder, sig, args):
            if SIMD_MODE == "avx512vnni":
                return _simd_ir.call(builder, "llvm.x86.avx512.vpdpwssd.512", _VI, args)
            halves = _ir.VectorType(_ir.IntType(16), 32)
            return builder.add(args[0], _simd_ir.pmaddwd(
                builder, builder.bitcast(args[1], halves), builder.bitcast(args[2], halves), 32,
                _AVX2))
        return _vi(_vi, _vi, _vi), codegen

    @_intrinsic
    def _vf_muladd(typingctx, acc, a, b):
        def codegen(context, builder, sig, args):
            if FMA:
                vtype = args[0].type
                return _simd_ir.call(builder, f"llvm.fma.v{vtype.count}f32", vtype,
                                     [args[1], args[2], args[0]])
            return builder.fadd(args[0], builder.fmul(args[1], args[2]))
        return acc(acc, a, b), codegen

    def _qp_rows(context, builder, qpty, qp, cty, c, cpadty, cpad):
        """The row vectors qp[k * cpad + c: ... + 16] the requantization uses, k in
        :data:`_QP_ROWS` (see vi_requant)."""
        i64 = _ir.IntType(64)
        c_ = context.cast(builder, c, cty, _types.intp)
        cpad_ = context.cast(builder, cpad, cpadty, _types.intp)
        rows = []
        for k in _QP_ROWS:
            if k == 3 and _shift_free(qpty):
                rows.append(None)   # no left shift to load or apply
                continue
            ptr = _address(context, builder, qpty, qp, _types.intp,
                           builder.add(builder.mul(cpad_, _ir.Constant(i64, k)), c_))
            rows.append(builder.load(builder.bitcast(ptr, _VI.as_pointer()), align=1))
        return rows

    def _shift_free(qpty):
        """Whether the table is a uint32 view (:func:`nnsim.kernels.gemm.shift_free`: row 3
        all zero): no left shift compiled. numba compiles a caller once per table type."""
        return getattr(qpty, "dtype", None) == _types.uint32

    def _vq_type(free):
        """The ``vq`` tuple: the rows of _QP_ROWS in registers, without row 3 when ``free``."""
        return _types.UniTuple(_vi, len(_QP_ROWS) - bool(free))

    def _vq_rows(builder, q, qty):
        """The rows of a ``vq`` value as _qp_rows gives them (None for a missing row 3)."""
        rows = [builder.extract_value(q, k) for k in range(qty.count)]
        return rows if qty.count == len(_QP_ROWS) else rows[:3] + [None] + rows[3:]

    def _wide():
        """Whether the requantization compiles to its one-division form (read when an
        intrinsic compiles, so a test can choose the form)."""
        return _QP_ROWS is _QP_ROWS_WIDE

    def _splats(context, builder, sig, args, first, n):
        """args[first:first + n] (int32 scalars) as vectors of equal lanes."""
        return [_splat(builder, _VI, context.cast(builder, args[k], sig.args[k], _types.int32))
                for k in range(first, first + n)]

    @_intrinsic
    def _vi_requant(typingctx, acc, qp, c, cpad, extra, zp, lo, hi):
        def codegen(context, builder, sig, args):
            rows = _qp_rows(context, builder, sig.args[1], args[1], sig.args[2], args[2],
                            sig.args[3], args[3])
            e, zp_, lo_, hi_ = _splats(context, builder, sig, args, 4, 4)
            x = builder.add(builder.add(args[0], rows[0]), e)
            return _simd_ir.requant(builder, x, rows, zp_, lo_, hi_, _wide())
        return _vi(_vi, qp, c, cpad, extra, zp, lo, hi), codegen

    @_intrinsic
    def _vi_requantb(typingctx, acc, qp, c, cpad, zp, lo, hi):
        def codegen(context, builder, sig, args):
            rows = _qp_rows(context, builder, sig.args[1], args[1], sig.args[2], args[2],
                            sig.args[3], args[3])
            return _simd_ir.requant(builder, args[0], rows,
                                    *_splats(context, builder, sig, args, 4, 3), _wide())
        return _vi(_vi, qp, c, cpad, zp, lo, hi), codegen

    @_intrinsic
    def _vi_requantr(typingctx, acc, qp, c, cpad):
        def codegen(context, builder, sig, args):
            rows = _qp_rows(context, builder, sig.args[1], args[1], sig.args[2], args[2],
                            sig.args[3], args[3])
            return _simd_ir.mbqm(builder, args[0], rows, _wide())
        return _vi(_vi, qp, c, cpad), codegen

    @_intrinsic
    def _vq_load(typingctx, qp, c, cpad):
        vq = _vq_type(_shift_free(qp))

        def codegen(context, builder, sig, args):
            rows = _qp_rows(context, builder, sig.args[0], args[0], sig.args[1], args[1],
                            sig.args[2], args[2])
            return context.make_tuple(builder, vq, [r for r in rows if r is not None])
        return vq(qp, c, cpad), codegen

    @_intrinsic
    def _vi_requantq(typingctx, acc, q, extra, zp, lo, hi):
        def codegen(context, builder, sig, args):
            rows = _vq_rows(builder, args[1], sig.args[1])
            e, zp_, lo_, hi_ = _splats(context, builder, sig, args, 2, 4)
            x = builder.add(builder.add(args[0], rows[0]), e)
            return _simd_ir.requant(builder, x, rows, zp_, lo_, hi_, _wide())
        return _vi(_vi, q, extra, zp, lo, hi), codegen

    @_intrinsic
    def _vi_requantqb(typingctx, acc, q, zp, lo, hi):
        def codegen(context, builder, sig, args):
            rows = _vq_rows(builder, args[1], sig.args[1])
            return _simd_ir.requant(builder, args[0], rows,
                                    *_splats(context, builder, sig, args, 2, 3), _wide())
        return _vi(_vi, q, zp, lo, hi), codegen

    @_intrinsic
    def _vi_requantqr(typingctx, acc, q):
        def codegen(context, builder, sig, args):
            rows = _vq_rows(builder, args[1], sig.args[1])
            return _simd_ir.mbqm(builder, args[0], rows, _wide())
        return _vi(_vi, q), codegen

    @_intrinsic
    def _vi_store8(typingctx, v, a, i):
        def codegen(context, builder, sig, args):
            ptr = _address(context, builder, sig.args[1], args[1], sig.args[2], args[2])
            vbytes = _ir.VectorType(_I8, 16)
            builder.store(builder.trunc(args[0], vbytes), builder.bitcast(ptr, vbytes.as_pointer()),
                          align=1)
            return context.get_dummy_value()
        return _types.none(v, a, i), codegen

    def _count_mask(context, builder, sig, args, k, lanes):
        """The mask of the first ``args[k]`` of ``lanes`` lanes."""
        n = context.cast(builder, args[k], sig.args[k], _types.int64)
        return _simd_ir.lane_mask(builder, n, lanes)

    @_intrinsic
    def _vi_store8n(typingctx, v, a, i, n):
        def codegen(context, builder, sig, args):
            ptr = _address(context, builder, sig.args[1], args[1], sig.args[2], args[2])
            mask = _count_mask(context, builder, sig, args, 3, 16)
            _simd_ir.masked_store(builder, builder.trunc(args[0], _ir.VectorType(_I8, 16)), ptr,
                                  mask, "v16i8")
            return context.get_dummy_value()
        return _types.none(v, a, i, n), codegen

    @_intrinsic
    def _vf_storen(typingctx, v, a, i, n):
        def codegen(context, builder, sig, args):
            ptr = _address(context, builder, sig.args[1], args[1], sig.args[2], args[2])
            lanes = args[0].type.count
            mask = _count_mask(context, builder, sig, args, 3, lanes)
            _simd_ir.masked_store(builder, args[0], ptr, mask, f"v{lanes}f32")
            return context.get_dummy_value()
        return _types.none(v, a, i, n), codegen

    def _copy_codegen(count):
        """vb_copy (n in args[4], the flip in args[5]) or, with ``count`` 16, vb_copy16."""
        def codegen(context, builder, sig, args):
            sptr, dptr = (_address(context, builder, sig.args[k], args[k], sig.args[k + 1],
                                   args[k + 1]) for k in (0, 2))
            flip = context.cast(builder, args[-1], sig.args[-1], _types.uint8)
            mask = None if count else _count_mask(context, builder, sig, args, 4, 64)
            _simd_ir.copy_bytes(builder, sptr, dptr, flip, mask)
            return context.get_dummy_value()
        return codegen

    @_intrinsic
    def _vb_copy(typingctx, src, s, dst, d, n, f):
        return _types.none(src, s, dst, d, n, f), _copy_codegen(None)

    @_intrinsic
    def _vi_pack8(typingctx, a, b, c, d):
        def codegen(context, builder, sig, args):
            return _simd_ir.pack8(builder, args)
        return _vi(_vi, _vi, _vi, _vi), codegen

    def _store_parts(parts, masked=False):
        """vi_store2 / vi_store4: the 64 bytes of v in ``parts`` equal pieces, piece k to
        ``a[i + k * stride:]`` (``a``: a byte array); ``masked``: vi_store2n, the first n
        bytes of each piece."""
        def codegen(context, builder, sig, args):
            start = context.cast(builder, args[2], sig.args[2], _types.intp)
            step = context.cast(builder, args[3], sig.args[3], _types.intp)
            ptrs = [_address(context, builder, sig.args[1], args[1], _types.intp,
                             builder.add(start, builder.mul(step, _ir.Constant(step.type, k))))
                    for k in range(parts)]
            mask = _count_mask(context, builder, sig, args, 4, 64 // parts) if masked else None
            _simd_ir.store_pieces(builder, args[0], ptrs, mask)
            return context.get_dummy_value()

        if masked:
            def typer(typingctx, v, a, i, stride, n):
                return _types.none(v, a, i, stride, n), codegen
        else:
            def typer(typingctx, v, a, i, stride):
                return _types.none(v, a, i, stride), codegen
        return _intrinsic(typer)

    @_intrinsic
    def _vi_pack8q(typingctx, a, b, c, d, zp, lo, hi):
        def codegen(context, builder, sig, args):
            zp_, lo_, hi_ = (context.cast(builder, args[k], sig.args[k], _types.int32)
                             for k in (4, 5, 6))
            return _simd_ir.pack8q(builder, args[:4], zp_, lo_, hi_,
                                   SIMD_MODE == "avx512vnni")
        return _vi(_vi, _vi, _vi, _vi, zp, lo, hi), codegen

    @_intrinsic
    def _vf_clamp(typingctx, v, lo, hi):
        def codegen(context, builder, sig, args):
            low, high = (_splat(builder, args[0].type, context.cast(
                builder, args[k], sig.args[k], _types.float32)) for k in (1, 2))
            return _simd_ir.fclamp(builder, args[0], low, high)
        return v(v, lo, hi), codegen

    vi_mul = _binary("mul")

    @_intrinsic
    def vi_load8(typingctx, a, i):
        signed = a.dtype.signed

        def codegen(context, builder, sig, args):
            ptr = _address(context, builder, sig.args[0], args[0], sig.args[1], args[1])
            vbytes = _ir.VectorType(_I8, 16)
            raw = builder.load(builder.bitcast(ptr, vbytes.as_pointer()), align=1)
            return (builder.sext if signed else builder.zext)(raw, _VI)
        return _vi(a, i), codegen

    @_intrinsic
    def vb_copy16(typingctx, src, s, dst, d, f):
        return _types.none(src, s, dst, d, f), _copy_codegen(16)

    @_intrinsic
    def vi_load_t4(typingctx, a, i):
        def codegen(context, builder, sig, args):
            return _simd_ir.load_t4(builder, _address(context, builder, sig.args[0], args[0],
                                                      sig.args[1], args[1]))
        return _vi(a, i), codegen
    vi_requant, vi_store8, vf_clamp, vi_pack8 = _vi_requant, _vi_store8, _vf_clamp, _vi_pack8
    vq_load, vi_requantq = _vq_load, _vi_requantq
    vi_requantb, vi_requantqb, vi_requantr, vi_pack8q = _vi_requantb, _vi_requantqb, \
        _vi_requantr, _vi_pack8q
    vi_store2, vi_store4, vi_store2n = _store_parts(2), _store_parts(4), _store_parts(2, True)
    vi_requantqr = _vi_requantqr
    vi_store8n, vf_storen, vb_copy = _vi_store8n, _vf_storen, _vb_copy
    vf_add = _binary("fadd")
    vi_zero, vf_zero, vh_zero = _zero(_VI), _zero(_VF), _zero(_VH)
    vi_load, vf_load, vh_load = _load(_VI), _load(_VF), _load(_VH)
    vi_store, vf_store, vh_store = _store(_VI), _store(_VF), _store(_VH)
    vf_bcast, vh_bcast = _fbcast(_VF), _fbcast(_VH)
    vi_xor, vi_add = _binary("xor"), _binary("add")
    vi_or, vi_and = _binary("or_"), _binary("and_")
    vi_shl, vi_lshr, vi_ashr = _binary("shl"), _binary("lshr"), _binary("ashr")
    vi_splat, vi_bcast4, vi_dpbusd, vi_dpwssd = _vi_splat, _vi_bcast4, _vi_dpbusd, _vi_dpwssd
    vf_muladd = _vf_muladd
    vd_zero, vd_dpbusd, vd_dpbssd, vd_sum = _zero(_VD), _vd_dp(False), _vd_dp(True), _vd_sum
    vb_sum64, vb_prefetch = _vb_sum64, _vb_prefetch
else:
    # each vector operation as its numpy version (nnsim.kernels._simd_np, keyed by the same
    # names), the 8-lane store being the 16-lane one
    globals().update(SIMD_OPS, vh_store=SIMD_OPS["vf_store"])
