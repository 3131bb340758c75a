"""Execution of one MLIR case: the case's program (cts.families.mlir_program)
-> backend -> buffers -> verdict against :mod:`reference.mlir`.

The program is built from the case alone; this module draws the data of its
buffers (one row per subgroup: SUBGROUPS subgroups per launch, each with its
own data) and judges what comes back.  The thread-local map is never
assumed: it is read back through ``extract_all`` of a matrix with distinct
elements and checked to be a bijection (MLIR GPU dialect, GPUOps.td op descriptions).
"""

from __future__ import annotations

import numpy as np

from cts.errors import CaseError
from cts.families.mlir_program import SUBGROUPS, Program, case_program
from cts.judge import CaseResult
from cts.judge.env import IEEE, FloatEnv, float_env_of
from cts.runs.mlir_buffers import (
    ETYPE,
    NP,
    fill_buffer,
    launch,
    never_written,
    raw_bits,
    verdict,
    zeros,
)
from reference import mlir as ref
from reference.data import accprec_operands, case_rng, choose
from reference.dtypes import etype

__all__ = ["run_mlir", "NP", "ETYPE", "SUBGROUPS"]


def _distinct(rng, elem: str, shape, lo_mag: int = 0) -> np.ndarray:
    """Distinct exactly representable values per row of the batch."""
    P, n = shape[0], int(np.prod(shape[1:]))
    # small populations: one permutation per row, the rows shuffled one after the
    # other by ``permuted`` exactly as ``permutation`` row by row would
    small = {"si8": (256, -128), "ui8": (256, 0), "f16": (4096, -2048 + lo_mag)}
    if elem in small:
        size, shift = small[elem]
        perms = rng.permuted(np.broadcast_to(np.arange(size), (P, size)), axis=1)
        out = (perms[:, :n] + shift).astype(np.float64)
    else:
        out = np.empty((P, n), dtype=np.float64)
        for p in range(P):
            out[p] = rng.choice(1 << 20, size=n, replace=False) - (1 << 19)
    return out.reshape(shape).astype(NP[elem])


def _small(rng, elem: str, shape) -> np.ndarray:
    """Operands whose products and sums stay exact in every accumulator."""
    if elem == "si8":
        return rng.integers(-128, 128, size=shape).astype(np.int8)
    if elem == "ui8":
        return rng.integers(0, 256, size=shape).astype(np.uint8)
    if elem == "i32":
        return rng.integers(-(2**31), 2**31, size=shape, dtype=np.int64).astype(np.int32)
    return (rng.integers(-8, 9, size=shape) / 2).astype(NP[elem])


# ------------------------------------------------------------------- ops
def _load_store(case, backend, rng):
    M, N = case.tag_shape("COp")
    e = case.elem
    prog = case_program(case)
    (r1, c1, l1), (r2, c2, l2) = prog.facts["src"], prog.facts["dst"]
    src = _distinct(rng, e, (SUBGROUPS, prog.buffers["src"].size))
    dst = fill_buffer(prog, "dst", avoid=src)  # a stored value is a value of src
    got = launch(backend, case, prog, {"src": src, "dst": dst})["dst"]
    logical = ref.load_matrix(src, r1, c1, l1, M, N, case.t1)
    exp = ref.store_matrix(dst, logical, r2, c2, l2, case.t2)
    addr = {}
    off = (r2 * l2 + c2) + (np.arange(N)[None, :] * l2 + np.arange(M)[:, None] if case.t2 else 0)
    if not case.t2:
        off = (r2 * l2 + c2) + np.arange(M)[:, None] * l2 + np.arange(N)[None, :]
    for (r, c), a in np.ndenumerate(off):
        addr[int(a)] = (r, c)

    def hint(s, _r, a):
        rc = addr.get(int(a))
        return f"memref element {a}: " + (f"stored D[{rc[0]},{rc[1]}]" if rc else "outside the stored matrix")

    stored = np.zeros(got.shape[1], dtype=bool)
    stored[np.asarray(off, dtype=np.int64).reshape(-1)] = True
    never = never_written(got, dst) & stored[None, :]
    v = verdict(case, exp[:, None, :], got[:, None, :], e, hint=hint, unwritten=never)
    return CaseResult(v, {"src": src}, exp, got)


def _compute(case, backend, rng):
    M, N, K = case.mnk
    a_e, b_e, c_e = case.elem, case.b, case.c
    prog = case_program(case)
    la, lb, lc = prog.facts["leads"]
    if case.data == "accprec":  # every partial sum needs all of C's bits (reference.data)
        A, B, C = accprec_operands(ETYPE[a_e], ETYPE[b_e], ETYPE[c_e], ETYPE[c_e], M, K, N, SUBGROUPS, rng)
        A, B, C = A.astype(NP[a_e]), B.astype(NP[b_e]), C.astype(NP[c_e])
    else:
        A = _small(rng, a_e, (SUBGROUPS, M, K))
        B = _small(rng, b_e, (SUBGROUPS, K, N))
        C = _small(rng, c_e, (SUBGROUPS, M, N))
    A_mem = ref.store_matrix(zeros(prog, "A"), A, 0, 0, la, case.t1)
    B_mem = ref.store_matrix(zeros(prog, "B"), B, 0, 0, lb, case.t2)
    C_mem = ref.store_matrix(zeros(prog, "C"), C, 0, 0, lc, False)
    exp = ref.compute(A, B, C, c_e == "i32")
    bufs = {"A": A_mem, "B": B_mem, "C": C_mem, "D": fill_buffer(prog, "D", expected=exp)}
    got = launch(backend, case, prog, bufs)["D"].reshape(SUBGROUPS, M, N)
    never = never_written(got, bufs["D"])
    v = verdict(case, exp, got, c_e, hint=lambda s, r, c: f"D[{r},{c}]", unwritten=never)
    return CaseResult(v, {"A": A, "B": B, "C": C}, exp, got)


def _selector(rows: int, cols: int, elem: str) -> np.ndarray:
    return np.broadcast_to(np.eye(rows, cols), (SUBGROUPS, rows, cols)).astype(NP[elem])


def _observe(case, prog: Program, bufs: dict, avoid=None):
    """The buffers of the program's observation tail (cts.families.
    mlir_program.observe: D, and the selector SEL for an A or B matrix);
    returns the view of D as the logical matrix and D's element type."""
    M, N, K = case.mnk
    obs_e, part = prog.facts["observe"]
    if "SEL" in prog.buffers:
        rows, cols = (K, N) if part == "cols<K" else (M, K)
        bufs["SEL"] = _selector(rows, cols, case.elem).reshape(SUBGROUPS, -1)
    if "SEL" in prog.buffers:  # D is also the zero accumulator of the observation (loaded first)
        bufs["D"] = zeros(prog, "D")
    else:  # D holds values of the observed matrix: its fill is none of them
        bufs["D"] = fill_buffer(prog, "D", avoid=avoid)
    if part == "cols<K":
        return lambda D: D.reshape(SUBGROUPS, M, N)[:, :, :K], obs_e
    if part == "rows<K":
        return lambda D: D.reshape(SUBGROUPS, M, N)[:, :K, :], obs_e
    return lambda D: D.reshape(SUBGROUPS, M, N), obs_e


def _constant(case, backend, rng):
    e = case.elem
    value = float(_small(rng, e, (1,))[0]) or 1.0
    prog = case_program(case, constant=value)
    bufs: dict = {"K": np.full((SUBGROUPS, 1), value, NP[e])} if "K" in prog.buffers else {}
    view, obs_e = _observe(case, prog, bufs, avoid=np.full((SUBGROUPS, 1), value))
    got = view(launch(backend, case, prog, bufs)["D"])
    exp = np.full(got.shape, value)
    never = None if "SEL" in prog.buffers else never_written(got, view(bufs["D"]))
    v = verdict(
        case,
        exp,
        got,
        obs_e,
        hint=lambda s, i, j: f"element ({i},{j}) of the constant matrix",
        unwritten=never,
    )
    return CaseResult(v, {"value": value}, exp, got)


def _ew_operands(case, rng, shape):
    op, e = case.optype, case.elem
    kind = ref.ELEMENTWISE[op][1]
    if kind == "i":
        x = rng.integers(-(2**31), 2**31, size=shape, dtype=np.int64)
        y = rng.integers(-(2**31), 2**31, size=shape, dtype=np.int64)
        y = np.where(y == 0, 3, y)
        y = np.where((x == -(2**31)) & (y == -1), 5, y)
        small = rng.random(shape) < 0.3  # exact quotients and small products too
        y = np.where(small, rng.integers(1, 9, size=shape) * choose(rng, [-1, 1], shape), y)
        return [x.astype(np.int32), y.astype(np.int32)]
    if kind == "f32->f16":  # f32 values that need rounding to f16, with ties
        m = rng.integers(1 << 23, 1 << 24, size=shape)
        tie = rng.random(shape) < 0.25
        m = np.where(tie, (m & ~0x1FFF) | 0x1000, m)
        x = m * 2.0 ** rng.integers(-33, -13, size=shape) * choose(rng, [-1.0, 1.0], shape)
        return [x.astype(np.float32)]
    t = NP[e]
    mag = 2.0 ** rng.uniform(-6, 6, size=shape)
    x = (mag * choose(rng, [-1.0, 1.0], shape)).astype(t)
    y = (2.0 ** rng.uniform(-6, 6, size=shape) * choose(rng, [-1.0, 1.0], shape)).astype(t)
    x = np.where(x == 0, t(1), x)
    y = np.where(y == 0, t(2), y)
    return [x, y][: ref.ELEMENTWISE[op][0]]


def _elementwise(case, backend, rng):
    M, N = case.tag_shape(case.tag or "COp")
    op = case.optype
    arity = ref.ELEMENTWISE[op][0]
    prog = case_program(case)
    res_e = prog.buffers["ER" if "ER" in prog.buffers else "D"].elem
    if case.data:
        xs = _ew_special(case, rng, (SUBGROUPS, M, N))
    else:
        xs = _ew_operands(case, rng, (SUBGROUPS, M, N))[:arity]
    bufs = {f"X{i}": x.reshape(SUBGROUPS, -1) for i, x in enumerate(xs)}
    ins = np.concatenate([x.reshape(SUBGROUPS, -1) for x in xs], axis=1)
    for k in prog.buffers:
        if k in bufs:
            continue
        # extracted operands are moved inputs; an integer result (an element-wise value of the
        # whole matrix, same positions) is unlike its expected value; float results: the NaN fill
        pre = None
        if k in ("D", "ER") and ref.ELEMENTWISE[op][1] == "i":
            pre = ref.elementwise(op, [x.astype(np.int64) for x in xs], res_e).reshape(SUBGROUPS, -1)
        bufs[k] = fill_buffer(
            prog, k, expected=pre if k == "D" else None, avoid=ins if pre is None or k != "D" else None
        )
    out = launch(backend, case, prog, bufs)
    if "ER" in out:  # A / B result: judged slot by slot through extract_thread_local
        xs = _extracted_operands(case, xs, out, arity, bufs)
        got = out["ER"].reshape(SUBGROUPS, -1, N)
        never = never_written(got, bufs["ER"])
        where_ = "thread-local slot"
    else:
        got = out["D"].reshape(SUBGROUPS, M, N)
        never = never_written(got, bufs["D"])
        where_ = "element"
    env = float_env_of(backend, case)
    exp, ok, notes, undefined = _ew_expect(case, xs, got, res_e, env)
    if not etype(ETYPE[res_e]).is_float and "ER" in out:  # the fill could equal a result: not named
        never = never & (t_bits(exp, res_e) != t_bits(got, res_e))
    v = verdict(
        case,
        exp,
        got,
        res_e,
        ok=ok,
        notes=notes,
        hint=lambda s, i, j: f"{op} {where_} ({i},{j})",
        unwritten=never,
        undefined=undefined,
    )
    if v.undefined:
        v.notes.append(f"{v.undefined_text()} (environment: {env.describe()})")
    return CaseResult(v, {"x": xs}, exp, got)


def t_bits(x: np.ndarray, elem: str) -> np.ndarray:
    """Bits of values ``x`` in MLIR element type ``elem``."""
    t = etype(ETYPE[elem])
    with np.errstate(invalid="ignore"):
        return t.encode(np.asarray(x).astype(np.float64 if t.is_float else np.int64))


def _extracted_operands(case, xs, out, arity, bufs):
    """The operands as each lane extracted them (the result's layout), after
    checking that every operand's extraction holds exactly its elements (a
    permutation of the loaded matrix, bit for bit)."""
    N = xs[0].shape[-1]
    t = etype(ETYPE[case.elem])
    wide = np.float64 if t.is_float else np.int64
    got = []
    for i in range(arity):
        ex = out[f"EX{i}"].reshape(SUBGROUPS, -1)
        for p in range(SUBGROUPS):
            a = np.sort(t.encode(ex[p].astype(wide)))
            b = np.sort(t.encode(xs[i][p].reshape(-1).astype(wide)))
            if not np.array_equal(a, b):
                if (raw_bits(ex[p]) == raw_bits(bufs[f"EX{i}"][p])).all():
                    raise CaseError(
                        f"subgroup {p}: extract_thread_local of operand {i} ({case.tag}) was never written "
                        "(the buffer still holds its sentinel fill): the result cannot be judged slot by slot"
                    )
                raise CaseError(
                    f"subgroup {p}: extract_thread_local of operand {i} ({case.tag}) does not hold the loaded "
                    "matrix's elements (each exactly once): the result cannot be judged slot by slot"
                )
        got.append(ex.reshape(SUBGROUPS, -1, N).astype(xs[i].dtype))
    return got


def _ew_expect(case, xs, got, res_e, env: FloatEnv = IEEE):
    """Expected values, the acceptance mask and the elements the execution
    environment ``env`` leaves undefined (reason -> mask) of an elementwise
    result: the exact data (every value exact but divf, 2.5 ulp), or a
    special tier under reference.mlir.ELEMENTWISE_RULES (NaN matches NaN; a
    subnormal input or result flushed to a zero of its sign is accepted and
    noted where the environment lets a device flush)."""
    op = case.optype
    t = etype(ETYPE[res_e])
    notes = []
    if ref.ELEMENTWISE[op][1] == "i":
        exact = ref.elementwise(op, [x.astype(np.int64) for x in xs], res_e)
        return exact, None, notes, {}
    if not case.data:
        ins = [x.astype(np.float64) for x in xs]
        exact = ref.elementwise(op, ins, res_e)
        exp = t.round(exact)
        if op != "divf":
            return exp, None, notes, {}
        err = np.abs(got.astype(np.float64) - exact)
        notes.append("divf: accepted within 2.5 ulp of the exact quotient")
        return exp, err <= 2.5 * t.ulp(exact), notes, env.undefined(op, ins, exact, got, t.bits)
    with np.errstate(invalid="ignore", over="ignore"):  # NaN and infinities are the data here
        return _ew_expect_special(case, xs, got, t, notes, env)


def _ew_expect_special(case, xs, got, t, notes, env: FloatEnv):
    op, e = case.optype, case.elem
    t_in = etype(ETYPE[e])
    ins = [x.astype(np.float64) for x in xs]
    flushed = [ref.flush_subnormals(x, t_in.tiny) for x in ins]
    exact = ref.elementwise_special(op, ins)
    cands = [t.round(exact)]
    if env.flush_allowed(t.bits) and env.flush_allowed(t_in.bits):
        cands.append(t.round(ref.elementwise_special(op, flushed)))
        cands += [ref.flush_subnormals(c, t.tiny) for c in cands]
    g = got.astype(np.float64)
    gb = t.encode(g)
    ok_exact = ref.same_bits(t.encode(cands[0]), gb, np.isnan(cands[0]), np.isnan(g))
    if op == "divf":  # finite non-zero quotients: 2.5 ulp
        fin = np.isfinite(exact) & (exact != 0) & np.isfinite(g)
        ok_exact |= fin & (np.abs(g - exact) <= 2.5 * t.ulp(exact))
    ok = ok_exact.copy()
    for c in cands[1:]:
        ok |= ref.same_bits(t.encode(c), gb, np.isnan(c), np.isnan(g))
    flush = int(np.count_nonzero(ok & ~ok_exact))
    notes.append(f"{op} on {case.data} data: {ref.ELEMENTWISE_RULES[op]}")
    if flush:
        notes.append(f"{flush} results match only with subnormals flushed to a zero of their sign (allowed)")
    elif len(cands) == 1:
        notes.append(f"no subnormal is flushed: the environment declares DenormPreserve ({env.describe()})")
    undefined = env.undefined(op, ins, cands[0], g, t.bits)
    if t_in.bits != t.bits:  # a conversion: the operand's width has its own modes
        for k, m in env.undefined(op, ins, cands[0], g, t_in.bits).items():
            undefined[k] = undefined[k] | m if k in undefined else m
    return cands[0], ok, notes, undefined


# special operand values of each tier, per float type (built from the type's limits)
def _tier_pool(tier: str, t) -> list[float]:
    sub, tiny, big = t.denorm_min, t.tiny, t.max_finite
    if tier == "nan":
        return [np.nan, -np.nan, 1.5, -2.25, 0.0, -0.0, np.inf, -np.inf]
    if tier == "zero":
        return [0.0, -0.0, 1.0, -1.0, 0.75, -3.5]
    if tier == "inf":
        return [np.inf, -np.inf, 0.0, -0.0, 2.0, -0.5, big, -big]
    return [sub, -sub, 3 * sub, -tiny / 2, tiny, -tiny, 1.5 * tiny, 0.5, -2.0, 0.0, -0.0]


def _ew_special(case, rng, shape):
    """Operands of a special tier: every pair of the tier's values (and
    their permutations over the elements), the rest drawn from them.  NaNs
    carry payloads (quiet and signalling bit patterns, low payload bits that
    a careless narrowing would drop).  extf reads f16 values of the tier;
    truncf f32 values at the edges of f16 (beyond its range, in its
    subnormal range, ties)."""
    op, e = case.optype, case.elem
    arity = ref.ELEMENTWISE[op][0]
    t = etype(ETYPE[e])
    if op == "truncf":  # f32 values seen from f16
        t16 = etype("f16")
        pool = _tier_pool(case.data, t16)
        pool += {
            "inf": [65504.0, 65519.0, 65520.0, -65520.0, 1e6],
            "zero": [2.0**-26, -(2.0**-26), 2.0**-25, 1e-30],
            "subnormal": [3 * 2.0**-25, 2.0**-20 + 2.0**-30, -(2.0**-15), 2.0**-14 - 2.0**-25],
            "nan": [],
        }[case.data]
    else:
        pool = _tier_pool(case.data, t)
    vals = np.array(pool, dtype=np.float64).astype(NP[e])
    if case.data == "nan":  # NaN payloads: the low bits only (a narrowing must keep it a NaN) and signalling
        ub = {2: np.uint16, 4: np.uint32, 8: np.uint64}[vals.itemsize]
        exp_all = ((1 << t.exp_bits) - 1) << t.man_bits
        extra = np.array(
            [exp_all | 1, exp_all | (1 << (t.man_bits - 1)) | 5, (1 << (t.bits - 1)) | exp_all | 2]
        )
        vals = np.concatenate([vals, extra.astype(ub).view(NP[e])])
    total = int(np.prod(shape))
    k = len(vals)
    if arity == 2:
        pairs = np.stack(np.meshgrid(np.arange(k), np.arange(k), indexing="ij"), -1).reshape(-1, 2)
        idx = np.concatenate([pairs, rng.integers(0, k, size=(max(0, total - len(pairs)), 2))])
        idx = idx[rng.permutation(len(idx))[:total]] if len(idx) > total else idx[rng.permutation(total)]
        return [vals[idx[:, 0]].reshape(shape), vals[idx[:, 1]].reshape(shape)]
    idx = np.concatenate([np.arange(k), rng.integers(0, k, size=max(0, total - k))])[:total]
    return [vals[rng.permutation(idx)].reshape(shape)]


def _map_or_fail(ext: np.ndarray, logical: np.ndarray, what: str, filled=None) -> np.ndarray:
    if filled is not None and (raw_bits(ext) == raw_bits(np.asarray(filled).reshape(np.shape(ext)))).all():
        raise _MapError(f"{what}: never written (the buffer still holds its sentinel fill)")
    idx, problems = ref.check_thread_map(ext, logical)
    if problems:
        raise _MapError(f"{what}: " + "; ".join(problems))
    return idx


class _MapError(Exception):
    pass


def _thread_local(case, backend, rng):
    tag, e = case.tag, case.elem
    r, c = case.tag_shape(tag)
    S = case.sg
    n = r * c // S
    prog = case_program(case)
    X = _distinct(rng, e, (SUBGROUPS, r, c))
    V = _distinct(rng, e, (SUBGROUPS, S * n), lo_mag=0)
    both = np.concatenate([X.reshape(SUBGROUPS, -1), V], axis=1)
    bufs = {"X": X.reshape(SUBGROUPS, -1), "V": V, "E": fill_buffer(prog, "E", avoid=both)}
    view, obs_e = _observe(case, prog, bufs, avoid=both)
    out = launch(backend, case, prog, bufs)
    got = view(out["D"])
    never = None if "SEL" in prog.buffers else never_written(got, view(bufs["D"]))
    E = out["E"].reshape(SUBGROUPS, S, n)
    exp = np.empty((SUBGROUPS, r, c))
    notes = []
    for p in range(SUBGROUPS):
        try:
            idx = _map_or_fail(E[p], X[p], f"subgroup {p} extract_thread_local", bufs["E"][p])
        except _MapError as err:
            notes.append(str(err))
            exp[p] = np.nan
            continue
        flat = np.empty(r * c)
        flat[idx.reshape(-1)] = V[p].astype(np.float64)
        exp[p] = flat.reshape(r, c)
    if notes:
        raise CaseError("; ".join(notes))
    v = verdict(
        case,
        exp,
        got,
        obs_e,
        hint=lambda s, i, j: f"element ({i},{j}) after insert_thread_local",
        unwritten=never,
    )
    v.notes.append(f"{S} lanes x {n} thread-local indices cover all {r * c} elements exactly once")
    return CaseResult(v, {"X": X, "V": V}, exp, got)


def _gpu_rotate(case, backend, rng):
    """gpu.rotate of a scalar or 1-D vector value (MLIR GPU dialect, gpu.rotate): every
    component comes from the source lane; lanes >= width are poison, only
    their valid flag (false) is checked."""
    S, e, V = case.sg, case.elem, max(case.vec, 1)
    vals = _rotate_values(rng, e, (SUBGROUPS, S, V))
    prog = case_program(case)
    bufs = {
        "IN": vals.reshape(SUBGROUPS, S * V),
        "OUT": fill_buffer(prog, "OUT", avoid=vals.reshape(SUBGROUPS, S * V)),
        "VALID": np.full((SUBGROUPS, S), 7, np.int32),
    }
    out = launch(backend, case, prog, bufs)
    t = etype(ETYPE[e])
    wide = np.float64 if t.is_float else np.int64  # every bit of an i64 / f64
    exp = np.empty((SUBGROUPS, S, V), dtype=wide)
    valid_exp = None
    for p in range(SUBGROUPS):
        exp[p], valid_exp = ref.gpu_rotate_expected(vals[p].astype(wide), case.offset, case.width)
    got = out["OUT"].reshape(SUBGROUPS, S, V)
    valid = out["VALID"]
    never = never_written(got, bufs["OUT"]) & valid_exp[None, :, None]  # lanes >= width hold poison
    never = never | (out["VALID"] == bufs["VALID"])[:, :, None]  # the flag's fill (7) is no i1
    ok = (t.encode(exp) == t.encode(got.astype(wide))) | ~valid_exp[None, :, None]
    ok &= ((valid != 0) == valid_exp[None, :])[:, :, None]
    ok &= ((valid == 0) | (valid == 1))[:, :, None]

    def hint(s, comp, lane):
        return (
            f"lane {lane} component {comp}: valid expected {bool(valid_exp[lane])}, got {int(valid[s, lane])}"
        )

    # (P, V, S): rows = components, columns = lanes
    v = verdict(
        case,
        exp.transpose(0, 2, 1),
        got.transpose(0, 2, 1),
        e,
        ok=ok.transpose(0, 2, 1),
        hint=hint,
        where=lambda s, r, c: (c, r),
        unwritten=never.transpose(0, 2, 1),
    )
    v.notes.append(f"lanes >= width {case.width} hold poison: only their valid flag (false) is checked")
    return CaseResult(v, {"IN": vals}, exp, got)


def _rotate_values(rng, e: str, shape) -> np.ndarray:
    """Per-lane values of a gpu.rotate case, distinct within each subgroup
    where the type has room: 8-bit a permutation, i16 / bf16 / f16 from
    pools of exactly representable values, i64 / f64 with random high and
    low words (a value that keeps its own high word shows), i1 random bits."""
    P, n = shape[0], int(np.prod(shape[1:]))
    if e == "i1":
        return rng.integers(0, 2, size=shape).astype(np.int32)
    if e in ("i8", "i16", "bf16"):
        size, shift = {"i8": (256, -128), "i16": (65536, -32768), "bf16": (256, -128)}[e]
        perms = rng.permuted(np.broadcast_to(np.arange(size), (P, size)), axis=1)
        return (perms[:, :n] + shift).reshape(shape).astype(NP[e])
    if e in ("i64", "f64"):
        while True:
            bits = rng.integers(0, 1 << 62, size=shape, dtype=np.int64).view(np.uint64) << np.uint64(1)
            if e == "f64":  # finite: exponent field neither all ones nor all zeros
                bits = (bits & np.uint64(0x800FFFFFFFFFFFFF)) | np.uint64(0x3FF0000000000000)
            flat = bits.reshape(P, n)
            if all(len(np.unique(r)) == n for r in flat):
                return bits.view(np.int64 if e == "i64" else np.float64)
    return _distinct(rng, e if e != "i32" else "f32", shape).astype(NP[e])


def _mma_rotate(case, backend, rng):
    S, e, tag = case.sg, case.elem, case.tag
    r, c = case.tag_shape(tag)
    n = r * c // S
    both = _distinct(rng, e, (SUBGROUPS, 2 * r * c))
    A, B = both[:, : r * c].reshape(SUBGROUPS, r, c), both[:, r * c :].reshape(SUBGROUPS, r, c)
    prog = case_program(case)
    bufs = {
        "A": A.reshape(SUBGROUPS, -1),
        "B": B.reshape(SUBGROUPS, -1),
        **{k: fill_buffer(prog, k, avoid=both) for k in ("EA", "EB", "ER", "D") if k in prog.buffers},
    }
    out = launch(backend, case, prog, bufs)
    problems = []
    exp = np.empty((SUBGROUPS, S, n))
    exp_d = np.empty((SUBGROUPS, r * c))
    for p in range(SUBGROUPS):
        ea, eb = out["EA"][p].reshape(S, n), out["EB"][p].reshape(S, n)
        try:
            ia = _map_or_fail(ea, A[p], f"subgroup {p} extract of A", bufs["EA"][p])
            _map_or_fail(eb, B[p], f"subgroup {p} extract of B", bufs["EB"][p])
        except _MapError as err:
            problems.append(str(err))
            continue
        exp[p] = ref.mma_rotate_lowered(ea.astype(np.float64), eb.astype(np.float64), case.offset)
        exp_d[p, ia.reshape(-1)] = exp[p].reshape(-1)
    if problems:
        raise CaseError("; ".join(problems))
    got = out["ER"].reshape(SUBGROUPS, S, n)

    def hint(s, lane, i):
        return f"lane {lane} thread-local index {i} of the rotated matrix (offset {case.offset})"

    never = never_written(got, bufs["ER"])
    v = verdict(case, exp, got, e, hint=hint, where=lambda s, r, c: (r, c), unwritten=never)
    if tag == "COp" and v.passed:
        v = verdict(
            case,
            exp_d[:, None, :],
            out["D"][:, None, :],
            e,
            hint=lambda s, _r, x: f"stored element {x}",
            unwritten=never_written(out["D"], bufs["D"]),
        )
        v.notes.append("stored result matches the thread-local image under the extracted map")
    return CaseResult(v, {"A": A, "B": B}, exp, got)


_OPS = {
    "load_store": _load_store,
    "compute": _compute,
    "constant": _constant,
    "elementwise": _elementwise,
    "thread_local": _thread_local,
    "gpu_rotate": _gpu_rotate,
    "mma_rotate": _mma_rotate,
}


def run_mlir(case, backend, seed: int) -> CaseResult:
    rng = case_rng(seed, f"{case.family}[{case.id}]")
    return _OPS[case.op](case, backend, rng)
