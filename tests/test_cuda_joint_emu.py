"""joint_matrix's CUDA path on the emulated CUDA device (cts.backends.cuda_emu):
the correct PTX passes every NVIDIA case under two different fragment
distributions; each named wrong PTX variant fails some case (the oracle
catches it); a generator that relied on a fragment distribution would be
caught; what cannot run is a one-line skip naming the rule or the missing
piece."""

import pytest

from cts.backends.cuda_emu import EmulatedCudaJoint
from cts.errors import Unsupported
from cts.families.joint import JointCase, joint_cases
from cts.kernels.ptx_joint import WRONG_VARIANTS, stride_skip, why_not
from cts.runs.joint import run_joint

TIERS = ("exact", "onehot", "random", "special", "rounding", "accprec")


def _cases(arch=None):
    return [
        c
        for c in joint_cases(TIERS)
        if c.arch in ("sm70", "sm72", "sm80") and (arch is None or c.arch == arch) and why_not(c) is None
    ]


@pytest.mark.parametrize("arch", ["sm70", "sm72", "sm80"])
def test_correct_ptx_passes_every_case(arch):
    dev = EmulatedCudaJoint("sm_90")
    cases = _cases(arch)
    assert len(cases) == {"sm70": 140, "sm72": 60, "sm80": 85}[arch]
    bad = [c.id for c in cases if not run_joint(c, dev, 1, subgroups=2).verdict.passed]
    assert bad == []


def test_another_fragment_distribution_passes_too():
    """The generator assumes no element-to-lane map (PTX ISA 9.7.14.4.1:
    unspecified): a second random distribution changes nothing."""
    dev = EmulatedCudaJoint("sm_90", seed=977)
    sample = [c for c in _cases() if c.tier in ("onehot", "exact") or c.op != "mad"]
    assert all(run_joint(c, dev, 3, subgroups=2).verdict.passed for c in sample)


# the cases that must catch each variant (a subset of those the H200 run saw catch it)
CATCHERS = {
    "b_transposed": "sm70-cur-mad-f16_f16_f32_f32-m16n16k16-mad-row_row_row_row-tight-onehot",
    "stride_off_by_one": "sm80-cur-mad-f64_f64_f64_f64-m8n8k4-mad-row_row_row_row-tight-exact",
    "satfinite_flipped": "sm72-cur-mad-i8_i8_i32_i32-m16n16k16-mad-row_row_row_row-tight-special",
    "acc_half": "sm70-cur-mad-f16_f16_f32_f32-m16n16k16-mad-row_row_row_row-tight-accprec",
}


@pytest.mark.parametrize("variant", sorted(WRONG_VARIANTS))
def test_each_wrong_variant_is_caught(variant):
    case = next(c for c in _cases() if c.id == CATCHERS[variant])
    assert run_joint(case, EmulatedCudaJoint("sm_90"), 1, subgroups=4).verdict.passed
    v = run_joint(case, EmulatedCudaJoint("sm_90", variant=variant), 1, subgroups=4).verdict
    assert not v.passed and v.failures > 0


def test_partial_register_apply_is_caught():
    """Injected generator fault: apply doubles only the first half of the
    fragment's registers (code that assumes which elements a register
    holds); the emulator's random distribution makes it visible."""

    class HalfApply(EmulatedCudaJoint):
        def joint_ptx_text(self, case, strides):
            text = super().joint_ptx_text(case, strides)
            adds = [ln for ln in text.split("\n") if ln.startswith("\tadd.")]
            for ln in adds[len(adds) // 2 :]:
                text = text.replace(ln + "\n", "")
            return text

    case = next(c for c in _cases() if c.op == "apply_plain" and c.types == ("f32",))
    assert run_joint(case, EmulatedCudaJoint(), 1, subgroups=2).verdict.passed
    assert not run_joint(case, HalfApply(), 1, subgroups=2).verdict.passed


def _case(types, M, N, K, op="mad", use="mad", layouts=("row", "row", "row", "row"), arch="sm70"):
    return JointCase(arch, "cur", op, types, M, N, K, use, layouts, "tight", "exact")


@pytest.mark.parametrize(
    "types, shape, strides, rule",
    [
        (
            ("f16", "f16", "f32", "f32"),
            (16, 16, 16),
            dict(sa=12, sb=16, sc=16, sd=16),
            "multiple of 8 for half",
        ),
        (("f16", "f16", "f32", "f32"), (16, 16, 16), dict(sa=16, sb=16, sc=16, sd=6), "4 for float"),
        (("bf16", "bf16", "f32", "f32"), (16, 16, 16), dict(sa=16, sb=20, sc=16, sd=16), "multiple of 8"),
        (("tf32", "tf32", "f32", "f32"), (16, 16, 8), dict(sa=10, sb=16, sc=16, sd=16), "multiple of 4"),
        (("i8", "i8", "i32", "i32"), (16, 16, 16), dict(sa=4, sb=16, sc=16, sd=16), "Address Alignment"),
        (("i8", "i8", "i32", "i32"), (16, 16, 16), dict(sa=16, sb=16, sc=4, sd=16), "32 bytes"),
    ],
)
def test_stride_rules_are_named_skips(types, shape, strides, rule):
    case = _case(types, *shape)
    why = stride_skip(case, strides)
    assert why and rule in why and "\n" not in why
    ok = {k: 16 for k in strides}
    assert stride_skip(case, ok) is None


def test_stride_rule_skip_through_the_device():
    case = _case(("f16", "f16", "f32", "f32"), 16, 16, 16)
    with pytest.raises(Unsupported, match="multiple of 8 for half"):
        EmulatedCudaJoint().run(case, a=None, b=None, c=None, d=None, sa=12, sb=16, sc=16, sd=16)


def test_f64_alignment_is_the_fragment_size():
    """f64 m8n8k4: A and B fragments are one .f64 (8 bytes: any stride), C and
    D two (16 bytes: even strides)."""
    case = _case(("f64", "f64", "f64", "f64"), 8, 8, 4, arch="sm80")
    assert stride_skip(case, dict(sa=5, sb=9, sc=12, sd=14)) is None
    assert "16 bytes" in stride_skip(case, dict(sa=5, sb=9, sc=11, sd=14))


@pytest.mark.parametrize(
    "chip, arch, expect",
    [
        ("sm_75", "sm80", "needs compute capability 8.0"),
        ("sm_70", "sm72", "needs compute capability 7.2"),
        ("sm_72", "sm72", None),
        ("sm_90", "sm80", None),
    ],
)
def test_minimum_compute_capability(chip, arch, expect):
    case = next(c for c in _cases(arch) if c.op == "mad")
    why = EmulatedCudaJoint(chip).unsupported(case)
    assert why == expect if expect is None else (expect in why and chip[3] + "." + chip[4] in why)


def test_other_architectures_and_copies_skip_with_reasons():
    dev = EmulatedCudaJoint()
    amx = next(c for c in joint_cases(TIERS) if c.arch == "amx")
    assert "not an NVIDIA Tensor Core row" in dev.unsupported(amx)
    a2acc = next(c for c in joint_cases(TIERS) if c.arch == "sm70" and c.op == "copy" and c.use == "a>acc")
    assert "no PTX counterpart" in dev.unsupported(a2acc)


def test_without_a_driver_every_cuda_joint_case_is_one_line_skip():
    from cts.backends import make_backend

    b = make_backend("cuda")
    if b.reason is None:
        pytest.skip("a CUDA driver is present here: the no-driver skip is not observable")
    for c in _cases()[:20] + [next(c for c in joint_cases(TIERS) if c.arch == "amx")]:
        why = b.unsupported(c)
        # one line naming what is missing: the driver, or on a bare install the bindings' package
        assert why and "\n" not in why and ("driver" in why.lower() or "cuda-bindings" in why), why


@pytest.mark.e2e
def test_nv_layout_sweep_completes_the_table():
    """With joint_cases, every (row, shape, A/B/C/D layout) of the NVIDIA
    table has a mad case, none twice; the emulated CUDA device passes them."""
    from itertools import product

    from cts.families.joint import COMBOS
    from cts.families.joint_nv import joint_nv_layout_cases

    extra = joint_nv_layout_cases(TIERS)
    ids = [c.id for c in extra]
    assert len(ids) == len(set(ids)) == 318
    assert not set(ids) & {c.id for c in joint_cases(TIERS)}
    have = {(c.arch, c.types, c.M, c.N, c.K, c.layouts) for c in _cases() + extra if c.op == "mad"}
    want = {
        (arch, (a, b, c, d), M, N, K, lay)
        for arch, a, b, c, d, shapes, _ in COMBOS
        if arch in ("sm70", "sm72", "sm80")
        for M, N, K in shapes
        for lay in product(("row", "col"), repeat=4)
    }
    assert want <= have and len(want) == 368
    dev = EmulatedCudaJoint("sm_90")
    assert all(run_joint(c, dev, 1, subgroups=2).verdict.passed for c in extra)


def test_sycl_stride_below_ptx_alignment_runs_with_a_note():
    """f16 B of m32n8k16 with stride 8: the SYCL rule's 16 bytes, the PTX
    fragment's 32: the case runs (DPC++ allows it) and the device records a
    note that its verdict is outside the PTX ISA's promise."""
    from cts.kernels.ptx_joint import alignment_gap

    case = next(
        c for c in _cases("sm70") if c.id.endswith("f16_f16_f32_f32-m32n8k16-mad-row_row_row_row-tight-exact")
    )
    dev = EmulatedCudaJoint()
    assert run_joint(case, dev, 1, subgroups=2).verdict.passed
    notes = dev.take_notes()
    assert len(notes) == 1 and "B (f16) stride 8" in notes[0] and "9.7.14.4.2" in notes[0]
    assert dev.take_notes() == []
    square = _case(("f16", "f16", "f32", "f32"), 16, 16, 16)
    assert alignment_gap(square, dict(sa=16, sb=16, sc=16, sd=16)) is None
    assert alignment_gap(square, dict(sa=8, sb=16, sc=16, sd=16)) is not None


def test_numerics_cuda_adapter_multiplies_row_major_tiles():
    """cts.numerics.cuda: each float row's D = A x B + C through the joint_matrix
    PTX (on the emulated device; small integers: exact in every type), and a
    transposed-B device is told apart (the adapter is not the identity)."""
    import numpy as np

    from cts.numerics.cuda import CUDA_TARGETS, cuda_targets

    rng = np.random.default_rng(5)
    for dev, right in ((EmulatedCudaJoint(), True), (EmulatedCudaJoint(variant="b_transposed"), False)):
        for t in cuda_targets(list(CUDA_TARGETS), dev):
            A = rng.integers(-3, 4, (2, t.M, t.K)).astype(float)
            B = rng.integers(-3, 4, (2, t.K, t.N)).astype(float)
            C = rng.integers(-3, 4, (2, t.M, t.N)).astype(float)
            assert np.array_equal(t.mma(A, B, C), A @ B + C) == right, (t.key, right)
    with pytest.raises(ValueError, match="no joint_matrix CUDA row"):
        cuda_targets([("f16", "f32", 16, 8, 8)], EmulatedCudaJoint())
