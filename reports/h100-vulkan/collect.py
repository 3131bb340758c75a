"""Device facts for the cooperative-matrix report (run on the GPU machine):
the driver, the VkCooperativeMatrixPropertiesKHR table, the features, and
the element-to-invocation mapping of every matrix type (implementation-
defined, recorded, never checked).  Writes device.md and device.json into
the directory given as argv[1].

    python3 reports/h100-vulkan/collect.py OUTDIR
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from cts.backends.vulkan import VulkanBackend
from cts.families.coop import CoopCase, matrix_types
from cts.runs.coop import decode_mapping, run_coop


def mapping_table(case, backend) -> tuple[str, dict]:
    res = run_coop(case, backend, seed=1, subgroups=2)
    m = case.mat
    length = int(res.inputs["len"][0, 0])
    sg = case.sg
    mp = np.asarray(res.inputs["map"]).reshape(2, sg, -1)[0]
    idx = decode_mapping(mp, length)
    owner = np.full((m.rows, m.cols), -1)
    slot = np.full((m.rows, m.cols), -1)
    for inv in range(sg):
        for i in range(length):
            e = int(idx[inv, i])
            if 0 <= e < m.rows * m.cols and owner.flat[e] < 0:
                owner.flat[e], slot.flat[e] = inv, i
    lines = [f"#### {m.tag}: length {length}, verdict {'pass' if res.verdict.passed else 'FAIL'}", ""]
    lines.append("Element (row, col) -> invocation.index:")
    lines.append("")
    lines.append("| r\\c | " + " | ".join(str(c) for c in range(m.cols)) + " |")
    lines.append("|---" * (m.cols + 1) + "|")
    for r in range(m.rows):
        lines.append(f"| {r} | " + " | ".join(f"{owner[r, c]}.{slot[r, c]}" for c in range(m.cols)) + " |")
    lines.append("")
    return "\n".join(lines), {"length": length, "mapping_inv0": idx[0].tolist(), "owner": owner.tolist()}


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    b = VulkanBackend.from_options()
    info = b.describe()
    facts = {"device": info.as_dict(), "reason": b.reason}
    md = ["# Device facts (cooperative matrix)", ""]
    md += [f"* device: {info.name}", f"* driver: {info.driver}", f"* API: {info.version}"]
    md += [
        f"* subgroup size: {getattr(b, 'subgroup_size', '?')}",
        f"* extensions: {', '.join(info.extensions)}",
    ]
    md += [f"* features: {info.extra.get('features')}", ""]
    if b.reason:
        md.append(f"Not runnable: {b.reason}")
    else:
        md += [
            "## VkCooperativeMatrixPropertiesKHR",
            "",
            "| M | N | K | A | B | C | Result | saturating | scope |",
        ]
        md.append("|---|---|---|---|---|---|---|---|---|")
        for e in info.extra.get("coop_properties", []):
            md.append(
                f"| {e['M']} | {e['N']} | {e['K']} | {e['A']} | {e['B']} | {e['C']} | {e['R']} | {e['sat']} | {e['scope']} |"
            )
        md += ["", "## Element-to-invocation mapping (implementation-defined; recorded, not checked)", ""]
        facts["mapping"] = {}
        for m in matrix_types(b.entries):
            case = CoopCase("length", "vk", mat=m, sg=b.subgroup_size)
            try:
                text, data = mapping_table(case, b)
            except Exception as e:  # noqa: BLE001 - record and go on
                text, data = f"#### {m.tag}: error {type(e).__name__}: {e}\n", {"error": str(e)}
            md.append(text)
            facts["mapping"][m.tag] = data
    md.append(f"\n(collected in {time.time() - t0:.1f} s)")
    (out / "device.md").write_text("\n".join(md) + "\n")
    (out / "device.json").write_text(json.dumps(facts, indent=1, default=str))
    b.close()
    print("\n".join(md[:40]))


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "."))
