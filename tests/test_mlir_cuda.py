"""The MLIR family's CUDA path without a GPU: the backend imports
and opens anywhere (every case skips with one line), and upstream mlir-opt
lowers to PTX every case the NVVM lowering covers (one batched run, seconds);
the rest are refused the way this file pins down (``failed to legalize``:
a skip naming the missing lowering; a crash or another error: a toolchain
verdict).  On a machine with the CUDA driver the backend runs the PTX
(reports/h100-mlir)."""

from __future__ import annotations

import re

import pytest

from cts.families.mlir import LANE_OPS, mlir_cases
from cts.families.mlir_program import case_program
from cts.kernels import mlir_text as mt

CUDA = mt.CudaTarget()


def nvvm_lowers(c) -> bool:
    """What convert-gpu-to-nvvm of mlir-opt 22.1.8 lowers (WMMA m16n16k16 for f16 / si8 / ui8
    with the same signedness, m16n16k8 tf32, m8n8k4 f64; elementwise addf, mulf, divf, and maxf /
    minf on f32 / f64; constant_matrix of a C matrix and of f16 A / B), measured and pinned here."""
    if c.op in LANE_OPS or c.shape in ("m8n8k8", "m16n8k16"):
        return False
    if c.shape == "m16n16k32":
        return c.op == "load_store" or (c.op == "constant" and c.tag == "COp")
    if c.op == "load_store":
        return True
    if c.op == "compute":
        return c.elem == c.b  # no mixed si8 x ui8 WMMA
    if c.op == "constant":
        return c.tag == "COp" and c.elem != "f64" or c.elem == "f16"
    if c.op == "elementwise":
        if c.tag != "COp":  # A / B results are read through extract_thread_local, which NVVM does not lower
            return False
        return c.optype in ("addf", "mulf", "divf") or (c.optype in ("maxf", "minf") and c.elem != "f16")
    return False


# (which unlowered cases, the words of mlir-opt's refusal) for one representative of each
REFUSALS = {
    "gpu_rotate-i32-sg32-w8-off1": "failed to legalize operation 'gpu.rotate'",
    "load_store-f16-tight-loadN-storeN-m8n8k8": "failed to legalize operation 'gpu.subgroup_mma_load_matrix'",
    "compute-si8_ui8_i32-aN-bN-tight": "failed to legalize operation 'gpu.subgroup_mma_compute'",
    "thread_local-COp-f32-sg32": "failed to legalize operation 'gpu.subgroup_mma_extract_thread_local'",
    "elementwise-subf-f32": "crashed (",  # an upstream crash (SIGTRAP or SIGSEGV), not a missing lowering
    "elementwise-maxf-f16": "FloatAttr does not match expected type of the constant",
    "constant-AOp-si8": "'llvm.insertvalue' op Type mismatch",
    "elementwise-addf-f16-AOp": "failed to legalize operation 'gpu.subgroup_mma_extract_thread_local'",
}


@pytest.fixture(scope="module")
def tools():
    from cts.kernels import mlir_tools

    try:
        mlir_tools.tool_version()
    except mlir_tools.MlirToolError as e:
        pytest.skip(f"no MLIR tools ({mlir_tools.PACKAGE}): {e}")
    return mlir_tools


def test_the_backend_imports_and_opens_without_a_gpu():
    from cts.backends import make_backend

    b = make_backend("cuda")
    info = b.describe()
    if not b.reason:
        pytest.skip(f"a CUDA device is present: {info.name}")
    assert "\n" not in b.reason and ("CUDA" in b.reason or "cuda" in b.reason)
    case = next(c for c in mlir_cases() if c.op == "compute")
    assert b.unsupported(case) == b.reason  # every case skips with the one line
    rot = next(c for c in mlir_cases() if c.family == "mlir_mma")
    assert b.unsupported(rot) == b.reason
    b.close()


def test_ptx_for_every_case_the_nvvm_lowering_covers(tools, tmp_path):
    """One mlir-opt run lowers all of them; the PTX has an entry per case
    with the WMMA instructions of its op."""
    cases = [c for c in mlir_cases() if nvvm_lowers(c)]
    assert len(cases) > 100
    funcs = {}
    for c in cases:
        prog = case_program(c)
        prog.sg = 32
        funcs[mt.func_name(c)] = mt.case_func(c, prog, CUDA)
    text = mt.module_text(list(funcs.values()), CUDA)
    ptx = tools.ptx_of(tools.run_tool("mlir-opt", [f"--pass-pipeline={tools.PTX_PIPELINE}"], text))
    assert ".target sm_90" in ptx
    bodies = dict(re.findall(r"\.entry (\w+)\((.*?)\n}", ptx, re.S))
    assert set(bodies) == set(funcs)
    for c in cases:
        body = bodies[mt.func_name(c)]
        assert "wmma.load" in body or c.op == "constant", c.id
        if c.op in ("load_store", "compute", "constant", "elementwise"):
            assert "wmma.store.d" in body, c.id
        if c.op == "compute":
            lay = f"{'col' if c.t1 else 'row'}.{'col' if c.t2 else 'row'}"  # transpose = column-major
            assert re.search(rf"wmma\.mma\.sync\.aligned\.{lay}\.m\d+n\d+k\d+", body), c.id


@pytest.mark.parametrize("case_id", list(REFUSALS))
def test_what_nvvm_does_not_lower_is_refused_so(tools, case_id):
    from cts.errors import ToolchainError

    c = next(c for c in mlir_cases() if c.id == case_id)
    assert not nvvm_lowers(c)
    prog = case_program(c)
    prog.sg = 32
    with pytest.raises(ToolchainError) as e:
        tools.to_ptx(mt.case_module(c, prog, CUDA))
    assert REFUSALS[case_id] in str(e.value) and tools.tool_version() in str(e.value)


def test_the_backend_skips_a_missing_lowering_and_judges_a_crash(tools, monkeypatch):
    """On a (planted) device: ``failed to legalize`` is a skip naming the
    lowering and the tool; a crash is left to the run (a toolchain verdict)."""
    from cts.backends.cuda import CudaBackend

    b = CudaBackend()
    b._ready, b.chip = True, "sm_90"
    by_id = {c.id: c for c in mlir_cases()}
    why = b.unsupported(by_id["gpu_rotate-i32-sg32-w8-off1"])
    assert why.startswith(tools.tool_version()) and "no NVVM lowering" in why and "gpu.rotate" in why
    assert "warp is 32" in b.unsupported(by_id["gpu_rotate-i32-sg8-w8-off1"])
    assert b.unsupported(by_id["elementwise-subf-f32"]) is None  # runs, and the run is the toolchain verdict
    assert b.unsupported(by_id["compute-f16_f16_f32-aT-bN-padded"]) is None
