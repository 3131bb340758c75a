"""OpRoundFToTF32INTEL: the case space, the modules, the
reference rule against hand-made values, the emulator and its two faults
(which cases catch them; no case of before does), and support detection on
OpenCL (a fake device, and Intel's CPU runtime when present).

``pytest tests/test_spirv_tf32.py -s`` prints the fault table.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest
from tabulate import tabulate

from cts.backends.base import DeviceInfo
from cts.backends.emu_spirv import parse_round_tf32
from cts.backends.emulator import EmulatorBackend
from cts.backends.opencl_spirv import SpirvOpenCL
from cts.families.intel import intel_mma_cases, tf32_convert_cases
from cts.families.spirv_intel import spirv_intel_cases
from cts.families.spirv_tf32 import SpirvTf32RoundCase, spirv_tf32_round_cases
from cts.kernels.spirv_tf32 import control_module_text, module_text
from cts.kernels.spirv_tools import assemble
from cts.runs.intel import run_intel_mma, run_tf32_convert
from cts.runs.spirv import run_spirv_intel_mma, run_spirv_tf32_round
from reference.data import TIERS
from reference.intel import round_f_to_tf32

SEED = 1
FAULTS = ("spirv_tf32_round_ties_away", "spirv_tf32_round_scalar_only")


def test_the_faults_are_registered():
    from cts.backends.emu_spirv import TF32_ROUND_FAULTS
    from cts.backends.emulator import all_faults

    assert set(TF32_ROUND_FAULTS) == set(FAULTS) and set(FAULTS) <= set(all_faults())


# --------------------------------------------------------- case space
def test_cases_are_every_opencl_vector_size_on_the_tiers_of_the_builtins():
    cases = spirv_tf32_round_cases(TIERS)
    assert len(cases) == 18 and len({c.id for c in cases}) == 18
    assert Counter(c.width for c in cases) == {1: 3, 2: 3, 3: 3, 4: 3, 8: 3, 16: 3}
    assert {c.tier for c in cases} == {c.tier for c in tf32_convert_cases(TIERS)}  # the built-ins' tiers
    assert "roundtf32-w16-special" in {c.id for c in cases}
    assert {c.tier for c in spirv_tf32_round_cases(("random", "onehot"))} == {"random"}


@pytest.mark.parametrize("width", [1, 2, 3, 4, 8, 16])
def test_modules_declare_the_capability_and_round_their_operand_type(width):
    text = module_text(width)
    assert "OpCapability TensorFloat32RoundingINTEL" in text
    assert 'OpExtension "SPV_INTEL_tensor_float32_conversion"' in text
    assert ("OpCapability Vector16" in text) == (width >= 8)
    binary = assemble(text)  # spirv-val (opencl2.2) accepts it
    words = np.frombuffer(binary, dtype="<u4")
    caps = words[1:][words[:-1] == (2 << 16 | 17)]  # the operand of every OpCapability
    assert 6425 in caps.tolist() and ((words & 0xFFFF) == 6426).sum() == 1
    assert parse_round_tf32(binary) == ("float", 32, width)
    assert "TensorFloat32" not in control_module_text(width)
    assemble(control_module_text(width))


# -------------------------------------------------------- reference rule
# cl_intel_subgroup_matrix_multiply_accumulate_tf32 / SPV_INTEL_tensor_float32_conversion rev 3: nearest even,
# infinities kept, NaN stays NaN; 13 low mantissa bits dropped.
GOLDEN = [
    (0x3F801000, 0x3F800000),  # tie, kept part even: down
    (0x3F803000, 0x3F804000),  # tie, kept part odd: up
    (0x3F800FFF, 0x3F800000),  # below half
    (0x3F801001, 0x3F802000),  # above half
    (0x3FFFF000, 0x40000000),  # carry into the exponent
    (0x7F7FFFFF, 0x7F800000),  # the largest float rounds to inf
    (0x7F7FF000, 0x7F800000),  # tie at the top, odd: up to inf
    (0x7F800000, 0x7F800000),
    (0xFF800000, 0xFF800000),
    (0x00001000, 0x00000000),  # subnormal tie, even: to +0
    (0x00003000, 0x00004000),  # subnormal tie, odd: up
    (0x807FFFFF, 0x80800000),  # largest subnormal carries into the smallest normal
    (0x80000000, 0x80000000),
]


def test_reference_rule_on_hand_made_values():
    x = np.array([a for a, _ in GOLDEN], dtype=np.uint32).view(np.float32)
    got = round_f_to_tf32(x).view(np.uint32)
    assert [hex(v) for v in got] == [hex(b) for _, b in GOLDEN]
    nan = round_f_to_tf32(np.array([0x7FC00000, 0x7F800001], dtype=np.uint32).view(np.float32))
    assert np.isnan(nan).all()


def test_emulator_rounds_the_golden_values_in_every_component():
    x = np.array([a for a, _ in GOLDEN] + [0x7FC00000, 0x7F800001, 0x3F800000], dtype=np.uint32).view(
        np.float32
    )
    y = EmulatorBackend().run_spirv_tf32_round(SpirvTf32RoundCase(16, "special"), x.reshape(1, 16))
    u = y.reshape(-1).view(np.uint32)
    assert [hex(v) for v in u[:13]] == [hex(b) for _, b in GOLDEN]
    assert np.isnan(y.reshape(-1)[13:15]).all() and u[15] == 0x3F800000


# ------------------------------------------------------ faults and cases
def _failed(backend) -> list[str]:
    return [
        c.id
        for c in spirv_tf32_round_cases(TIERS)
        if not run_spirv_tf32_round(c, backend, SEED).verdict.passed
    ]


def test_the_clean_emulator_passes_every_case():
    assert _failed(EmulatorBackend()) == []


@pytest.fixture(scope="module")
def catches():
    table = {f: _failed(EmulatorBackend((f,))) for f in FAULTS}
    rows = [[f, f"{len(v)} / 18", ", ".join(v[:3])] for f, v in table.items()]
    print("\n" + tabulate(rows, headers=["fault", "cases failed", "e.g."], tablefmt="github"))
    return table


def test_ties_away_is_caught_by_the_special_tier_of_every_width(catches):
    assert {f"roundtf32-w{w}-special" for w in (1, 2, 3, 4, 8, 16)} <= set(catches[FAULTS[0]])
    assert not [c for c in catches[FAULTS[0]] if c.endswith("-exact")]


def test_scalar_only_is_caught_by_exactly_the_vector_cases_with_data_to_round(catches):
    want = {f"roundtf32-w{w}-{t}" for w in (2, 3, 4, 8, 16) for t in ("random", "special")}
    assert set(catches[FAULTS[1]]) == want


@pytest.mark.parametrize("fault", FAULTS)
def test_no_case_of_before_catches_them(fault):
    """The faults act only in run_spirv_tf32_round: the tf32 built-ins (the
    conversions and the tf32 MMA) and the SPIR-V MMA all still pass."""
    emu = EmulatorBackend((fault,))
    bad = [c.id for c in tf32_convert_cases(TIERS) if not run_tf32_convert(c, emu, SEED).verdict.passed]
    bad += [
        c.id
        for c in intel_mma_cases(TIERS)
        if c.a == "tf32" and not run_intel_mma(c, emu, SEED, subgroups=4).verdict.passed
    ]
    bad += [
        c.id
        for c in spirv_intel_cases(TIERS)
        if not run_spirv_intel_mma(c, emu, SEED, subgroups=4).verdict.passed
    ]
    assert bad == []


# --------------------------------------------------------- OpenCL support
class FakeDevice(SpirvOpenCL):
    def __init__(self, exts=(), assumed=(), built=True):
        self._exts, self.assumed_explicit, self.built, self.builds = set(exts), frozenset(assumed), built, 0
        self.device = None
        self._info = DeviceInfo("opencl", "FakeCPU", extensions=tuple(exts), subgroup_sizes=(8, 16))

    def describe(self):
        return self._info

    def build_program(self, source=None, il=None, options=""):
        from cts.errors import CaseError

        self.builds += 1
        if not self.built:
            raise CaseError(
                "kernel build failed on FakeCPU:\nSPIRV module requires unsupported capability 6425"
            )
        return object()


@pytest.fixture
def queries(monkeypatch):
    from cts.backends import clquery

    state = {"caps": (), "spv": (), "il": "SPIR-V_1.2"}
    monkeypatch.setattr(clquery, "il_version", lambda d: state["il"])
    monkeypatch.setattr(clquery, "spirv_capabilities", lambda d: state["caps"])
    monkeypatch.setattr(clquery, "spirv_extensions", lambda d: state["spv"])
    return state


CASE = SpirvTf32RoundCase(4, "special")


def test_claimed_by_spirv_queries_by_the_tf32_extension_or_by_assumption(queries):
    queries.update(caps=(6425,), spv=("SPV_INTEL_tensor_float32_conversion",))
    assert FakeDevice(exts=("cl_khr_spirv_queries",)).unsupported_spirv_tf32_round(CASE) is None
    queries.update(caps=(), spv=())
    assert (
        FakeDevice(exts=("cl_intel_subgroup_matrix_multiply_accumulate_tf32",)).unsupported_spirv_tf32_round(
            CASE
        )
        is None
    )
    assert (
        FakeDevice(assumed=("SPV_INTEL_tensor_float32_conversion",)).unsupported_spirv_tf32_round(CASE)
        is None
    )


def test_unclaimed_skips_naming_the_capability_and_what_the_runtime_does(queries):
    queries.update(caps=(6425,))  # the capability without the extension string is not a claim
    dev = FakeDevice(exts=("cl_khr_spirv_queries",))
    reason = dev.unsupported_spirv_tf32_round(CASE)
    assert "capability 6425 (TensorFloat32RoundingINTEL) and no SPV_INTEL_tensor_float32_conversion" in reason
    assert "builds a module declaring it all the same (no rejection)" in reason
    assert dev.unsupported_spirv_tf32_round(dataclasses.replace(CASE, width=1)) == reason and dev.builds == 1
    refused = FakeDevice(built=False).unsupported_spirv_tf32_round(CASE)
    assert "no cl_khr_spirv_queries" in refused
    assert "refuses a module declaring it: SPIRV module requires unsupported capability 6425" in refused
    queries.update(il="")
    assert "accepts no SPIR-V IL" in FakeDevice().unsupported_spirv_tf32_round(CASE)


# ------------------------------------------------------- a real device
@pytest.fixture(scope="module")
def opencl():
    pytest.importorskip("pyopencl")
    from cts.backends import BackendError, make_backend

    try:
        be = make_backend("opencl")
    except (BackendError, ValueError, KeyError) as e:
        pytest.skip(f"no OpenCL device: {e}")
    yield be
    be.close()


def test_a_real_device_runs_or_skips_with_the_capability_named(opencl):
    reason = opencl.unsupported(CASE)
    if reason is None:
        assert run_spirv_tf32_round(CASE, opencl, SEED).verdict.elements == 1024
        return
    assert "6425" in reason or "SPIR-V IL" in reason
    assert "builds a module declaring it" in reason or "refuses a module declaring it" in reason


@pytest.mark.parametrize("width", [1, 3, 16])
def test_module_plumbing_with_the_control_kernel(opencl, width):
    """The generated kernel with y = x on the real driver: every work-item
    finds its operands and writes where the host reads."""
    if "SPIR-V" not in opencl.describe().extra.get("il_version", ""):
        pytest.skip("device accepts no SPIR-V")
    case = SpirvTf32RoundCase(width, "random")
    ks = dataclasses.replace(
        opencl.kernel_source_spirv_tf32_round(case), il=assemble(control_module_text(width))
    )
    x = np.arange(256 * width, dtype=np.uint32) | np.uint32(0x3F800000)
    out = opencl.run_kernel(ks, {"x": x}, {"y": (np.uint32, x.size)})
    assert (out["y"] == x).all()
