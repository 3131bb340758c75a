"""The run of one cooperative-matrix case: the element mapping the device
reports (for diagnostics), then the operation's own run and verdict."""

from __future__ import annotations

import weakref

import numpy as np

from cts.families.coop import (
    CoopCase,
    MatType,
    owner_from_mapping,
)
from cts.judge import CaseResult
from cts.runs.coop.data import (
    SUBGROUPS_PER_CASE,
)
from cts.runs.coop.judge import (
    OWNER,
)
from cts.runs.coop.matrix_ops import decode_mapping, run_length, run_matrix_op
from cts.runs.coop.muladd import muladd_variant, run_muladd
from reference.data import case_rng
from reference.tolerance import PROFILES, Profile

__all__ = ["run_coop", "device_owner"]


def _result_type(case: CoopCase) -> MatType | None:
    if case.entry is not None:
        e = case.entry
        return MatType("C", e.M, e.N, e.R, e.scope)
    if case.op in ("store", "length"):
        return None  # store is judged over memory offsets, length over coverage
    m = case.mat
    return MatType(m.use, m.rows, m.cols, case.to or m.t, m.scope)


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
        return run_length(case, backend, rng, subgroups)
    if case.op == "muladd" and case.var:
        return muladd_variant(case, backend, rng, subgroups, profile)
    if case.op in ("muladd", "chain", "gemm"):
        return run_muladd(case, backend, rng, subgroups, profile)
    return run_matrix_op(case, backend, rng, subgroups, profile)


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
