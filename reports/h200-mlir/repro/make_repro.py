"""Write the reproducer folders beside check.py from the suite's own texts
(the H200's Vulkan facts, CUDA sm_90) and the re-triaged journals' observed
values.  python reports/h200-mlir/repro/make_repro.py"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

from cts.families.mlir import mlir_cases  # noqa: E402
from cts.kernels import mlir_tools  # noqa: E402
from cts.kernels.mlir_tools import PTX_PIPELINE, SPIRV_PIPELINE  # noqa: E402
from cts.runs.mlir import run_mlir  # noqa: E402

SIGNED = (
    "SPV_KHR_cooperative_matrix, Cooperative Matrix Operands: integer components are unsigned unless the matching "
    "Matrix*SignedComponentsKHR bit is set; gpu.subgroup_mma_compute on si8 operands multiplies signed values"
)
CLASSES = {  # folder: (backend, case id, title, required, evidence regex, defect when present)
    "si8-muladd-unsigned": ("vulkan", "compute-si8_si8_i32-aN-bN-tight-m16n16k32",
        "convert-gpu-to-spirv writes OpCooperativeMatrixMulAddKHR on si8 matrices without the signedness operands",
        SIGNED, r"OpCooperativeMatrixMulAddKHR( %\d+){4}\s*$", True),
    "bf16-rotate-packed-words": ("lavapipe", "gpu_rotate-bf16-sg8-w8-off1",
        "convert-gpu-to-spirv lowers memref<Nxbf16> to N/2 f32 words still indexed by bf16 element",
        "gpu.rotate moves each lane's bf16 value (MLIR GPU dialect, gpu.rotate); the module must keep bf16 "
        "elements as 16-bit values (it has no 16-bit type at all)", r"OpTypeFloat 16", False),
    "vulkan-invalid-module": ("vulkan", "compute-f16_f16_f32-aN-bN-tight",
        "every Vulkan module of the lowering fails spirv-val --target-env vulkan1.3",
        "Vulkan's SPIR-V environment (Validation Rules within a Module): a module using CooperativeMatrixKHR under "
        "Shader needs the VulkanMemoryModel capability; BuiltIn SubgroupLocalInvocationId needs GroupNonUniform",
        r"spirv-val: .*(requires|not allowed|needs)", True),
    "spirv-legalize-maxf": ("vulkan", "elementwise-maxf-f32",
        "convert-gpu-to-spirv fails to legalize a verified gpu.subgroup_mma_elementwise maxf",
        "gpu.subgroup_mma_elementwise lists maxf / minf / muli among its opTypes (MLIR GPU dialect); the text "
        "verifies, and the SPIR-V lowering refuses it", r"failed to legalize operation", True),
    "maxf-signed-zero": ("cuda", "elementwise-maxf-f32-zero",
        "convert-gpu-to-nvvm lowers elementwise maxf to setp.gt + selp: -0 and +0 unordered",
        "gpu.subgroup_mma_elementwise maxf is arith.maximumf per element (MLIR GPU dialect), which orders -0 < +0 "
        "(MLIR arith dialect, arith.maximumf)", r"setp\.gt\.f32", True),
    "padded-ldm": ("cuda", "load_store-f16-padded-loadN-storeN",
        "convert-gpu-to-nvvm passes leadDimension 19 (f16: 38 bytes) to wmma.load as ldm",
        "PTX ISA, wmma.load: ldm must be a multiple of 16 bytes (8 f16 elements); the lowering neither refuses "
        "the op nor handles the stride", r"wmma\.load\.", True),
    "nvvm-crash-addi": ("cuda", "elementwise-addi-i32",
        "convert-gpu-to-nvvm crashes (SIGSEGV) on a verified gpu.subgroup_mma_elementwise addi",
        "the text passes mlir-opt's own verifier (a valid op); a compiler pass must not crash on it",
        r"Stack dump|PLEASE submit", True),
    "nvvm-crash-subf-f16": ("cuda", "elementwise-subf-f16",
        "convert-gpu-to-nvvm aborts (SIGTRAP) on a verified gpu.subgroup_mma_elementwise subf on f16",
        "the text passes mlir-opt's own verifier (a valid op); a compiler pass must not crash on it",
        r"Stack dump|PLEASE submit|LLVM ERROR", True),
    "nvvm-maxf-f16-floatattr": ("cuda", "elementwise-maxf-f16",
        "convert-gpu-to-nvvm fails on elementwise maxf of f16: 'FloatAttr does not match expected type'",
        "the text passes mlir-opt's own verifier (a valid op); the lowering creates an invalid constant",
        r"FloatAttr does not match expected type", True),
    "nvvm-constant-si8": ("cuda", "constant-AOp-si8",
        "convert-gpu-to-nvvm fails on gpu.subgroup_mma_constant_matrix of si8 (llvm.insertvalue type mismatch)",
        "gpu.subgroup_mma_constant_matrix takes si8 (the op's operand constraint); the lowering emits invalid LLVM IR",
        r"Type mismatch: cannot insert", True),
}  # fmt: skip


def observed(case_id: str, backend: str) -> str:
    where = {"lavapipe": ROOT / "reports" / "lavapipe-mlir" / "journal.jsonl.gz"}
    for line in gzip.open(where.get(backend, HERE.parent / "retriaged" / f"{backend}.jsonl.gz"), "rt"):
        r = json.loads(line)
        if r.get("case_id") == case_id and "outcome" in r and not r.get("kind"):
            return f"{r['outcome']} (layer {r.get('layer', '')}): {r.get('reason') or r.get('error') or ''}"
    return "not run on the H200 (see the report)"


def text_of(case, backend) -> str:
    """The MLIR text the suite's backend lowers for ``case`` (the launch
    stubbed: nothing runs)."""
    import numpy as np
    from mlir_prelower import _planted_vulkan

    seen = []
    for name in ("to_spirv", "to_ptx", "check_text"):
        real = getattr(mlir_tools, name)
        setattr(mlir_tools, name, lambda text, *a, _r=real, **k: (seen.append(text), _r(text, *a, **k))[1])
    try:
        if backend in ("vulkan", "lavapipe"):
            facts = (
                ROOT / "reports" / "lavapipe-mlir" / "device.json"
                if backend == "lavapipe"
                else HERE.parent / "device.json"
            )
            b = _planted_vulkan(json.loads(facts.read_text()))
            b._dispatch = lambda code, order, arrays, *x, **k: {n: np.array(arrays[n]) for n in order}
        else:
            from cts.backends.cuda import CudaBackend

            b = CudaBackend()
            b._ready, b.chip = True, "sm_90"
            b._execute = lambda ptx, entry, prog, buffers: {n: np.array(v) for n, v in buffers.items()}
        try:
            run_mlir(case, b, 1)
        except Exception:  # noqa: BLE001 - the refusal is what the folder reproduces
            pass
    finally:
        import importlib

        importlib.reload(mlir_tools)
    return seen[0]


def main() -> None:
    cases = {c.id: c for c in mlir_cases()}
    for folder, (backend, cid, title, required, evidence, present) in CLASSES.items():
        text = text_of(cases[cid], backend)
        pipeline = PTX_PIPELINE if backend == "cuda" else SPIRV_PIPELINE
        refusal = folder.startswith(("nvvm-", "spirv-legalize"))
        target = "tool" if refusal else ("spirv" if backend != "cuda" else "ptx")
        d = HERE / folder
        d.mkdir(exist_ok=True)
        (d / "input.mlir").write_text(text)
        (d / "observed.txt").write_text(observed(cid, backend) + "\n")
        meta = dict(title=title, required=required, evidence=evidence, present=present, pipeline=pipeline,
                    target=target, case=cid)  # fmt: skip
        (d / "case.json").write_text(json.dumps(meta, indent=1) + "\n")
        print(folder)


if __name__ == "__main__":
    main()
