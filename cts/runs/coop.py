"""Execution of one cooperative-matrix case: data -> buffers -> backend ->
verdict (spec-digest 4; buffer contract in ``cts.families.coop``).

Acceptance rules (reference/tolerance.py names):
* I  integers exact: wrap, or clamp with SaturatingAccumulation (4.2).
* E  loads, stores, splats, element access, element-wise ops and MulAdd on
     exactly representable data: bit for bit (+0 == -0).
* F  float MulAdd / chain / gemm on random and special data: the gamma bound
     of reference.tolerance with n = (number of MulAdd steps) x (K + 1) terms
     (each step rounds into the Result type).
* C  conversions to a float type and element-wise add/sub/mul/scale on
     random data: the exact value or one of its two neighbours (no rounding
     mode is fixed; the Vulkan CTS accepts either direction too).
* D  float division on random data: within 3 ulp (Vulkan: 2.5 ulp).
The element-to-invocation mapping is implementation-defined (4.1) and never
checked: the ``length`` case records it and checks only that every element
is held by some invocation and that the length is the same everywhere.
"""

from __future__ import annotations

import weakref
from dataclasses import replace

import ml_dtypes
import numpy as np

from cts.errors import Unsupported
from cts.families.coop import (
    CHAIN,
    GEMM_TILES,
    MAP_FILL,
    SCALE,
    SPLAT_CONST,
    CoopCase,
    CoopEntry,
    MatType,
    case_stride,
    owner_from_mapping,
    region_len,
    storage_dtype,
)
from cts.judge import CaseResult, MmaRules, Rule, Verdict, compare, judge_mma_float, sentinel
from cts.runs.coop_judge import (
    OWNER,
    exact_out,
    fill_out,
    judge_out,
    nowhere,
    range_verdict,
    sentinel_cells,
    store_cells,
)
from cts.runs.coop_khr import muladd_variant, special_convert_inputs
from cts.runs.coop_khr import stride_buf as _stride_buf
from reference import coop as rc
from reference.data import case_rng, choose, mma_operands
from reference.dtypes import ElemType, etype
from reference.tolerance import PROFILES, Profile, float_close

__all__ = [
    "run_coop",
    "coop_muladd",
    "device_muladd",
    "device_owner",
    "is_coop_device",
    "SUBGROUPS_PER_CASE",
    "decode_mapping",
    "owner_from_mapping",
]

SUBGROUPS_PER_CASE = 32


def _result_type(case: CoopCase) -> MatType | None:
    if case.entry is not None:
        e = case.entry
        return MatType("C", e.M, e.N, e.R, e.scope)
    if case.op in ("store", "length"):
        return None  # store is judged over memory offsets, length over coverage
    m = case.mat
    return MatType(m.use, m.rows, m.cols, case.to or m.t, m.scope)


def _kind(t: ElemType) -> str:
    return "float" if t.is_float else t.kind


_FLOAT_NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}


def _bits(v: np.ndarray, t: ElemType) -> np.ndarray:
    """t.encode(v) in the storage dtype (floats cast straight to the storage
    width, integers wrapped by the narrowing cast: the same bits)."""
    v = np.asarray(v)
    store = storage_dtype(t.name)
    if t.name in _FLOAT_NP:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(v, dtype=np.float64).astype(_FLOAT_NP[t.name]).view(store)
    if not t.is_float and v.dtype.kind in "ui" and t.bits == np.dtype(store).itemsize * 8:
        return v.astype(store)
    return t.encode(v).astype(store)


def _random_finite_bits(rng, t: ElemType, shape) -> np.ndarray:
    b = rng.integers(0, 1 << t.bits, size=shape, dtype=np.uint64)
    if t.is_float:  # exponent all ones -> clear its top bit (finite values only)
        e_mask = ((1 << t.exp_bits) - 1) << t.man_bits
        top = 1 << (t.man_bits + t.exp_bits - 1)
        b = np.where((b & np.uint64(e_mask)) == np.uint64(e_mask), b & ~np.uint64(top), b)
    return b.astype(storage_dtype(t.name))


def _small(rng, t: ElemType, shape, amax=8) -> np.ndarray:
    """Exactly representable small values: half-integers for floats."""
    if t.is_float:
        return rng.integers(-2 * amax, 2 * amax + 1, size=shape) * 0.5
    lo = max(t.min, -100)
    return rng.integers(lo, min(t.max, 100) + 1, size=shape, dtype=np.int64)


def _away_from_zero(v: np.ndarray, t: ElemType, floor: float = 0.125) -> np.ndarray:
    """Values of magnitude below ``floor`` moved out by ``floor`` (sign kept)."""
    return t.round(np.where(np.abs(v) < floor, v + np.copysign(floor, v), v))


def _random(rng, t: ElemType, shape) -> np.ndarray:
    if t.is_float:
        mag = rng.uniform(-4, 4, size=shape) * np.exp2(rng.uniform(-3, 3, size=shape))
        return t.round(mag)
    return rng.integers(t.min, t.max + 1, size=shape, dtype=np.int64) if t.bits < 64 else None


def _run(backend, case, bufs) -> dict:
    """Launch on copies: ``bufs`` keep the sentinel fills the verdict compares with."""
    return backend.run(case, bufs={k: np.array(v, copy=True) for k, v in bufs.items()})


# ---------------------------------------------------------------- per op
def decode_mapping(mp: np.ndarray, length: int) -> np.ndarray:
    """(sg, 2*RC) uint32 lo/hi pairs -> (sg, length) row-major element index."""
    lo = mp[:, 0 : 2 * length : 2].astype(np.int64)
    hi = mp[:, 1 : 2 * length : 2].astype(np.int64)
    return lo + 128 * hi


def _length(case: CoopCase, backend, rng, S) -> CaseResult:
    m, t = case.mat, etype(case.mat.t)
    n = m.rows * m.cols
    idx = np.broadcast_to(np.arange(n), (S, n))
    bufs = {
        "lo": _bits(idx & 127, t),
        "hi": _bits(idx >> 7, t),
        "len": sentinel.fill(etype("u32"), (S, case.sg), np.uint32),  # no length in [1, n] is the fill
        "map": np.full((S, case.sg, 2 * n), MAP_FILL, np.uint32),
    }
    got = _run(backend, case, bufs)
    lens = got["len"].astype(np.int64)
    notes = []
    length = int(lens[0, 0])
    counts = np.zeros((S, n), np.int64)
    bad_len = not (lens == length).all() or not (1 <= length <= n)
    if bad_len:
        notes.append(f"length not one value in [1, {n}]: {sorted(set(lens.ravel().tolist()))[:8]}")
    else:
        mapping = decode_mapping(got["map"].reshape(S * case.sg, -1), length).reshape(S, case.sg, length)
        valid = (mapping >= 0) & (mapping < n)
        if not valid.all():
            notes.append(f"{int((~valid).sum())} extracted elements are not matrix elements")
        held_at = (np.arange(S)[:, None, None] * n + mapping)[valid]  # (subgroup, element) per slot
        counts = np.bincount(held_at, minlength=S * n).reshape(S, n)
        m0 = mapping[0]
        notes.append(
            f"length {length} x {case.sg} invocations = {length * case.sg} slots for {n} elements; "
            + "mapping (subgroup 0): "
            + "; ".join(
                f"inv {i}: " + " ".join(f"({e // m.cols},{e % m.cols})" for e in m0[i][: min(length, 8)])
                for i in range(min(case.sg, 4))
            )
        )
        if not (mapping == m0).all():
            notes.append("the mapping differs between subgroups")
    held = np.minimum(counts, 1).reshape(S, m.rows, m.cols)
    u32 = etype("u32")
    ok = held == 1
    if bad_len:
        ok[:] = False
    unset = (lens == int(bufs["len"][0, 0])).all()  # no invocation stored its length
    never = np.full(held.shape, bool(unset))
    v = compare(
        np.ones_like(held, dtype=np.uint64),
        held.astype(np.uint64),
        u32,
        ok,
        Rule.I,
        nowhere,
        unwritten=never,
    )
    v.notes += notes
    inputs = {"len": lens, "map": got["map"]}
    return CaseResult(v, inputs, np.ones_like(held), held)


def _matrix_op(case: CoopCase, backend, rng, S, profile) -> CaseResult:
    """access, splat, load, store, element-wise ops and conversions."""
    m, t = case.mat, etype(case.mat.t)
    R, C = m.rows, m.cols
    shape = (S, R, C)
    flat = (S, R * C)
    kind = _kind(t)
    op = case.op
    bufs: dict = {}
    if op == "access":
        x = _small(rng, t, shape, 4)
        exp = _bits(
            rc.elementwise("add", rc.elementwise("scale", x, None, t, 2), np.ones(shape, np.int64), t), t
        )
        bufs = {"x": _bits(x, t).reshape(flat), "out": fill_out(t, flat, exp)}
        got = _run(backend, case, bufs)
        return _wrap(judge_out(exp, got["out"], bufs["out"], t, shape), bufs, exp, got["out"])
    if op == "splat":
        v = _random_finite_bits(rng, t, (S, 1))
        if case.mode in ("const", "null"):  # OpConstantNull: every element 0
            c = SPLAT_CONST[kind] if case.mode == "const" else 0
            exp = np.broadcast_to(_bits(np.asarray(c), t), shape)
        else:
            exp = np.broadcast_to(v[:, :, None], shape)
        bufs = {"v": v, "out": fill_out(t, flat, exp)}
        got = _run(backend, case, bufs)
        return _wrap(judge_out(exp, got["out"], bufs["out"], t, shape), bufs, exp, got["out"])
    if op == "load":
        stride = case_stride(case)
        L = region_len(rc.image_len(R, C, case.layout, stride), t.name)
        src = _random_finite_bits(rng, t, (S, L))
        exp = rc.from_image(src, R, C, case.layout, stride)
        bufs = {"src": src, "out": fill_out(t, flat, exp)} | _stride_buf(case, S, stride)
        got = _run(backend, case, bufs)
        return _wrap(judge_out(exp, got["out"], bufs["out"], t, shape), bufs, exp, got["out"])
    if op == "store":
        stride = case_stride(case)
        L = region_len(rc.image_len(R, C, case.layout, stride), t.name)
        x = _random_finite_bits(rng, t, shape)
        dst = _random_finite_bits(rng, t, (S, L))
        exp = rc.to_image(x, case.layout, stride, dst)
        # the cells the store writes start as the sentinel; the padding keeps its random canaries
        cells = store_cells(case, x, dst, stride)
        dst = sentinel_cells(dst, exp, cells, t)
        bufs = {"x": x.reshape(flat), "dst": dst} | _stride_buf(case, S, stride)
        got = _run(backend, case, bufs)
        never = (cells & sentinel.unwritten(got["dst"], dst, t))[:, None, :]
        # judged over the whole region (padding must be untouched): rows = 1
        v = exact_out(exp[:, None, :], got["dst"][:, None, :], t, never)
        v.notes.append("store: columns of the verdict are offsets in the destination region")
        return _wrap(v, bufs, exp, got["dst"])
    if op == "convert":
        d = etype(case.to)
        x = (special_convert_inputs if case.tier == "special" else _convert_inputs)(rng, t, d, shape)
        lo, hi = rc.convert_accept(x, t, d)
        bufs = {"x": _bits(x, t).reshape(flat), "out": fill_out(d, flat, _bits(lo, d))}
        got = _run(backend, case, bufs)
        act = got["out"].reshape(shape)
        never = sentinel.unwritten(act, bufs["out"].reshape(shape), d)
        if d.is_float:
            v = range_verdict(lo, hi, act, d, Rule.C, zero_sign=case.tier == "special", unwritten=never)
        else:
            v = exact_out(_bits(lo, d), act, d, never)
        return _wrap(v, bufs, _bits(lo, d), act)
    return _elementwise(case, backend, rng, S, t, shape, flat, kind)


def _convert_inputs(rng, t: ElemType, d: ElemType, shape) -> np.ndarray:
    """Values whose conversion is defined: in the destination's range (float
    -> int truncates; negative -> unsigned avoided), finite, normal."""
    if t.is_float:
        if d.is_float:
            mag = np.exp2(rng.uniform(-6, 6, size=shape))
            return t.round(mag * choose(rng, [-1.0, 1.0], size=shape))
        hi = min(d.max, t.max_finite / 2, 1e6)
        lo = 0 if d.kind == "uint" else max(d.min, -hi)
        return t.round(rng.uniform(lo, hi, size=shape) * choose(rng, [1.0, 2.0**-8], size=shape))
    if d.is_float:
        lim = min(t.max, d.max_finite / 2)
        return rng.integers(max(t.min, -lim), lim + 1, size=shape, dtype=np.int64)
    return rng.integers(t.min, t.max + 1, size=shape, dtype=np.int64)


def _elementwise(case, backend, rng, S, t, shape, flat, kind) -> CaseResult:
    op = case.op
    exact = case.tier == "exact"
    if t.is_float and exact:
        x = _small(rng, t, shape, 4 if op in ("mul", "div") else 8)
        y = _small(rng, t, shape, 8)
        if op == "mul":
            y = np.trunc(y / 2)  # integers: the product keeps <= 6 significant bits
        if op == "div":
            y = choose(rng, [-4.0, -2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 4.0], size=shape)
            x = x * y  # exact quotient
    elif t.is_float:
        # |x|, |y| >= 1/8: no result is subnormal (products >= 2^-6, quotients >= 2^-6, and sums
        # or differences are multiples of an ulp >= 2^-13 for fp16, so exact zero or normal):
        # Vulkan lets a device flush subnormal results unless DenormPreserve is declared
        x, y = (_away_from_zero(_random(rng, t, shape), t) for _ in range(2))
        if op == "div":  # |y| >= 1/4: the quotient stays far from overflow
            y = t.round(choose(rng, [-1.0, 1.0], size=shape) * np.exp2(rng.uniform(-2, 3, size=shape)))
    else:
        x = _small(rng, t, shape) if exact else _random(rng, t, shape)
        y = _small(rng, t, shape) if exact else _random(rng, t, shape)
        if op == "div":
            y = np.where(y == 0, 1, y)
            if t.kind == "int":
                y = np.where((x == t.min) & (y == -1), 1, y)  # overflow is undefined
    y_in = y if op not in ("neg", "scale") else np.zeros(shape)
    val = rc.elementwise(op, x, y, t, SCALE[kind])
    bufs = {
        "x": _bits(x, t).reshape(flat),
        "y": _bits(y_in, t).reshape(flat),
        "out": fill_out(t, flat, _bits(val, t)),
    }
    got = _run(backend, case, bufs)
    act = got["out"].reshape(shape)
    never = sentinel.unwritten(act, bufs["out"].reshape(shape), t)
    if not t.is_float or exact:
        exp = _bits(val, t)
        return _wrap(exact_out(exp, act, t, never), bufs, exp, act)
    if op == "div":  # within 3 ulp of the exact quotient
        b = 3 * t.ulp(val)
        av = t.decode(act)
        ok = float_close(val, av, b)
        err = np.abs(av - val)
        v = compare(
            _bits(val, t), act.astype(np.uint64), t, ok, Rule.D, nowhere, error=err, bound=b, unwritten=never
        )
        return _wrap(v, bufs, _bits(val, t), act)
    lo, hi = rc.convert_accept(val, etype("f64"), t)
    return _wrap(range_verdict(lo, hi, act, t, Rule.C, unwritten=never), bufs, _bits(val, t), act)


def _wrap(v: Verdict, bufs, exp, act) -> CaseResult:
    return CaseResult(v, dict(bufs), np.asarray(exp), np.asarray(act))


# ---------------------------------------------------------------- MulAdd
def _planted_int(rng, e: CoopEntry, M, K, N, S):
    """Tiers ``wrap`` / ``sat``: products of one sign per row half and C at
    the edge of the Result range, so C + sum(A*B) leaves the range (the
    A x B intermediate itself stays in range: its overflow is undefined
    with SaturatingAccumulation, spec-digest 4.2 item 2)."""
    at, bt, ct, rt = etype(e.A), etype(e.B), etype(e.C), etype(e.R)
    A = rng.integers(0, at.max + 1, size=(S, M, K), dtype=np.int64)
    B = rng.integers(0, bt.max + 1, size=(S, K, N), dtype=np.int64)
    neg = np.zeros((M, N), bool)  # elements whose products are made negative
    if rt.kind == "int" and at.kind == "int":
        A[:, M // 2 :, :] *= -1
        neg[M // 2 :, :] = True
    elif rt.kind == "int" and bt.kind == "int":
        B[:, :, N // 2 :] *= -1
        neg[:, N // 2 :] = True
    small = rng.integers(0, 1000, size=(S, M, N), dtype=np.int64)
    C = np.where(neg, max(rt.min, ct.min) + small, min(rt.max, ct.max) - small)
    return A, B, C


# SPV_KHR_cooperative_matrix: the internal precision is "defined by the client API" and Vulkan
# fixes none (spec-digest 4.2 item 4)
COOP_RULES = MmaRules(full_precision=False)


def _operands(case: CoopCase, rng, M, K, N, S):
    e = case.entry
    if case.tier in ("wrap", "sat"):
        return _planted_int(rng, e, M, K, N, S)
    A, B, C = mma_operands(case.tier, e.A, e.B, e.C, M, K, N, S, rng, acc_type=e.R)
    if e.is_int:  # values as the component types hold them (e.g. -1 in a u32 C is 2^32-1)
        A, B, C = (etype(t).decode(etype(t).encode(x)) for t, x in ((e.A, A), (e.B, B), (e.C, C)))
    return A, B, C


def _int_expected(case, A, B, C, steps: int) -> np.ndarray:
    """Result bits of an integer MulAdd chain of ``steps`` (wrap or saturate per step)."""
    e = case.entry
    K = A.shape[2] // steps
    As = np.stack([A[:, :, i * K : (i + 1) * K] for i in range(steps)], axis=1)
    Bs = np.stack([B[:, i * K : (i + 1) * K, :] for i in range(steps)], axis=1)
    return etype(e.R).encode(rc.chain_int(As, Bs, C, e.R, e.sat))


def d_fill(case, A, B, C, steps: int, shape) -> np.ndarray:
    """The sentinel-filled Result buffer of a MulAdd case (integers: unlike the expected value)."""
    e = case.entry
    exp = _int_expected(case, A, B, C, steps) if e.is_int else None
    return fill_out(etype(e.R), shape, exp)


def _judge_muladd(case, A, B, C, act, steps: int, profile, filled=None) -> Verdict:
    """A (S,M,Ktot), B (S,Ktot,N) where Ktot = steps*K; one rounding into the
    Result per step (spec-digest 4.2).  ``filled``: the Result buffer as
    filled before the launch (elements still holding it are never written)."""
    e = case.entry
    rt = etype(e.R)
    never = None if filled is None else sentinel.unwritten(act, np.asarray(filled).reshape(act.shape), rt)
    if e.is_int:
        return exact_out(_int_expected(case, A, B, C, steps), act, rt, never)
    n_terms = steps * (A.shape[2] // steps + 1)
    if steps > 1:
        # between chained MulAdds the value *is* a Result-typed matrix (spec-digest
        # 4.1): whatever wider format a profile assumes inside one MulAdd, every
        # step rounds into the Result type, so the bound uses its precision.
        profile = replace(profile, acc_format={})
    v, _, _ = judge_mma_float(
        A,
        B,
        C,
        act,
        rt,
        tier=case.tier,
        profile=profile,
        rules=COOP_RULES,
        terms=n_terms - 1,
        types=(e.A, e.B, e.C),
        where=nowhere,
        unwritten=never,
    )
    return v


def _muladd(case: CoopCase, backend, rng, S, profile) -> CaseResult:
    e = case.entry
    M, N, K = e.M, e.N, e.K
    at, bt, ct = etype(e.A), etype(e.B), etype(e.C)
    if case.op == "gemm":
        tm, tn, tk = GEMM_TILES
        P = max(2, S // (tm * tn))
        A, B, C = _operands(case, rng, tm * M, tk * K, tn * N, P)
        bufs = {
            "a": _bits(A, at).reshape(P, -1),
            "b": _bits(B, bt).reshape(P, -1),
            "c": _bits(C, ct).reshape(P, -1),
        }
        steps = tk
    elif case.op == "chain":
        A, B, C = _operands(case, rng, M, CHAIN * K, N, S)
        As = np.stack([A[:, :, i * K : (i + 1) * K] for i in range(CHAIN)], axis=1)  # (S, L, M, K)
        Bs = np.stack([B[:, i * K : (i + 1) * K, :] for i in range(CHAIN)], axis=1)
        bufs = {
            "a": _bits(As, at).reshape(S, -1),
            "b": _bits(Bs, bt).reshape(S, -1),
            "c": _bits(C, ct).reshape(S, -1),
        }
        steps = CHAIN
    else:
        A, B, C = _operands(case, rng, M, K, N, S)
        a_img = A if case.layout == "row" else A.transpose(0, 2, 1)
        b_img = B if case.layout == "row" else B.transpose(0, 2, 1)
        bufs = {
            "a": _bits(a_img, at).reshape(S, -1),
            "b": _bits(b_img, bt).reshape(S, -1),
            "c": _bits(C, ct).reshape(S, -1),
        }
        steps = 1
    bufs["d"] = d_fill(case, A, B, C, steps, (C.shape[0], C.shape[1] * C.shape[2]))
    got = _run(backend, case, bufs)
    act = got["d"].reshape(C.shape).astype(np.uint64)
    v = _judge_muladd(case, A, B, C, act, steps, profile, bufs["d"])
    inputs = {"A": A, "B": B, "C": C, **bufs}
    return CaseResult(v, inputs, np.zeros(0), act)


# ---------------------------------------------------------------- entry
def run_coop(
    case: CoopCase,
    backend,
    seed: int,
    profile: Profile = PROFILES["default"],
    subgroups: int = SUBGROUPS_PER_CASE,
) -> CaseResult:
    """Run one cooperative-matrix case on ``backend`` and judge it."""
    rng = case_rng(seed, f"{case.family}[{case.id}]")
    rt = _result_type(case)
    owner = None
    if rt is not None:
        try:
            owner = device_owner(backend, rt, case.sg)
        except Exception:  # noqa: BLE001 - diagnostics only; the verdict does not depend on it
            owner = None
    token = OWNER.set(owner)
    try:
        return _run_op(case, backend, rng, subgroups, profile)
    finally:
        OWNER.reset(token)


def _run_op(case, backend, rng, subgroups, profile) -> CaseResult:
    if case.op == "length":
        return _length(case, backend, rng, subgroups)
    if case.op == "muladd" and case.var:
        return muladd_variant(case, backend, rng, subgroups, profile)
    if case.op in ("muladd", "chain", "gemm"):
        return _muladd(case, backend, rng, subgroups, profile)
    return _matrix_op(case, backend, rng, subgroups, profile)


def coop_muladd(backend, entry: CoopEntry, A: np.ndarray, B: np.ndarray, C: np.ndarray, sg: int = 32):
    """D = MulAdd(A, B, C) for one or many tiles on any backend that has
    ``run_coop_matrix`` (the public entry point for experiments).

    A (T, M, K) / (M, K), B (T, K, N), C (T, M, N) are *values*; they are
    encoded to the entry's component types (floats rounded to nearest even,
    integers wrapped) and D comes back as values of the Result type (float64
    or int64), same leading shape as A.
    """
    one = np.ndim(A) == 2
    A, B, C = (np.asarray(x)[None] if one else np.asarray(x) for x in (A, B, C))
    T = A.shape[0]
    if (
        A.shape[1:] != (entry.M, entry.K)
        or B.shape[1:] != (entry.K, entry.N)
        or C.shape[1:] != (entry.M, entry.N)
    ):
        raise ValueError(f"operand shapes {A.shape} {B.shape} {C.shape} do not match {entry.tag}")
    at, bt, ct, rt = etype(entry.A), etype(entry.B), etype(entry.C), etype(entry.R)
    case = CoopCase("muladd", "vk", entry=entry, tier="random", sg=sg)
    bufs = {
        "a": _bits(A, at).reshape(T, -1),
        "b": _bits(B, bt).reshape(T, -1),
        "c": _bits(C, ct).reshape(T, -1),
        "d": np.zeros((T, entry.M * entry.N), storage_dtype(entry.R)),
    }
    d = rt.decode(backend.run(case, bufs=bufs)["d"].reshape(T, entry.M, entry.N))
    return d[0] if one else d


_OWNERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def device_owner(backend, mat: MatType, sg: int) -> np.ndarray | None:
    """(rows, cols, 2) (invocation, index) of each element of ``mat`` on
    ``backend``, for diagnostics only: the emulator's own mapping
    (``coop_owner``), or, on a device whose length case records it
    (``records_coop_owner``), that record (run once per matrix type and
    cached); None elsewhere."""
    if hasattr(backend, "coop_owner"):
        return backend.coop_owner(mat, sg)
    if not getattr(backend, "records_coop_owner", False):
        return None
    cache = _OWNERS.setdefault(backend, {})
    if (mat, sg) not in cache:
        case = CoopCase("length", "vk", mat=mat, sg=sg)
        cache[(mat, sg)] = None
        if backend.unsupported(case) is None:
            res = run_coop(case, backend, seed=1, subgroups=1)
            length = int(res.inputs["len"][0, 0])
            idx = decode_mapping(np.asarray(res.inputs["map"]).reshape(sg, -1), length)
            cache[(mat, sg)] = owner_from_mapping(idx, mat.rows, mat.cols)
    return cache[(mat, sg)]


def is_coop_device(backend) -> bool:
    """A backend that reports its cooperative-matrix entries and runs them
    (Vulkan; OpenCL with cl_khr_cooperative_matrix)."""
    return hasattr(backend, "coop_entries") and hasattr(backend, "run_coop_matrix")


def device_muladd(backend, entry: CoopEntry, A, B, C) -> np.ndarray:
    """D = MulAdd(A, B, C) on a cooperative-matrix device for one tile (A
    (M,K)) or many (A (T,M,K); more than the backend's ``max_groups`` per
    dispatch are split).  Inputs are values, encoded to the entry's types
    (floats RNE, ints wrapped); D comes back as values of the Result type.
    Raises Unsupported when the device does not report ``entry``."""
    sg = int(getattr(backend, "subgroup_size", 32) or 32)
    case = CoopCase("muladd", "vk", entry=entry, sg=sg)
    reason = backend.unsupported(case)
    if reason:
        raise Unsupported(reason)
    A = np.asarray(A)
    step = getattr(backend, "max_groups", None)
    if A.ndim == 2 or not step or A.shape[0] <= step:
        return coop_muladd(backend, entry, A, B, C, sg=sg)
    parts = [
        coop_muladd(backend, entry, A[i : i + step], B[i : i + step], C[i : i + step], sg=sg)
        for i in range(0, A.shape[0], step)
    ]
    return np.concatenate(parts)
