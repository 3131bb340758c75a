"""How a cooperative-matrix output is filled and judged (cts.runs.coop and its
OpenCL / KHR forms): sentinel fills unlike the expected value
(cts.judge.sentinel), the exact and range verdicts over the outputs, and the
element -> (invocation, index) names of the diagnostics.

The element-to-invocation mapping is implementation-defined (SPV_KHR_cooperative_matrix
"Cooperative Matrix" overview): a mismatch names the holder the backend reports (``OWNER``), or none.
"""

from __future__ import annotations

import contextvars

import numpy as np

from cts.families.coop import CoopCase, storage_dtype
from cts.judge import Verdict, compare, exact_verdict, sentinel
from reference import coop as rc
from reference.dtypes import ElemType

__all__ = [
    "OWNER",
    "nowhere",
    "exact_out",
    "fill_out",
    "judge_out",
    "store_cells",
    "sentinel_cells",
    "range_verdict",
]

OWNER: contextvars.ContextVar = contextvars.ContextVar("coop_owner", default=None)


def nowhere(s: int, r: int, c: int) -> tuple[int, int]:
    """(invocation, element index) that holds result element (r, c): the
    mapping is implementation-defined, so it is the one the backend reports
    (its ``coop_owner``: the length case's record on a device), or (-1, -1)."""
    owner = OWNER.get()
    if owner is None:
        return -1, -1
    tile = owner.shape[:2]
    inv, idx = owner[r % tile[0], c % tile[1]]
    return int(inv), int(idx)


def exact_out(exp_bits, act_bits, t: ElemType, unwritten=None) -> Verdict:
    return exact_verdict(exp_bits, act_bits, t, nowhere, unwritten=unwritten)


def fill_out(t: ElemType, shape, exp_bits=None) -> np.ndarray:
    """An output buffer holding the sentinel of ``t`` (cts.judge.sentinel),
    different from ``exp_bits`` (the expected result) in every element."""
    e = None if exp_bits is None else np.asarray(exp_bits).reshape(shape)
    return sentinel.fill(t, shape, storage_dtype(t.name), expected=e)


def judge_out(exp, out, filled, t: ElemType, shape) -> Verdict:
    """Value identity of an output buffer; elements still holding the fill are never written."""
    act = out.reshape(shape)
    return exact_out(exp, act, t, sentinel.unwritten(act, filled.reshape(shape), t))


def store_cells(case: CoopCase, x: np.ndarray, dst: np.ndarray, stride: int) -> np.ndarray:
    """(S, L) True at the cells of the destination region a store of ``x`` writes."""
    marker = np.ones(x.shape, dtype=np.uint8)
    return rc.to_image(marker, case.layout, stride, np.zeros(dst.shape, dtype=np.uint8)) == 1


def sentinel_cells(dst: np.ndarray, exp: np.ndarray, cells: np.ndarray, t: ElemType) -> np.ndarray:
    """``dst`` with the ``cells`` a store writes set to the sentinel (different
    from the stored value ``exp``); the padding keeps its canaries."""
    return np.where(cells, sentinel.fill(t, dst.shape, dst.dtype, expected=exp), dst)


def range_verdict(
    lo, hi, act_bits, t: ElemType, rule: str, zero_sign: bool = False, unwritten=None
) -> Verdict:
    a = np.asarray(act_bits).astype(np.uint64) & np.uint64(t.mask)
    av = t.decode(a)
    with np.errstate(invalid="ignore"):
        ok = ((av >= lo) & (av <= hi)) | (np.isnan(lo) & np.isnan(av))
        if zero_sign:  # SignedZeroInfNanPreserve: an exact zero keeps its sign
            ok &= (lo != 0) | (hi != 0) | (np.signbit(lo) == np.signbit(av))
        err = np.where(np.isfinite(av) & np.isfinite(lo), np.maximum(lo - av, av - hi).clip(0), 0.0)
    return compare(
        t.encode(lo), a, t, ok, rule, nowhere, error=err, bound=np.zeros_like(err), unwritten=unwritten
    )
