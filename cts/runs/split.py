"""Execution of one split-MMA case (cl_intel_subgroup_split_matrix_multiply_
accumulate, cl_intel_subgroup_split_matrix_multiply_accumulate) with a pairing-agnostic oracle.

Launch: work-groups of ``case.wg`` subgroups of 8 (2, 4 or 8).  With more
than two, at least two work-groups (so a pairing across work-groups shows).

Data: the suite proposes the pairs (2p, 2p+1) of consecutive subgroups: one
A matrix per proposed pair, subgroup 2p passing rows 0 .. M/2-1 and subgroup
2p+1 rows M/2 .. M-1 (the base extension's packing); every subgroup passes
its *own* B and accumulator, so each result says which A halves it used.

Verdict: the spec leaves which two subgroups pair up to the implementation
(its Issues, the first), so the oracle does not assume the proposed pairs.  It
finds, per work-group, partners that explain every subgroup's result with
its own B and accumulator and the A halves of itself and exactly one partner
in its work-group, partners mutual and distinct, either of the two first
(``reference.intel.split_pairings``).  Results are judged by the same rules
as the base built-ins (``cts.runs.intel.judge_mma``) under the pairing found;
the verdict's notes name it.  Where no such pairing exists, the mismatches
are reported against the proposed pairs, and each wrong subgroup's hint says
what its result matches instead: itself, a subgroup of another work-group, a
partner that does not pair back.
"""

from __future__ import annotations

import numpy as np

from cts.judge import CaseResult, sentinel
from cts.runs.intel_judge import SUBGROUPS_PER_CASE, judge_mma, onehot_hint, poison_ignored
from reference import layout
from reference.data import case_rng, mma_operands
from reference.dtypes import etype
from reference.intel import split_pairings
from reference.tolerance import PROFILES, Profile

__all__ = ["run_intel_split_mma", "split_subgroups"]

MAX_EXPLAINED = 4  # wrong subgroups whose partner finding a failing verdict's notes spell out


def split_subgroups(subgroups: int, wg: int) -> int:
    """Subgroups of a launch: ``subgroups`` as asked for one pair per
    work-group; else rounded up to whole work-groups, at least two of them
    and an even number (a work-group's neighbour is always there)."""
    if wg == 2:
        return subgroups
    step = 2 * wg
    return max(step, -(-subgroups // step) * step)


def run_intel_split_mma(
    case, backend, seed: int, profile: Profile = PROFILES["default"], subgroups: int = SUBGROUPS_PER_CASE
) -> CaseResult:
    rng = case_rng(seed, f"{case.family}[{case.id}]")
    a_t, b_t, acc_t = etype(case.a), etype(case.b), etype(case.acc)
    N, K, M, W = case.sg, case.k, case.M, case.wg
    S = split_subgroups(subgroups, W)
    G, h = S // W, M // 2

    A, B, C = mma_operands(case.tier, case.a, case.b, case.acc, M, K, N, S, rng)
    A = A[0::2]  # one A per proposed pair (2p, 2p+1)
    A_bits, B_bits, C_bits = a_t.encode(A), b_t.encode(B), acc_t.encode(C)
    b_regs = layout.b_register_image(B_bits, case.b_elem_bits)
    c_regs = layout.c_register_image(C_bits)
    a_regs = layout.split_a_register_images(A_bits, N, case.a_elem_bits)  # (S/2, 2, N, comps)
    poison_ignored(a_regs, case, rng, h)
    d_regs = backend.run(
        case,
        a=a_regs.reshape(G, W, *a_regs.shape[2:]),
        b=b_regs.reshape(G, W, *b_regs.shape[1:]),
        c=c_regs.reshape(G, W, *c_regs.shape[1:]),
    )
    D_bits = layout.c_from_registers(np.asarray(d_regs).reshape(S, N, M)) & np.uint64(acc_t.mask)
    halves = A.reshape(S, h, K)  # the half of A each subgroup passed

    A_full = np.repeat(A, 2, axis=0)  # the proposed pairs
    never = D_bits == np.uint64(sentinel.sentinel_bits(acc_t))  # the backend's fill is still there
    v, exp_bits, _ = judge_mma(case, A_full, B, C, D_bits, profile, unwritten=never)
    if v.passed:
        pairs: list = [[(u, u + 1) for u in range(g * W, (g + 1) * W, 2)] for g in range(G)]
    else:
        top_ok, bot_ok = _explained_halves(case, halves, B, C, D_bits, profile)
        pairs = split_pairings(top_ok, bot_ok, W)
        for found in pairs:
            for first, second in found or ():
                A_full[first] = A_full[second] = np.concatenate([halves[first], halves[second]])
        explain = _Explainer(top_ok, bot_ok, W, h)
        v, exp_bits, _ = judge_mma(
            case,
            A_full,
            B,
            C,
            D_bits,
            profile,
            hint=explain.hint(case, A_full, B, C, D_bits),
            unwritten=never,
        )
        if not v.passed:
            bad = [g for g, found in enumerate(pairs) if found is None]
            wrong = [u for g in bad for u in range(g * W, (g + 1) * W) if explain.why(u)]
            v.notes.append(
                f"no pairing explains work-group(s) {', '.join(map(str, bad[:8]))}"
                + ("" if len(bad) <= 8 else f" and {len(bad) - 8} more")
                + " (every subgroup: its own B and accumulator, the A halves of itself and one partner of its "
                "work-group, partners mutual and distinct; "
                "cl_intel_subgroup_split_matrix_multiply_accumulate)"
            )
            v.notes += [explain.why(u) for u in wrong[:MAX_EXPLAINED]]
    note = _pairing_note(pairs, W, h)
    if note:
        v.notes.append(note)
    inputs = {"A": A_full, "B": B, "C": C, "a_regs": a_regs, "b_regs": b_regs, "c_regs": c_regs}
    return CaseResult(v, inputs, exp_bits, D_bits)


def _explained_halves(case, halves, B, C, D_bits, profile) -> tuple[np.ndarray, np.ndarray]:
    """top_ok[x, u] / bot_ok[x, u]: the upper / lower M/2 result rows of
    subgroup u are right with the A half subgroup x passed in that place."""
    S, h = halves.shape[:2]
    top_ok = np.zeros((S, S), dtype=bool)
    bot_ok = np.zeros((S, S), dtype=bool)

    def quiet(s, r, c):  # no explanation needed while searching
        return ""

    for x in range(S):
        both = np.broadcast_to(np.concatenate([halves[x], halves[x]]), (S, 2 * h, halves.shape[2]))
        _, _, ok = judge_mma(case, both, B, C, D_bits, profile, hint=quiet)
        top_ok[x] = ok[:, :h].all(axis=(1, 2))
        bot_ok[x] = ok[:, h:].all(axis=(1, 2))
    return top_ok, bot_ok


class _Explainer:
    """What a wrong subgroup's result matches instead of a legal pairing."""

    def __init__(self, top_ok: np.ndarray, bot_ok: np.ndarray, wg: int, h: int):
        self.top_ok, self.bot_ok, self.wg, self.h = top_ok, bot_ok, wg, h
        self._cache: dict[int, str] = {}

    def name(self, u: int) -> str:
        return f"sg {u} (work-group {u // self.wg}, subgroup {u % self.wg})"

    def why(self, u: int) -> str:
        if u not in self._cache:
            self._cache[u] = self._why(u)
        return self._cache[u]

    def _why(self, u: int) -> str:
        tops = [int(x) for x in np.flatnonzero(self.top_ok[:, u])]
        bots = [int(y) for y in np.flatnonzero(self.bot_ok[:, u])]
        if not tops or not bots:
            return ""  # no half explains it: a wrong product, not a pairing finding
        cands = [(x, y) for x in tops for y in bots]
        if (u, u) in cands:
            return f"{self.name(u)}: its result uses its own A half as both halves (paired with itself)"
        own = [(x, y, y if x == u else x) for x, y in cands if u in (x, y)]
        for _, _, v in own:
            if v // self.wg != u // self.wg:
                return f"{self.name(u)}: paired across work-groups with {self.name(v)}"
        for x, y, v in own:
            if self.top_ok[x, v] and self.bot_ok[y, v]:
                return ""  # u and v explain each other: the wrong one is elsewhere
        for _, _, v in own:
            return (
                f"{self.name(u)}: takes the A half of {self.name(v)}, which does not pair back (not mutual)"
            )
        x, y = cands[0]
        return f"{self.name(u)}: its result uses the A halves of sg {x} and sg {y}, not its own"

    def hint(self, case, A_full, B, C, D_bits):
        """Mismatch hint: the pairing finding, else the one-hot explanation."""
        onehot = onehot_hint(case, A_full, B, C, D_bits, etype(case.acc)) if case.tier == "onehot" else None

        def explain(s: int, r: int, c: int) -> str:
            return self.why(s) or (onehot(s, r, c) if onehot else "")

        return explain


def _pairing_note(pairs: list, wg: int, h: int) -> str:
    """The pairing found, per work-group in local subgroup numbers (first,
    second: the first passes rows 0 .. h-1); "" where none was."""

    def local(found) -> str:
        if found is None:
            return "none"
        return " ".join(f"({a % wg},{b % wg})" for a, b in found)

    if all(p is None for p in pairs):
        return ""
    texts = [local(p) for p in pairs]
    head = f"pairing found (first, second; the first passes rows 0..{h - 1} of A)"
    if len(set(texts)) == 1:
        return f"{head}: every work-group of {wg} subgroups {texts[0]}"
    shown = "; ".join(f"wg {g} {t}" for g, t in enumerate(texts[:8]))
    return f"{head}: {shown}" + ("" if len(texts) <= 8 else f"; ... ({len(texts)} work-groups)")
