"""Re-judge the MLIR element-wise non-passes of a Vulkan journal under the
environment's float rules (cts/judge/env.py), from the journal alone.

A journal keeps each verdict's counts and its first mismatches (element,
expected, actual), not the whole result.  The inputs are regenerated from
the case and the run's seed (the run flow is deterministic), so for each
failed or xfailed element-wise case this prints how many elements the
module's environment (the lowered modules declare no float controls:
:data:`cts.judge.env.VULKAN`) leaves undefined and why, how many remain
judged, and whether every recorded mismatch lies among the undefined ones.

    python scripts/rejudge_env.py reports/h200-mlir/vulkan/journal.jsonl.gz
"""

from __future__ import annotations

import gzip
import json
import sys

import numpy as np

from cts.backends.emulator import EmulatorBackend
from cts.families.mlir import mlir_cases
from cts.judge.env import VULKAN
from cts.runs.mlir import ETYPE, run_mlir
from reference import mlir as ref
from reference.dtypes import etype


def _rows(path: str):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def rejudge(path: str) -> list[str]:
    rows = list(_rows(path))
    seed = next((r.get("seed") for r in rows if r.get("seed") is not None), 1)
    by_id = {c.id: c for c in mlir_cases()}
    out = []
    for r in rows:
        if r.get("outcome") not in ("failed", "xfailed") or r.get("family") != "mlir_mma":
            continue
        case = by_id.get(r.get("case_id"))
        if case is None or case.op != "elementwise" or ref.ELEMENTWISE[case.optype][1] == "i":
            continue
        xs = run_mlir(case, EmulatorBackend(), int(seed)).inputs["x"]
        ins = [np.asarray(x, dtype=np.float64) for x in xs]
        t = etype(
            ETYPE[
                case.elem
                if case.optype not in ("extf", "truncf")
                else {"extf": "f32", "truncf": "f16"}[case.optype]
            ]
        )
        with np.errstate(all="ignore"):
            exact = t.round(
                ref.elementwise_special(case.optype, ins)
                if case.data
                else ref.elementwise(case.optype, ins, case.elem)
            )
        v = r.get("verdict") or {}
        actual = exact.copy()
        for m in v.get("mismatches", []):
            actual[m["subgroup"], m["row"], m["col"]] = float(m["actual"])
        und = VULKAN.undefined(case.optype, ins, exact, actual, t.bits)
        if t.bits != etype(ETYPE[case.elem]).bits:
            und.update(VULKAN.undefined(case.optype, ins, exact, actual, etype(ETYPE[case.elem]).bits))
        any_und = np.zeros(exact.shape, dtype=bool)
        for m in und.values():
            any_und |= m
        rec = v.get("mismatches", [])
        inside = sum(bool(any_und[m["subgroup"], m["row"], m["col"]]) for m in rec)
        reasons = "; ".join(f"{k}: {int(m.sum())}" for k, m in und.items()) or "none"
        out.append(
            f"{case.id} ({r['outcome']}, {v.get('failures')} of {v.get('elements')} wrong): undefined by the "
            f"environment {int(any_und.sum())} elements ({reasons}); judged {int((~any_und).sum())}; "
            f"recorded mismatches inside the undefined ones: {inside} of {len(rec)}"
        )
    return out


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(f"# {p}")
        print("\n".join(rejudge(p)) or "no failed or xfailed element-wise float case")
