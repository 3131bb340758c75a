"""The ``accprec`` tier: accumulator precision of every
float multiply-accumulate entry.

* The data (reference.data.accprec_operands), checked by itself: every
  partial sum of C and any subset of the products -- so every order and
  every step of a chain or K tile of a GEMM -- is exact in the accumulator
  type and not representable in the format one step narrower.
* The clean emulator passes every ``accprec`` case of every family.
* The emulator fault ``acc_one_step_narrower`` (the accumulator held one
  precision step narrower than the C/Result type) fails every case of the
  tier, on every element, for every float entry of every family: the table
  entry -> cases caught / cases of the tier is printed
  (``pytest tests/test_accprec.py -s``).
"""

from collections import defaultdict

import numpy as np
import pytest
from tabulate import tabulate

from cts.backends.emulator import FAULTS, EmulatorBackend
from cts.families.coop import coop_cases, load_profile, profile_names
from cts.families.intel import intel_mma_cases, intel_split_cases
from cts.families.joint import joint_cases, joint_coop_cases
from cts.families.mlir import mlir_cases
from cts.families.spirv_intel import spirv_intel_cases
from cts.runs.coop import run_coop
from cts.runs.intel import run_intel_mma
from cts.runs.joint import run_joint
from cts.runs.joint_coop import run_joint_coop
from cts.runs.mlir import run_mlir
from cts.runs.spirv import run_spirv_intel_mma
from cts.runs.split import run_intel_split_mma
from reference.data import ONE_STEP_NARROWER, TIERS, accprec_operands, accprec_type
from reference.dtypes import etype

SEED = 3
FAULT = "acc_one_step_narrower"
TIER = ("accprec",)


def _coop_profiles():
    """(profile name, entries, subgroup size) of every built-in property profile."""
    out = []
    for name in profile_names():
        p = load_profile(name)
        out.append((name, list(p.entries), p.subgroup_size))
    return out


def _cases():
    """(family, entry key, case, run(backend) -> verdict) of every accprec case
    the emulator can run, over every family and coop property profile."""
    out = []
    for c in intel_mma_cases(TIERS) + intel_split_cases(TIERS):
        if c.tier == "accprec":
            run = run_intel_split_mma if c.family == "intel_split_mma" else run_intel_mma
            key = f"{c.a}*{c.b}+{c.acc} sg{c.sg}"
            out.append((c.family, key, c, lambda be, c=c, run=run: run(c, be, SEED, subgroups=8).verdict))
    for c in spirv_intel_cases(TIERS, extended=True):
        if c.tier == "accprec":
            key = f"{c.a}*{c.b}+{c.c}->{c.result} n{c.sg} k{c.k}"
            out.append(("spirv_intel_mma", key, c, lambda be, c=c: run_spirv_intel_mma(c, be, SEED).verdict))
    seen = set()
    for name, entries, sg in _coop_profiles():
        for c in coop_cases(entries, TIERS, sg, ("vk", "clspv", "clc")):
            if c.tier == "accprec" and c.id not in seen:
                seen.add(c.id)
                key = f"{c.entry.tag} ({name})"
                out.append(
                    ("coop_matrix", key, c, lambda be, c=c: run_coop(c, be, SEED, subgroups=4).verdict)
                )
    for c in joint_cases(TIERS):
        if c.tier == "accprec":
            key = f"{c.arch} {'_'.join(c.types)}"
            out.append(("joint_matrix", key, c, lambda be, c=c: run_joint(c, be, SEED).verdict))
    name, entries, sg = next(p for p in _coop_profiles() if p[0] == "h100")
    for c in joint_coop_cases(TIERS):
        matches = any(
            (e.M, e.N, e.K, e.A, e.B, e.C, e.R) == (c.M, c.N, c.K, *c.types) and not e.sat for e in entries
        )
        if c.tier == "accprec" and matches:
            key = f"via coop {'_'.join(c.types)} m{c.M}n{c.N}k{c.K}"
            out.append(
                (
                    "joint_matrix_coop",
                    key,
                    c,
                    lambda be, c=c: run_joint_coop(c, be, SEED, session_coop=lambda: (entries, sg)).verdict,
                )
            )
    for c in mlir_cases(TIERS):
        if c.data == "accprec":
            key = f"compute {c.elem}_{c.b}_{c.c} {'x'.join(map(str, c.mnk))}"
            out.append(("mlir_mma", key, c, lambda be, c=c: run_mlir(c, be, SEED).verdict))
    return out


CASES = _cases()


def test_every_float_family_has_accprec_cases():
    fams = {f for f, *_ in CASES}
    assert fams == {
        "intel_mma",
        "intel_split_mma",
        "spirv_intel_mma",
        "coop_matrix",
        "joint_matrix",
        "joint_matrix_coop",
        "mlir_mma",
    }
    # every float coop entry of every profile has muladd, chain and gemm cases
    ops = defaultdict(set)
    for f, key, c, _ in CASES:
        if f == "coop_matrix":
            ops[key].add(c.op)
    assert ops and all(v == {"muladd", "chain", "gemm"} for v in ops.values())


def test_the_fault_is_registered():
    assert FAULT in FAULTS


# ------------------------------------------------------------ the data alone
@pytest.mark.parametrize(
    "a, c, r, K",
    [
        ("f16", "f32", "f32", 16),
        ("bf16", "f32", "f32", 64),
        ("tf32", "f32", "f32", 8),
        ("f16", "f16", "f16", 64),
        ("f16", "f16", "f32", 32),
        ("f32", "f32", "f32", 8),
        ("f64", "f64", "f64", 16),
    ],
)
def test_every_partial_sum_is_exact_and_needs_every_bit(a, c, r, K):
    """Independent of any device: C plus every prefix of the products in
    several random orders is exact in the accumulator type, an odd number of
    its last-place units at a magnitude in [2^(p-1), 2^p) units, so never
    representable in the next narrower format."""
    acc = accprec_type(a, c, r)
    t, n = etype(acc), etype(ONE_STEP_NARROWER[acc])
    rng = np.random.default_rng(5)
    A, B, C = accprec_operands(a, a, c, acc, 4, K, 4, 3, rng)
    for x, ty in ((A, a), (B, a), (C, c)):
        assert np.array_equal(etype(ty).round(x), x)  # representable in its own type
        nz = x[x != 0]
        assert (np.abs(nz) >= etype(ty).tiny).all()  # normal numbers: no flush question
    unit = 2.0 ** (1 - t.precision)
    P = A[:, :, :, None] * B[:, None, :, :]  # (S, M, K, N) products
    for _ in range(4):
        order = rng.permutation(K)
        s = C.copy()
        for k in order:
            s = s + P[:, :, k, :]
            u = s / unit
            assert np.array_equal(u, np.round(u)) and (np.round(u) % 2 == 1).all()
            assert ((np.abs(u) >= 2.0 ** (t.precision - 1)) & (np.abs(u) < 2.0**t.precision)).all()
            assert np.array_equal(t.round(s), s)  # exact in the accumulator type
            assert not (n.round(s) == s).any()  # in no element representable one step narrower


# ------------------------------------------------------------ the emulator
def test_clean_emulator_passes_every_accprec_case():
    be = EmulatorBackend()
    bad = []
    for fam, _key, c, run in CASES:
        v = run(be)
        if not v.passed:
            bad.append(f"{fam}[{c.id}]: {v.summary()}")
    assert bad == []


@pytest.fixture(scope="module")
def fault_table():
    be = EmulatorBackend((FAULT,))
    table: dict = defaultdict(lambda: [0, 0, 0, 0])  # caught cases, cases, wrong elements, elements
    for fam, key, _c, run in CASES:
        v = run(be)
        row = table[(fam, key)]
        row[0] += int(not v.passed)
        row[1] += 1
        row[2] += v.failures
        row[3] += v.elements
    rows = [[f, k, f"{a} / {b}", f"{e} / {n}"] for (f, k), (a, b, e, n) in sorted(table.items())]
    print(
        "\n"
        + tabulate(
            rows,
            headers=["family", "entry", "cases caught / of the tier", "elements wrong"],
            tablefmt="github",
        )
    )
    return table


def test_the_fault_fails_every_case_and_every_element_of_every_entry(fault_table):
    assert len(fault_table) >= 30
    for (fam, key), (caught, n, wrong, elements) in fault_table.items():
        assert n >= 1
        assert caught == n, f"{fam} {key}: {caught} of {n} cases caught"
        assert wrong == elements, f"{fam} {key}: only {wrong} of {elements} elements wrong"


# ------------------------------------------------------------ device models
# The float device models of reference/devmodel.py that the suite
# takes as correct: truncating and floor steps, block-fused adders with few
# extra bits, C added last, alignment by the inputs' exponents, the H100's
# wide window with one rounding: the tier never fails them.  The model that
# accumulates fp32 in fp16 fails.  Models apply to the Intel built-ins, the
# SPIR-V instruction and coop entries with A == B and C == Result.
MODELLED = [c for c in CASES if c[0] in ("intel_mma", "intel_split_mma", "spirv_intel_mma", "coop_matrix")]


@pytest.mark.parametrize(
    "model", ["wide_w26_f16out", "trunc_b4", "c_last_b8", "inputs_b16_e2", "floor_b8_e2", "rz_f32_out_rz_ftz"]
)
def test_legal_device_models_pass_the_tier(model):
    be = EmulatorBackend()
    be.set_model(model)
    bad = [f"{fam}[{c.id}]" for fam, _k, c, run in MODELLED[::3] if not run(be).passed]
    assert bad == []


@pytest.mark.e2e
def test_an_fp16_accumulating_model_fails_the_tier():
    be = EmulatorBackend()
    be.set_model("f16acc_b4")
    f32 = [run for _fam, _k, c, run in MODELLED if _acc(c) == "f32"]
    assert len(f32) > 100 and all(not run(be).passed for run in f32)


def _acc(c) -> str:
    """The accumulator type of an Intel, SPIR-V or coop case."""
    if hasattr(c, "entry") and c.entry is not None:
        return c.entry.R if c.entry.C == c.entry.R else ""
    return getattr(c, "result", None) or c.acc
