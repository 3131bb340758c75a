"""Lower the MLIR family for a device that has no MLIR tools (the GPU
machine has no package registry): write every case's text the way the
Vulkan and CUDA backends would on that device, lower it with mlir-opt here,
and keep the binaries (and the refusals) in a cache folder to carry there,
where ``CTS_MLIR_CARRIED=1 CTS_CACHE_DIR=<folder>`` runs them.

    python scripts/mlir_prelower.py OUTDIR --vulkan-facts reports/h100-vulkan-rotate/device.json \
        [--cuda-chip sm_90] [--seed 1]

The Vulkan target env comes from the device's facts (scripts/vulkan_facts.py
writes device.json on the device); the texts depend on the seed only through
the scalar of the constant cases.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np


def _planted_vulkan(facts: dict):
    from cts.backends.vulkan import VulkanBackend
    from cts.families.coop import CoopEntry

    b = VulkanBackend()
    b._ready, b.reason, b.coop_reason = True, None, None
    b.features, b.subgroup = facts["features"], facts["subgroup"]
    b.subgroup_size = facts["subgroup"]["subgroupSize"]
    b.exts = set(facts["extensions"])
    b.info.extra.update(apiVersion=facts["apiVersion"])
    b.entries = [CoopEntry(**e) for e in facts["coop_properties"] if not e["A"].startswith("vk")]
    return b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="the cache folder to carry (becomes CTS_CACHE_DIR there)")
    ap.add_argument("--vulkan-facts", help="device.json of the Vulkan device (scripts/vulkan_facts.py)")
    ap.add_argument("--cuda-chip", default="", help="compute capability of the CUDA device, e.g. sm_90")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    os.environ["CTS_CACHE_DIR"] = str(Path(a.out).resolve())
    from cts.errors import CaseError, HarnessError, Unsupported
    from cts.families.mlir import mlir_cases
    from cts.runs.mlir import run_mlir

    backends = []
    if a.vulkan_facts:
        vk = _planted_vulkan(json.loads(Path(a.vulkan_facts).read_text()))
        vk._dispatch = lambda code, order, arrays, *x, **k: {n: np.array(arrays[n]) for n in order}
        backends.append(vk)
    if a.cuda_chip:
        from cts.backends.cuda import CudaBackend

        cu = CudaBackend()
        cu._ready, cu.chip = True, a.cuda_chip
        cu._execute = lambda ptx, entry, prog, buffers: {n: np.array(v) for n, v in buffers.items()}
        backends.append(cu)
    for b in backends:
        counts = {"lowered": 0, "skipped": 0, "refused": 0}
        for case in mlir_cases():
            if b.unsupported(case):
                counts["skipped"] += 1
                continue
            try:
                run_mlir(case, b, a.seed)  # lowers; the stubbed launch returns the inputs
                counts["lowered"] += 1
            except HarnessError as e:  # ToolchainError: the refusal is kept in the cache too
                counts["refused"] += 1
                if type(e).__name__ not in ("ToolchainError", "MlirTextError"):
                    raise
            except (CaseError, Unsupported, ValueError):
                counts["lowered"] += 1  # the verdict on the stubbed buffers does not matter here
        print(f"{b.name}: {counts}")


if __name__ == "__main__":
    main()
