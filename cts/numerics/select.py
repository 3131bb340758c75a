"""A model is the device's only when random data cannot refute it.

The probes of :mod:`cts.numerics.probes` infer one model; random tiles then
judge it.  :func:`settle`:

1. checks the inferred model on random tiles of every distribution
   (``model_check``); if it reproduces at least :data:`AGREE` of the tiles
   of each bit for bit, it stands (status ``model``);
2. otherwise the tiles become evidence: fresh tiles of every distribution
   are run on the device once, and a coordinate search over the model space
   (every parameter of :class:`reference.devmodel.DevModel` the experiments
   decide, one change at a time, the best change kept, up to
   :data:`ROUNDS` changes) scores each candidate by the tiles it reproduces
   bit for bit and, as a tie-break, the probe results it reproduces;
3. the best candidate is then checked on new tiles (another seed) of every
   distribution: at least :data:`AGREE` of each, and it is the device's model
   (status ``selected``: the changes from the probe-inferred model are
   listed); else the status is ``unexplained``: "no model explains this
   device", with the best candidates and their agreement, and no model is
   reported as the device's.
"""

from __future__ import annotations

import numpy as np

from cts.numerics.model import DISTS, equal_bits, model_check, random_operands
from reference.devmodel import DevModel, model_mma

__all__ = ["AGREE", "ROUNDS", "settle", "search"]

AGREE = 0.999
ROUNDS = 6
EVIDENCE_TILES = 300  # per distribution

_SPACE = {
    "block": [0, 1, 2, 4, 8, 16],
    "order": ["forward", "reverse"],
    "c_position": ["first", "last"],
    "extra_bits": [None, 0, 1, 2, 3, 4, 5, 6, 8, 10, 13],
    "align": ["rz", "rd"],
    "align_ref": ["value", "inputs"],
    "acc_format": ["f32", "f16", "bf16", "f64"],
    "step_format": [None, "f32", "f64"],
    "acc_rounding": ["rne", "rna", "rz", "ru", "rd"],
    "out_rounding": ["rne", "rna", "rz", "ru", "rd"],
    "subnormal_acc": ["keep", "flush"],
    "subnormal_out": ["keep", "flush"],
}


def _products(t) -> list:
    return [None, t.a_type, "tf32", "f32"] if t.a_type != "f32" else [None, "f32"]


def _evidence(t, seed: int) -> list[tuple]:
    out = []
    for i, d in enumerate(DISTS):
        A, B, C = random_operands(t.a_type, t.c_type, EVIDENCE_TILES, t.M, t.N, t.K, seed * 7919 + i, d)
        out.append((A, B, C, np.asarray(t.mma(A, B, C), dtype=np.float64)))
    return out


def _score(model: DevModel, t, ev: list[tuple]) -> int:
    n = 0
    for A, B, C, D in ev:
        try:
            M = model_mma(model, A, B, C, t.a_type, t.c_type)
        except (ValueError, OverflowError):
            return -1
        n += int(equal_bits(D, M).reshape(D.shape[0], -1).all(axis=1).sum())
    return n


def search(t, start: DevModel, ev: list[tuple]) -> list[dict]:
    """Coordinate ascent from ``start`` scored on the evidence tiles; returns
    the best candidates seen (score, model, changes from ``start``), best
    first."""
    seen: dict[tuple, dict] = {}

    def key(m: DevModel) -> tuple:
        return tuple(sorted(m.as_dict().items()))

    def visit(m: DevModel, changes: list[str]) -> dict:
        k = key(m)
        if k not in seen:
            seen[k] = {"score": _score(m, t, ev), "model": m, "changes": changes}
        return seen[k]

    cur = visit(start, [])
    space = dict(_SPACE, product_format=_products(t))
    for _ in range(ROUNDS):
        best = cur
        for p, values in space.items():
            for v in values:
                if getattr(cur["model"], p) == v:
                    continue
                try:
                    m = cur["model"].with_(**{p: v})
                except ValueError:
                    continue
                c = visit(m, cur["changes"] + [f"{p}={v}"])
                if c["score"] > best["score"]:
                    best = c
        if best is cur:
            break
        cur = best
    return sorted(seen.values(), key=lambda c: (-c["score"], len(c["changes"])))[:6]


def _agreement(checks: dict) -> float:
    return min(c["tiles_bit_exact"] / max(1, c["tiles"]) for c in checks.values())


def settle(t, model: DevModel, tiles: int, seed: int, dists: list[str], jobs: int = 1) -> dict:
    """The verdict on the probe-inferred ``model`` (see the module docstring).
    Returns {"status", "model", "checks" (dist -> model_check result of the
    reported or best model), "candidates", "changes"}."""
    checks = {d: model_check(t, model, tiles, seed=seed, jobs=jobs, dist=d) for d in dists}
    if _agreement(checks) >= AGREE:
        return {"status": "model", "model": model, "checks": checks, "candidates": [], "changes": []}
    ev = _evidence(t, seed + 1)
    total = EVIDENCE_TILES * len(ev)
    cands = search(t, model, ev)
    listed = [
        {
            "changes": c["changes"] or ["(the probe-inferred model)"],
            "evidence_tiles": f"{c['score']}/{total}",
            "summary": c["model"].summary(),
        }
        for c in cands
    ]
    best = cands[0]
    out = {
        "model": best["model"],
        "candidates": listed,
        "changes": best["changes"],
        "refuted": _brief(checks),
    }
    if best["changes"] and best["score"] >= AGREE * total:
        again = {d: model_check(t, best["model"], tiles, seed=seed + 2, jobs=jobs, dist=d) for d in dists}
        if _agreement(again) >= AGREE:
            return {**out, "status": "selected", "checks": again}
        out["best_on_fresh_tiles"] = _brief(again)  # the candidate fit the evidence, not new data
    # the checks stay those of the probe-inferred model: it is what the record's summary names
    return {**out, "status": "unexplained", "checks": checks}


def _brief(checks: dict) -> dict:
    return {d: f"{c['tiles_bit_exact']}/{c['tiles']}" for d, c in checks.items()}
