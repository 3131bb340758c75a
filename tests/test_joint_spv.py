"""joint_matrix on OpenCL through SPIR-V: every generated module
of the path is validated (spirv-val on its twin + the structural check of
the device words); the checks catch wrong words; the lowerings differ only
where they say; the OpenCL mixin skips naming the table, the suite's gap,
the extension or the AMX feature; a dying or hanging runtime fails its case
only, with its own words.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import cts.backends.opencl_joint as oj
from cts.families.joint import joint_cases
from cts.kernels.joint_spv import INTEL_CAPS, LOWERINGS, module_texts, unrealizable
from cts.kernels.joint_spv_check import (
    _strip_comments,
    assemble_raw,
    check_words,
    parse_words,
    validated_module,
)
from cts.kernels.spirv_tools import SpirvToolError, assemble
from reference.data import TIERS

ROOT = Path(__file__).resolve().parent.parent
AMX = [c for c in joint_cases(TIERS) if c.arch == "amx"]
BY_ID = {c.id: c for c in AMX}
PACKED_BF16 = "amx-cur-mad-bf16_bf16_f32_f32-m16n16k32-mad-row_packed_row_row-tight-exact"
LOAD_CHECKED = "amx-cur-load_checked-bf16-m16n16k32-b-packed_packed-pad-random"
APPLY = "amx-cur-apply-bf16-m16n16k32-b-packed_packed-pad-exact"
TF32 = "amx-cur-mad-tf32_tf32_f32_f32-m16n16k16-mad-row_row_row_row-tight-exact"
I8 = "amx-cur-mad-i8_u8_i32_i32-m16n16k64-mad-row_packed_row_row-tight-exact"


def _distinct(lowering: str) -> dict[str, object]:
    """One case per distinct module (tiers differ only in the comment)."""
    out: dict[str, object] = {}
    for c in AMX:
        if unrealizable(c) is None:
            dev, _ = module_texts(c, lowering)
            out.setdefault(_strip_comments(dev), c)
    return out


@pytest.mark.parametrize("lowering", sorted(LOWERINGS))
def test_every_amx_module_is_validated(lowering):
    """spirv-val (twin) + structural check (device words), every lowering."""
    cases = list(_distinct(lowering).values())
    assert len(cases) > 150
    with ThreadPoolExecutor(max_workers=4) as ex:
        blobs = list(ex.map(lambda c: validated_module(c, lowering)[0], cases))
    assert all(b[:4] == b"\x03\x02\x23\x07" for b in blobs)


def test_every_amx_case_has_a_module_or_a_named_gap():
    gaps = [c for c in AMX if unrealizable(c)]
    assert gaps and all("packed_a" in c.layouts for c in gaps)
    assert all("packed_a" in unrealizable(c) for c in gaps)
    with pytest.raises(ValueError, match="packed_a"):
        module_texts(gaps[0])


# ------------------------------------------------------------ module content
def _caps(text: str) -> set[int]:
    return {int(x.split("!")[1].split()[0]) for x in text.splitlines() if x.startswith("OpCapability !")}


def test_spec_lowering_declares_what_the_tokens_need():
    dev, twin = module_texts(BY_ID[PACKED_BF16], "spec")
    assert _caps(dev) == {6434, 6437} and 'OpExtension "SPV_INTEL_joint_matrix"' in dev
    assert "%k_u32_2 %sb" in dev.replace("\n", " ") or " %k_u32_2 " in dev  # layout PackedINTEL = 2
    assert "!64" in dev and "!64" not in twin and "!6434" not in twin
    dev, _ = module_texts(BY_ID[LOAD_CHECKED], "spec")
    assert _caps(dev) == {6434, 6192} and "!0x000a1831" in dev  # 10 words, opcode 6193
    dev, _ = module_texts(BY_ID[APPLY], "spec")
    assert {6434, 6435} <= _caps(dev) and "!0x00051928" in dev  # GetElementCoord, 5 words
    dev, _ = module_texts(BY_ID[TF32], "spec")
    assert _caps(dev) == {6436} and "!32" in dev
    dev, _ = module_texts(BY_ID[I8], "spec")
    assert "MatrixASignedComponentsKHR|MatrixCSignedComponentsKHR|MatrixResultSignedComponentsKHR" in dev


def test_intel_cpu_lowering_drops_only_the_refused_capabilities():
    assert LOWERINGS["intel-cpu"].omit_caps == {6434, 6192}
    for cid in (PACKED_BF16, LOAD_CHECKED, APPLY, TF32):
        spec, _ = module_texts(BY_ID[cid], "spec")
        cpu, _ = module_texts(BY_ID[cid], "intel-cpu")
        assert _caps(cpu) == _caps(spec) - {6434, 6192}
        body = [x for x in spec.splitlines() if not x.startswith((";", "OpCapability !"))]
        assert body == [x for x in cpu.splitlines() if not x.startswith((";", "OpCapability !"))]


# --------------------------------------------------------- structural check
def _pair(cid: str, lowering: str = "spec"):
    dev, twin = module_texts(BY_ID[cid], lowering)
    return assemble_raw(dev), assemble(_strip_comments(twin)), dev


def _words(blob: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(blob) // 4}I", blob))


def _pack(words: list[int]) -> bytes:
    return struct.pack(f"<{len(words)}I", *words)


def _find(blob: bytes, opcode: int) -> int:
    """Word offset of the first instruction with ``opcode``."""
    w, i = _words(blob), 5
    while i < len(w):
        if w[i] & 0xFFFF == opcode:
            return i
        i += w[i] >> 16
    raise AssertionError(f"opcode {opcode} not found")


def test_structural_check_passes_the_generated_pairs():
    for cid in (PACKED_BF16, LOAD_CHECKED, APPLY, TF32, I8):
        for low in LOWERINGS:
            dev, twin, _ = _pair(cid, low)
            check_words(dev, twin, low)


def _mutant_rejected(dev: bytes, twin: bytes, low: str, match: str | None) -> None:
    with pytest.raises(SpirvToolError, match=match):
        check_words(dev, twin, low)


def test_structural_check_catches_wrong_declarations():
    dev, twin, _ = _pair(PACKED_BF16)
    _mutant_rejected(dev, twin, "intel-cpu", "INTEL capabilities")  # 6434 present in intel-cpu form
    w = _words(dev)
    i = _find(dev, 17)
    while not (w[i] & 0xFFFF == 17 and w[i + 1] == 6437):
        i += w[i] >> 16
    _mutant_rejected(_pack(w[:i] + w[i + 2 :]), twin, "spec", "INTEL capabilities")  # 6437 dropped
    w = _words(dev)
    i = _find(dev, 10)
    i += w[i] >> 16  # the second OpExtension: SPV_INTEL_joint_matrix
    assert w[i] & 0xFFFF == 10
    _mutant_rejected(_pack(w[:i] + w[i + (w[i] >> 16) :]), twin, "spec", "OpExtension")


def test_structural_check_catches_wrong_intel_words():
    dev, twin, _ = _pair(LOAD_CHECKED)
    i = _find(dev, 6193)
    w = _words(dev)
    _mutant_rejected(_pack(w[:i] + [(9 << 16) | 6193] + w[i + 1 : i + 9] + w[i + 10 :]), twin, "spec", None)
    x64 = w[i + 9]  # the 64-bit stride id as X offset
    _mutant_rejected(_pack(w[: i + 4] + [x64] + w[i + 5 :]), twin, "spec", "not a 32-bit integer")
    _mutant_rejected(_pack(w[: i + 3] + [w[i + 4]] + w[i + 4 :]), twin, "spec", "validated twin has")
    dev, twin, _ = _pair(APPLY)
    i = _find(dev, 6440)
    w = _words(dev)
    _mutant_rejected(_pack(w[: i + 1] + [w[i + 4]] + w[i + 2 :]), twin, "spec", None)


def test_structural_check_catches_operand_bits_on_wrong_types():
    dev, twin, _ = _pair(I8)
    i = _find(dev, 4459)
    w = _words(dev)
    w[i + 6] |= 0x40  # bf16 interpretation on i8 operands
    _mutant_rejected(_pack(w), twin, "spec", "BFloat16")
    dev, twin, _ = _pair(PACKED_BF16)
    i = _find(dev, 4459)
    w = _words(dev)
    w[i + 6] = 0x20  # tf32 interpretation on 16-bit integers
    _mutant_rejected(_pack(w), twin, "spec", "TF32")
    w[i + 6] = 0x40 | 0x200
    _mutant_rejected(_pack(w), twin, "spec", "unknown Cooperative Matrix Operands")


def test_parse_words_rejects_broken_binaries():
    dev, _, _ = _pair(I8)
    w = _words(dev)
    w[5] |= 0xFFFF << 16  # the first instruction runs past the end
    with pytest.raises(SpirvToolError, match="runs past"):
        parse_words(_pack(w))
    with pytest.raises(SpirvToolError):
        parse_words(b"\0" * 20)
    assert all(ins.opcode != 0 for ins in parse_words(dev))  # the OpNop separators are gone


# ----------------------------------------------------------------- gating
def _fake(extensions=(), il="SPIR-V_1.4", cpu=True):
    cl = SimpleNamespace(device_type=SimpleNamespace(CPU=2))
    be = oj.JointOpenCL()
    be.cl = cl
    be.device = SimpleNamespace(name="Fake CPU", type=2 if cpu else 4)
    be.describe = lambda: SimpleNamespace(extra={"il_version": il}, extensions=tuple(extensions))
    be.has_extension = lambda name: name in extensions
    be.assumed = frozenset()
    return be


def _case(pattern: str):
    return next(c for c in joint_cases(TIERS) if pattern in c.id)


def test_skips_name_the_table_gap_extension_and_feature(monkeypatch):
    monkeypatch.setattr(oj, "host_cpu_flags", lambda: frozenset({"amx_tile", "amx_int8", "amx_bf16"}))
    be = _fake()
    assert "another device class" in be.unsupported_joint_matrix(_case("xmx16-cur-mad-"))
    assert "not realized by the suite" in be.unsupported_joint_matrix(
        _case("amx-old-ldst-bf16-m16n16k32-a-packed_a")
    )
    r = be.unsupported_joint_matrix(BY_ID[I8])
    assert "cl_khr_cooperative_matrix" in r and "--assume-extension" in r and "amx_int8" in r
    assert "no SPIR-V IL" in _fake(il="").unsupported_joint_matrix(BY_ID[I8])
    assert "not a CPU" in _fake(cpu=False).unsupported_joint_matrix(BY_ID[I8])
    be = _fake(("cl_khr_cooperative_matrix",))
    assert be.unsupported_joint_matrix(BY_ID[I8]) is None
    assert be.unsupported_joint_matrix(BY_ID[PACKED_BF16]) is None
    f16 = _case("amx-cur-mad-f16_f16_f32_f32-m16n16k32")
    r = be.unsupported_joint_matrix(f16)
    assert "outside the AMX table for this CPU" in r and "amx_fp16" in r and "intel_cpu_gnr" in r
    assert "amx_tf32" in be.unsupported_joint_matrix(BY_ID[TF32])
    monkeypatch.setattr(oj, "host_cpu_flags", lambda: frozenset({"sse2"}))
    r = be.unsupported_joint_matrix(BY_ID[I8])
    assert "amx_int8" in r and "no AMX flag" in r


def test_row_feature_follows_the_table_rows():
    assert oj.row_feature(("i8", "u8", "i32", "i32")) == "int8"
    assert oj.row_feature(("i32",)) == "int8" and oj.row_feature(("f32",)) == "bf16"
    assert oj.row_feature(("f32", "tf32")) == "tf32" and oj.row_feature(("f16", "f32")) == "f16"


def test_kernel_sources_carry_the_launch_facts(monkeypatch):
    be = _fake(("cl_khr_cooperative_matrix",))
    ks = be.kernel_source_joint_matrix(BY_ID[LOAD_CHECKED], 8)
    assert ks.args == ("src", "dst", "geo", "meta") and ks.arg_types == (
        "uint16",
        "uint16",
        "uint32",
        "uint64",
    )
    assert ks.global_size == (8 * 16,) and ks.local_size == (16,) and ks.il[:4] == b"\x03\x02\x23\x07"


# ------------------------------------------------ Intel's CPU runtime (local)
@pytest.fixture(scope="module")
def intel():
    from cts.backends.base import BackendError

    try:
        from cts.backends.opencl import OpenCLBackend

        be = OpenCLBackend("Intel", assume_extensions=("cl_khr_cooperative_matrix", "SPV_INTEL_joint_matrix"))
    except (BackendError, ImportError) as e:
        pytest.skip(f"no Intel CPU OpenCL runtime: {e}")
    return be


def _run_one(intel, cid: str, monkeypatch, env: dict | None = None):
    from cts.runs.joint import run_joint

    monkeypatch.setattr(oj, "host_cpu_flags", lambda: frozenset({"amx_tile", "amx_int8", "amx_bf16"}))
    for k, v in (env or {}).items():
        monkeypatch.setenv(k, v)
    intel.__dict__.pop("_joint_server", None)
    return run_joint(BY_ID[cid], intel, 1)


def test_runtime_words_reach_the_verdict(intel, monkeypatch):
    """The spec-valid packed module, forced (SPV_INTEL_joint_matrix assumed):
    this runtime refuses capability 6434, and the failure carries its own
    words; the same case is forced, not a conformance verdict."""
    from cts.errors import CaseError

    intel.joint_lowering = "spec"
    monkeypatch.setattr(oj, "host_cpu_flags", lambda: frozenset({"amx_tile", "amx_int8", "amx_bf16"}))
    forced = intel.forced_reason(BY_ID[PACKED_BF16])
    assert forced.startswith("--assume-extension ") and "cl_khr_cooperative_matrix not supported" in forced
    with pytest.raises(CaseError, match="6434"):
        _run_one(intel, PACKED_BF16, monkeypatch)


def test_unlisted_capabilities_are_skips_naming_them(intel, monkeypatch):
    """One capability rule: the runtime lists neither 6434 nor 6192 (its
    cl_khr_spirv_queries list): without an assumption covering them, the
    cases needing them skip naming them; a module that omits them (the
    intel-cpu deviation) is the suite's invalid input, never handed over."""
    from cts.errors import HarnessError

    monkeypatch.setattr(oj, "host_cpu_flags", lambda: frozenset({"amx_tile", "amx_int8", "amx_bf16"}))
    saved = intel.assumed
    intel.assumed = frozenset({"cl_khr_cooperative_matrix"})
    try:
        r = intel.unsupported(BY_ID[PACKED_BF16])
        assert "PackedCooperativeMatrixINTEL" in r and "not listed" in r, r
        assert "CooperativeMatrixCheckedInstructionsINTEL" in intel.unsupported(BY_ID[LOAD_CHECKED])
    finally:
        intel.assumed = saved
    intel.joint_lowering = "intel-cpu"
    try:
        with pytest.raises(HarnessError, match="omits OpCapability PackedCooperativeMatrixINTEL"):
            intel.kernel_source_joint_matrix(BY_ID[PACKED_BF16], 2)
    finally:
        intel.joint_lowering = "spec"


def test_a_dying_compiler_fails_its_case_only(intel, monkeypatch):
    from cts.errors import CaseError

    intel.joint_lowering = "spec"
    with pytest.raises(CaseError, match="SIGABRT") as e:
        _run_one(intel, I8, monkeypatch, {"CTS_JOINT_CHILD_SELFTEST": "SIGABRT"})
    assert "Unsuppoted Layout" in str(e.value) and "promises" in str(e.value)
    monkeypatch.delenv("CTS_JOINT_CHILD_SELFTEST")
    with pytest.raises(CaseError, match="kernel build"):  # the next case gets a fresh child
        _run_one(intel, I8, monkeypatch)


def test_a_hanging_child_is_the_timeout_verdict(intel, monkeypatch):
    from cts.errors import CaseTimeout

    with pytest.raises(CaseTimeout, match="no answer within 1 s"):
        _run_one(intel, I8, monkeypatch, {"CTS_JOINT_CHILD_SELFTEST": "hang", "CTS_COOP_CHILD_TIMEOUT": "1"})


@pytest.mark.e2e
def test_device_cases_skip_on_a_host_without_amx(intel, tmp_path):
    """The CI shape: without the extension every AMX case skips naming it;
    with it assumed, they skip naming the missing AMX feature."""
    if "amx_tile" in Path("/proc/cpuinfo").read_text():
        pytest.skip("this host has AMX")

    def run(*extra):
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "cases/test_joint_matrix.py",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
        ]
        cmd += ["--backend", "opencl", "--device", "Intel", "--no-report", "-k", "amx-cur-mad-i8_u8", *extra]
        return subprocess.run(
            cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, env=dict(os.environ)
        )

    r = run()
    assert r.returncode == 0 and " passed" not in r.stdout and "skipped" in r.stdout, r.stdout[-2000:]
    assert "cl_khr_cooperative_matrix not supported" in r.stdout
    r = run("--assume-extension", "cl_khr_cooperative_matrix", "--joint-lowering", "intel-cpu")
    assert r.returncode == 0 and "lacks CPU flag amx_int8" in r.stdout, r.stdout[-2000:]


@pytest.mark.e2e
@pytest.mark.parametrize(
    "args,words",
    [(["--joint-lowering", "intel-cpu"], "--joint-lowering needs --backend opencl"),
     (["--joint-lowering", "nosuch"], "unknown --joint-lowering 'nosuch'; known: spec, intel-cpu")],
)  # fmt: skip
def test_bad_joint_lowering_is_one_clear_line(args, words):
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "cases/test_joint_matrix.py",
        "--co",
        "-q",
        "-p",
        "no:xdist",
        *args,
    ]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    lines = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip()]
    assert r.returncode == 4 and len(lines) == 1 and words in lines[0], lines


def test_meta_and_buffers_follow_the_slots():
    """run_joint_matrix's host buffers: element widths, lengths then strides."""
    seen = {}

    class Srv:
        def run(self, backend, case, ks, flat, out):
            seen.update(flat=flat, out=out, args=ks.args)
            return np.zeros(flat[out].size, dtype=flat[out].dtype)

    be = _fake(("cl_khr_cooperative_matrix",))
    be.__dict__["_joint_server"] = Srv()
    be.selected = SimpleNamespace(index=0)
    S = 4
    kw = dict(
        a=np.ones((S, 10), np.uint64), b=np.ones((S, 11), np.uint64), c=np.ones((S, 12), np.uint64),
        d=np.ones((S, 13), np.uint64), sa=64, sb=64, sc=16, sd=32,
    )  # fmt: skip
    oj.host_cpu_flags.cache_clear()
    orig = oj.host_cpu_flags
    try:
        oj.host_cpu_flags = lambda: frozenset({"amx_int8"})
        out = be.run_joint_matrix(BY_ID[I8], **kw)
    finally:
        oj.host_cpu_flags = orig
    assert out.shape == (S, 13) and seen["out"] == "d"
    assert list(seen["flat"]["meta"]) == [10, 11, 12, 13, 64, 64, 16, 32]
    assert seen["flat"]["a"].dtype == np.uint8 and seen["flat"]["d"].dtype == np.uint32
    assert INTEL_CAPS["packed"][0] == 6434


def test_configuration_key_does_not_depend_on_plugin_order(monkeypatch):
    """Two rooms adding rerun options (--assume-extension, --joint-lowering):
    the xdist controller and its workers list plugins in different orders;
    the run's configuration must not change with it."""
    import cts.plugin.record as rec

    class Room:
        def __init__(self, args):
            self.cts_rerun_args = lambda config: list(args)

    rooms = [
        ("cts.plugin.opencl", Room(["--assume-extension", "x"])),
        ("cts.plugin.joint", Room(["--joint-lowering", "intel-cpu"])),
    ]
    dev = SimpleNamespace(name="d", platform="p", driver="v", version="1")
    h = SimpleNamespace(device=dev, backend=SimpleNamespace(name="opencl", identity=lambda: {}), seed=1)
    h.profile, h.tiers, h.subgroups = SimpleNamespace(name="default"), ("exact",), 32
    monkeypatch.setattr(rec, "_harness", lambda config: h)
    keys = set()
    for order in (rooms, rooms[::-1]):
        pm = SimpleNamespace(list_name_plugin=lambda order=order: list(order))
        keys.add(rec.ident_key(rec.run_ident(SimpleNamespace(pluginmanager=pm))))
    assert len(keys) == 1
