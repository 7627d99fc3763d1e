"""Compiled code calling compiled code by address.

For the thread team and the compiled program (:mod:`nnsim.kernels.team`,
:mod:`nnsim.kernels.program`): atomic int64 slots of an array (``at_load``, ``at_store``,
``at_cas``, ``at_add``), ``spin_pause``, ``monotonic_ns``, calls through a C function's address
(``call_address``, ``as_pointer``, ``carray``) and C callbacks (:func:`callback`). For the GEMM
cores: :func:`call_native` runs a numba variant at an address (:func:`native_address`) in
numba's own calling convention, with the signature :func:`native_types` names checked while
compiling. With the JIT off, ``call_native`` calls the plain function ``native_address``
numbered, and the team's primitives are None (no team: :mod:`nnsim.kernels.program` then calls
the steps from Python).
"""
from __future__ import annotations

from nnsim.kernels._jit import _FLAGS, JIT_ENABLED

__all__ = ["NATIVE_CODES", "native_types", "native_address", "call_native", "at_load",
           "at_store", "at_cas", "at_add", "spin_pause", "call_address", "as_pointer",
           "callback", "carray", "monotonic_ns"]

if JIT_ENABLED:   # numba's handles from nnsim.kernels._jit, the one module importing numba
    from nnsim.kernels import _simd_ir
    from nnsim.kernels._jit import _address, _cgutils, _intrinsic, _ir, _numba, _types


#: The argument codes of :func:`native_types`: a 1-D C-contiguous array of that dtype, or
#: ``i`` an int64, ``f`` a float32.
NATIVE_CODES = {"u8": "uint8", "i8": "int8", "i16": "int16", "i32": "int32", "u32": "uint32",
                "i64": "int64", "f32": "float32"}


def native_types(codes: str) -> tuple:
    """The numba argument types named by ``codes`` (space-separated :data:`NATIVE_CODES` or
    ``i``, ``f``; :func:`call_native` also takes ``a|b``, either type): the signature of a variant
    that compiled code calls through its address (:func:`native_address`,
    :func:`call_native`) instead of linking it in. A core calling its micro-kernels so
    compiles only the ones a model needs, and LLVM does not optimise and compile their code
    again inside each caller (MobileNet v1's cold start, issue 13)."""
    if not JIT_ENABLED or not codes:
        return ()
    return tuple(_types.int64 if c == "i" else _types.float32 if c == "f" else
                 _types.Array(getattr(_types, NATIVE_CODES[c]), 1, "C") for c in codes.split())


def _native_choices(codes: str) -> list:
    """For each argument of ``codes`` where alternatives are allowed (``u32|i32``: the
    caller passes one of them, the variant at the address was compiled for that one), the
    types allowed (:func:`call_native`)."""
    return [native_types(" ".join(c.split("|"))) for c in codes.split()]


if JIT_ENABLED:
    def _slot(context, builder, sig, args):
        return _address(context, builder, sig.args[0], args[0], sig.args[1], args[1])

    def _int64(context, builder, sig, args, k):
        return context.cast(builder, args[k], sig.args[k], _types.int64)

    @_intrinsic
    def at_load(typingctx, a, i):
        def codegen(context, builder, sig, args):
            return _simd_ir.atomic_load(builder, _slot(context, builder, sig, args))
        return _types.int64(a, i), codegen

    @_intrinsic
    def at_store(typingctx, a, i, v):
        def codegen(context, builder, sig, args):
            _simd_ir.atomic_store(builder, _int64(context, builder, sig, args, 2),
                                  _slot(context, builder, sig, args))
            return context.get_dummy_value()
        return _types.none(a, i, v), codegen

    @_intrinsic
    def at_cas(typingctx, a, i, old, new):
        def codegen(context, builder, sig, args):
            return _simd_ir.compare_exchange(builder, _slot(context, builder, sig, args),
                                             *(_int64(context, builder, sig, args, k)
                                               for k in (2, 3)))
        return _types.boolean(a, i, old, new), codegen

    @_intrinsic
    def at_add(typingctx, a, i, v):
        def codegen(context, builder, sig, args):
            return _simd_ir.fetch_add(builder, _slot(context, builder, sig, args),
                                      _int64(context, builder, sig, args, 2))
        return _types.int64(a, i, v), codegen

    @_intrinsic
    def spin_pause(typingctx):
        def codegen(context, builder, sig, args):
            _simd_ir.spin_pause(builder)
            return context.get_dummy_value()
        return _types.none(), codegen

    @_intrinsic
    def call_address(typingctx, f, a, b):
        def codegen(context, builder, sig, args):
            _simd_ir.call_address(builder, *(_int64(context, builder, sig, args, k)
                                             for k in (0, 1, 2)))
            return context.get_dummy_value()
        return _types.none(f, a, b), codegen

    @_intrinsic
    def monotonic_ns(typingctx):
        def codegen(context, builder, sig, args):
            timespec = _cgutils.alloca_once(builder, _ir.ArrayType(_ir.IntType(64), 2))
            return _simd_ir.monotonic_ns(builder, timespec)
        return _types.int64(), codegen

    @_intrinsic
    def as_pointer(typingctx, address):
        def codegen(context, builder, sig, args):
            return builder.inttoptr(_int64(context, builder, sig, args, 0),
                                    _ir.IntType(8).as_pointer())
        return _types.voidptr(address), codegen

    @_intrinsic
    def call_native(typingctx, address, args, codes):
        # call_native(address, (arg, ...), "codes"): run the variant at ``address``
        # (native_address) with these arguments, in numba's own calling convention. The
        # signature is checked while typing (a wrong one would corrupt memory at run
        # time): each argument type must be one that ``codes`` names (ints of any width are
        # passed as int64)
        choices = _native_choices(getattr(codes, "literal_value", ""))
        got = tuple(_types.unliteral(t) for t in getattr(args, "types", ()))
        want = tuple(_types.int64 if isinstance(g, _types.Integer) else g for g in got)
        if not choices or len(got) != len(choices) or any(
                w not in allowed for w, allowed in zip(want, choices)):
            raise _numba.core.errors.TypingError(
                f"call_native: arguments {got} do not match the signature {codes}")

        def codegen(context, builder, sig, llargs):
            values = [context.cast(builder, v, t, w) for v, t, w in
                      zip(_cgutils.unpack_tuple(builder, llargs[1], len(want)), args.types,
                          want)]
            fnty = context.call_conv.get_function_type(_types.none, want)
            fn = builder.inttoptr(_int64(context, builder, sig, llargs, 0), fnty.as_pointer())
            # numba's calling convention: status = f(&result, &exception info, *args); the
            # callees return nothing and raise nothing (no checks: nopython, no bounds)
            result = _cgutils.alloca_once(builder, fnty.args[0].pointee)
            builder.store(_cgutils.get_null_value(fnty.args[0].pointee), result)
            excinfo = _cgutils.alloca_once(builder, fnty.args[1].pointee)
            packed = context.call_conv._get_arg_packer(want).as_arguments(builder, values)
            builder.call(fn, [result, excinfo, *packed])
            return context.get_dummy_value()
        return _types.none(address, args, codes), codegen

    def native_address(dispatcher, codes: str) -> int:
        """The address of ``dispatcher``'s variant for the argument types ``codes`` (see
        :func:`native_types`), compiled (or loaded from numba's cache) here: what
        :func:`call_native` calls. Valid while the dispatcher lives (a module's, always)."""
        sig = native_types(codes)
        dispatcher.compile(sig)
        variant = dispatcher.overloads[sig]
        return variant.library.get_pointer_to_function(variant.fndesc.llvm_func_name)

    def callback(func, cache=False):
        """``func(a, b)`` (two int64) compiled as a C function ``void f(int64, int64)``; its
        address is ``.address``. ``cache``: stored in numba's cache (a function defined in a
        file: numba keys the cache by the file) unless the kernels are not cached."""
        return _numba.cfunc(_types.void(_types.int64, _types.int64), nopython=True,
                            cache=cache and _FLAGS["cache"])(func)

    carray = _numba.carray
else:
    at_load = at_store = at_cas = at_add = spin_pause = call_address = as_pointer = None
    monotonic_ns = callback = carray = None   # no thread team (nnsim.kernels.team)
    _NATIVE: list = []   # the functions native_address numbered, with the JIT off

    def native_address(dispatcher, codes: str) -> int:
        """With the JIT off: a number standing for ``dispatcher`` (a plain function)."""
        if dispatcher not in _NATIVE:
            _NATIVE.append(dispatcher)
        return _NATIVE.index(dispatcher) + 1   # 0 stays "none"

    def call_native(address, args, codes):
        """With the JIT off: call the function :func:`native_address` numbered ``address``."""
        _NATIVE[address - 1](*args)
