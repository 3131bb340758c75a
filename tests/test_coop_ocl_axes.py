"""The OpenCL cooperative-matrix axes (cts/families/coop_ocl_axes.py):
pointee types (``ptr-u32``), run-time strides (``rtstride``), ARM blocked
layouts (``rowblk`` / ``colblk``), the draft queries 0x107A / 0x107B
(``qalign`` / ``qstride``) and every reported subgroup size (``sg16``).

* the reference rules (reference/coop_ocl.py) on hand-worked examples;
* every cl-spirv module of the axes validates (ARM ones as SPIR-V 1.6) and
  carries the axis (OpBitcast to the pointee, the Stride parameter, layout
  4202 / 4203); the cl-c kernels cast the pointer and take ``ulong st``;
* the clean emulator passes every axis case of every profile; each new fault
  is caught, only by the cases of its axis, and the old faults by none of them;
* the queries are cross-checked against every case's pointers and Strides;
* a device's table (variants per subgroup size, queries) drives the space;
* Intel's CPU runtime: every axis case skips naming what is missing.
"""

from __future__ import annotations

import re
from collections import defaultdict

import numpy as np
import pytest

from cts.backends.emu_coop_ocl import COOP_OCL_FAULTS
from cts.backends.emulator import EmulatorBackend
from cts.families.coop import CoopEntry, load_profile, profile_names
from cts.families.coop_ocl import OclTable, buffer_rows, ocl_coop_cases
from cts.kernels.coop_cl_axes import query_violation
from cts.kernels.coop_cl_c import kernel_text
from cts.kernels.coop_cl_spv import module_text
from cts.kernels.spirv_tools import assemble_many
from cts.runs.coop.opencl import run_coop_opencl
from reference import coop_ocl as rco
from reference.data import TIERS

SUBGROUPS = 3


def axis_cases(name: str, table=None):
    p = load_profile(name)
    table = table or EmulatorBackend().coop_ocl_table(list(p.entries), p.subgroup_size)
    return [c for c in ocl_coop_cases(list(p.entries), TIERS, p.subgroup_size, table=table) if c.ocl_axis]


# ----------------------------------------------------------------- reference
def test_pointee_stride_counts_pointee_elements():
    """f16 components through a uint pointer, Stride 3 (uints): row r starts at
    byte 12 r; its elements are contiguous halves."""
    a = rco.pointee_addresses(2, 4, "row", 3, 2, 4)
    assert a[1, 0].tolist() == [12, 13] and a[1, 3].tolist() == [18, 19]
    c = rco.pointee_addresses(2, 4, "col", 3, 2, 4)  # column c at 12 c
    assert c[0, 2].tolist() == [24, 25] and c[1, 2].tolist() == [26, 27]


def test_arm_blocked_layouts():
    # Stride 1: plain 64-byte blocks of 4 x 8 halves; 4202 blocks row-major, 4203 column-major
    r = rco.arm_blocked_addresses(8, 16, 2, "rowblk", 1)[..., 0]
    assert r[0, 8] == 64 and r[4, 0] == 128 and r[1, 0] == 16
    c = rco.arm_blocked_addresses(8, 16, 2, "colblk", 1)[..., 0]
    assert c[4, 0] == 64 and c[0, 8] == 128
    # Stride 2: blocks 0 and 1 interleave 4-byte chunks: (0,0) at 0, (0,8) (block 1) at 4, (0,2) at 8
    i = rco.arm_blocked_addresses(4, 16, 2, "rowblk", 2)[..., 0]
    assert (i[0, 0], i[0, 8], i[0, 2], i[0, 10]) == (0, 4, 8, 12)
    for lay, il in (("rowblk", 2), ("colblk", 4)):  # a permutation of the bytes
        a = rco.arm_blocked_addresses(16, 16, 2, lay, il)
        assert sorted(a.ravel().tolist()) == list(range(512))
    assert not rco.arm_shape_ok(8, 8, 2, "rowblk", 2)  # Columns not a multiple of 8 x 2
    with pytest.raises(ValueError):
        rco.arm_blocked_addresses(8, 8, 2, "rowblk", 2)


def test_byte_images_round_trip():
    a = rco.arm_blocked_addresses(8, 8, 4, "colblk", 2)
    img = np.arange(256, dtype=np.uint8)[None]
    vals = rco.read_elements(img, a, np.uint32)
    assert vals[0, 0, 0] == int.from_bytes(bytes([0, 1, 2, 3]), "little")
    assert (rco.write_elements(np.zeros_like(img), a, vals) == img).all()


# ----------------------------------------------------------------- space
def test_space_names_every_axis_value():
    cs = axis_cases("h100")
    ids = [c.id for c in cs]
    assert len(ids) == len(set(ids))
    for token in ("-ptr-u8-", "-ptr-u16-", "-ptr-u32-", "-ptr-u64-", "-ptr-u32x4-", "-rtstride-", "-rowblk-il1-",
                  "-rowblk-il2-", "-colblk-il4-", "-qalign4-", "-qstride36-", "-sg16-"):  # fmt: skip
        assert any(token in i for i in ids), token
    assert not any(i.startswith("cl-c-") and "blk-" in i for i in ids)  # no ARM layout in the proposal
    assert all(c.sg == 16 for c in cs if c.sg_first)
    assert {c.op for c in cs if c.sg_first} == {"length", "load", "muladd"}
    assert 250 <= len(cs) <= 450  # a modest growth of the default sweep (h100 profile)


def test_every_reported_size_gets_its_cases():
    e = CoopEntry(8, 8, 16, "f16", "f16", "f32", "f32")
    t = OclTable({16: (e,), 8: (e,), 32: (e,)}, 64, 32)
    cs = ocl_coop_cases([e], ("exact",), 16, ("cl-spirv",), t)
    assert {c.sg for c in cs if c.sg_first} == {8, 32}
    assert any("qalign64" in c.id for c in cs)
    assert any(
        re.search(r"-qstride(\d+)-", c.id) and int(re.search(r"-qstride(\d+)-", c.id)[1]) % 32 == 0
        for c in cs
    )


# ----------------------------------------------------------------- kernels
@pytest.fixture(scope="module")
def modules():
    out = {}
    for name in profile_names():
        for c in axis_cases(name):
            if c.api == "clspv":
                out.setdefault(module_text(c, buffer_rows(c)), c)
    return out


@pytest.mark.e2e
def test_every_axis_module_validates(modules):
    blobs = assemble_many(list(modules), use_disk=False, fresh=True)
    assert len(blobs) == len(modules) > 200
    for text, c in modules.items():
        load_store = re.findall(r"OpCooperativeMatrix(?:Load|Store)KHR (.*)$", text, re.M)
        if c.ptr:
            assert "OpBitcast %pCr_" in text, c.id
        if c.rtstride:
            assert "%arg_st = OpFunctionParameter %u64" in text and any(
                x.endswith("%arg_st") for x in load_store
            )
        if c.layout in ("rowblk", "colblk"):
            assert "OpCapability CooperativeMatrixLayoutsARM" in text and text.startswith(
                "; cts-target-env spv1.6"
            )
            assert f"%k_u32_{rco.ARM_LAYOUTS[c.layout]} " in " ".join(load_store) + " "


def test_opencl_c_axis_kernels():
    for c in axis_cases("h100"):
        if c.api != "clc" or c.sg_first:
            continue
        src = kernel_text(c, buffer_rows(c))
        if c.ptr:
            assert re.search(r"global (uchar|ushort|uint|ulong|uint4) \*p_ = \(global", src), c.id
        assert ("ulong st" in src) == c.rtstride, c.id


# ----------------------------------------------------------------- emulator
def _failing(backend, cs):
    return [c.id for c in cs if not run_coop_opencl(c, backend, 1, subgroups=SUBGROUPS).verdict.passed]


@pytest.mark.parametrize("name", profile_names())
def test_clean_emulator_passes_every_axis_case(name):
    assert _failing(EmulatorBackend(), axis_cases(name)) == []


@pytest.fixture(scope="module")
def catches():
    cs = axis_cases("h100") + axis_cases("amd_rdna3")
    return {f: _failing(EmulatorBackend((f,)), cs) for f in COOP_OCL_FAULTS}, cs


# fault -> the id tokens of the only cases that may catch it, and a token every case of which must
CAUGHT_BY = {
    "coop_ocl_ptr_stride_components": (("-ptr-",), "-ptr-"),
    "coop_ocl_rtstride_tight": (("-rtstride-",), "-rtstride-"),
    "coop_ocl_arm_no_interleave": (("-il2-", "-il4-"), "-il4-"),
    "coop_ocl_arm_colblk_rowmajor": (("-colblk-",), "-f16-colblk-"),  # 8-bit: one block column
    "coop_ocl_align_16": (("-qalign",), "-qalign4-"),
    "coop_ocl_stride_multiple_8": (("-qstride",), "-qstride36-"),
    "coop_ocl_sg_length_first": (("-sg16-",), "length-"),
}


@pytest.mark.e2e
@pytest.mark.parametrize("fault", list(COOP_OCL_FAULTS))
def test_axis_fault_is_caught_only_by_its_axis(fault, catches):
    table, cs = catches
    got = table[fault]
    allowed, every = CAUGHT_BY[fault]
    assert got, fault
    assert not [i for i in got if not any(t in i for t in allowed)], fault
    must = [c.id for c in cs if every in c.id and any(t in c.id for t in allowed)]
    assert must and set(must) <= set(got), (fault, sorted(set(must) - set(got))[:3])


def test_old_faults_miss_the_new_axes():
    """The axes are new coverage: each is caught only through its own fault
    (the plain space's stride / layout faults do not explain them away)."""
    cs = [c for c in axis_cases("h100") if c.ocl_axis != "sg"]
    for f in ("coop_stride_ignored", "coop_colmajor_as_rowmajor", "coop_workgroup_offset"):
        per_axis = defaultdict(int)
        for i in _failing(EmulatorBackend((f,)), cs):
            per_axis[next(c.ocl_axis for c in cs if c.id == i)] += 1
        assert "arm" not in per_axis and "qalign" not in per_axis, (f, dict(per_axis))


# ----------------------------------------------------------------- queries
def test_queries_cross_checked_against_every_case():
    p = load_profile("h100")
    cs = ocl_coop_cases(list(p.entries), TIERS, p.subgroup_size)
    pad = next(
        c for c in cs if c.op == "load" and c.stride == "padded" and c.mat.t == "f16" and not c.ocl_axis
    )
    assert query_violation(pad, buffer_rows(pad), None, None) is None
    why = query_violation(pad, buffer_rows(pad), None, 64)  # 32 + 16 bytes is no multiple of 64
    assert "0x107B" in why and "= 64" in why
    wg = next(
        c for c in cs if c.op == "load" and c.mem == "workgroup" and c.mat.t == "f16" and not c.ocl_axis
    )
    assert query_violation(wg, buffer_rows(wg), 64, None) is None  # local arrays are declared 64-byte aligned
    assert "0x107A" in query_violation(wg, buffer_rows(wg), 128, None)
    qa = next(c for c in cs if c.qalign == 2)  # the draft's floor where no value is reported
    assert query_violation(qa, buffer_rows(qa), 2, 2) is None and "0x107A" in query_violation(
        qa, buffer_rows(qa), 4, 2
    )
    # the emulator's own values hold for every case it runs
    emu = EmulatorBackend().coop_ocl_table(list(p.entries), p.subgroup_size)
    cs = ocl_coop_cases(list(p.entries), TIERS, p.subgroup_size, table=emu)
    assert not [
        c.id for c in cs if query_violation(c, buffer_rows(c), emu.pointer_alignment, emu.stride_multiple)
    ]


def test_device_table_drives_the_space():
    """A device with the extension: variants of every reported size, the
    queries read (clGetDeviceInfo 0x107A / 0x107B), sizes without variants left out."""
    from types import SimpleNamespace

    from cts.backends.opencl_coop import CL_EXTENSION, CoopOpenCL

    e = CoopEntry(8, 8, 16, "f16", "f16", "f32", "f32")

    class Fake(CoopOpenCL):
        def describe(self):
            return SimpleNamespace(extensions=(CL_EXTENSION,), subgroup_sizes=(8, 16, 32))

        def coop_variants(self, sg=None):
            return [e] if sg in (16, 32) else []

        def coop_query(self, param):
            return {0x107A: 32, 0x107B: 16}[param]

    t = Fake().coop_ocl_table([e], 16)
    assert list(t.variants) == [16, 32] and (t.pointer_alignment, t.stride_multiple) == (32, 16)


# ----------------------------------------------------------------- Intel CPU runtime
def test_intel_cpu_skips_name_what_is_missing():
    from cts.backends.base import BackendError

    try:
        from cts.backends.opencl import OpenCLBackend

        intel = OpenCLBackend("Intel")
    except (BackendError, ImportError) as e:
        pytest.skip(f"no Intel CPU OpenCL runtime: {e}")
    p = load_profile("h100")
    table = intel.coop_ocl_table(list(p.entries), p.subgroup_size)
    assert list(table.variants) == [p.subgroup_size] and table.pointer_alignment is None
    cs = [c for c in ocl_coop_cases(list(p.entries), TIERS, p.subgroup_size, table=table) if c.ocl_axis]
    reasons = {c.id: intel.unsupported(c) for c in cs}
    assert all(reasons.values())
    for c in cs:
        if c.layout in ("rowblk", "colblk"):
            assert "CooperativeMatrixLayoutsARM" in reasons[c.id], c.id
        else:
            assert (
                "cl_khr_cooperative_matrix" if c.api == "clspv" else "__opencl_c_ext_cooperative_matrix"
            ) in reasons[c.id]
