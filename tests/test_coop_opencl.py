"""The OpenCL forms of cooperative matrix.

* every cl-spirv module of every built-in profile passes spirv-as +
  ``spirv-val --target-env opencl2.2`` (fresh, past the caches), and its
  MulAdd operands / scopes / layouts follow the environment rules
  (VK_KHR_cooperative_matrix; cl_khr_cooperative_matrix draft), checked here from the module text against the
  entry's type names;
* the cl-c kernels use the seed-002 syntax with the right operand bits;
* on Intel's CPU runtime every case skips naming the missing extension or
  feature macro; with ``--assume-extension`` a runtime crash (SIGILL) stays
  inside its case and the session goes on;
* the emulator runs the OpenCL-form cases and passes; the coop room's
  emulator faults are caught through them.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from cts.backends.emu_coop import COOP_FAULTS, VK_AXIS_FAULTS
from cts.backends.emulator import EmulatorBackend
from cts.backends.opencl_coop import CL_EXTENSION, CLC_FEATURE, parse_variants
from cts.families.coop import CoopEntry, load_profile, profile_names
from cts.families.coop_ocl import buffer_rows, ocl_coop_cases
from cts.kernels.coop_cl_c import kernel_text
from cts.kernels.coop_cl_spv import module_text
from cts.kernels.spirv_tools import SpirvToolError, assemble, assemble_many
from cts.runs.coop.opencl import run_coop_opencl
from reference.data import TIERS

ROOT = Path(__file__).resolve().parent.parent
SUBGROUPS = 4


def cases(name: str, forms=("cl-spirv", "cl-c")):
    p = load_profile(name)
    return ocl_coop_cases(list(p.entries), TIERS, p.subgroup_size, forms)


def _signed(t: str) -> bool:  # the suite's type names: i* signed integers
    return t[0] == "i"


# ------------------------------------------------------------------ modules
@pytest.fixture(scope="module")
def modules():
    out = {}
    for name in profile_names():
        for c in cases(name, ("cl-spirv",)):
            out.setdefault(module_text(c, buffer_rows(c)), c)
    return out


@pytest.mark.e2e
def test_every_module_validates_fresh(modules):
    texts = list(modules)
    blobs = assemble_many(texts, use_disk=False, fresh=True)
    assert len(blobs) == len(texts) > 300
    assert all(b[:4] == b"\x03\x02\x23\x07" for b in blobs)


@pytest.mark.e2e
def test_validation_is_real(modules):
    text = next(iter(modules))
    with pytest.raises(SpirvToolError):
        assemble(text.replace("OpCapability CooperativeMatrixKHR\n", ""), use_disk=False, fresh=True)


@pytest.mark.e2e
def test_module_rules(modules):
    """Scope Subgroup, 64-bit strides, the case's layout, and MulAdd
    operands exactly as the entry's types and saturation say."""
    for text, c in modules.items():
        consts = dict(re.findall(r"^(%\S+) = OpConstant %u32 (\d+)$", text, re.M))
        for scope in re.findall(r"OpTypeCooperativeMatrixKHR %\S+ (%\S+)", text):
            assert consts[scope] == "3", c.id
        for stride in re.findall(r"OpCooperativeMatrix(?:Load|Store)KHR (?:%\S+ ){2,3}(%\S+)$", text, re.M):
            assert stride.startswith("%k_u64_") or (c.rtstride and stride == "%arg_st"), c.id
        if c.op == "muladd" and c.layout == "col":
            assert "OpCooperativeMatrixLoadKHR %MA" in text and re.search(
                r"LoadKHR %MA\S+ %\S+ %k_u32_1 ", text
            )
        for ops in re.findall(r"OpCooperativeMatrixMulAddKHR %\S+ %\S+ %\S+ %\S+ ?(.*)$", text, re.M):
            e = c.entry
            want = {
                "MatrixASignedComponentsKHR": _signed(e.A),
                "MatrixBSignedComponentsKHR": _signed(e.B),
                "MatrixCSignedComponentsKHR": _signed(e.C),
                "MatrixResultSignedComponentsKHR": _signed(e.R),
                "SaturatingAccumulationKHR": e.sat,
            }
            got = set(ops.split("|")) - {""}
            assert got == {k for k, v in want.items() if v}, c.id


def test_opencl_c_kernels_use_the_proposal_syntax():
    cs = cases("amd_rdna3", ("cl-c",))
    assert {c.op for c in cs} >= {"load", "store", "add", "div", "neg", "scale", "muladd", "chain", "gemm"}
    for c in cs:
        src = kernel_text(c, buffer_rows(c))
        assert "#ifndef __opencl_c_ext_cooperative_matrix" in src
        assert "coop_mat(CLK_COOPERATIVE_MATRIX_SCOPE_SUBGROUP," in src
        if c.entry is not None:
            e = c.entry
            for flag, on in (
                ("MATRIX_A_SIGNED", _signed(e.A)),
                ("MATRIX_B_SIGNED", _signed(e.B)),
                ("MATRIX_RESULT_SIGNED", _signed(e.R)),
                ("SATURATING_ACCUMULATION", e.sat),
            ):
                assert (f"CLK_COOPERATIVE_MATRIX_OPERAND_{flag}" in src) == on, c.id
        if c.op in ("load", "store"):
            lay = "COLUMN_MAJOR" if c.layout == "col" else "ROW_MAJOR"
            assert f"CLK_COOPERATIVE_MATRIX_LAYOUT_{lay}" in src


def test_space_follows_the_draft():
    for n in profile_names():
        one = [c.id for c in cases(n)]
        assert len(one) == len(set(one)), n
    ids = [c.id for n in profile_names() for c in cases(n)]
    assert all(i.startswith(("cl-spirv-", "cl-c-")) for i in ids)
    assert not any("bf16" in i for i in ids)  # no bf16 in the draft (cl_khr_cooperative_matrix draft)
    assert not any(i.startswith("cl-spirv-scale") for i in ids)  # no OpMatrixTimesScalar in OpenCL


def test_variant_records_decode():
    """cl_device_cooperative_matrix_variant_khr: m, n, k, a, b, c, result, sat."""
    raw = struct.pack("8I", 8, 16, 32, 3, 7, 5, 5, 1) + struct.pack("8I", 16, 16, 16, 0, 0, 1, 1, 0)
    assert parse_variants(raw) == [
        CoopEntry(8, 16, 32, "i8", "u8", "i32", "i32", sat=True),
        CoopEntry(16, 16, 16, "f16", "f16", "f32", "f32", sat=False),
    ]


# ----------------------------------------------------------------- emulator
def _failing(backend, cs):
    return [c.id for c in cs if not run_coop_opencl(c, backend, 1, subgroups=SUBGROUPS).verdict.passed]


@pytest.fixture(scope="module")
def emu_cases():
    return cases("intel_xmx") + [c for c in cases("amd_rdna3") if c.entry is not None]


def test_clean_emulator_passes_the_opencl_forms(emu_cases):
    assert _failing(EmulatorBackend(), emu_cases) == []


@pytest.mark.parametrize("fault", [f for f in COOP_FAULTS if "bf16" not in f and f not in VK_AXIS_FAULTS])
def test_coop_fault_caught_through_opencl_forms(fault, emu_cases):
    failed = _failing(EmulatorBackend((fault,)), emu_cases)
    assert any(i.startswith("cl-spirv-") for i in failed), f"{fault} not caught by a cl-spirv case"
    cl_c_ops = {"load", "store", "muladd", "chain", "gemm", "sub", "add", "mul", "div", "neg"}
    if not any(w in fault for w in ("length", "ftoi", "splat")):
        assert any(i.startswith("cl-c-") for i in failed), f"{fault} not caught by a cl-c case"
        assert all(i.split("-")[2] in cl_c_ops for i in failed if i.startswith("cl-c-"))


# --------------------------------------------------- Intel's CPU runtime
@pytest.fixture(scope="module")
def intel():
    from cts.backends.base import BackendError

    try:
        from cts.backends.opencl import OpenCLBackend

        return OpenCLBackend("Intel")
    except (BackendError, ImportError) as e:
        pytest.skip(f"no Intel CPU OpenCL runtime: {e}")


def test_intel_cpu_skips_name_what_is_missing(intel):
    assert CL_EXTENSION not in intel.describe().extensions  # local-runtimes 2.4
    assert intel.coop_entries() is None
    cs = cases("intel_xmx")
    spv = next(c for c in cs if c.api == "clspv" and c.op == "muladd")
    clc = next(c for c in cs if c.api == "clc" and c.op == "muladd")
    assert CL_EXTENSION in intel.unsupported(spv)
    assert CLC_FEATURE in intel.unsupported(clc)
    vk = load_profile("intel_xmx")
    from cts.families.coop import coop_cases

    assert "vulkan" in intel.unsupported(coop_cases(vk.entries, ("exact",), vk.subgroup_size, ("vk",))[0])


def _pytest_run(tmp_path, ids, env_extra):
    junit = tmp_path / "junit.xml"
    env = {**os.environ, **env_extra}
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "cases/test_coop_opencl.py",
        "-q",
        "-p",
        "no:cacheprovider",
        "--backend",
        "opencl",
        "--device",
        "Intel",
        "--coop-profile",
        "intel_xmx",
        "--assume-extension",
        CL_EXTENSION,
        "--report-dir",
        str(tmp_path / "rep"),
        "--junitxml",
        str(junit),
        "-k",
        " or ".join(ids),
    ]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    rows = [
        json.loads(x) for f in (tmp_path / "rep").rglob("*.jsonl") for x in f.read_text().splitlines() if x
    ]
    return r, junit.read_text() if junit.exists() else "", rows


STORE = "cl-spirv-store-C8x8-f32-row-tight-storage-exact"
LOAD = "cl-spirv-load-A8x16-f16-row-tight-storage-exact"


@pytest.mark.e2e
def test_assumed_extension_crash_stays_in_its_case(intel, tmp_path):
    """Deterministic: the child process dies with SIGILL for every case;
    both cases fail with that reason, the session ends normally.  The
    runtime does not list the extension: both are forced (outside the
    exit status), of layer device."""
    r, junit, rows = _pytest_run(tmp_path, [STORE, LOAD], {"CTS_COOP_CHILD_SELFTEST": "SIGILL"})
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "2 failed" in r.stdout
    assert junit.count("died with SIGILL") >= 2
    failed = [x for x in rows if x.get("outcome") == "failed"]
    assert {x.get("case_id") for x in failed} >= {STORE, LOAD}
    assert all(
        x.get("forced", "").startswith("--assume-extension") and x.get("layer") == "device" for x in failed
    )


@pytest.mark.e2e
def test_assumed_extension_on_the_real_runtime(intel, tmp_path):
    """Intel's runtime lowers coop matrices to AMX only (local-runtimes 2.4):
    with the Sapphire Rapids target forced, a store-only f32 kernel dies
    with SIGILL where the CPU has no AMX; the f16 load fails its build.
    Either way each case fails on its own and the session ends normally."""
    r, junit, rows = _pytest_run(tmp_path, [STORE, LOAD], {"CL_CONFIG_CPU_TARGET_ARCH": "sapphirerapids"})
    assert r.returncode in (0, 1), r.stdout[-2000:] + r.stderr[-2000:]
    outcomes = {x.get("case_id"): x.get("outcome") for x in rows}
    assert set(outcomes) >= {STORE, LOAD}
    if "amx_tile" not in Path("/proc/cpuinfo").read_text():
        assert outcomes[STORE] == outcomes[LOAD] == "failed"
        assert "died with SIG" in junit or "kernel build failed" in junit
