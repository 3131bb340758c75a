"""SPIR-V subgroup MMA: the case space against the spec tables, and every
generated module assembled by spirv-as and accepted by spirv-val.

Golden values are restated from SPV_INTEL_subgroup_matrix_multiply_accumulate; cl_intel_subgroup_matrix_multiply_accumulate, SPIR-V environment (the OpenCL SPIR-V
environment list of cl_intel_subgroup_matrix_multiply_accumulate >= 1.1.0
and its _tf32 companion), not computed by the generator.
"""

import dataclasses
from collections import Counter

import pytest

from cts.backends.emu_spirv import parse_mma_instruction
from cts.families.spirv_intel import (
    FLAG,
    extended_rows,
    operand_literal,
    required_rows,
    spirv_intel_cases,
    well_defined,
)
from cts.kernels.spirv_intel import control_module_text, module_text
from cts.kernels.spirv_tools import SpirvToolError, assemble, assemble_many
from reference.data import TIERS

# cl_intel_subgroup_matrix_multiply_accumulate, SPIR-V environment: (N, K, a, b, c, result) -> operand literal
GOLDEN = {
    **{
        (n, 32, a, b, "i32", "i32"): lit
        for n in (8, 16)
        for (a, b), lit in {
            ("i8", "i8"): 0x33,
            ("i8", "u8"): 0x31,
            ("u8", "i8"): 0x32,
            ("u8", "u8"): 0x30,
        }.items()
    },
    **{
        (n, 64, a, b, "i32", "i32"): lit
        for n in (8, 16)
        for (a, b), lit in {
            ("i4", "i4"): 0xC3,
            ("i4", "u4"): 0xC1,
            ("u4", "i4"): 0xC2,
            ("u4", "u4"): 0xC0,
        }.items()
    },
    (8, 16, "f16", "f16", "f32", "f32"): 0xC00,
    (8, 16, "bf16", "bf16", "f32", "f32"): 0x3000,
    (16, 16, "f16", "f16", "f32", "f32"): 0xC00,
    (16, 16, "bf16", "bf16", "f32", "f32"): 0x3000,
    (16, 16, "f16", "f16", "f16", "f16"): 0xC00,
    (16, 16, "bf16", "bf16", "bf16", "bf16"): 0x300C,
    (16, 8, "tf32", "tf32", "f32", "f32"): 0x300,
}


def _key(c):
    return (c.sg, c.k, c.a, c.b, c.c, c.result)


def test_flag_values_match_the_spec_table():
    assert FLAG["MatrixASignedComponentsINTEL"] == 0x1 and FLAG["MatrixBPackedBFloat16INTEL"] == 0x2000
    assert sorted(FLAG.values()) == [1 << i for i in range(14)]


def test_required_set_is_the_92_combinations():
    every = spirv_intel_cases(("exact",))
    cases = [c for c in every if c.kdim == "const"]
    assert len(cases) == 92
    assert Counter(c.sg for c in cases if c.a != "tf32") == {8: 40, 16: 48}
    assert sum(c.a == "tf32" for c in cases) == 4
    assert {_key(c) for c in cases} == set(GOLDEN)
    for c in cases:
        assert c.literal == GOLDEN[_key(c)], c.id
        assert c.M in (1, 2, 4, 8)
    assert len({c.id for c in cases}) == 92
    # each again with K Dim an OpSpecConstant set at build time
    spec = [c for c in every if c.kdim == "spec"]
    assert sorted(c.id.replace("-kspec-", "-") for c in spec) == sorted(c.id for c in cases)
    assert len(every) == 184


def test_ids_carry_the_literal():
    ids = {c.id for c in spirv_intel_cases(TIERS)}
    assert "n16-k16-lit0x300c-M8-exact" in ids
    assert "n16-k16-lit0x300c-M8-rounding" in ids
    assert "n16-k16-lit0xc00-M4-cf16_rf16-random" in ids
    assert "n16-k8-lit0x300-M8-special" in ids
    assert "n8-k64-lit0xc3-M1-onehot" in ids
    assert "n16-k16-lit0xc00-M4-cf16_rf16-kspec-random" in ids and "n8-k32-lit0x33-M2-kspec-exact" in ids


def test_register_shapes_of_the_required_rows():
    """cl_intel_subgroup_matrix_multiply_accumulate; SPV_INTEL_subgroup_matrix_multiply_accumulate: A containers and B words per invocation."""
    by = {(c.sg, c.a, c.M): c for c in spirv_intel_cases(("exact",))}
    assert by[(8, "i8", 4)].a_container_bits == 32 and by[(16, "i8", 4)].a_container_bits == 16
    assert by[(8, "i4", 4)].a_container_bits == 32 and by[(16, "u4", 4)].a_container_bits == 16
    assert by[(8, "f16", 4)].a_container_bits == 32 and by[(16, "bf16", 4)].a_container_bits == 16
    tf = {m: by[(16, "tf32", m)].a_comps for m in (1, 2, 4, 8)}
    assert tf == {1: 1, 2: 1, 4: 2, 8: 4}  # ceil(M/2)
    assert all(c.b_comps == 8 for c in by.values())


def test_extended_set_is_disjoint_and_well_defined():
    req = {tuple(sorted(r.items())) for r in required_rows()}
    ext = extended_rows()
    assert ext and not req & {tuple(sorted(r.items())) for r in ext}
    cases = spirv_intel_cases(("exact",), extended=True)
    assert sum(c.level == "extended" for c in cases) == len(cases) - 184
    assert {c.sg for c in cases if c.level == "extended"} == {4, 8, 16, 32}
    assert len({c.id for c in cases}) == len(cases)
    for c in cases:
        assert well_defined(c.sg, c.k, c.a, c.b, c.M)
    # both general mappings appear: N > K with factor 4 and N < K with 16 nibbles per value
    assert any(c.sg == 4 * c.k for c in cases)
    assert any(c.a_container_bits == 64 for c in cases)
    # undefined forms stay out: 4-bit values under N > K, tf32 packed two per value
    assert not well_defined(16, 8, "i4", "i4", 4) and not well_defined(4, 8, "tf32", "tf32", 4)


def test_operand_literal_composition():
    assert operand_literal("i8", "u8", "i32", "i32") == 0x31
    assert operand_literal("f16", "f16", "bf16", "f32") == 0xC04
    assert operand_literal("bf16", "bf16", "f32", "bf16") == 0x3008


def _modules(extended, kdim="const"):
    seen = {}
    for c in spirv_intel_cases(("exact",), extended=extended):
        if c.kdim == kdim:
            seen.setdefault(c.module_key, c)
    return list(seen.values())


@pytest.mark.parametrize("extended", [False, True], ids=["required", "extended"])
def test_every_module_validates_and_encodes_its_case(extended):
    """spirv-as + spirv-val accept every module; the binary's instruction has
    the case's literal (spirv-as maps the flag *names* with SPIRV-Headers'
    grammar, so this cross-checks FLAG), K, M, N and container types."""
    cases = _modules(extended)
    # required: always through spirv-as + spirv-val now; extended: cached
    # binaries were validated by the same tool version when stored
    binaries = assemble_many((module_text(c) for c in cases), fresh=not extended)
    assert len(binaries) == len(cases) == (92 if not extended else 980)
    for c, spv in zip(cases, binaries):
        info = parse_mma_instruction(spv)
        assert info["literal"] == c.literal, c.id
        assert (info["K"], info["N"], info["result"][2]) == (c.k, c.sg, c.M), c.id
        assert info["A"][1:] == (c.a_container_bits, c.a_comps), c.id
        assert info["B"][1:] == (32, c.b_comps), c.id
        assert info["K_spec_id"] is None


def test_spec_constant_modules_validate_and_leave_k_to_the_build():
    """K Dim from OpSpecConstant (SpecId K_SPEC_ID, default 0): spirv-val
    accepts it as the constant instruction the instruction wants, and the
    build's specialization is the case's K; nothing else differs."""
    from cts.kernels.spirv_intel import K_SPEC_DEFAULT, K_SPEC_ID, specialization

    cases = _modules(False, "spec")
    binaries = assemble_many((module_text(c) for c in cases), fresh=True)
    assert len(binaries) == 92 and K_SPEC_DEFAULT == 0
    for c, spv in zip(cases, binaries):
        info = parse_mma_instruction(spv)
        assert (info["K"], info["K_spec_id"], info["literal"]) == (0, K_SPEC_ID, c.literal), c.id
        assert specialization(c) == {K_SPEC_ID: c.k}
        const = module_text(dataclasses.replace(c, kdim="const"))
        spec = module_text(c)
        assert (
            spec.replace(f"OpSpecConstant %uint {K_SPEC_DEFAULT}", f"OpConstant %uint {c.k}").replace(
                f"OpDecorate %u_k SpecId {K_SPEC_ID}\n", ""
            )
            == const
        ), c.id


def test_validator_really_checks():
    """A module using the instruction without declaring capability 6236 is
    refused, so 'validates' above means something."""
    c = spirv_intel_cases(("exact",))[0]
    text = module_text(c).replace("OpCapability SubgroupMatrixMultiplyAccumulateINTEL\n", "")
    with pytest.raises(SpirvToolError):
        assemble(text, use_disk=False)
    assemble(control_module_text(c))  # the rejection test's control module is valid
    assemble(control_module_text(c, declare_capability=True))


@pytest.mark.e2e
def test_plugin_option_ids_and_failure_message(tmp_path):
    """End to end through pytest: --spirv-extended enumerates the extended
    tier, and a failing case names the literal, the element, the lane and
    the rerun command including --spirv-extended."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    node = "cases/test_spirv_intel_mma.py::test_spirv_intel_mma[n4-k32-lit0x33-M1-exact]"
    cmd = [sys.executable, "-m", "pytest", node, "--spirv-extended", "--no-report", "-q", "-p", "no:xdist"]
    r = subprocess.run(
        cmd + ["--emulator-fault", "spirv_a_signed_ignored"], cwd=root, capture_output=True, text=True
    )
    assert r.returncode == 1, r.stdout[-2000:]
    assert "operands 0x33 (i8 x i8 + i32 -> i32) [extended]" in r.stdout
    assert "(invocation 1, component 0): expected" in r.stdout
    assert "--emulator-fault spirv_a_signed_ignored --spirv-extended" in r.stdout
    r = subprocess.run(
        cmd[:3] + [node, "-q", "-p", "no:xdist", "--no-report"], cwd=root, capture_output=True, text=True
    )
    assert "not found" in r.stdout + r.stderr  # without the option the extended id does not exist
