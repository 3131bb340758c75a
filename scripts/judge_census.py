"""Census of the verdicts on the emulator: for every family, the cases each
named emulator fault fails (its kill set), the cases the clean emulator and
every device model of reference/devmodel.py fail, and counts.

Run before and after a change to the judging code and compare the JSON files
(``--compare OLD NEW``): every fault must still fail every case it failed
before, and every legal model must still pass what it passed.

    python scripts/judge_census.py --out census.json [--families intel,coop]
    python scripts/judge_census.py --compare old.json new.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from cts.backends.base import CaseError
from cts.backends.emulator import EmulatorBackend
from cts.errors import Unsupported
from reference.data import TIERS
from reference.devmodel import MODELS

SEED = 1


def _families() -> dict:
    """family -> (cases, run(case, backend) -> verdict, fault names, models apply)."""
    from cts.backends.emu_coop import COOP_FAULTS
    from cts.backends.emu_coop2 import COOP2_FAULTS
    from cts.backends.emu_joint import JOINT_FAULTS
    from cts.backends.emu_mlir import MLIR_FAULTS
    from cts.backends.emu_rotate import ROTATE_FAULTS
    from cts.backends.emu_spirv import SpirvEmulation
    from cts.backends.emulator import FAULTS as INTEL_FAULTS
    from cts.families.coop import coop_cases, load_profile
    from cts.families.coop2 import ASSUMED, coop2_cases
    from cts.families.intel import intel_mma_cases, intel_split_cases, tf32_convert_cases
    from cts.families.joint import joint_cases
    from cts.families.mlir import mlir_cases
    from cts.families.rotate import rotate_cases
    from cts.families.spirv_intel import spirv_intel_cases
    from cts.runs.coop import run_coop
    from cts.runs.coop2 import run_coop2
    from cts.runs.intel import run_intel_mma, run_tf32_convert
    from cts.runs.joint import run_joint
    from cts.runs.mlir import run_mlir
    from cts.runs.rotate import run_rotate
    from cts.runs.spirv import run_spirv_intel_mma

    numerics = ("numerics_order_drift", "numerics_rne_ties_away")
    h100 = load_profile("h100")
    coop = coop_cases(h100.entries, TIERS, h100.subgroup_size, ("vk",))
    coop += [
        c for c in coop_cases(load_profile("amd_rdna3").entries, TIERS, 32, ("vk",)) if c.entry is not None
    ]

    def intel(c, be):
        if c.family == "intel_tf32_convert":
            return run_tf32_convert(c, be, SEED)
        return run_intel_mma(c, be, SEED, subgroups=8)

    return {
        "intel": (
            intel_mma_cases(TIERS) + intel_split_cases(TIERS) + tf32_convert_cases(TIERS),
            intel,
            [*INTEL_FAULTS, *numerics],
            True,
        ),
        "spirv": (
            spirv_intel_cases(TIERS),
            lambda c, be: run_spirv_intel_mma(c, be, SEED, subgroups=8),
            list(SpirvEmulation.FAULTS),
            True,
        ),
        "coop": (coop, lambda c, be: run_coop(c, be, SEED, subgroups=4), list(COOP_FAULTS), True),
        "coop2": (
            coop2_cases(h100.entries, ASSUMED, h100.subgroup_size),
            lambda c, be: run_coop2(c, be, SEED),
            list(COOP2_FAULTS),
            False,
        ),
        "joint": (
            joint_cases(TIERS),
            lambda c, be: run_joint(c, be, SEED, subgroups=4),
            list(JOINT_FAULTS),
            False,
        ),
        "mlir": (
            [c for c in mlir_cases() if c.sg in (8, 16) or c.op == "gpu_rotate"],
            lambda c, be: run_mlir(c, be, SEED),
            list(MLIR_FAULTS),
            False,
        ),
        "rotate": (
            [c for c in rotate_cases() if c.sg in (8, 16)],
            lambda c, be: run_rotate(c, be, SEED),
            list(ROTATE_FAULTS),
            False,
        ),
    }


def _judge(cases, run, be) -> dict:
    """case id -> "pass", "skip" or "fail:<wrong elements>" / "error"."""
    out = {}
    for c in cases:
        key = f"{c.family}[{c.id}]"
        if be.unsupported(c):
            out[key] = "skip"
            continue
        try:
            v = run(c, be).verdict
            out[key] = "pass" if v.passed else f"fail:{v.failures}"
        except Unsupported:
            out[key] = "skip"
        except CaseError:
            out[key] = "error"
    return out


def census(families: list[str]) -> dict:
    fams = _families()
    res: dict = {}
    for name in families:
        cases, run, faults, modelled = fams[name]
        t0 = time.time()
        entry = {
            "cases": len(cases),
            "clean": _judge(cases, run, EmulatorBackend()),
            "faults": {},
            "models": {},
        }
        for f in faults:
            entry["faults"][f] = [
                k for k, v in _judge(cases, run, EmulatorBackend((f,))).items() if v != "pass"
            ]
        if modelled:
            for m in MODELS:
                be = EmulatorBackend()
                be.set_model(m)
                entry["models"][m] = _judge(cases, run, be)
        entry["seconds"] = round(time.time() - t0, 1)
        res[name] = entry
        print(f"{name}: {len(cases)} cases, {entry['seconds']} s", file=sys.stderr)
    return res


def summary(c: dict) -> list[str]:
    lines = []
    for fam, e in c.items():
        clean = list(e["clean"].values())
        lines.append(
            f"{fam}: {e['cases']} cases, clean pass {clean.count('pass')} skip {clean.count('skip')} "
            f"fail {sum(v.startswith('fail') for v in clean)} error {clean.count('error')}; "
            f"faults {len(e['faults'])}, uncaught {[f for f, k in e['faults'].items() if not k]}"
        )
        for m, r in e["models"].items():
            vals = list(r.values())
            lines.append(
                f"  model {m}: pass {vals.count('pass')} skip {vals.count('skip')} "
                f"fail {sum(v.startswith('fail') for v in vals)} error {vals.count('error')}"
            )
    return lines


def compare(old: dict, new: dict) -> list[str]:
    """What a new census lost: kills of a fault, passes of a model or of the clean emulator."""
    lost = []
    for fam, e in old.items():
        if fam not in new:
            continue
        n = new[fam]
        for f, kills in e["faults"].items():
            gone = sorted(set(kills) - set(n["faults"].get(f, [])))
            if gone:
                lost.append(f"{fam} fault {f}: no longer fails {len(gone)}: {gone[:4]}")
        for who, old_r, new_r in [("clean", e["clean"], n["clean"])] + [
            (f"model {m}", r, n["models"].get(m, {})) for m, r in e["models"].items()
        ]:
            worse = sorted(k for k, v in old_r.items() if v == "pass" and new_r.get(k, "pass") != "pass")
            if worse:
                lost.append(f"{fam} {who}: now fails {len(worse)}: {worse[:4]}")
    return lost


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out")
    p.add_argument("--families", default="intel,spirv,coop,coop2,joint,mlir,rotate")
    p.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    a = p.parse_args(argv)
    if a.compare:
        old, new = (json.load(open(f)) for f in a.compare)
        print("\n".join(summary(old)) + "\n--- new\n" + "\n".join(summary(new)))
        lost = compare(old, new)
        print("\n".join(lost) if lost else "nothing lost")
        return 1 if lost else 0
    c = census(a.families.split(","))
    json.dump(c, open(a.out, "w"), indent=0)
    print("\n".join(summary(c)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
