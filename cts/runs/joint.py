"""Execution of one joint_matrix case: operands -> memory images -> backend
-> memory -> verdict.

A joint matrix is opaque (sycl_ext_oneapi_matrix_no_use, the deprecated API: the element-to-work-item mapping
is implementation-defined), so every check is on memory: the logical result
read back through the reference layout model (``reference.joint``) and, for
every store, the padding between rows, which a store must leave untouched.

Strides: loads use the case's stride ("tight" = the minimum for the layout,
"pad" = the next multiple of 16 above it, which also satisfies CUDA's
multiple-of-8 / multiple-of-4 rule, sycl_ext_oneapi_matrix, Supported Combinations Per Hardware), stores
use the other one, so a device that ignores the stride fails either way.

Backend entry: ``run_joint_matrix(case, **buffers)``; every buffer is
(tiles, size) uint64 of raw element bits (tf32 in its float container),
strides and per-tile checked-op bounds are plain arguments.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from cts.families.joint import JointCase
from cts.judge import CaseResult, MmaRules, Rule, Verdict, compare, judge_mma_float, sentinel
from cts.judge.mma import f64_products_term
from reference import joint as J
from reference.data import case_rng, mma_operands
from reference.draws import random_uint_bits, random_uint_bits_many
from reference.dtypes import ElemType, etype
from reference.mma import mma_int
from reference.tolerance import PROFILES, Profile

__all__ = ["run_joint", "strides_for", "SUBGROUPS_PER_CASE"]

SUBGROUPS_PER_CASE = 32
MAD_WORK = 1 << 18  # multiply-adds per mad case at most (but >= 4 tiles): 32 tiles up to 16x16x16


def _pad(m: int) -> int:
    return (m // 16 + 1) * 16


def strides_for(case: JointCase, R: int, C: int, t: str, layout: str) -> tuple[int, int]:
    """(load stride, store stride) for a matrix R x C of type t in layout."""
    m = J.min_stride(R, C, layout, case.factor(t))
    return (m, _pad(m)) if case.stride == "tight" else (_pad(m), m)


def _read_only(x: np.ndarray) -> np.ndarray:
    x.flags.writeable = False
    return x


@lru_cache(maxsize=64)
def _finite_bits(t: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(exponent mask, bits of 1.5, keep mask) of the memory type of t, in
    its container's unsigned type: a float is finite unless its exponent
    field is all ones."""
    mt = J.mem_type(t)
    u = np.dtype(f"u{mt.bits // 8}")
    exp = ((1 << mt.exp_bits) - 1) << mt.man_bits if mt.is_float else 0
    keep = 0xFFFFE000 if t == "tf32" else (1 << mt.bits) - 1
    return u.type(exp), u.type(int(mt.encode(np.array(1.5)))), u.type(keep)


def _finite(t: str, draws: np.ndarray) -> np.ndarray:
    """Memory bits (uint64) of type t from uniform draws of its width (the
    narrow draws of :func:`random_uint_bits`, overwritten here; 64-bit:
    uint64): floats whose exponent field is all ones become 1.5; tf32
    keeps its 19 bits."""
    mt = J.mem_type(t)
    if not mt.is_float:
        return draws.astype(np.uint64)
    exp, one_and_half, keep = _finite_bits(t)
    if mt.bits == 16:  # widened first, the few non-finite patterns rewritten in the wide copy
        out = draws.astype(np.uint64, order="C")  # C order: reshape(-1) below is a view
        out.reshape(-1)[np.flatnonzero((draws & exp) == exp)] = one_and_half
        return out
    bits = np.ascontiguousarray(draws)  # the draws are ours to overwrite
    flat = bits.reshape(-1)  # a view: bits is contiguous
    flat[np.flatnonzero((flat & exp) == exp)] = one_and_half
    if t == "tf32":
        bits &= keep
    return bits.astype(np.uint64, copy=False)


def _draws(rng, specs) -> list[np.ndarray]:
    """Uniform draws for the memory types and shapes in ``specs`` ((t,
    shape), ...), in that order: those of ``rng.integers(0, 2**bits,
    size=shape, dtype=np.uint64)`` (64-bit: :func:`random_uint_bits`), narrow
    (the container's unsigned type; 64-bit: uint64), from one bulk draw
    where every type is narrower than 64 bits."""
    widths = [J.mem_type(t).bits for t, _ in specs]
    many = random_uint_bits_many(rng, [(w, shape) for w, (_, shape) in zip(widths, specs)])
    if many is not None:
        return many
    return [random_uint_bits(rng, w, shape, narrow=w < 64) for w, (_, shape) in zip(widths, specs)]


def _random_bits(rng, t: str, shape) -> np.ndarray:
    """Random finite values of type t as memory bits (tf32: tf32-exact)."""
    return _finite(t, _draws(rng, [(t, shape)])[0])


@lru_cache(maxsize=1024)
def _untouched(R: int, C: int, layout: str, f: int, stride: int, size: int) -> np.ndarray:
    """Offsets (within a tile's memory of ``size``) that a store of an R x C
    matrix leaves alone (read-only)."""
    return _read_only(np.flatnonzero(~_gap_mask(R, C, layout, f, stride, size)))


def _image_from(
    t: str, draws: np.ndarray, X_bits: np.ndarray, layout: str, f: int, stride: int
) -> np.ndarray:
    """The memory buffer (S, size) holding X (S, R, C), random canaries
    (:func:`_finite` of ``draws``) in every cell the store leaves alone: the
    canary buffer with X stored over it, without forming the canaries that
    X replaces."""
    S, size = draws.shape
    _, R, C = X_bits.shape
    keep = _untouched(R, C, layout, f, stride, size)
    out = J.store_image(np.empty((S, size), dtype=np.uint64), X_bits, layout, f, stride, in_place=True)
    out[:, keep] = _finite(t, draws[:, keep])
    return out


def _image(rng, t, X_bits, layout, f, stride, extra: int = 8):
    """A memory buffer holding X (S, R, C) with random canaries in the gaps."""
    S, R, C = X_bits.shape
    size = J.image_size(R, C, layout, f, stride) + extra
    return _image_from(t, _draws(rng, [(t, (S, size))])[0], X_bits, layout, f, stride)


@lru_cache(maxsize=1024)
def _logical_map(R: int, C: int, layout: str, f: int, stride: int, size: int) -> np.ndarray:
    """(size,): 1 + r * C + c where memory holds logical element (r, c), 0 in
    the padding (read-only)."""
    idx = np.arange(1, R * C + 1, dtype=np.uint64).reshape(1, R, C)
    m = J.store_image(np.zeros((1, size), dtype=np.uint64), idx, layout, f, stride)[0]
    m.flags.writeable = False
    return m


def _all_accepted(elements: int, rule: str) -> Verdict:
    """The verdict ``compare`` gives when every one of ``elements`` checked
    elements is accepted and no error is measured (bit-exact rules), without
    decoding arrays that hold no mismatch to report."""
    return Verdict(passed=True, elements=elements, failures=0, rule=rule)


def _mem_verdict(
    exp: np.ndarray, act: np.ndarray, t: ElemType, stride: int, ok=None, logical=None, unwritten=None
) -> Verdict:
    """Bit comparison of whole memory buffers; mismatches are named by the
    memory matrix (row, col) = (offset // stride, offset % stride), the
    offset, and (``logical`` = (R, C, layout, f) of the stored matrix) the
    logical element stored there or "padding"."""
    S, size = exp.shape
    rows = -(-size // stride)
    if (np.array_equal(exp, act) if ok is None else ok.all()) and (unwritten is None or not unwritten.any()):
        return _all_accepted(S * rows * stride, Rule.B)

    def hint(s, r, c):
        o = r * stride + c
        if logical is None or o >= size:
            return f"memory offset {o}"
        v = int(_logical_map(*logical, stride, size)[o])
        if v == 0:
            return f"memory offset {o}: padding, must be left untouched"
        return f"memory offset {o}: logical element ({(v - 1) // logical[1]}, {(v - 1) % logical[1]})"

    pad = rows * stride - size

    def shape(x, fill):
        return np.concatenate([x, np.full((S, pad), fill, dtype=x.dtype)], axis=1).reshape(S, rows, stride)

    e, a = shape(exp.astype(np.uint64), 0), shape(np.asarray(act).astype(np.uint64), 0)
    okm = (e == a) if ok is None else shape(ok, True)
    never = None if unwritten is None else shape(unwritten, False)
    return compare(e, a, t, okm, Rule.B, lambda s, r, c: (-1, -1), hint=hint, unwritten=never)


@lru_cache(maxsize=1024)
def _gap_mask(R, C, layout, f, stride, size) -> np.ndarray:
    """(size,) True where a store of an R x C matrix writes (read-only)."""
    ones = np.ones((1, R, C), dtype=np.uint64)
    m = J.store_image(np.zeros((1, size), dtype=np.uint64), ones, layout, f, stride)[0] == 1
    m.flags.writeable = False
    return m


# ------------------------------------------------------------------ mad
def _acc_format(c: str, d: str) -> str:
    """The weakest accumulation format a correct device may use: the
    narrower of C and D (sycl_ext_oneapi_matrix leaves the internal precision open)."""
    if not etype(c).is_float:
        return c
    return c if etype(c).precision <= etype(d).precision else d


@lru_cache(maxsize=4096)
def _mad_plan(case: JointCase):
    """((key, type, layout, load stride, image size) of A, B and C, D's
    store stride, D's image size) of a mad case."""
    a, b, c, d = case.types
    la, lb, lc, ld = case.layouts
    M, N, K = case.M, case.N, case.K
    plan = []
    for key, t, lay, (R, Cc) in (("a", a, la, (M, K)), ("b", b, lb, (K, N)), ("c", c, lc, (M, N))):
        s_load, _ = strides_for(case, R, Cc, t, lay)
        plan.append((key, t, lay, s_load, J.image_size(R, Cc, lay, case.factor(t), s_load) + 8))
    _, sd = strides_for(case, M, N, d, ld)
    return tuple(plan), sd, J.image_size(M, N, ld, 1, sd) + 8


# SYCL joint_matrix: the internal precision is open (sycl_ext_oneapi_matrix); f64 products are rounded
# once more by the float64 reference itself
JOINT_RULES = MmaRules(full_precision=False)
JOINT_F64_RULES = MmaRules(full_precision=False, extra_bound=f64_products_term)


def _run_mad(case, backend, rng, S, profile) -> CaseResult:
    a, b, c, d = case.types
    la, lb, lc, ld = case.layouts
    M, N, K = case.M, case.N, case.K
    ts = {n: etype(n) for n in (a, b, c, d)}
    acc = _acc_format(c, d)
    A, B, C = mma_operands(case.tier, a, b, c, M, K, N, S, rng, acc_type=acc)
    # each operand rounded to its type (``ElemType.round`` is decode(encode)): the bits once
    (Ab, A), (Bb, B), (Cb, C) = ts[a].encode_decode(A), ts[b].encode_decode(B), ts[c].encode_decode(C)
    plan, sd, size_d = _mad_plan(case)
    # the canaries of the A, B, C images and of D, drawn in that order (as image by image)
    *draws, d_draws = _draws(rng, [(t, (S, size)) for _, t, _, _, size in plan] + [(d, (S, size_d))])
    canary = _finite(d, d_draws)
    # the matrix cells of D start as the sentinel (integers: unlike the expected value); the
    # padding keeps its canaries, which the store must leave alone
    written = _gap_mask(M, N, ld, 1, sd, size_d)
    exp_int = ts[d].encode(mma_int(A, B, C, 32)) if not ts[a].is_float else None
    exp_img = None if exp_int is None else J.store_image(np.zeros_like(canary), exp_int, ld, 1, sd)
    d_fill = sentinel.fill(J.mem_type(d), canary.shape, np.uint64, expected=exp_img)
    canary = np.where(written[None, :], d_fill, canary)
    bufs = {}
    st = {}
    for (key, t, lay, s_load, _), X, dr in zip(plan, (Ab, Bb, Cb), draws):
        st["s" + key] = s_load
        bufs[key] = _image_from(t, dr, X, lay, case.factor(t), s_load)
    st["sd"] = sd
    out = np.asarray(backend.run(case, d=canary.copy(), **bufs, **st), dtype=np.uint64)
    dt = ts[d]
    D_bits = J.load_image(out, M, N, ld, 1, sd) & np.uint64(J.mem_type(d).mask)
    never = D_bits == (J.load_image(canary, M, N, ld, 1, sd) & np.uint64(J.mem_type(d).mask))
    inputs = {"A": A, "B": B, "C": C, **bufs, **st}

    def where(s, r, col):  # the element -> work-item mapping is implementation-defined
        return -1, -1

    def hint(s, r, col):
        return f"D memory offset {r * sd + col if ld == 'row' else col * sd + r} ({ld}, stride {sd})"

    if not ts[a].is_float:
        exp_bits = dt.encode(mma_int(A, B, C, 32))
        ok = exp_bits == D_bits
        v = (
            _all_accepted(ok.size, Rule.I)
            if ok.all()
            else compare(exp_bits, D_bits, dt, ok, Rule.I, where, hint=hint, unwritten=never)
        )
    else:
        rules = JOINT_F64_RULES if a == "f64" else JOINT_RULES
        v, exp_bits, _ = judge_mma_float(
            A,
            B,
            C,
            D_bits,
            dt,
            tier=case.tier,
            profile=profile,
            rules=rules,
            terms=K,
            acc=acc,
            types=(a, b, c),
            where=where,
            hint=hint,
            unwritten=never if never.any() else None,
        )
    keep = _untouched(M, N, ld, 1, sd, size_d)  # the store must leave the padding alone
    if v.passed and not np.array_equal(canary[:, keep], out[:, keep]):  # it did not: name where
        ok = _gap_mask(M, N, ld, 1, sd, size_d) | (canary == out)  # matrix cells or untouched
        g = _mem_verdict(canary, out, J.mem_type(d), sd, ok=ok, logical=(M, N, ld, 1))
        if not g.passed:
            g.notes.append("D store changed memory outside the matrix (padding between rows)")
            v = g
    return CaseResult(v, inputs, exp_bits, D_bits)


# ------------------------------------------------- single-matrix operations
def _fill_values(rng, t: str, S: int) -> np.ndarray:
    """Per-tile fill values: type extremes, zeros, ones, infinities
    (no NaN: payloads are not pinned; no subnormals: flushing is not ruled)."""
    et = etype(t)
    if not et.is_float:
        pool = [et.min, et.max, 0, 1, et.max - 1, et.min + 1]
        pool += list(rng.integers(et.min, et.max + 1, size=4))
    else:
        mx = et.max_finite if t != "tf32" else (2.0 - 2.0**-10) * 2.0**127
        pool = [0.0, -0.0, 1.0, -1.5, mx, -mx, et.tiny, np.inf, -np.inf, 0.333]
    vals = np.array(pool)[np.arange(S) % len(pool)]
    return J.mem_type(t).encode(et.round(vals) if et.is_float else vals)


def _exact_values(rng, t: str, shape, lo: float = -4.0, hi: float = 4.0) -> np.ndarray:
    """Values exact in every type of the family (multiples of 0.5, small)."""
    et = etype(t)
    if not et.is_float:
        return rng.integers(et.min, et.max + 1, size=shape)
    return rng.integers(int(lo * 2), int(hi * 2) + 1, size=shape) * 0.5


def _checked_geometry(rng, case, S, rows, cols, f, layout):
    """Per-tile Height, Width, coordX, coordY: bounds not multiples of the
    tile, tiles inside, on the bottom edge, the right edge and the corner."""
    H = 2 * rows + 3
    W = 2 * cols + (2 * f if layout == "packed" else 5)
    step = f if layout == "packed" else 1
    height = np.full(S, H)
    width = np.full(S, W)
    kind = np.arange(S) % 4
    cx = np.where(
        kind % 2 == 0,
        rng.integers(0, rows + 1, size=S),
        H - rng.integers(1, rows, size=S) if rows > 1 else H - 1,
    )
    right = W - step * rng.integers(1, max(2, cols // step), size=S)
    cy = np.where(kind < 2, step * rng.integers(0, (cols // step) + 1, size=S), right)
    return height, width, cx.astype(np.int64), cy.astype(np.int64)


def _run_single(case, backend, rng, S) -> CaseResult:
    op = case.op
    li, lo = case.layouts
    if op == "copy":
        ts, td = case.types
        us, ud = case.use.split(">")
    else:
        ts = td = case.types[0]
        us = ud = case.use
    R, C = case.dims(us)
    fi, fo = case.factor(ts), case.factor(td)
    et_s = etype(ts)
    mt_d = J.mem_type(td)
    s_in, _ = strides_for(case, R, C, ts, li)
    _, s_out = strides_for(case, R, C, td, lo)
    kw: dict = {}
    if op in ("ldst", "load_checked", "store_checked"):
        X = _random_bits(rng, ts, (S, R, C))
        Xv = None  # moved as bits, never converted
    elif op in ("apply", "apply_plain", "copy"):
        Xv = _exact_values(rng, ts, (S, R, C))
        X = J.mem_type(ts).encode(Xv)
    else:
        X = None

    if op in ("load_checked",):
        rows, cols = J.layout_dims(R, C, li, fi)
        h, w, cx, cy = _checked_geometry(rng, case, S, rows, cols, fi, li)
        s_big = int(w[0]) + (16 if case.stride == "pad" else 0)
        size_big = (int(h[0]) + rows) * s_big
        big = _random_bits(rng, ts, (S, size_big))
        s_in = s_big
        kw.update(src=big, height=h, width=w, cx=cx, cy=cy)
        exp_logical = J.checked_load(big, R, C, li, fi, s_big, h, w, cx, cy)
        s_out = J.min_stride(R, C, lo, fo)
    elif op == "store_checked":
        s_in = J.min_stride(R, C, li, fi)
        kw["src"] = _image(rng, ts, X, li, fi, s_in)
    elif op in ("fill", "fill_checked"):
        kw["value"] = _fill_values(rng, ts, S)
    else:
        kw["src"] = _image(rng, ts, X, li, fi, s_in)

    if op == "store_checked":
        rows, cols = J.layout_dims(R, C, lo, fo)
        h, w, cx, cy = _checked_geometry(rng, case, S, rows, cols, fo, lo)
        s_out = int(w[0]) + (16 if case.stride == "pad" else 0)
        size_out = (int(h[0]) + rows) * s_out
        kw.update(height=h, width=w, cx=cx, cy=cy)
        canary = _random_bits(rng, td, (S, size_out))
        expected = J.checked_store(canary, X, lo, fo, s_out, h, w, cx, cy, in_place=True)
        written = J.checked_store(np.zeros_like(canary), np.ones_like(X), lo, fo, s_out, h, w, cx, cy) == 1
    else:
        if op == "fill_checked":
            h = np.full(S, 2 * R + 3)
            w = np.full(S, 2 * C + 5)
            _, _, cx, cy = _checked_geometry(rng, case, S, R, C, 1, "row")
            kw.update(height=h, width=w, cx=cx, cy=cy)
        size_out = J.image_size(R, C, lo, fo, s_out) + 8
        canary = _random_bits(rng, td, (S, size_out))
        if op == "ldst":
            exp_x = X
        elif op == "load_checked":
            exp_x = exp_logical
        elif op in ("apply", "apply_plain"):
            exp_x = mt_d.encode(J.apply_expected(Xv, et_s, coords=op == "apply"))
        elif op == "copy":
            exp_x = mt_d.encode(Xv)
        elif op == "fill":
            exp_x = np.broadcast_to(kw["value"][:, None, None], (S, R, C))
        else:  # fill_checked
            mask = J.checked_fill_mask(R, C, h, w, cx, cy)
            exp_x = np.where(mask, kw["value"][:, None, None], np.uint64(0))
        expected = J.store_image(canary, np.asarray(exp_x, dtype=np.uint64), lo, fo, s_out, in_place=True)
        written = J.store_image(np.zeros_like(canary), np.ones((S, R, C), np.uint64), lo, fo, s_out) == 1
    # the device's buffer: the random canaries where nothing is stored (the canary became the
    # expected memory there), the sentinel (unlike the stored value) in every cell a store writes
    kw["dst"] = np.where(written, sentinel.fill(mt_d, expected.shape, np.uint64, expected=expected), expected)
    kw.update(s_src=s_in, s_dst=s_out)
    out = np.asarray(backend.run(case, **{**kw, "dst": kw["dst"].copy()}), dtype=np.uint64)
    never = written & (out == kw["dst"])
    ok = None
    if td == "tf32" and op in ("copy", "apply", "apply_plain", "fill"):
        ok = (expected == out) | J.tf32_accepts(expected, out)
    lg = None if op == "store_checked" else (R, C, lo, fo)
    v = _mem_verdict(expected, out, mt_d, s_out, ok, logical=lg, unwritten=never)
    if not v.passed:
        v.notes.append(
            f"memory: {op} {us}{'>' + ud if op == 'copy' else ''} layout {li}->{lo}, "
            f"load stride {s_in}, store stride {s_out}"
        )
    return CaseResult(v, {**kw}, expected, out)


def run_joint(
    case: JointCase,
    backend,
    seed: int,
    profile: Profile = PROFILES["default"],
    subgroups: int = SUBGROUPS_PER_CASE,
) -> CaseResult:
    """Run one joint_matrix case on ``subgroups`` independent tiles."""
    rng = case_rng(seed, f"{case.family}[{case.id}]")
    S = max(2, subgroups)
    if case.op == "mad":  # big tiles carry many elements already: cap the work per case
        S = min(S, max(4, MAD_WORK // (case.M * case.N * case.K)))
        return _run_mad(case, backend, rng, S, profile)
    return _run_single(case, backend, rng, S)
