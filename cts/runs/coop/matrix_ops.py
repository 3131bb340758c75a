"""Operations on one matrix: its length and element mapping (``length``),
Load, Store, splat construction and element access; conversions and
element-wise ops are handed to their modules."""

from __future__ import annotations

import numpy as np

from cts.families.coop import (
    MAP_FILL,
    SPLAT_CONST,
    CoopCase,
    case_stride,
    region_len,
)
from cts.judge import CaseResult, Rule, compare, sentinel
from cts.runs.coop.conversions import run_convert
from cts.runs.coop.data import (
    bits,
    kind_of,
    launch,
    random_finite_bits,
    small,
    stride_buf,
    wrap,
)
from cts.runs.coop.elementwise import run_elementwise
from cts.runs.coop.judge import (
    exact_out,
    fill_out,
    judge_out,
    nowhere,
    sentinel_cells,
    store_cells,
)
from reference import coop as rc
from reference.dtypes import etype

__all__ = ["decode_mapping", "run_length", "run_matrix_op"]


# ---------------------------------------------------------------- per op
def decode_mapping(mp: np.ndarray, length: int) -> np.ndarray:
    """(sg, 2*RC) uint32 lo/hi pairs -> (sg, length) row-major element index."""
    lo = mp[:, 0 : 2 * length : 2].astype(np.int64)
    hi = mp[:, 1 : 2 * length : 2].astype(np.int64)
    return lo + 128 * hi


def run_length(case: CoopCase, backend, rng, S) -> CaseResult:
    m, t = case.mat, etype(case.mat.t)
    n = m.rows * m.cols
    idx = np.broadcast_to(np.arange(n), (S, n))
    bufs = {
        "lo": bits(idx & 127, t),
        "hi": bits(idx >> 7, t),
        "len": sentinel.fill(etype("u32"), (S, case.sg), np.uint32),  # no length in [1, n] is the fill
        "map": np.full((S, case.sg, 2 * n), MAP_FILL, np.uint32),
    }
    got = launch(backend, case, bufs)
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


def run_matrix_op(case: CoopCase, backend, rng, S, profile) -> CaseResult:
    """access, splat, load, store, element-wise ops and conversions."""
    m, t = case.mat, etype(case.mat.t)
    R, C = m.rows, m.cols
    shape = (S, R, C)
    flat = (S, R * C)
    kind = kind_of(t)
    op = case.op
    bufs: dict = {}
    if op == "access":
        x = small(rng, t, shape, 4)
        exp = bits(
            rc.elementwise("add", rc.elementwise("scale", x, None, t, 2), np.ones(shape, np.int64), t), t
        )
        bufs = {"x": bits(x, t).reshape(flat), "out": fill_out(t, flat, exp)}
        got = launch(backend, case, bufs)
        return wrap(judge_out(exp, got["out"], bufs["out"], t, shape), bufs, exp, got["out"])
    if op == "splat":
        v = random_finite_bits(rng, t, (S, 1))
        if case.mode in ("const", "null"):  # OpConstantNull: every element 0
            c = SPLAT_CONST[kind] if case.mode == "const" else 0
            exp = np.broadcast_to(bits(np.asarray(c), t), shape)
        else:
            exp = np.broadcast_to(v[:, :, None], shape)
        bufs = {"v": v, "out": fill_out(t, flat, exp)}
        got = launch(backend, case, bufs)
        return wrap(judge_out(exp, got["out"], bufs["out"], t, shape), bufs, exp, got["out"])
    if op == "load":
        stride = case_stride(case)
        L = region_len(rc.image_len(R, C, case.layout, stride), t.name)
        src = random_finite_bits(rng, t, (S, L))
        exp = rc.from_image(src, R, C, case.layout, stride)
        bufs = {"src": src, "out": fill_out(t, flat, exp)} | stride_buf(case, S, stride)
        got = launch(backend, case, bufs)
        return wrap(judge_out(exp, got["out"], bufs["out"], t, shape), bufs, exp, got["out"])
    if op == "store":
        stride = case_stride(case)
        L = region_len(rc.image_len(R, C, case.layout, stride), t.name)
        x = random_finite_bits(rng, t, shape)
        dst = random_finite_bits(rng, t, (S, L))
        exp = rc.to_image(x, case.layout, stride, dst)
        # the cells the store writes start as the sentinel; the padding keeps its random canaries
        cells = store_cells(case, x, dst, stride)
        dst = sentinel_cells(dst, exp, cells, t)
        bufs = {"x": x.reshape(flat), "dst": dst} | stride_buf(case, S, stride)
        got = launch(backend, case, bufs)
        never = (cells & sentinel.unwritten(got["dst"], dst, t))[:, None, :]
        # judged over the whole region (padding must be untouched): rows = 1
        v = exact_out(exp[:, None, :], got["dst"][:, None, :], t, never)
        v.notes.append("store: columns of the verdict are offsets in the destination region")
        return wrap(v, bufs, exp, got["dst"])
    if op == "convert":
        return run_convert(case, backend, rng, t, shape, flat)
    return run_elementwise(case, backend, rng, S, t, shape, flat, kind)
