"""Execution of one subgroup-rotate case: distinct per-invocation bit
patterns -> backend -> the subgroups the device reports -> verdict.

Launches (peer-suites B.1, the OpenCL-CTS model, widened): one work-group
per delta of :func:`reference.rotate.delta_values` (so every delta class
runs in every case, uniform in each subgroup; SPIR-V cases run each delta
again as a constant operand), ``2 * sg + tail`` work-items per group so each
group ends with a partial subgroup, one launch per tail of
:func:`cts.families.rotate.partial_tails` (N/2, and 3N/4 which is not a
power of two).  Like the OpenCL-CTS, the
kernel also reports every work-item's (sub_group_id, sub_group_local_id,
sub_group_size, max_sub_group_size), and the expected values are derived
from that map (never from an assumed mapping); the map itself is checked
first.  Values read from inactive invocations are not checked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cts.check import Verdict, compare
from cts.errors import CaseError
from cts.families.rotate import rotate_launches
from reference.data import case_rng
from reference.dtypes import etype
from reference.rotate import expected_rotation

__all__ = ["RotateResult", "run_rotate", "rotate_values"]


@dataclass
class RotateResult:
    verdict: Verdict
    inputs: dict
    expected: np.ndarray
    actual: np.ndarray


def _float_specials(name: str) -> list[int]:
    t = etype(name)
    sign = 1 << (t.bits - 1)
    exp_all = ((1 << t.exp_bits) - 1) << t.man_bits
    return [0, sign, exp_all, exp_all | sign, 1, sign | 1]  # +-0, +-inf, +-denorm_min


def _distinct(rng: np.random.Generator, n: int, rows: int, L: int) -> np.ndarray:
    """(rows, L) values of [0, n), distinct within each row, uniformly random
    (every L-subset in every order equally likely).  Small n: the first L of
    a random permutation of 0..n-1 per row; large n: draws with replacement,
    a repeated value drawn again until no row repeats one."""
    if L > n:
        raise ValueError(f"cannot draw {L} distinct values of {n}")
    if n <= 4096:
        return rng.permuted(np.broadcast_to(np.arange(n), (rows, n)), axis=1)[:, :L]
    x = rng.integers(0, n, size=(rows, L))
    while True:
        s = np.sort(x, axis=1)
        bad = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1))
        if not bad.size:
            return x
        for r in bad.tolist():  # few rows: L*L/2n repeats expected per row
            seen: set = set()
            again = [j for j, v in enumerate(x[r].tolist()) if v in seen or seen.add(v)]
            x[r, again] = rng.integers(0, n, size=len(again))


def rotate_values(case, G: int, L: int, rng: np.random.Generator) -> np.ndarray:
    """(G, L, W) raw bits, distinct within each work-group where the type has
    room (8-bit: a permutation), finite floats with +-0, +-inf, subnormals
    planted (a rotate moves bits, so all of them must survive)."""
    g, W = case.gentype, case.width
    shape = (G, L, W)
    if g.kind == "bool":
        return rng.integers(0, 2, size=shape).astype(np.uint64)
    bits = g.bits
    if bits <= 16:  # distinct per work-group and component (L <= 160 < 256)
        out = _distinct(rng, 1 << bits, G * W, L).reshape(G, W, L).transpose(0, 2, 1).astype(np.uint64)
    else:
        out = rng.integers(0, 1 << 62, size=shape, dtype=np.int64).astype(np.uint64)
        out = (out << np.uint64(2)) ^ rng.integers(0, 4, size=shape).astype(np.uint64)
        out &= np.uint64((1 << bits) - 1)
    if g.kind == "float":
        t = etype(g.etype)
        exp_mask = np.uint64(((1 << t.exp_bits) - 1) << t.man_bits)
        nonfinite = (out & exp_mask) == exp_mask
        out = np.where(nonfinite, out ^ np.uint64(1 << t.man_bits), out)  # clear an exponent bit
        sp = np.array(_float_specials(g.etype), dtype=np.uint64)
        plant = rng.random(shape) < 0.1
        out = np.where(plant, sp[rng.integers(0, len(sp), size=shape)], out)
    return out


def _consecutive_subgroups(sg_id, sg_lid, sg_size) -> bool:
    """Sufficient for :func:`_subgroups_well_formed`, and what devices report:
    each work-group's work-items form runs of consecutive items with local
    ids 0, 1, ..., size-1 and one subgroup id and size per run, the runs'
    subgroup ids strictly increasing (so no subgroup is split over runs)."""
    sid, lid, size = (np.asarray(x) for x in (sg_id, sg_lid, sg_size))
    if sid.shape[1] == 0 or not (lid[:, 0] == 0).all():
        return sid.shape[1] == 0
    new = lid[:, 1:] == 0  # item i+1 starts a run
    same = (lid[:, 1:] == lid[:, :-1] + 1) & (sid[:, 1:] == sid[:, :-1]) & (size[:, 1:] == size[:, :-1])
    if not (new | same).all():
        return False
    last = np.ones(lid.shape, dtype=bool)
    last[:, :-1] = new  # an item followed by a run start (or the group's end) ends its run
    if not (lid[last] == size[last] - 1).all():
        return False
    starts = np.zeros(lid.shape, dtype=bool)
    starts[:, 0] = True
    starts[:, 1:] = new
    run_sid = np.where(starts, sid, np.iinfo(np.int64).min).astype(np.int64)
    prev = np.maximum.accumulate(run_sid, axis=1)  # the latest run start's subgroup id, per item
    return bool((sid[:, 1:][new] > prev[:, :-1][new]).all())


def _subgroups_well_formed(sg_id, sg_lid, sg_size) -> bool:
    """True when every (work-group, subgroup) reports one size and the local
    ids 0 .. size-1 each exactly once: the per-subgroup test of
    :func:`_check_map`, vectorized (sort by group, subgroup, local id; each
    run of one subgroup must then read 0, 1, ..., size-1 with one size)."""
    G, L = sg_id.shape
    if G * L == 0:
        return True
    grp = np.repeat(np.arange(G), L)
    sid, lid, size = (np.asarray(x).reshape(-1).astype(np.int64) for x in (sg_id, sg_lid, sg_size))
    order = np.lexsort((lid, sid, grp))
    grp, sid, lid, size = grp[order], sid[order], lid[order], size[order]
    start = np.ones(grp.size, dtype=bool)
    start[1:] = (grp[1:] != grp[:-1]) | (sid[1:] != sid[:-1])
    first = np.flatnonzero(start)
    run = np.repeat(first, np.diff(np.append(first, grp.size)))
    pos = np.arange(grp.size) - run  # position inside the subgroup's run
    last = np.append(first[1:], grp.size) - 1
    return bool(
        np.array_equal(lid, pos)
        and np.array_equal(size, size[run])
        and np.array_equal(pos[last], size[last] - 1)
    )


def _check_map(case, sg_id, sg_lid, sg_size, sg_max) -> list[str]:
    """The reported subgroups must be well formed: one size per subgroup,
    local ids 0 .. size-1 each exactly once, maximum = the required size."""
    problems = []
    G, L = sg_id.shape
    well_formed = _consecutive_subgroups(sg_id, sg_lid, sg_size)
    well_formed = well_formed or _subgroups_well_formed(sg_id, sg_lid, sg_size)
    bad_max = np.argwhere(sg_max != case.sg)
    if bad_max.size:
        g, i = bad_max[0]
        problems.append(
            f"work-item {i} of group {g} reports max subgroup size {int(sg_max[g, i])}, "
            f"the kernel requires {case.sg}"
        )
    for g in range(0 if well_formed else G):  # the loop names the first bad subgroups
        for k in np.unique(sg_id[g]):
            sel = sg_id[g] == k
            sizes = np.unique(sg_size[g][sel])
            lids = np.sort(sg_lid[g][sel])
            if sizes.size != 1 or not np.array_equal(lids, np.arange(int(sizes[0]))):
                problems.append(
                    f"group {g} subgroup {int(k)}: sizes {sizes.tolist()} local ids {lids.tolist()[:16]}"
                )
                break
        if len(problems) > 3:
            break
    # Coverage: the kernel requires subgroup size N, so every subgroup of a
    # work-group but its last (partial) one has N work-items.  Without this a
    # device forming subgroups of one work-item would have every read land on
    # an "inactive" lane: nothing checked, a vacuous pass.
    need = (L // case.sg) * case.sg
    fulls = (np.asarray(sg_size) == case.sg).sum(axis=1)
    short = np.flatnonzero(fulls < need)
    if short.size:
        g = int(short[0])
        problems.append(
            f"group {g}: only {int(fulls[g])} of its {L} work-items are in subgroups of the required size "
            f"{case.sg} (expected at least {need}: all but the last partial subgroup)"
        )
    return problems


def _one_launch(case, backend, rng, ln) -> dict:
    """Run one launch; returns its flattened record (or raises CaseError
    when the subgroup map the device reports is unusable)."""
    G, L = ln.groups, ln.local
    vals = rotate_values(case, G, L, rng)
    d = np.array([v for _, v in ln.deltas], dtype=np.int64)
    const = np.array(ln.const, dtype=np.int32)
    res = backend.run(case, values=vals, deltas=d, const=const)
    out = np.asarray(res["out"], dtype=np.uint64).reshape(G, L, case.width)
    sg_id, sg_lid = np.asarray(res["sg_id"]), np.asarray(res["sg_lid"])
    sg_size, sg_max = np.asarray(res["sg_size"]), np.asarray(res["sg_max"])
    problems = _check_map(case, sg_id, sg_lid, sg_size, sg_max)
    if problems:
        raise CaseError(
            f"subgroup map reported by the kernel (work-groups of {L}) is not usable: " + "; ".join(problems)
        )
    key = (np.arange(G)[:, None] * L + sg_id).reshape(-1)
    exp, checked, src = expected_rotation(
        vals.reshape(G * L, case.width),
        key,
        sg_lid.reshape(-1),
        sg_size.reshape(-1),
        sg_max.reshape(-1),
        np.repeat(d, L),
        case.cluster or None,
        case.rule,
    )
    n = G * L
    return {
        "launch": ln,
        "vals": vals.reshape(n, case.width),
        "out": out.reshape(n, case.width),
        "exp": exp,
        "checked": checked,
        "src": src,
        "group": np.repeat(np.arange(G), L),
        "item": np.tile(np.arange(L), G),
        "sg_id": sg_id.reshape(-1),
        "sg_lid": sg_lid.reshape(-1),
        "sg_size": sg_size.reshape(-1),
        "d": d,
    }


def run_rotate(case, backend, seed: int) -> RotateResult:
    rng = case_rng(seed, f"{case.family}[{case.id}]")
    runs = [_one_launch(case, backend, rng, ln) for ln in rotate_launches(case)]
    cat = {k: np.concatenate([r[k] for r in runs]) for k in ("out", "exp", "checked")}
    which = np.concatenate([np.full(len(r["out"]), i) for i, r in enumerate(runs)])
    base = np.cumsum([0] + [len(r["out"]) for r in runs])
    out, exp, checked = cat["out"], cat["exp"], cat["checked"]
    mask = np.uint64((1 << case.gentype.bits) - 1)
    ok = (exp & mask) == (out & mask)
    t = etype(case.gentype.etype)

    def _at(j):
        r = runs[int(which[j])]
        return r, j - int(base[int(which[j])])

    def where(s, j, c):
        r, k = _at(j)
        return int(r["item"][k]), c

    def hint(s, j, c):
        r, k = _at(j)
        ln, g = r["launch"], int(r["group"][k])
        lid, size = int(r["sg_lid"][k]), int(r["sg_size"][k])
        first = k - lid
        got = r["out"][k, c]
        lanes = [int(x) for x in np.flatnonzero(r["vals"][first : first + size, c] == got)]
        said = f"matches lane {lanes[0]}" if lanes else "matches no lane of the subgroup"
        return (
            f"work-groups of {ln.local} (partial subgroup of {ln.tail}), group {g}: delta {int(r['d'][g])} "
            f"({ln.deltas[g][0]}, {ln.form(g)}), subgroup {int(r['sg_id'][k])} lane {lid} of {size}: "
            f"expected lane {int(r['src'][k])}'s value; got one that {said}"
        )

    # reads of inactive lanes are not checked, nor counted as checked elements
    v = compare(exp[None], out[None], t, ok[None], "exact", where, hint=hint, checked=checked[None, :, None])
    for r in runs:
        ln = r["launch"]
        forms = " (each delta read from a buffer, then as a constant)" if any(ln.const) else ""
        v.notes.append(
            f"{ln.groups} work-groups x {ln.local} work-items (partial subgroup of {ln.tail}), "
            f"deltas {[x for _, x in ln.deltas[: len(set(ln.deltas))]]}{forms}; "
            f"{int((~r['checked']).sum())} invocations read an inactive lane (not checked)"
        )
    inputs = {}
    for r in runs:
        ln = r["launch"]
        inputs[f"values_wg{ln.local}"] = r["vals"].reshape(ln.groups, ln.local, case.width)
        inputs[f"deltas_wg{ln.local}"] = r["d"]
        inputs[f"const_wg{ln.local}"] = np.array(ln.const, dtype=np.int32)
    return RotateResult(v, inputs, exp, out)
