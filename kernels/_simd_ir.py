"""LLVM IR behind the vector operations of :mod:`nnsim.kernels._jit`: the requantization
(``vi_requant`` and its variants), byte packing (``vi_pack8``, ``vi_pack8q``), pair sums and
``vpmaddwd`` products of the dot products, lane masks and masked stores, the transposing
load (``vi_load_t4``). Functions of an llvmlite ``IRBuilder`` and vectors, with no numba in
them: ``_jit`` (the one module that imports numba) wraps them as intrinsics and lists their
contracts (:mod:`nnsim.kernels._simd_np`); the requantization table is
:func:`nnsim.kernels.gemm.requant_params`.
"""

from __future__ import annotations

import llvmlite.ir as ir

I32, I8 = ir.IntType(32), ir.IntType(8)
VI = ir.VectorType(I32, 16)                    # 16 int32 lanes (one zmm, two ymm)
_V64 = ir.VectorType(ir.IntType(64), 8)        # the same bits as 8 int64 lanes
_B64 = ir.VectorType(I8, 64)                   # the same bits as 64 bytes
_V16 = ir.VectorType(ir.IntType(16), 32)       # the same bits as 32 int16 lanes


def splat(builder, vtype, scalar):
    """A vector of ``vtype`` with every lane = ``scalar``."""
    undef = ir.Constant(vtype, None)
    one = builder.insert_element(undef, scalar, ir.Constant(I32, 0))
    return builder.shuffle_vector(one, undef, ir.Constant(ir.VectorType(I32, vtype.count), None))


def _const(value, vtype=VI):
    return ir.Constant(vtype, [value] * vtype.count)


def _lanes(indices):
    return ir.Constant(ir.VectorType(I32, len(indices)), list(indices))


def _clamp(builder, v, lo, hi):
    """std::min(std::max(v, lo), hi), signed lanes."""
    v = builder.select(builder.icmp_signed("<", v, lo), lo, v)
    return builder.select(builder.icmp_signed(">", v, hi), hi, v)


def _declare(module, fnty, name):
    """The declaration of an LLVM intrinsic in ``module``, added once."""
    try:
        return module.get_global(name)
    except KeyError:
        return ir.Function(module, fnty, name)


def requant(builder, x, rows, zp, lo, hi, wide):
    """clamp(MBQM(x) + zp, lo, hi) for x = acc + bias + extra; zp, lo, hi: vectors of equal
    lanes; ``rows``: the table rows the form reads (``wide``: the one-division form)."""
    return _clamp(builder, mbqm(builder, x, rows, wide, zp), lo, hi)


def mbqm(builder, x, rows, wide, zp=None):
    """MBQM(x) for x = acc + bias + extra, plus ``zp`` (a vector) if given; ``rows[3]`` None
    for a table without left shifts (no ``vpsllvd``)."""
    if rows[3] is not None:
        x = builder.shl(x, rows[3])                        # int32 wrap of x << left
    if wide:
        q = _one_division(builder, x, rows)
        return q if zp is None else builder.add(q, zp)
    return _two_steps(builder, x, rows, zp)


def _low32(builder, v):
    """The sign-extended low half of each 64-bit lane (all ``vpmuldq`` reads)."""
    return builder.ashr(builder.shl(v, _const(32, _V64)), _const(32, _V64))


def _two_steps(builder, x, rows, zp):
    """MBQM(x) (+ zp unless None) for x already shifted left:
    SaturatingRoundingDoublingHighMul, then RoundingDivideByPOT, as gemmlowp writes them
    (rows 0-6 of requant_params); zp goes in before the rounding's last increment, which
    compiles shorter."""
    x64 = builder.bitcast(x, _V64)
    even = _low32(builder, x64)
    odd = builder.ashr(x64, _const(32, _V64))
    m_even = _low32(builder, builder.bitcast(rows[1], _V64))
    m_odd = _low32(builder, builder.bitcast(rows[2], _V64))
    # SaturatingRoundingDoublingHighMul(x, m) == (x * m + 2**30) >> 31 for m >= 0
    p_even = builder.add(builder.mul(even, m_even), _const(1 << 30, _V64))
    p_odd = builder.add(builder.mul(odd, m_odd), _const(1 << 30, _V64))
    p_even = builder.bitcast(builder.lshr(p_even, _const(31, _V64)), VI)
    p_odd = builder.bitcast(builder.shl(p_odd, _const(1, _V64)), VI)
    q = builder.shuffle_vector(p_even, p_odd, _lanes([n + 16 * (n % 2) for n in range(16)]))
    # RoundingDivideByPOT(q, right): (q >> r) + ((q & mask) > (mask >> 1) + (q < 0))
    threshold = builder.sub(rows[6], builder.ashr(q, _const(31)))
    up = builder.icmp_signed(">", builder.and_(q, rows[5]), threshold)
    q = builder.ashr(q, rows[4])
    if zp is not None:
        q = builder.add(q, zp)
    return builder.select(up, builder.add(q, _const(1)), q)


def _one_division(builder, x, rows):
    """MBQM(x) for x already shifted left, both roundings in one 64-bit floor division
    (rows 7-12 of requant_params): per channel, floor((x * m + C - (x * m < -2**30) * D)
    / 2**K). On AVX-512 (64-bit arithmetic shifts): 12 vector instructions per 16 lanes
    after the left shift; a whole requantization loop with a saturating store is 15 against
    17 for the two-step form (benchmarks/README.md, "Fourth session")."""
    x64 = builder.bitcast(x, _V64)
    # the odd lanes moved down by a dword shuffle (port 5) rather than a 64-bit shift
    # (port 0, with the multiplies and shifts)
    odd = builder.shuffle_vector(x, ir.Constant(VI, None), _lanes([n | 1 for n in range(16)]))
    halves = []
    for lanes, m, c, d, k in ((_low32(builder, x64), rows[1], rows[4], rows[6], rows[8]),
                              (_low32(builder, builder.bitcast(odd, _V64)), rows[2], rows[5],
                               rows[7], rows[9])):
        p = builder.mul(lanes, _low32(builder, builder.bitcast(m, _V64)))
        n = builder.add(p, builder.bitcast(c, _V64))
        negative = builder.icmp_signed("<", p, _const(-(1 << 30), _V64))
        n = builder.select(negative, builder.sub(n, builder.bitcast(d, _V64)), n)
        halves.append(builder.bitcast(builder.ashr(n, builder.bitcast(k, _V64)), VI))
    # the low halves: lane 2j of the even quotients, lane 2j of the odd ones
    return builder.shuffle_vector(halves[0], halves[1],
                                  _lanes([n + 15 * (n % 2) for n in range(16)]))


def pack8(builder, vals):
    """The low bytes of the lanes of 4 vectors, one after the other, as one vector."""
    t = [builder.trunc(v, ir.VectorType(I8, 16)) for v in vals]
    ab = builder.shuffle_vector(t[0], t[1], _lanes(range(32)))
    cd = builder.shuffle_vector(t[2], t[3], _lanes(range(32)))
    return builder.bitcast(builder.shuffle_vector(ab, cd, _lanes(range(64))), VI)


def pack8q(builder, vals, zp, lo, hi, avx512):
    """pack8 of clamp(v + zp, lo, hi) for the 4 vectors ``vals`` (zp, lo, hi: int32 scalars,
    -128 <= lo <= hi <= 255). With ``avx512``: saturating packs, the zero point added to
    16-bit lanes, the clamp on bytes; else the clamp in int32 lanes."""
    if not avx512:
        zpv, low, high = (splat(builder, VI, s) for s in (zp, lo, hi))
        return pack8(builder, [_clamp(builder, builder.add(v, zpv), low, high) for v in vals])
    # in the uint8 domain: an int8 range reaching below 0 moves up by 128, and its bytes
    # move back by XOR 0x80 at the end (0 <= lo <= hi <= 255 after the move)
    flip = builder.icmp_signed("<", lo, ir.Constant(I32, 0))
    move = builder.select(flip, ir.Constant(I32, 128), ir.Constant(I32, 0))
    zp, lo, hi = (builder.add(s, move) for s in (zp, lo, hi))
    module = builder.module
    packssdw = _declare(module, ir.FunctionType(_V16, [VI, VI]), "llvm.x86.avx512.packssdw.512")
    packuswb = _declare(module, ir.FunctionType(_B64, [_V16, _V16]),
                        "llvm.x86.avx512.packuswb.512")
    adds = _declare(module, ir.FunctionType(_V16, [_V16, _V16]), "llvm.sadd.sat.v32i16")
    zp16 = splat(builder, _V16, builder.trunc(zp, ir.IntType(16)))
    ab = builder.call(adds, [builder.call(packssdw, [vals[0], vals[1]]), zp16])
    cd = builder.call(adds, [builder.call(packssdw, [vals[2], vals[3]]), zp16])
    v = builder.call(packuswb, [ab, cd])   # per 128-bit lane j: 4 lanes of a, b, c, d
    low = splat(builder, _B64, builder.trunc(lo, I8))
    high = splat(builder, _B64, builder.trunc(hi, I8))
    v = builder.select(builder.icmp_unsigned("<", v, low), low, v)
    v = builder.select(builder.icmp_unsigned(">", v, high), high, v)
    v = builder.xor(v, splat(builder, _B64, builder.trunc(
        builder.select(flip, ir.Constant(I32, 0x80), ir.Constant(I32, 0)), I8)))
    v = builder.bitcast(v, VI)
    return builder.shuffle_vector(v, ir.Constant(VI, None),
                                  _lanes([4 * (k % 4) + k // 4 for k in range(16)]))


def pair_sums(builder, v, n, widen):
    """<n/2 x i32>: v[2k] + v[2k + 1] (v: <n x i16> widened first, or <n x i32>)."""
    lo = builder.shuffle_vector(v, v, _lanes([2 * k for k in range(n // 2)]))
    hi = builder.shuffle_vector(v, v, _lanes([2 * k + 1 for k in range(n // 2)]))
    if widen:
        wide = ir.VectorType(I32, n // 2)
        lo, hi = builder.sext(lo, wide), builder.sext(hi, wide)
    return builder.add(lo, hi)


def pmaddwd(builder, a, b, n, avx2):
    """<n/2 x i32>: a[2k] * b[2k] + a[2k + 1] * b[2k + 1] for <n x i16> a, b (exact); with
    ``avx2``, vpmaddwd on 16-lane pieces."""
    if avx2:
        i16x16 = ir.VectorType(ir.IntType(16), 16)
        fn = _declare(builder.module, ir.FunctionType(ir.VectorType(I32, 8), [i16x16, i16x16]),
                      "llvm.x86.avx2.pmadd.wd")
        parts = []
        for k in range(0, n, 16):
            lanes = _lanes(range(k, k + 16))
            parts.append(builder.call(fn, [builder.shuffle_vector(a, a, lanes),
                                           builder.shuffle_vector(b, b, lanes)]))
        while len(parts) > 1:   # concatenate back to <n/2 x i32>
            lanes = _lanes(range(2 * parts[0].type.count))
            parts = [builder.shuffle_vector(parts[i], parts[i + 1], lanes)
                     for i in range(0, len(parts), 2)]
        return parts[0]
    wide = ir.VectorType(I32, n)
    return pair_sums(builder, builder.mul(builder.sext(a, wide), builder.sext(b, wide)), n,
                     False)


def lane_mask(builder, n, lanes):
    """<lanes x i1>: lane j < n (n: int64), built as an integer bit mask (kmov)."""
    i64 = ir.IntType(64)
    full = builder.icmp_signed(">=", n, ir.Constant(i64, lanes))
    safe = builder.select(full, ir.Constant(i64, 0), n)
    safe = builder.select(builder.icmp_signed("<", safe, ir.Constant(i64, 0)),
                          ir.Constant(i64, 0), safe)
    bits = builder.sub(builder.shl(ir.Constant(i64, 1), safe), ir.Constant(i64, 1))
    bits = builder.select(full, ir.Constant(i64, -1), bits)
    return builder.bitcast(builder.trunc(bits, ir.IntType(lanes)),
                           ir.VectorType(ir.IntType(1), lanes))


def masked_store(builder, value, ptr, mask, name):
    """Store the lanes of ``value`` whose ``mask`` lane is set to ``ptr`` (``name``: the
    vector type's suffix of llvm.masked.store, e.g. v16i8)."""
    vptr = builder.bitcast(ptr, value.type.as_pointer())
    fn = _declare(builder.module,
                  ir.FunctionType(ir.VoidType(), [value.type, vptr.type, I32, mask.type]),
                  f"llvm.masked.store.{name}.p0")
    builder.call(fn, [value, vptr, ir.Constant(I32, 1), mask])


def store_pieces(builder, v, ptrs, mask=None):
    """The 64 bytes of ``v`` in ``len(ptrs)`` equal pieces, piece k to ``ptrs[k]``; with
    ``mask`` (<piece size x i1>) only its set lanes of each piece."""
    size = 64 // len(ptrs)
    piece = ir.VectorType(I8, size)
    v = builder.bitcast(v, _B64)
    for k, ptr in enumerate(ptrs):
        part = builder.shuffle_vector(v, ir.Constant(_B64, None),
                                      _lanes(range(k * size, (k + 1) * size)))
        if mask is None:
            builder.store(part, builder.bitcast(ptr, piece.as_pointer()), align=1)
        else:
            masked_store(builder, part, ptr, mask, f"v{size}i8")


def prefetch(builder, ptr):
    """A hint: the cache line at ``ptr`` fetched for reading (llvm.prefetch, data cache,
    high locality)."""
    i8p = I8.as_pointer()
    call(builder, "llvm.prefetch.p0", ir.VoidType(),
         [builder.bitcast(ptr, i8p), ir.Constant(I32, 0), ir.Constant(I32, 3),
          ir.Constant(I32, 1)])


def load_t4(builder, ptr):
    """The 64 bytes at ``ptr`` as 4 rows of 16, transposed: byte 4j + k of the result is byte
    16k + j (one ``vpermb`` with AVX-512 VBMI; a longer shuffle sequence without it)."""
    raw = builder.load(builder.bitcast(ptr, _B64.as_pointer()), align=1)
    order = _lanes([16 * (n % 4) + n // 4 for n in range(64)])
    return builder.bitcast(builder.shuffle_vector(raw, ir.Constant(_B64, None), order), VI)


def copy_bytes(builder, sptr, dptr, flip, mask=None):
    """The bytes at ``sptr`` XOR the byte ``flip`` to ``dptr``: 16 of them as one plain load
    and store, or, with ``mask`` (an i1 x 64 lane mask), those of the 64 it selects (masked
    load and store: nothing else read or written)."""
    vbytes = ir.VectorType(I8, 16 if mask is None else 64)
    sptr = builder.bitcast(sptr, vbytes.as_pointer())
    if mask is None:
        value = builder.load(sptr, align=1)
    else:
        load = _declare(builder.module, ir.FunctionType(vbytes, [sptr.type, I32, mask.type,
                                                                 vbytes]),
                        "llvm.masked.load.v64i8.p0")
        value = builder.call(load, [sptr, ir.Constant(I32, 1), mask, ir.Constant(vbytes, None)])
    value = builder.xor(value, splat(builder, vbytes, flip))
    if mask is None:
        builder.store(value, builder.bitcast(dptr, vbytes.as_pointer()), align=1)
    else:
        masked_store(builder, value, dptr, mask, "v64i8")


def fclamp(builder, v, low, high):
    """std::min(std::max(v, low), high) on float lanes (vectors of equal lanes)."""
    x = builder.select(builder.fcmp_ordered("<", v, low), low, v)
    return builder.select(builder.fcmp_ordered("<", high, x), high, x)


def call(builder, name, ret, args):
    """A call of the LLVM intrinsic ``name`` returning ``ret`` (declared once per module)."""
    fnty = ir.FunctionType(ret, [a.type for a in args])
    return builder.call(_declare(builder.module, fnty, name), list(args))


def words(builder, v, signed=True):
    """The 64 bytes of ``v`` as 64 int16 lanes, sign- or zero-extended."""
    return (builder.sext if signed else builder.zext)(builder.bitcast(v, _B64),
                                                      ir.VectorType(ir.IntType(16), 64))


def sum_bytes(builder, ptr, flip, count):
    """The sum of the first ``count`` (an int64, 0..64) of the 64 bytes at ``ptr``, each XOR
    the byte ``flip``, unsigned (an int64); all 64 are read."""
    v = builder.xor(builder.load(builder.bitcast(ptr, _B64.as_pointer()), align=1),
                    splat(builder, _B64, flip))
    kept = builder.icmp_unsigned("<", ir.Constant(_B64, list(range(64))),
                                 splat(builder, _B64, builder.trunc(count, I8)))
    v = builder.select(kept, v, _const(0, _B64))
    wide = builder.zext(v, ir.VectorType(I32, 64))
    return builder.zext(call(builder, "llvm.vector.reduce.add.v64i32", I32, [wide]),
                        ir.IntType(64))


# -- the thread team's synchronisation (nnsim.kernels.team) ---------------------------------

def atomic_load(builder, ptr):
    """The int64 at ``ptr``, read with acquire ordering: nothing after it is read before it."""
    return builder.load_atomic(ptr, "acquire", 8)


def atomic_store(builder, value, ptr):
    """Store ``value`` at ``ptr`` with release ordering: everything before it is visible to a
    thread whose acquire read sees it."""
    builder.store_atomic(value, ptr, "release", 8)


def compare_exchange(builder, ptr, old, new):
    """``*ptr = new`` if ``*ptr == old`` (atomically, acquire and release); whether it did."""
    return builder.extract_value(builder.cmpxchg(ptr, old, new, "acq_rel", "acquire"), 1)


def fetch_add(builder, ptr, value):
    """``*ptr += value`` atomically (acquire and release); the value before."""
    return builder.atomic_rmw("add", ptr, value, "acq_rel")


def spin_pause(builder):
    """The x86 ``pause`` of a spin-wait loop (frees the core's resources for a sibling and
    slows the loop's reads of a line another core will write)."""
    fnty = ir.FunctionType(ir.VoidType(), [])
    builder.call(_declare(builder.module, fnty, "llvm.x86.sse2.pause"), [])


def call_address(builder, address, a, b):
    """Call the C function ``void f(int64, int64)`` at the int64 ``address`` with ``a``, ``b``."""
    fnty = ir.FunctionType(ir.VoidType(), [ir.IntType(64), ir.IntType(64)])
    builder.call(builder.inttoptr(address, fnty.as_pointer()), [a, b])


def monotonic_ns(builder, timespec):
    """``CLOCK_MONOTONIC`` in nanoseconds (Linux's ``clock_gettime``, the clock of Python's
    ``time.perf_counter_ns``); ``timespec``: a stack slot of two int64 (``struct timespec``)."""
    i64 = ir.IntType(64)
    fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32), ir.IntType(8).as_pointer()])
    builder.call(_declare(builder.module, fnty, "clock_gettime"),
                 [ir.Constant(ir.IntType(32), 1), builder.bitcast(timespec, fnty.args[1])])
    zero = ir.Constant(ir.IntType(32), 0)
    sec, nsec = (builder.load(builder.gep(timespec, [zero, ir.Constant(ir.IntType(32), k)]))
                 for k in (0, 1))
    return builder.add(builder.mul(sec, ir.Constant(i64, 1_000_000_000)), nsec)
