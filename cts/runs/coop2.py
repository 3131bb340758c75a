"""Execution of one NV cooperative matrix 2 case: data -> buffers -> backend
-> verdict (case space and plans: ``cts.families.coop2``; rules:
``reference.coop2``).

Buffer contract of every backend's ``run_coop_matrix2(case, bufs) -> bufs``:
named arrays of raw element bits (unsigned storage dtypes), one row per
workgroup, each row a 16-byte multiple:

* reduce / convert: ``x`` (R*C of the source type), ``out`` (result shape, row-major)
* perelem: ``x``, ``y`` (mat), ``p`` (scalar: element 0), ``out``
* tensor loads: ``tens`` (the tensor region), ``out``; stores: ``x``, ``tens``
  (filled with a sentinel beforehand: what is not stored must stay)
* decode: ``tens`` (u32 words), ``out`` (f16)
* flex: ``a``, ``b``, ``c``, ``d``

All checks are exact (rules E / I): the data make every result exactly
representable -- small integers for float sums and products, full-range
integers (wrapping) for integer sums, distinct values for addressing.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from cts.families.coop2 import PERELEM_SCALAR, Coop2Case, clamp_bits, fill_value, tensor_plan
from cts.judge import CaseResult, Verdict, exact_verdict, sentinel
from reference import coop2 as rc2
from reference.data import case_rng
from reference.dtypes import etype

__all__ = ["run_coop2", "row_len", "storage", "to_bits", "WORKGROUPS"]

WORKGROUPS = 8
_FLOAT_NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}


def storage(t: str):
    return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[etype(t).bits]


def row_len(n: int, t: str) -> int:
    """n elements rounded up to 16 bytes (rows start 16-byte aligned)."""
    per = 16 // (etype(t).bits // 8)
    return -(-n // per) * per


def to_bits(v, t: str) -> np.ndarray:
    v = np.asarray(v)
    if t in _FLOAT_NP:
        return np.asarray(v, np.float64).astype(_FLOAT_NP[t]).view(storage(t))
    return (v.astype(np.int64) & etype(t).mask).astype(storage(t))


def _small(rng, t: str, shape, amax=4) -> np.ndarray:
    lo = 0 if etype(t).kind == "uint" else -amax
    return rng.integers(lo, amax + 1, size=shape).astype(np.int64)


def _full(rng, t: str, shape) -> np.ndarray:
    et = etype(t)
    return rng.integers(et.min, et.max + 1, size=shape, dtype=np.int64)


def _pad(a: np.ndarray, t: str) -> np.ndarray:
    S, n = a.shape
    out = np.zeros((S, row_len(n, t)), storage(t))
    out[:, :n] = a
    return out


def _verdict(exp_bits: np.ndarray, act_bits: np.ndarray, t: str, unwritten=None) -> Verdict:
    """Value identity (rules E / I: +0 == -0, any NaN for a NaN); a 2-D
    (workgroup, element) array is one row per workgroup."""
    return exact_verdict(exp_bits, act_bits, etype(t), unwritten=unwritten)


def _out(exp_bits: np.ndarray, t: str) -> np.ndarray:
    """An output buffer (rows padded to 16 bytes) holding the sentinel of
    ``t``, unlike the expected bits ``exp_bits`` (S, n) in every element."""
    S, n = exp_bits.shape
    pad = np.zeros((S, row_len(n, t)), np.uint64)
    pad[:, :n] = exp_bits
    return sentinel.fill(etype(t), pad.shape, storage(t), expected=pad)


def _judged(backend, case, bufs: dict, name: str, exp: np.ndarray, t: str) -> CaseResult:
    """Run, then judge the first ``exp.shape[1]`` elements of buffer ``name``
    (elements still holding the sentinel fill are never written)."""
    n = exp.shape[1]
    got = backend.run(case, bufs={k: np.array(v, copy=True) for k, v in bufs.items()})  # bufs keep the fill
    act = got[name][:, :n]
    never = sentinel.unwritten(act, bufs[name][:, :n], etype(t))
    return _wrap(_verdict(exp, act, t, never), bufs, exp, act)


def _wrap(v: Verdict, inputs: dict, exp, act) -> CaseResult:
    return CaseResult(v, inputs, exp, act)


def layout_of(plan):
    """The reference's reading of a plan's layout and view instructions."""
    lay = rc2.create_layout(plan.dim, plan.clamp)
    for op, *args in plan.layout:
        if op == "block":
            lay = lay.set_block(*args)
        elif op == "dim":
            lay = lay.set_dimension(*args)
        elif op == "stride":
            lay = lay.set_stride(*args)
        elif op == "slice":
            lay = lay.slice(*args)
        elif op == "clampval":
            lay = lay.set_clamp_value(args[0])
    view = None
    for op, *args in plan.view or ():
        if op == "create":
            has, perm = args
            view = rc2.create_view(len(perm), has, *perm)
        elif op == "dim":
            view = view.set_dimension(*args)
        elif op == "stride":
            view = view.set_stride(*args)
        elif op == "clip":
            view = view.set_clip(*args)
    return lay, view


def run_coop2(case: Coop2Case, backend, seed: int) -> CaseResult:
    rng = case_rng(seed, f"{case.family}[{case.id}]")
    S = WORKGROUPS
    R, C, t = case.rows, case.cols, case.t
    op = case.op
    if op == "reduce":
        mode, comb, _ = case.variant.split("-")
        is_float = etype(t).is_float
        x = _small(rng, t, (S, R, C)) if is_float else _full(rng, t, (S, R, C))
        oR, oC = case.out
        exp = to_bits(rc2.reduce(x, mode, comb, oR, oC).reshape(S, -1), t)
        bufs = {"x": _pad(to_bits(x.reshape(S, -1), t), t), "out": _out(exp, t)}
        return _judged(backend, case, bufs, "out", exp, t)
    if op == "perelem":
        x = _small(rng, t, (S, R, C))
        bufs = {"x": _pad(to_bits(x.reshape(S, -1), t), t)}
        if case.variant == "rc":
            exp = rc2.per_element(x, lambda r, c, v: v + r * C + c)
        elif case.variant == "scalar":
            bufs["p"] = _pad(to_bits(np.full((S, 1), PERELEM_SCALAR), t), t)
            exp = rc2.per_element(x, lambda r, c, v, s: v * s + r * C + c, PERELEM_SCALAR)
        else:
            y = _small(rng, t, (S, R, C), 2)
            if etype(t).kind == "uint":  # x - 2y stays >= 0: y <= x / 2
                y = x // 2
            bufs["y"] = _pad(to_bits(y.reshape(S, -1), t), t)
            exp = rc2.per_element(x, lambda r, c, v, w: v - 2 * w + r * C + c, y)
        exp = to_bits(exp.reshape(S, -1), t)
        bufs["out"] = _out(exp, t)
        return _judged(backend, case, bufs, "out", exp, t)
    if op == "convert":
        to = case.to or t
        x = _small(rng, t, (S, R, C))
        oR, oC = case.out
        ref = rc2.transpose(x) if case.variant == "transpose" else x
        exp = to_bits(ref.reshape(S, -1), to)
        bufs = {"x": _pad(to_bits(x.reshape(S, -1), t), t), "out": _out(exp, to)}
        return _judged(backend, case, bufs, "out", exp, to)
    if op in ("tensor", "decode"):
        return _tensor(case, backend, rng, S)
    if op == "flex":
        f = case.flex
        M, N, K = R, C, case.K
        a = _small(rng, f.A, (S, M, K), 2)
        b = _small(rng, f.B, (S, K, N), 2)
        c = _small(rng, f.C, (S, M, N), 4)
        bufs = {
            "a": _pad(to_bits(a.reshape(S, -1), f.A), f.A),
            "b": _pad(to_bits(b.reshape(S, -1), f.B), f.B),
            "c": _pad(to_bits(c.reshape(S, -1), f.C), f.C),
        }
        exp = to_bits((np.matmul(a, b) + c).reshape(S, -1), f.R)
        bufs["d"] = _out(exp, f.R)
        return _judged(backend, case, bufs, "d", exp, f.R)
    raise ValueError(f"unknown coop2 op {op!r}")


def _tensor(case: Coop2Case, backend, rng, S) -> CaseResult:
    R, C, t = case.rows, case.cols, case.t
    plan = tensor_plan(case, clamp_bits(t))
    lay, view = layout_of(plan)
    idx, block, inblk = rc2.tensor_addresses(lay, R, C, store=plan.store, v=view)
    if case.op == "decode":
        words = rng.integers(0, 1 << 32, size=(S, plan.size), dtype=np.uint64).astype(np.uint32)
        b1 = plan.extra["block"][1]
        byte = inblk[..., 0] * b1 + inblk[..., 1]
        w = words[:, idx]  # (S, R, C)
        val = (w.astype(np.int64) >> (8 * byte)[None]) & 0xFF
        exp = to_bits(val.reshape(S, -1), t)
        bufs = {"tens": _pad(words, "u32"), "out": _out(exp, t)}
        return _judged(backend, case, bufs, "out", exp, t)
    n = plan.size
    # distinct values, exactly representable (|v| < 1024), none equal to the fills
    pool = np.arange(-1000, 1000) if etype(t).kind != "uint" else np.arange(10, 2000)
    if len(pool) < n:
        raise ValueError(f"tensor of {n} elements: too large for distinct exact values")
    tens = np.stack([rng.permutation(pool)[:n] for _ in range(S)])
    if not plan.store:
        safe = np.where(idx >= 0, idx, 0)
        val = tens[:, safe].astype(np.float64)
        val = np.where(idx == rc2.CLAMP_CONST, fill_value(t, "clamp"), val)
        val = np.where(idx == rc2.CLIPPED, fill_value(t, "clip"), val)
        exp = to_bits(val.reshape(S, -1), t)
        bufs = {"tens": _pad(to_bits(tens, t), t), "out": _out(exp, t)}
        return _judged(backend, case, bufs, "out", exp, t)
    x = _small(rng, t, (S, R, C), 100)  # integers: never the (fractional) sentinel
    canary = fill_value(t, "clip")  # fractional: no stored (integer) value equals it
    bufs = {
        "x": _pad(to_bits(x.reshape(S, -1), t), t),
        "tens": _pad(to_bits(np.full((S, n), canary), t), t),
    }
    got = backend.run(case, bufs={k: np.array(v, copy=True) for k, v in bufs.items()})
    exp_v = np.full((S, n), float(canary))
    live = idx >= 0
    exp_v[:, idx[live]] = x[:, live]
    exp = to_bits(exp_v, t)
    act = got["tens"][:, :n]
    stored = np.zeros(n, dtype=bool)
    stored[idx[live]] = True  # tensor elements the store writes: still the canary = never written
    never = stored[None, :] & sentinel.unwritten(act, bufs["tens"][:, :n], etype(t))
    return _wrap(_verdict(exp, act, t, never), bufs, exp, act)
