"""Execution of one subgroup built-ins case: launch, read what every
work-item was told, judge each built-in by the OpenCL C sentence it must
keep (OpenCL C 3.0, 6.15.1 "Work-Item Functions"; the SPIR-V BuiltIns carry
the same values in the OpenCL SPIR-V environment).

How work-items are grouped into subgroups is the implementation's choice;
what each built-in says about that grouping is not.  The subgroups are the
sets of work-items of a work-group that report one ``get_sub_group_id()``;
then, per work-item (expected value, rule):

* size: the number of work-items of its subgroup ("Returns the number of
  work-items in the subgroup");
* id: its id's rank among the work-group's ids, so the ids are exactly
  0 .. get_num_sub_groups() - 1 ("a number from zero to
  get_num_sub_groups() - 1");
* local id: its rank inside its subgroup by reported local id, so the local
  ids are 0 .. size - 1, each once ("the unique work-item ID within the
  current subgroup");
* num: the number of distinct ids in its work-group ("the number of
  subgroups that the current work-group is divided into");
* max: the required size N ("the maximum size of a subgroup within the
  dispatch"; a kernel required to run at N, or a device whose only size is
  N);
* membership: a subgroup of N work-items, except one partial subgroup of
  ``local % N`` per work-group whose size is not a multiple of N (a kernel
  required to run at N cannot form smaller subgroups beside it).

Each check is one column of the verdict, so a failure names the built-in.
"""

from __future__ import annotations

import numpy as np

from cts.families.subgroup_builtins import BUILTINS, builtins_launches
from cts.judge import CaseResult, Rule, compare
from cts.judge.sentinel import WIDTH_PATTERN
from reference.dtypes import etype

__all__ = ["run_subgroup_builtins", "expected_builtins", "COLUMNS", "RULES"]

COLUMNS = (*(c for c, _, _ in BUILTINS), "membership")
RULES = {
    "size": 'OpenCL C 3.0, 6.15.1: get_sub_group_size "Returns the number of work-items in the subgroup"',
    "id": 'OpenCL C 3.0, 6.15.1: get_sub_group_id returns "a number from zero to get_num_sub_groups() - 1"',
    "local_id": 'OpenCL C 3.0, 6.15.1: get_sub_group_local_id "Returns the unique work-item ID within the current '
    'subgroup" (0 .. get_sub_group_size() - 1)',
    "num": 'OpenCL C 3.0, 6.15.1: get_num_sub_groups "Returns the number of subgroups that the current '
    'work-group is divided into"',
    "max": 'OpenCL C 3.0, 6.15.1: get_max_sub_group_size "Returns the maximum size of a subgroup within the '
    'dispatch" (the required size)',
    "membership": "cl_intel_required_subgroup_size / SPIR-V SubgroupSize execution mode: subgroups of the "
    "required size, one partial subgroup where the work-group size is not a multiple of it",
}


def _rank_within(keys: np.ndarray, order_by: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For (G, L) ``keys``: per work-item the number of work-items of its
    work-group with the same key (count), the key's dense rank among the
    work-group's keys, and the item's rank among those with its key when
    sorted by ``order_by`` then position."""
    G, L = keys.shape
    grp = np.repeat(np.arange(G), L)
    k = keys.reshape(-1).astype(np.int64)
    pos = np.tile(np.arange(L), G)
    ob = order_by.reshape(-1).astype(np.int64)
    uniq, inv, counts = np.unique(np.stack([grp, k], axis=1), axis=0, return_inverse=True, return_counts=True)
    inv = inv.reshape(-1)
    count = counts[inv]
    first_of_group = np.searchsorted(uniq[:, 0], uniq[:, 0], side="left")
    dense = (np.arange(len(uniq)) - first_of_group)[inv]
    order = np.lexsort((pos, ob, k, grp))
    start = np.ones(order.size, dtype=bool)
    start[1:] = (grp[order][1:] != grp[order][:-1]) | (k[order][1:] != k[order][:-1])
    firsts = np.flatnonzero(start)
    run = np.repeat(firsts, np.diff(np.append(firsts, order.size)))
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size) - run
    return count.reshape(G, L), dense.reshape(G, L), rank.reshape(G, L)


def expected_builtins(info: np.ndarray, sg: int) -> tuple[np.ndarray, np.ndarray]:
    """(expected, ok) each (G, L, 6) for what a launch's work-items reported
    (``info`` (G, L, 5) in the column order of BUILTINS): the values the
    rules of the module docstring give, and where the reported value keeps
    them (the membership column: expected N, ok where the rule holds)."""
    info = np.asarray(info).astype(np.int64)
    G, L, _ = info.shape
    sid, lid = info[..., 1], info[..., 2]
    members, dense, rank = _rank_within(sid, lid)
    num = np.array([len(np.unique(sid[g])) for g in range(G)], dtype=np.int64)
    exp = np.empty((G, L, 6), dtype=np.int64)
    exp[..., 0] = members
    exp[..., 1] = dense
    exp[..., 2] = rank
    exp[..., 3] = num[:, None]
    exp[..., 4] = sg
    exp[..., 5] = sg
    ok = np.empty((G, L, 6), dtype=bool)
    ok[..., :5] = info == exp[..., :5]
    tail = L % sg
    short = members != sg  # work-items in a subgroup of other than N members
    n_short = np.array([len(np.unique(sid[g][short[g]])) for g in range(G)])
    ok[..., 5] = ~short | ((n_short[:, None] == 1) & (members == tail) & (tail > 0))
    return exp, ok


def run_subgroup_builtins(case, backend, seed: int) -> CaseResult:
    del seed  # no data: what the device reports is the result
    launches = builtins_launches(case)
    Lmax = max(ln.local for ln in launches)
    S = sum(ln.groups for ln in launches)
    exp = np.zeros((S, Lmax, 6), dtype=np.uint64)
    act = np.zeros((S, Lmax, 6), dtype=np.uint64)
    ok = np.ones((S, Lmax, 6), dtype=bool)
    checked = np.zeros((S, Lmax, 6), dtype=bool)
    rows: list[tuple] = []  # per row of the verdict: (launch, work-group, info)
    inputs = {}
    s = 0
    for ln in launches:
        info = np.asarray(backend.run(case, groups=ln.groups, local=ln.local)["info"]).reshape(
            ln.groups, ln.local, 5
        )
        e, k = expected_builtins(info, case.sg)
        G, L = ln.groups, ln.local
        exp[s : s + G, :L] = e.astype(np.uint64)
        act[s : s + G, :L, :5] = info.astype(np.uint64)
        act[s : s + G, :L, 5] = e[..., 0].astype(np.uint64)  # membership: the subgroup's member count
        ok[s : s + G, :L] = k
        checked[s : s + G, :L] = True
        rows += [(ln, g, info[g]) for g in range(G)]
        inputs[f"info_wg{L}"] = info
        s += G

    def where(r, i, c):
        return i, c

    def hint(r, i, c):
        ln, g, info = rows[r]
        part = f" (partial subgroup of {ln.tail})" if ln.tail else ""
        name = case.builtin(COLUMNS[c]) if c < 5 else "subgroup membership (work-items sharing a subgroup id)"
        return (
            f"{name}: work-item {i} of work-group {g} (work-groups of {ln.local}{part}), in subgroup "
            f"{int(info[i, 1])} with local id {int(info[i, 2])}"
        )

    # a word still holding the backend's output fill (the 32-bit sentinel, far above any size or id)
    # was never written by the kernel
    never = act == np.uint64(WIDTH_PATTERN[32])
    never[..., 5] = never[..., 0]  # membership is derived from the reported ids and sizes
    v = compare(exp, act, etype("u32"), ok, Rule.I, where, hint=hint, checked=checked, unwritten=never)
    wrong = [c for c in range(6) if not (ok[..., c] | ~checked[..., c]).all()]
    for c in wrong:
        n = int(np.count_nonzero(~ok[..., c] & checked[..., c]))
        name = case.builtin(COLUMNS[c]) if c < 5 else "subgroup membership"
        v.notes.append(f"{name} wrong in {n} work-items; rule: {RULES[COLUMNS[c]]}")
    for ln in launches:
        v.notes.append(
            f"{ln.groups} work-groups x {ln.local} work-items"
            + (f" (partial subgroup of {ln.tail})" if ln.tail else "")
        )
    return CaseResult(v, inputs, exp, act)
