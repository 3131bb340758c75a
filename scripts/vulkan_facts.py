"""Facts of a Vulkan device for a committed report: driver, API version,
subgroup properties (size, size-control range, supported stages and
operations, decoded), the features the suite enables and the
cooperative-matrix entries.  Writes device.json and device.md into OUTDIR.

    python scripts/vulkan_facts.py OUTDIR [--device NAME]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cts.backends.vulkan import VulkanBackend

OPS = [
    "BASIC",
    "VOTE",
    "ARITHMETIC",
    "BALLOT",
    "SHUFFLE",
    "SHUFFLE_RELATIVE",
    "CLUSTERED",
    "QUAD",
    "PARTITIONED_NV",
    "ROTATE",
    "ROTATE_CLUSTERED",
]
OP_BITS = {name: 1 << i for i, name in enumerate(OPS[:8])} | {
    "PARTITIONED_NV": 0x100,
    "ROTATE": 0x200,
    "ROTATE_CLUSTERED": 0x400,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--device")
    a = ap.parse_args()
    b = VulkanBackend.from_options(device=a.device)
    d = b.describe().as_dict()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "device.json").write_text(json.dumps(d, indent=2) + "\n")
    sg = d.get("subgroup", {})
    ops = sg.get("supportedOperations", 0)
    lines = [
        f"# {d['name']}",
        "",
        f"* driver: {d['driver']}; {d['version']}; vendor 0x{d.get('vendorID', 0):04x}",
        f"* subgroup size {sg.get('subgroupSize')}; size control range [{sg.get('minSubgroupSize')}, "
        f"{sg.get('maxSubgroupSize')}], requiredSubgroupSizeStages 0x{sg.get('requiredSubgroupSizeStages', 0):x}",
        f"* supportedStages 0x{sg.get('supportedStages', 0):x}; supportedOperations 0x{ops:x}: "
        + ", ".join(n for n, bit in OP_BITS.items() if ops & bit),
        f"* maxComputeWorkGroupSize[0] {sg.get('maxComputeWorkGroupSize')}, invocations "
        f"{sg.get('maxComputeWorkGroupInvocations')}",
        "* features: " + ", ".join(f"{k} {v}" for k, v in sorted(d.get("features", {}).items())),
        "* extensions (cooperative, bfloat16, subgroup): " + ", ".join(d.get("extensions", [])),
    ]
    for e in d.get("coop_properties", []):
        lines.append(
            f"  * coop M{e['M']} N{e['N']} K{e['K']} {e['A']}x{e['B']}+{e['C']}->{e['R']} {e['scope']}"
            f"{' sat' if e['sat'] else ''}"
        )
    (out / "device.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    b.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
