"""On the GPU machine, after the pytest run of run.sh: (1) the four wrong
PTX variants of cts.kernels.ptx_joint.WRONG_VARIANTS, each over the mad
cases of the NVIDIA rows, counting the cases that catch it; (2) the cases
that also run through Vulkan's cooperative matrix (a reported property with
the same M, N, K and types), run through both paths with the same seed and
inputs, their D bits compared.  Writes oracle.json under the given folder.

    python3 reports/h200-cuda-joint/oracle.py OUT [SUBGROUPS]
"""

import json
import sys
import time
from collections import Counter

import numpy as np

from cts.backends import make_backend
from cts.errors import CaseError, Unsupported
from cts.families.joint import joint_cases, matching_entry
from cts.kernels.ptx_joint import WRONG_VARIANTS
from cts.runs.joint import run_joint
from cts.runs.joint_coop import coop_joint_device

TIERS = ("exact", "onehot", "random", "special", "rounding", "accprec")
SEED = 1


def _run(case, dev, S):
    try:
        r = run_joint(case, dev, SEED, subgroups=S)
    except Unsupported as e:
        return "skip", str(e)[:200], None
    except CaseError as e:
        return "error", str(e)[:300], None
    return ("pass" if r.verdict.passed else "fail"), r.verdict.summary()[:300], r


def mutants(cuda, cases, S) -> dict:
    out = {}
    for v in WRONG_VARIANTS:
        cuda.ptx_variant = v
        t0 = time.time()
        counts, caught, errors = Counter(), [], []
        for c in cases:
            if cuda.unsupported(c):
                counts["skip"] += 1
                continue
            if v == "stride_off_by_one" and "f64" not in c.types and counts["error"] >= 6:
                counts["not run (6 misaligned faults seen)"] += 1
                continue
            kind, why, _ = _run(c, cuda, S)
            counts[kind] += 1
            if kind == "fail":
                caught.append([c.id, why])
            elif kind == "error":
                errors.append([c.id, why])
        out[v] = {
            "what": WRONG_VARIANTS[v],
            "counts": dict(counts),
            "caught_by": caught,
            "errors": errors,
            "seconds": round(time.time() - t0, 1),
        }
        print(v, dict(counts), f"{time.time() - t0:.1f} s", flush=True)
    cuda.ptx_variant = None
    return out


def compare(cuda, vk, cases, S) -> list:
    got = vk.coop_entries()
    if got is None:
        return [{"error": f"no Vulkan cooperative matrix: {getattr(vk, 'reason', '')}"}]
    entries, _sg = got
    rows = []
    for c in cases:
        if c.op != "mad" or c.layouts != ("row", "row", "row", "row") or matching_entry(entries, c) is None:
            continue
        if cuda.unsupported(c):
            continue
        kc, wc, rc = _run(c, cuda, S)
        try:
            dev = coop_joint_device(c, vk)
            kv, wv, rv = _run(c, dev, S)
        except Unsupported as e:
            kv, wv, rv = "skip", str(e)[:200], None
        row = {"case": c.id, "tier": c.tier, "cuda": kc, "vulkan": kv}
        if rc is not None and rv is not None:
            a, b = np.asarray(rc.actual), np.asarray(rv.actual)
            row["elements"] = int(a.size)
            row["differ"] = int((a != b).sum())
            row["cuda_matches_expected"] = int((a == np.asarray(rc.expected)).sum())
            row["vulkan_matches_expected"] = int((b == np.asarray(rv.expected)).sum())
        else:
            row["why"] = wc if rc is None else wv
        rows.append(row)
        print("compare", row, flush=True)
    return rows


def f64_rounding(cuda, tiles: int = 64) -> dict:
    """f64 8x8x4 (the numerics fingerprint's probes do not reach a double
    accumulator): random tiles, D compared with (1) the exact A x B + C
    rounded once to nearest even, (2) a chain of fused multiply-adds in k
    order starting from C, each rounded to nearest even."""
    from fractions import Fraction

    from cts.numerics.cuda import cuda_mma

    rng = np.random.default_rng(7)
    M, N, K = 8, 8, 4
    A = rng.uniform(-1, 1, (tiles, M, K)) * 2.0 ** rng.integers(-30, 30, (tiles, M, K))
    B = rng.uniform(-1, 1, (tiles, K, N)) * 2.0 ** rng.integers(-30, 30, (tiles, K, N))
    C = rng.uniform(-1, 1, (tiles, M, N)) * 2.0 ** rng.integers(-30, 30, (tiles, M, N))
    D = cuda_mma(cuda, "f64", "f64", M, N, K, A, B, C)
    once = chain = both = total = 0
    for s in range(tiles):
        for i in range(M):
            for j in range(N):
                terms = [Fraction(A[s, i, k]) * Fraction(B[s, k, j]) for k in range(K)]
                exact = float(sum(terms, Fraction(C[s, i, j])))
                acc = Fraction(C[s, i, j])
                for t in terms:
                    acc = Fraction(float(acc + t))
                d = D[s, i, j]
                total += 1
                once += d == exact
                chain += d == float(acc)
                both += d == exact and d == float(acc)
    return {
        "elements": total,
        "equal_to_one_rounding": int(once),
        "equal_to_fma_chain_c_first": int(chain),
        "equal_to_both": int(both),
    }


def main() -> None:
    out = sys.argv[1]
    S = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    cases = [c for c in joint_cases(TIERS) if c.arch in ("sm70", "sm72", "sm80")]
    mads = [c for c in cases if c.op == "mad"]
    cuda = make_backend("cuda")
    res = {"device": cuda.describe().as_dict(), "subgroups": S}
    res["mutants"] = mutants(cuda, mads, min(S, 8))
    try:
        res["f64_rounding"] = f64_rounding(cuda)
        print("f64", res["f64_rounding"], flush=True)
    except Exception as e:  # noqa: BLE001
        res["f64_rounding"] = {"error": f"{type(e).__name__}: {e}"}
    try:
        vk = make_backend("vulkan")
        res["vulkan_device"] = vk.describe().as_dict()
        res["compare"] = compare(cuda, vk, mads, S)
    except Exception as e:  # noqa: BLE001 - the Vulkan side is optional here
        res["compare"] = [{"error": f"{type(e).__name__}: {e}"}]
    with open(f"{out}/oracle.json", "w") as f:
        json.dump(res, f, indent=1, default=str)


if __name__ == "__main__":
    main()
