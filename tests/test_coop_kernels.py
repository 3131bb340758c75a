"""Offline checks of the Vulkan side of the cooperative-matrix family:
every generated module passes ``spirv-val --target-env vulkan1.3``, MulAdd
modules carry the Signed / SaturatingAccumulation operands exactly as the
entry requires (VK_KHR_cooperative_matrix), the buffer contract of the runner and of
the kernels agree, and without a Vulkan loader the cases skip with a reason.
"""

import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from cts.backends.emulator import EmulatorBackend
from cts.families.coop import coop_cases, load_profile
from cts.kernels.coop_glsl import disassemble, kernel_buffers, spirv_module
from cts.runs.coop import run_coop
from reference.data import TIERS
from tests.conftest import host_tool_or_skip

ROOT = Path(__file__).resolve().parents[1]


def _vk_cases(name, muladd_only=False):
    p = load_profile(name)
    cs = coop_cases(p.entries, TIERS, p.subgroup_size, ("vk",))
    if muladd_only:
        cs = [c for c in cs if c.entry is not None]
    # one module per kernel source: tiers share it
    seen, out = set(), []
    for c in cs:
        key = (
            c.op,
            c.mat,
            c.entry,
            c.to,
            c.layout,
            c.stride,
            c.mem,
            c.mode,
            c.var,
            c.op == "convert" and c.tier,
        )
        if key not in seen:
            seen.add(key)
            out.append((c, p.subgroup_size))
    return out


# CI budget: every MulAdd / chain / gemm module of the three profiles, and the
# per-matrix-type modules of the h100 table for one shape per (use, type)
# and load/store variants for one type per width (the rest differ only in
# numbers; the device run validates every module it builds: spirv_module
# always runs spirv-val).
def _one_shape(items):
    shape_of: dict = {}
    out = []
    for c, sg in items:
        if c.mat is not None:
            key = (c.mat.use, c.mat.t)
            if shape_of.setdefault(key, (c.mat.rows, c.mat.cols)) != (c.mat.rows, c.mat.cols):
                continue
            if c.op in ("load", "store") and c.mat.t not in ("u8", "f16", "f32"):
                continue  # one type per width for the 20 load/store variants
        out.append((c, sg))
    return out


# The module fixture assembles and validates ~770 modules (spirv-as + spirv-val, one
# process each): about 80 s on two idle cores, several minutes on a loaded machine.
pytestmark = pytest.mark.timeout(1200)

ALL = _one_shape(_vk_cases("h100")) + _vk_cases("amd_rdna3", True) + _vk_cases("intel_xmx", True)


@pytest.fixture(scope="module")
def modules():
    host_tool_or_skip("glslang")

    def build(item):
        case, sg = item
        return case, spirv_module(case, sg)  # raises GenerationError with the tool log

    with ThreadPoolExecutor(4) as ex:
        return list(ex.map(build, ALL))


@pytest.mark.e2e
def test_every_generated_module_passes_spirv_val(modules):
    """spirv_module runs spirv-val on every module it returns; a rejected
    module raises.  Here: every case of the h100 table and every MulAdd of
    the other profiles produced a valid SPIR-V binary."""
    assert len(modules) == len(ALL) > 100
    for case, code in modules:
        assert code[:4] == b"\x03\x02\x23\x07", case.id  # SPIR-V magic


OPERAND_BITS = {
    "MatrixASignedComponentsKHR": 1,
    "MatrixBSignedComponentsKHR": 2,
    "MatrixCSignedComponentsKHR": 4,
    "MatrixResultSignedComponentsKHR": 8,
    "SaturatingAccumulationKHR": 0x10,
}


@pytest.mark.e2e
def test_muladd_operands_match_the_entry(modules):
    """Signed bits iff the component type is signed, SaturatingAccumulation iff
    the entry is saturating (VK SPIR-V environment rule, VK_KHR_cooperative_matrix)."""
    checked = 0
    for case, code in modules:
        if case.entry is None:
            continue
        text = disassemble(code)
        lines = [ln for ln in text.splitlines() if "OpCooperativeMatrixMulAddKHR" in ln]
        assert lines, case.id
        for ln in lines:
            names = re.findall(r"\b(\w+KHR)\b", ln.split("OpCooperativeMatrixMulAddKHR", 1)[1])
            bits = sum(OPERAND_BITS.get(n, 0) for n in names)
            assert bits == case.entry.signed_bits, (case.id, ln.strip())
            checked += 1
    assert checked >= 30


@pytest.mark.e2e
def test_bf16_modules_use_bfloat16_type(modules):
    for case, code in modules:
        if case.entry is not None and case.entry.A == "bf16":
            text = disassemble(code)
            assert "OpTypeFloat 16 BFloat16KHR" in text and "BFloat16CooperativeMatrixKHR" in text


class _Recorder(EmulatorBackend):
    """The emulator, checking the runner hands over exactly the kernel's buffers."""

    def run_coop_matrix(self, case, bufs):
        names = [n for n, _ in kernel_buffers(case)]
        assert sorted(bufs) == sorted(names), (case.id, sorted(bufs), names)
        from cts.families.coop import storage_dtype

        for n, t in kernel_buffers(case):
            assert bufs[n].dtype == np.dtype(storage_dtype(t)), (case.id, n, bufs[n].dtype, t)
        return super().run_coop_matrix(case, bufs)


def test_runner_and_kernels_share_the_buffer_contract():
    b = _Recorder()
    for case, _ in _vk_cases("h100"):
        assert run_coop(case, b, 1, subgroups=2).verdict.passed, case.id


def _have_vulkan_loader() -> bool:
    try:
        import vulkan  # noqa: F401
    except Exception:  # noqa: BLE001
        return False
    return True


@pytest.mark.e2e
@pytest.mark.skipif(_have_vulkan_loader(), reason="a Vulkan loader is present: cases would run, not skip")
def test_without_vulkan_every_case_skips_with_a_reason(tmp_path):
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "cases/test_coop_matrix.py",
            "--backend",
            "vulkan",
            "-q",
            "-rs",
            "-k",
            "muladd or length",
            "-p",
            "no:randomly",
            "--report-dir",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # every case skipped for lack of the loader: no case was judged, said in one line, exit 5 (not green)
    assert p.returncode == 5, p.stdout[-3000:] + p.stderr[-2000:]
    tail = p.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"\d+ skipped, \d+ deselected in [\d.]+s", tail), tail
    assert "no Vulkan loader" in p.stdout
    assert (
        sum("cts: no case was judged: backend vulkan found no device" in ln for ln in p.stdout.splitlines())
        == 1
    )


@pytest.mark.e2e
@pytest.mark.skipif(_have_vulkan_loader(), reason="a Vulkan loader is present: the name would be matched")
def test_without_vulkan_a_named_device_is_a_one_line_error():
    """--device names a device none can be listed for: an error, not 833 skips."""
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "cases/test_coop_matrix.py", "--backend", "vulkan",
         "--device", "nosuch", "-q", "--no-report"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    err = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 4 and len(err) == 1, p.stdout[-2000:] + p.stderr
    assert "--device 'nosuch': no device can be selected (no Vulkan loader" in err[0]


def _val(code: bytes) -> subprocess.CompletedProcess:
    import tempfile

    from cts.kernels.coop_glsl import tool

    with tempfile.NamedTemporaryFile(suffix=".spv") as f:
        f.write(code)
        f.flush()
        return subprocess.run(
            [tool("spirv-val"), "--target-env", "vulkan1.3", f.name], capture_output=True, text=True
        )


@pytest.mark.e2e
def test_modules_validate_fresh_past_the_cache(modules):
    """spirv_module reads validated modules back from .cache/coopmat; here
    every returned binary goes through spirv-val again."""
    with ThreadPoolExecutor(4) as ex:
        res = list(ex.map(lambda cm: (cm[0].id, _val(cm[1])), modules))
    bad = [(i, (p.stdout + p.stderr)[-300:]) for i, p in res if p.returncode]
    assert not bad, bad[:3]


@pytest.mark.e2e
def test_vulkan_validation_is_real(modules):
    """The same validator rejects a module that lost its cooperative-matrix
    capability (so a pass above means something)."""
    from cts.kernels.coop_glsl import tool

    case, code = next((c, m) for c, m in modules if c.op == "muladd")
    text = disassemble(code).replace("OpCapability CooperativeMatrixKHR\n", "")
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        src, out = Path(d) / "k.spvasm", Path(d) / "k.spv"
        src.write_text(text)
        subprocess.run([tool("spirv-as"), "--target-env", "vulkan1.3", str(src), "-o", str(out)], check=True)
        p = _val(out.read_bytes())
    assert p.returncode != 0 and "CooperativeMatrix" in p.stdout + p.stderr, case.id


# What each KHR form (cts.families.coop.VARIANTS) must put in its module: the
# form is really in the SPIR-V, not only in the case id.
KHR_FORM_TEXT = {
    "spush": ["PushConstant"],
    "sspec": ["OpSpecConstant "],
    "bda": ["PhysicalStorageBuffer", "Aligned 16"],
    "v2": ["OpTypeVector %\\w+ 2"],
    "v4": ["OpTypeVector %\\w+ 4"],
    "nontemporal": ["Nontemporal"],
    "aligned": ["OpCooperativeMatrixLoadKHR [^\\n]* Aligned 16"],
    "avail": ["MakePointerAvailable", "MakePointerVisible", "OpMemoryModel Logical Vulkan"],
    "func": ["OpFunctionCall"],
    "funcconst": ["OpFunctionCall"],
    "array": ["OpTypeArray"],
    "struct": ["OpTypeStruct %\\w+ %\\w+ %\\w+\\n"],
    "composite": ["OpCompositeExtract", "OpCompositeInsert"],
    "null": ["OpConstantNull"],
    "colacc": ["OpCooperativeMatrixStoreKHR %\\S+ %\\S+ %u?int_1 "],
    "wg4": ["SubgroupId"],
    "varptr": ["OpCapability VariablePointers", "OpSelect %_ptr_\\w+"],
    "special": [
        "OpExecutionMode %\\w+ SignedZeroInfNanPreserve 16",
        "SignedZeroInfNanPreserve 32",
        "OpFConvert",
    ],
    "f16bf16": ["OpTypeFloat 16 BFloat16KHR", "OpTypeFloat 16\\n", "OpFConvert"],
}


@pytest.mark.e2e
def test_khr_forms_are_in_the_module(modules):
    seen = set()
    for case, code in modules:
        form = case.var or ("bda" if case.mem == "bda" else "") or ("null" if case.mode == "null" else "")
        if case.op == "convert":
            form = (
                "special"
                if case.tier == "special"
                else ("f16bf16" if "bf16" in (case.mat.t, case.to) else "")
            )
        if form not in KHR_FORM_TEXT:
            continue
        text = subprocess.run(
            [_tool("spirv-dis"), "-"], input=code, capture_output=True, check=True
        ).stdout.decode()
        for pat in KHR_FORM_TEXT[form]:
            assert re.search(pat, text), (case.id, pat)
        seen.add(form)
    assert seen == set(KHR_FORM_TEXT)


def _tool(name):
    from cts.kernels.coop_glsl import tool

    return tool(name)
