"""Sentinel fills (cts/judge/sentinel.py): a device that stores nothing (the
emulator fault ``write_nothing``) fails every result element of every
family, each named "never written".  Memory-region verdicts also hold the
cells a store must leave alone (those pass: they are untouched); the MLIR
ops that read the element map back through an extraction cannot judge
slot by slot and stop with a case error that says the extraction was never
written.  Every third case of each family (every case of the smaller ones).
"""

import pytest

from cts.backends.base import CaseError
from cts.backends.emulator import EmulatorBackend
from cts.judge import NEVER_WRITTEN

SEED = 1
NOWRITE = EmulatorBackend(("write_nothing",))


def _families():
    from cts.families.coop import coop_cases, load_profile
    from cts.families.coop2 import ASSUMED, coop2_cases
    from cts.families.coop_ocl import ocl_coop_cases
    from cts.families.intel import intel_mma_cases, intel_split_cases, tf32_convert_cases
    from cts.families.joint import joint_cases
    from cts.families.mlir import mlir_cases
    from cts.families.rotate import rotate_cases
    from cts.families.spirv_intel import spirv_intel_cases
    from cts.families.spirv_tf32 import spirv_tf32_round_cases
    from cts.families.subgroup_builtins import subgroup_builtins_cases
    from cts.runs.coop import run_coop
    from cts.runs.coop.opencl import run_coop_opencl
    from cts.runs.coop2 import run_coop2
    from cts.runs.intel import run_intel_mma, run_tf32_convert
    from cts.runs.joint import run_joint
    from cts.runs.mlir import run_mlir
    from cts.runs.rotate import run_rotate
    from cts.runs.spirv import run_spirv_intel_mma, run_spirv_tf32_round
    from cts.runs.subgroup_builtins import run_subgroup_builtins
    from reference.data import TIERS

    h100 = load_profile("h100")
    table = EmulatorBackend().coop_ocl_table(list(h100.entries), h100.subgroup_size)
    ocl = [
        c for c in ocl_coop_cases(list(h100.entries), TIERS, h100.subgroup_size, table=table) if c.ocl_axis
    ]
    return {
        "intel_mma": (intel_mma_cases(TIERS), lambda c, be: run_intel_mma(c, be, SEED, subgroups=4)),
        "intel_split_mma": (intel_split_cases(TIERS), lambda c, be: run_intel_mma(c, be, SEED, subgroups=4)),
        "intel_tf32_convert": (tf32_convert_cases(TIERS), lambda c, be: run_tf32_convert(c, be, SEED)),
        "spirv_intel_mma": (
            spirv_intel_cases(TIERS),
            lambda c, be: run_spirv_intel_mma(c, be, SEED, subgroups=4),
        ),
        "spirv_tf32_round": (spirv_tf32_round_cases(TIERS), lambda c, be: run_spirv_tf32_round(c, be, SEED)),
        "coop_matrix": (
            coop_cases(h100.entries, TIERS, h100.subgroup_size, ("vk",)),
            lambda c, be: run_coop(c, be, SEED, subgroups=4),
        ),
        "coop_opencl_axes": (
            ocl,
            lambda c, be: run_coop_opencl(c, be, SEED, subgroups=4),
        ),
        "coop_matrix2": (
            coop2_cases(h100.entries, ASSUMED, h100.subgroup_size),
            lambda c, be: run_coop2(c, be, SEED),
        ),
        "joint_matrix": (joint_cases(TIERS), lambda c, be: run_joint(c, be, SEED, subgroups=2)),
        "mlir": ([c for c in mlir_cases() if c.sg in (8, 16)], lambda c, be: run_mlir(c, be, SEED)),
        "subgroup_rotate": (
            [c for c in rotate_cases() if c.sg in (8, 16)],
            lambda c, be: run_rotate(c, be, SEED),
        ),
        "subgroup_builtins": (subgroup_builtins_cases(), lambda c, be: run_subgroup_builtins(c, be, SEED)),
    }


FAMILIES = _families()
MEMORY_OPS = (
    "store",
    "store_checked",
    "tensor",
    "ldst",
    "load_checked",
    "apply",
    "apply_plain",
    "copy",
    "fill",
    "fill_checked",
)
MAP_OPS = ("thread_local", "mma_rotate", "elementwise")  # MLIR ops judged through an extraction


@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_device_that_writes_nothing_fails_every_element(family):
    cases, run = FAMILIES[family]
    picked = [c for c in cases if NOWRITE.unsupported(c) is None]
    picked = picked[::3] if len(picked) > 60 else picked
    assert picked, f"no runnable {family} case"
    for c in picked:
        try:
            v = run(c, NOWRITE).verdict
        except CaseError as e:
            assert family == "mlir" and c.op in MAP_OPS and "never written" in str(e), f"{c.id}: {e}"
            continue
        if family == "mlir" and c.tag in ("AOp", "BOp"):  # observed as A x I + D: D is an input (zeros)
            assert not v.passed and v.failures == v.elements, f"{c.id}: {v.summary()}"
            continue
        assert not v.passed and v.failures == v.never_written > 0, f"{c.id}: {v.summary()}"
        assert all(NEVER_WRITTEN in m.line() for m in v.mismatches)
        if v.failures != v.elements:  # the rest are cells a store must leave untouched
            assert getattr(c, "op", "") in MEMORY_OPS or family in (
                "mlir",
                "coop_opencl_axes",
                "coop_matrix2",
            ), c.id


def test_the_clean_emulator_writes_every_element():
    """The same runners pass on the clean emulator: the fills are not what fails."""
    clean = EmulatorBackend()
    for family, (cases, run) in FAMILIES.items():
        c = next(c for c in cases if clean.unsupported(c) is None)
        assert run(c, clean).verdict.passed, f"{family} {c.id}"
