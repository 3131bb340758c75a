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

What does not depend on the data is worked out once per subgroup size,
cluster, rule and launches (:func:`_plan`, cached, read-only): the deltas,
and the reference's sources for the map a device forming subgroups of
consecutive work-items reports.  A device that reports exactly that map
gets those sources; any other usable map gets the reference's sources from
its own map.  A backend offering ``run_subgroup_rotate_launches`` (the
emulator) takes all launches of a case in one call; any other runs them as
separate dispatches, one after the other.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from cts.errors import CaseError
from cts.families.rotate import Launch, nonuniform_active, rotate_launches
from cts.judge import CaseResult, Rule, compare
from cts.judge.sentinel import WIDTH_PATTERN
from reference.data import case_rng
from reference.dtypes import etype
from reference.rotate import rotation_sources

__all__ = ["run_rotate", "rotate_values"]


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
    rows_left = np.arange(rows)  # rows that may repeat a value: all, then those drawn again
    while True:
        s = np.sort(x[rows_left], axis=1)
        bad = rows_left[(s[:, 1:] == s[:, :-1]).any(axis=1)]
        if not bad.size:
            return x
        # in each bad row, every item whose value an earlier item of the row holds (a stable
        # sort keeps equal values in item order: all but the first of each run repeat)
        order = np.argsort(x[bad], axis=1, kind="stable")
        s = np.take_along_axis(x[bad], order, axis=1)
        again = np.zeros(order.shape, dtype=bool)
        np.put_along_axis(again, order[:, 1:], s[:, 1:] == s[:, :-1], axis=1)
        r, j = np.nonzero(again)  # row by row, items in order
        # few rows (L*L/2n repeats expected per row), each drawn again in one call of its own
        x[bad[r], j] = np.concatenate([rng.integers(0, n, size=k) for k in again.sum(axis=1).tolist()])
        rows_left = bad


def rotate_values(case, G: int, L: int, rng: np.random.Generator) -> np.ndarray:
    """(G, L, W) raw bits, distinct within each work-group where the type has
    room (8-bit: a permutation), finite floats with +-0, +-inf, subnormals
    planted (a rotate moves bits, so all of them must survive)."""
    g, W = case.gentype, case.width
    shape = (G, L, W)
    # (int64 draws are never negative here: viewed as uint64 they keep their values)
    if g.kind == "bool":
        return rng.integers(0, 2, size=shape).view(np.uint64)
    bits = g.bits
    if bits <= 16:  # distinct per work-group and component (L <= 160 < 256)
        out = _distinct(rng, 1 << bits, G * W, L).reshape(G, W, L).transpose(0, 2, 1).astype(np.uint64)
    else:
        out = rng.integers(0, 1 << 62, size=shape, dtype=np.int64).view(np.uint64)
        out <<= np.uint64(2)
        out ^= rng.integers(0, 4, size=shape).view(np.uint64)
        out &= np.uint64((1 << bits) - 1)
    if g.kind in ("int", "uint"):
        _avoid_sentinel(out, bits)
    if g.kind == "float":  # (the sentinels of float widths are NaNs: never among finite values)
        t = etype(g.etype)
        exp_mask = np.uint64(((1 << t.exp_bits) - 1) << t.man_bits)
        nonfinite = (out & exp_mask) == exp_mask
        np.bitwise_xor(out, np.uint64(1 << t.man_bits), out=out, where=nonfinite)  # clear an exponent bit
        sp = np.array(_float_specials(g.etype), dtype=np.uint64)
        plant = rng.random(shape) < 0.1
        np.copyto(out, sp.take(rng.integers(0, len(sp), size=shape)), where=plant)
    return out


def _avoid_sentinel(values: np.ndarray, bits: int) -> None:
    """Replace, in place, every value equal to the output sentinel of its
    width (cts.judge.sentinel) by a value its work-group and component do
    not hold, so a result equal to the sentinel is never written."""
    pat = np.uint64(WIDTH_PATTERN[bits])
    for g, i, w in zip(*np.nonzero(values == pat)):
        held = set(values[g, :, w].tolist())
        k = 1
        while (int(pat) + k) % (1 << bits) in held:
            k += 1
        values[g, i, w] = (int(pat) + k) % (1 << bits)


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


_MAP_BUILTINS = {
    "opencl_c": ("get_sub_group_size()", "get_sub_group_local_id()"),
    "spirv": ("BuiltIn SubgroupSize", "BuiltIn SubgroupLocalInvocationId"),
}


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
                size_fn, lid_fn = _MAP_BUILTINS[case.api]
                problems.append(
                    f"group {g} subgroup {int(k)} (the work-items reporting that subgroup id): {size_fn} "
                    f"{sizes.tolist()}, {lid_fn} {lids.tolist()[:16]} (not 0 .. size-1, each once)"
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


class _Plan(NamedTuple):
    """Everything of a case's launches that does not depend on the data
    (cached per subgroup size, cluster, rule and launches; arrays
    read-only): the deltas and constant selectors each launch passes, where
    each launch starts among the concatenated work-items, the subgroup map
    a device forming subgroups of consecutive work-items reports, and the
    reference's sources for that map (:func:`_launch_reference`, the same
    call as for any other map a device reports)."""

    launches: tuple[Launch, ...]
    deltas: tuple[np.ndarray, ...]  # per launch (G,), int64
    const: tuple[np.ndarray, ...]  # per launch (G,), int32
    base: tuple[int, ...]  # first work-item of each launch, and the total n
    maps: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]  # usual (sg_id, sg_lid, sg_size), each (L,)
    index: np.ndarray  # (n,) row of the expected value among the launches' values, n where unchecked
    checked: np.ndarray  # (n,)
    src: np.ndarray  # (n,) source local id
    notes: tuple[str, ...]  # per launch, up to the count of unchecked reads


def _readonly(*arrays: np.ndarray) -> None:
    for a in arrays:
        a.flags.writeable = False


def _launch_reference(
    cluster: int, rule: str, G: int, L: int, d: np.ndarray, sg_id, sg_lid, sg_size, sg_max, bits=32, flow=""
):
    """The reference's sources of one launch from the subgroup map the
    device reported ((G, L) each): index among the launch's work-items (-1
    where none), checked, source local id, each (G * L,).  ``flow``
    "nonuniform": lanes outside the branch (cts.families.rotate.
    nonuniform_active) are checked to keep their own value (the kernel's
    else path); lanes inside it whose source is outside are not checked."""
    lid = sg_lid.reshape(-1)
    active = nonuniform_active(lid) if flow == "nonuniform" else None
    idx, checked, src = rotation_sources(
        (np.arange(G)[:, None] * L + sg_id).reshape(-1),
        lid,
        sg_size.reshape(-1),
        sg_max.reshape(-1),
        np.repeat(d, L),
        cluster or None,
        rule,
        bits,
        active,
    )
    if active is not None:
        own = ~active
        idx = np.where(own, np.arange(lid.size), idx)
        checked = checked | own
        src = np.where(own, lid, src)
    return idx, checked, src


@lru_cache(maxsize=512)
def _plan(
    sg: int, cluster: int, rule: str, launches: tuple[Launch, ...], bits: int = 32, flow: str = ""
) -> _Plan:
    deltas, const, base, maps, idx, checked, src, notes = [], [], [0], [], [], [], [], []
    for ln in launches:
        G, L = ln.groups, ln.local
        d = np.array([v for _, v in ln.deltas], dtype=np.int64)
        c = np.array(ln.const, dtype=np.int32)
        lid = np.arange(L)
        usual = (lid // sg, lid % sg, np.minimum(sg, L - (lid // sg) * sg))
        _readonly(d, c, *usual)
        sid, slid, size = (np.broadcast_to(x, (G, L)) for x in usual)
        i, ok, s = _launch_reference(cluster, rule, G, L, d, sid, slid, size, np.full((G, L), sg), bits, flow)
        idx.append(np.where(ok, i + base[-1], -1))
        checked.append(ok)
        src.append(s)
        forms = " (each delta read from a buffer, then as a constant)" if any(ln.const) else ""
        notes.append(
            f"{ln.groups} work-groups x {ln.local} work-items (partial subgroup of {ln.tail}), "
            f"deltas {[x for _, x in ln.deltas[: len(set(ln.deltas))]]}{forms}"
        )
        deltas.append(d)
        const.append(c)
        maps.append(usual)
        base.append(base[-1] + G * L)
    n = base[-1]
    index = np.concatenate([*idx, np.zeros(0, dtype=np.int64)])
    index = np.where(index >= 0, index, n)
    checked_all = np.concatenate([*checked, np.zeros(0, dtype=bool)])
    src_all = np.concatenate([*src, np.zeros(0, dtype=np.int64)])
    _readonly(index, checked_all, src_all)
    return _Plan(
        launches,
        tuple(deltas),
        tuple(const),
        tuple(base),
        tuple(maps),
        index,
        checked_all,
        src_all,
        tuple(notes),
    )


def _is_usual(case, usual, sg_id, sg_lid, sg_size, sg_max) -> bool:
    """True when the device reported exactly the usual map (subgroups of
    ``case.sg`` consecutive work-items, the last partial, maximum size
    ``case.sg``): :func:`_check_map` finds nothing wrong with it, and the
    plan's reference sources are the ones it gives."""
    sid, lid, size = usual
    shape = (sg_id.shape[0], sid.shape[0]) if sg_id.ndim == 2 else None
    return (
        sg_id.shape == sg_lid.shape == sg_size.shape == sg_max.shape == shape
        and _all_equal(sg_lid, lid)
        and _all_equal(sg_id, sid)
        and _all_equal(sg_size, size)
        and _all_equal(sg_max, case.sg)
    )


def _all_equal(a: np.ndarray, b) -> bool:
    """``(a == b).all()`` for ``a`` (G, L) and ``b`` (L,) or a number,
    reading a single row of ``a`` where all its rows are one in memory (a
    broadcast array: stride 0 along axis 0)."""
    if a.shape[0] > 1 and a.strides[0] == 0:
        a = a[:1]
    return bool((a == b).all())


def _judged(case, ln, usual, res: dict) -> dict:
    """One launch's reported results as arrays, ``usual`` telling whether
    its subgroup map is the usual one; raises CaseError when the map is not
    usable."""
    G, L = ln.groups, ln.local
    rec = {k: np.asarray(res[k]) for k in ("sg_id", "sg_lid", "sg_size", "sg_max")}
    rec["out"] = np.asarray(res["out"], dtype=np.uint64).reshape(G, L, case.width)
    rec["usual"] = _is_usual(case, usual, rec["sg_id"], rec["sg_lid"], rec["sg_size"], rec["sg_max"])
    problems = (
        [] if rec["usual"] else _check_map(case, rec["sg_id"], rec["sg_lid"], rec["sg_size"], rec["sg_max"])
    )
    rec["notes"] = []
    if problems:
        members = _member_counts(rec["sg_id"])
        if (members != rec["sg_size"]).any() and not _check_map(
            case, rec["sg_id"], rec["sg_lid"], members, rec["sg_max"]
        ):
            # only the size built-in contradicts the subgroups the ids and local ids form: the
            # rotate is judged on those subgroups (its rule reads local ids, the maximum size and
            # which work-items exist, never the size built-in); the built-in's defect is the
            # verdict of the subgroup_builtins family
            rec["notes"].append(_size_note(case, L, rec["sg_id"], rec["sg_size"], members))
            rec["sg_size"] = members
            problems = []
    if problems:
        raise CaseError(
            f"subgroup map reported by the kernel (work-groups of {L}) is not usable: " + "; ".join(problems)
        )
    return rec


def _member_counts(sg_id: np.ndarray) -> np.ndarray:
    """(G, L): how many work-items of its work-group report each work-item's
    subgroup id (the subgroup's members)."""
    G, L = sg_id.shape
    key = np.repeat(np.arange(G), L) * (int(sg_id.max(initial=0)) + 1) + sg_id.reshape(-1)
    _, inv, counts = np.unique(key, return_inverse=True, return_counts=True)
    return counts[inv.reshape(-1)].reshape(G, L)


def _size_note(case, L: int, sg_id, sg_size, members) -> str:
    """Which size built-in was wrong where (a rotate note; the defect's verdict is elsewhere)."""
    g, i = (int(x) for x in np.argwhere(sg_size != members)[0])
    name = "get_sub_group_size()" if case.api == "opencl_c" else "BuiltIn SubgroupSize"
    bad = int(np.count_nonzero(sg_size != members))
    return (
        f"work-groups of {L}: {name} reported {int(sg_size[g, i])} in subgroup {int(sg_id[g, i])} of "
        f"{int(members[g, i])} work-items ({bad} work-items of the launch told a wrong size); the rotate is judged on the "
        "subgroups get_sub_group_id / get_sub_group_local_id form (OpenCL C 3.0, 6.15.1: get_sub_group_size "
        f'"Returns the number of work-items in the subgroup"); that defect is the verdict of '
        f"subgroup_builtins[{case.api}-sg{case.sg}-partial]"
    )


def _run_launches(case, backend, rng, plan: _Plan) -> tuple[list[np.ndarray], list[dict]]:
    """Every launch's values and judged results.  A backend with
    ``run_<family>_launches`` (the emulator) takes all launches of the case
    in one call; any other runs each as its own dispatch, and a launch's
    map is judged before the next one runs."""
    todo = list(zip(plan.launches, plan.deltas, plan.const, plan.maps))
    batch = getattr(backend, f"run_{case.family}_launches", None)
    if batch is not None:
        ops = [
            {"values": rotate_values(case, ln.groups, ln.local, rng), "deltas": d, "const": c}
            for ln, d, c, _ in todo
        ]
        res = batch(case, ops)
        return [o["values"] for o in ops], [_judged(case, t[0], t[3], r) for t, r in zip(todo, res)]
    vals, recs = [], []
    for ln, d, c, usual in todo:
        vals.append(rotate_values(case, ln.groups, ln.local, rng))
        recs.append(_judged(case, ln, usual, backend.run(case, values=vals[-1], deltas=d, const=c)))
    return vals, recs


def _sources(case, plan: _Plan, recs: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(index, checked, source) of every work-item of every launch: the
    plan's where the device reported the usual map, else the reference's
    from the device's own map."""
    if all(r["usual"] for r in recs):
        return plan.index, plan.checked, plan.src
    n = plan.base[-1]
    index, checked, src = plan.index.copy(), plan.checked.copy(), plan.src.copy()
    for i, (ln, r) in enumerate(zip(plan.launches, recs)):
        if not r["usual"]:
            lo, hi = plan.base[i], plan.base[i + 1]
            x, checked[lo:hi], src[lo:hi] = _launch_reference(
                case.cluster,
                case.rule,
                ln.groups,
                ln.local,
                plan.deltas[i],
                r["sg_id"],
                r["sg_lid"],
                r["sg_size"],
                r["sg_max"],
                case.dbits,
                case.flow,
            )
            index[lo:hi] = np.where(checked[lo:hi], x + lo, n)
    return index, checked, src


def run_rotate(case, backend, seed: int) -> CaseResult:
    rng = case_rng(seed, f"{case.family}[{case.id}]")
    plan = _plan(case.sg, case.cluster, case.rule, tuple(rotate_launches(case)), case.dbits, case.flow)
    vals, recs = _run_launches(case, backend, rng, plan)
    W, base, n = case.width, plan.base, plan.base[-1]
    flat = np.empty((n + 1, W), dtype=np.uint64)  # every launch's values, one after the other, and a 0 row
    out = np.empty((n, W), dtype=np.uint64)
    for i, (x, r) in enumerate(zip(vals, recs)):
        flat[base[i] : base[i + 1]] = x.reshape(-1, W)
        out[base[i] : base[i + 1]] = r["out"].reshape(-1, W)
    flat[n] = 0
    index, checked, src = _sources(case, plan, recs)
    exp = np.take(flat, index, axis=0)  # 0 where unchecked
    if case.gentype.bits == 64:
        ok = exp == out
    else:  # equal in the type's bits
        ok = np.bitwise_xor(exp, out)
        ok &= np.uint64((1 << case.gentype.bits) - 1)
        ok = ok == 0
    t = etype(case.gentype.etype)

    def _at(j):
        i = int(np.searchsorted(base, j, side="right")) - 1
        return i, j - base[i]

    def where(s, j, c):
        i, k = _at(j)
        return k % plan.launches[i].local, c

    def hint(s, j, c):
        i, k = _at(j)
        ln, r = plan.launches[i], recs[i]
        g = k // ln.local
        lid, size = int(r["sg_lid"].reshape(-1)[k]), int(r["sg_size"].reshape(-1)[k])
        first = k - lid
        got = out[j, c]
        lanes = [int(x) for x in np.flatnonzero(vals[i].reshape(-1, W)[first : first + size, c] == got)]
        said = f"matches lane {lanes[0]}" if lanes else "matches no lane of the subgroup"
        return (
            f"work-groups of {ln.local} (partial subgroup of {ln.tail}), group {g}: delta {int(plan.deltas[i][g])} "
            f"({ln.deltas[g][0]}, {ln.form(g)}), subgroup {int(r['sg_id'].reshape(-1)[k])} lane {lid} of {size}: "
            f"expected lane {int(src[j])}'s value; got one that {said}"
        )

    # reads of inactive lanes are not checked, nor counted as checked elements; an output still
    # holding the backend's fill (the sentinel of its width, which no input value equals) was
    # never written
    never = (out & np.uint64((1 << case.gentype.bits) - 1)) == np.uint64(WIDTH_PATTERN[case.gentype.bits])
    v = compare(
        exp[None],
        out[None],
        t,
        ok[None],
        Rule.B,
        where,
        hint=hint,
        checked=checked[None, :, None],
        unwritten=never[None],
    )
    for r in recs:
        v.notes.extend(r["notes"])
    for i, note in enumerate(plan.notes):
        unchecked = int(base[i + 1] - base[i] - np.count_nonzero(checked[base[i] : base[i + 1]]))
        v.notes.append(f"{note}; {unchecked} invocations read an inactive lane (not checked)")
    inputs = {}
    for ln, x, d, c in zip(plan.launches, vals, plan.deltas, plan.const):
        inputs[f"values_wg{ln.local}"] = x
        inputs[f"deltas_wg{ln.local}"] = d
        inputs[f"const_wg{ln.local}"] = c
    return CaseResult(v, inputs, exp, out)
