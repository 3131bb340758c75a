"""Re-judge a committed MLIR-family journal under the layer rules, with the
suite's own code and Debian's mlir-opt 22.1.8 (the version of the runs):

* the suite's text is checked by mlir-opt first: an op variant MLIR 22 lacks
  is now a skip naming the version, a verifier error on the suite's text a
  harness error (layer suite), neither a toolchain verdict;
* the module the toolchain produced for the device (the Vulkan target env
  from the device's facts, or PTX for the CUDA chip) is lowered again here
  and its findings taken (``spirv-val`` for the device's target env and the
  rules it lacks; the PTX pitfalls): a wrong or refused result from a module
  shown invalid is the toolchain's verdict, never the device's, and an
  expectations entry no longer turns it into an xfailed device verdict;
* a pass from such a module stays a pass, its findings recorded.

    CTS_MLIR_TOOLS=... python reports/h200-mlir/retriage.py JOURNAL.jsonl.gz OUT.jsonl.gz \\
        (--vulkan-facts device.json | --cuda-chip sm_90)
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

from cts.errors import CaseError, HarnessError, ToolchainError, Unsupported  # noqa: E402
from cts.families.mlir import mlir_cases  # noqa: E402
from cts.report.journal import layer_of  # noqa: E402
from cts.runs.mlir import run_mlir  # noqa: E402

DROP = ("verdict", "max_ratio", "max_error", "rule", "error", "layer", "toolchain", "findings")
BAD = ("failed", "xfailed", "xpassed", "crash", "timeout")


def _backend(a):
    if a.vulkan_facts:
        from mlir_prelower import _planted_vulkan

        b = _planted_vulkan(json.loads(Path(a.vulkan_facts).read_text()))
        b._dispatch = lambda code, order, arrays, *x, **k: {n: np.array(arrays[n]) for n in order}
        return b
    from cts.backends.cuda import CudaBackend

    b = CudaBackend()
    b._ready, b.chip = True, a.cuda_chip
    b._execute = lambda ptx, entry, prog, buffers: {n: np.array(v) for n, v in buffers.items()}
    return b


def judge_again(row: dict, case, b, seed: int) -> dict:
    """The row under the layer rules (the device's own result kept)."""
    new = dict(row)
    try:
        run_mlir(case, b, seed)  # lowers (the stubbed launch returns the inputs: no verdict here)
    except Unsupported as e:
        for k in DROP:
            new.pop(k, None)
        return {**new, "outcome": "skipped", "reason": str(e)}
    except ToolchainError:
        return new  # a lowering refusal: the toolchain verdict it was
    except HarnessError as e:
        for k in DROP:
            new.pop(k, None)
        return {**new, "outcome": "error", "reason": f"HARNESS ERROR [layer: suite]: {e}", "layer": "suite"}
    except (CaseError, ValueError):
        pass
    tool, findings = b.take_module_findings()
    if findings:
        new["findings"] = findings
        if row["outcome"] in BAD and row["outcome"] != "xpassed":
            what = row.get("error") or row.get("reason") or ""
            new.update(
                outcome="error",
                toolchain=tool,
                layer="toolchain",
                reason=f"TOOLCHAIN VERDICT [layer: toolchain] (a module {tool} produced is invalid: "
                f"{'; '.join(findings)}; the device's result: {what[:1500]})",
            )
        elif row["outcome"] == "xpassed":
            new.update(outcome="passed", reason="")
    return new


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("journal")
    ap.add_argument("out")
    ap.add_argument("--vulkan-facts")
    ap.add_argument("--cuda-chip", default="")
    a = ap.parse_args()
    b = _backend(a)
    cases = {c.id: c for c in mlir_cases()}
    rows = []
    for line in gzip.open(a.journal, "rt"):
        row = json.loads(line)
        if (
            "outcome" in row
            and not row.get("kind")
            and row["outcome"] != "skipped"
            and row["case_id"] in cases
        ):
            row = judge_again(row, cases[row["case_id"]], b, int(row.get("seed") or 1))
            layer = layer_of(row)
            if layer:
                row["layer"] = layer
        rows.append(row)
    with gzip.open(a.out, "wt") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


if __name__ == "__main__":
    main()
