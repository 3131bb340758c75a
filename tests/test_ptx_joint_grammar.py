"""The joint_matrix PTX generator (cts.kernels.ptx_joint) against the PTX ISA,
without a GPU: every case's module parses under the small grammar of
cts.kernels.ptx_grammar with the ISA's WMMA fragment table (written here
again, from the ISA text, independently of the generator's), each operation
has the instructions DPC++'s CUDA lowering gives it with the case's layouts
and strides, and the grammar rejects each malformed module a generator
regression would write.
"""

import re

import pytest

from cts.families.joint import joint_cases
from cts.kernels.ptx_grammar import PtxSyntaxError, parse
from cts.kernels.ptx_joint import FRAGMENT_REGS, WRONG_VARIANTS, joint_ptx, why_not

TIERS = ("exact", "onehot", "random", "special", "rounding", "accprec")

# PTX ISA 9.7.14.4.1 "Matrix Fragments for WMMA", as that section words it:
# integer A/B "a vector expression of two .b32 registers" (m16n16k16), "a
# single .b32 register" (A, m8n32k16) ..., .f16 multiplicands eight .f16x2
# registers in every shape, accumulators eight .f32 / .s32 or four .f16x2,
# bf16 / tf32 / f64 as listed for their shapes.
ISA_WMMA_FRAGMENTS = {
    # f16 multiplicands and accumulators
    **{(s, u, "f16"): 8 for s in ("m16n16k16", "m8n32k16", "m32n8k16") for u in ("a", "b")},
    **{(s, "c", "f16"): 4 for s in ("m16n16k16", "m8n32k16", "m32n8k16")},
    **{(s, "c", "f32"): 8 for s in ("m16n16k16", "m8n32k16", "m32n8k16")},
    **{(s, "c", "s32"): 8 for s in ("m16n16k16", "m8n32k16", "m32n8k16")},
    # .u8 / .s8
    ("m16n16k16", "a", "s8"): 2,
    ("m16n16k16", "b", "s8"): 2,
    ("m8n32k16", "a", "s8"): 1,
    ("m8n32k16", "b", "s8"): 4,
    ("m32n8k16", "a", "s8"): 4,
    ("m32n8k16", "b", "s8"): 1,
    ("m16n16k16", "a", "u8"): 2,
    ("m16n16k16", "b", "u8"): 2,
    ("m8n32k16", "a", "u8"): 1,
    ("m8n32k16", "b", "u8"): 4,
    ("m32n8k16", "a", "u8"): 4,
    ("m32n8k16", "b", "u8"): 1,
    # .bf16 (alternate floating point): four / two / eight .b32
    ("m16n16k16", "a", "bf16"): 4,
    ("m16n16k16", "b", "bf16"): 4,
    ("m8n32k16", "a", "bf16"): 2,
    ("m8n32k16", "b", "bf16"): 8,
    ("m32n8k16", "a", "bf16"): 8,
    ("m32n8k16", "b", "bf16"): 2,
    # .tf32 m16n16k8 and its f32 accumulator; .f64 m8n8k4
    ("m16n16k8", "a", "tf32"): 4,
    ("m16n16k8", "b", "tf32"): 4,
    ("m16n16k8", "c", "f32"): 8,
    ("m8n8k4", "a", "f64"): 1,
    ("m8n8k4", "b", "f64"): 1,
    ("m8n8k4", "c", "f64"): 2,
}


def _nv_cases():
    return [c for c in joint_cases(TIERS) if c.arch in ("sm70", "sm72", "sm80") and why_not(c) is None]


def _strides(case):
    """Strides of the run (the suite's own rule: tight = minimum, pad = +16)."""
    from cts.runs.joint import strides_for

    if case.op == "mad":
        a, b, c, d = case.types
        la, lb, lc, ld = case.layouts
        dims = {"a": (case.M, case.K), "b": (case.K, case.N), "c": (case.M, case.N)}
        st = {
            f"s{k}": strides_for(case, *dims[k], t, lay)[0]
            for k, t, lay in (("a", a, la), ("b", b, lb), ("c", c, lc))
        }
        st["sd"] = strides_for(case, case.M, case.N, d, ld)[1]
        return st
    t0, t1 = (case.types * 2)[:2]
    return {
        "s_src": strides_for(case, case.M, case.N, t0, case.layouts[0])[0],
        "s_dst": strides_for(case, case.M, case.N, t1, case.layouts[1])[1],
    }


def test_generator_fragment_table_is_the_isa_table():
    """Every (shape, use, type) the generator knows has the ISA's register count."""
    assert FRAGMENT_REGS == ISA_WMMA_FRAGMENTS


def test_fragment_table_fault_is_caught():
    """Injected fault: one register fewer in the bf16 m8n32k16 B fragment."""
    wrong = dict(ISA_WMMA_FRAGMENTS)
    wrong[("m8n32k16", "b", "bf16")] = 7
    assert FRAGMENT_REGS != wrong
    case = next(c for c in _nv_cases() if c.op == "mad" and c.types[0] == "bf16" and c.M == 8)
    with pytest.raises(PtxSyntaxError, match="fragment is 7 registers"):
        parse(joint_ptx(case, "sm_90", _strides(case)), wrong)


@pytest.mark.parametrize("chip", ["sm_80", "sm_90"])
def test_every_case_and_variant_parses(chip):
    cases = _nv_cases()
    assert len(cases) == 285
    for c in cases:
        for v in (None, *WRONG_VARIANTS) if c.op == "mad" else (None,):
            mod = parse(joint_ptx(c, chip, _strides(c), v), ISA_WMMA_FRAGMENTS)
            assert mod.target == chip and mod.entry == "joint_matrix_tile"


def _wmma(text: str) -> list[str]:
    return [ln.strip() for ln in text.split("\n") if ln.strip().startswith("wmma.")]


def test_mad_instructions_carry_the_case_layouts_strides_and_types():
    for c in (c for c in _nv_cases() if c.op == "mad"):
        st = _strides(c)
        w = _wmma(joint_ptx(c, "sm_90", st))
        la, lb, lc, ld = c.layouts
        assert [x.split(".")[1] for x in w] == ["load", "load", "load", "mma", "store"], c.id
        assert w[0].startswith(f"wmma.load.a.sync.aligned.{la}.") and w[0].endswith(f", {st['sa']};"), c.id
        assert w[1].startswith(f"wmma.load.b.sync.aligned.{lb}.") and w[1].endswith(f", {st['sb']};"), c.id
        assert w[2].startswith(f"wmma.load.c.sync.aligned.{lc}.") and w[2].endswith(f", {st['sc']};"), c.id
        assert w[3].startswith(f"wmma.mma.sync.aligned.{la}.{lb}.m{c.M}n{c.N}k{c.K}."), c.id
        assert ".satfinite" not in w[3], "joint_matrix_mad never asks for saturation (its integer sum wraps)"
        assert w[4].startswith(f"wmma.store.d.sync.aligned.{ld}.") and w[4].endswith(f", {st['sd']};"), c.id


def test_single_matrix_operations():
    """ldst: one load, one store; fill: no load, one move per register;
    apply: one add per register (x + x); copy: through shared memory."""
    seen = set()
    for c in (c for c in _nv_cases() if c.op != "mad"):
        text = joint_ptx(c, "sm_90", _strides(c))
        w = _wmma(text)
        seen.add(c.op)
        shape = f"m{c.M}n{c.N}k{c.K}"
        n = ISA_WMMA_FRAGMENTS[(shape, "c", {"i32": "s32"}.get(c.types[0], c.types[0]))]
        if c.op == "ldst":
            assert len(w) == 2 and w[0].startswith(f"wmma.load.c.sync.aligned.{c.layouts[0]}.")
            assert w[1].startswith(f"wmma.store.d.sync.aligned.{c.layouts[1]}.")
        elif c.op == "fill":
            assert len(w) == 1 and len(re.findall(r"^\tmov\.\w+ %c\d+, ", text, re.M)) == n
        elif c.op == "apply_plain":
            adds = re.findall(r"^\tadd\.\S+ (%c\d+), (%c\d+), (%c\d+);", text, re.M)
            assert (
                len(adds) == n and all(a == b == d for a, b, d in adds) and len({a for a, _, _ in adds}) == n
            )
        else:
            assert c.op == "copy" and any(".shared." in x for x in w) and "cvt." in text
    assert seen == {"ldst", "fill", "apply_plain", "copy"}


def _mad_text(types=("f16", "f16", "f32", "f32")):
    c = next(c for c in _nv_cases() if c.op == "mad" and c.types == types and c.M == 16)
    return joint_ptx(c, "sm_90", _strides(c))


@pytest.mark.parametrize(
    "name, mutate, message",
    [
        ("vector_short", lambda t: t.replace("{%a0, %a1, ", "{%a1, ", 1), "fragment is 8 registers"),
        (
            "mma_layout_differs_from_load",
            lambda t: t.replace("mma.sync.aligned.row.row", "mma.sync.aligned.row.col"),
            "was not loaded as one",
        ),
        ("undeclared_register", lambda t: t.replace("\t.reg .b32 %b<8>;\n", ""), "not declared"),
        ("unknown_opcode", lambda t: t.replace("ret;", "exit;"), "not in the grammar"),
        (
            "satfinite_on_float",
            lambda t: re.sub(r"(wmma\.mma\S+)", r"\1.satfinite", t),
            "satfinite on a floating-point",
        ),
        ("no_target", lambda t: t.replace(".target sm_90\n", ""), "missing .target"),
        ("wrong_register_class", lambda t: t.replace(".reg .f32 %c<8>;", ".reg .b32 %c<8>;"), "needs .f32"),
        ("missing_semicolon", lambda t: t.replace("ret;", "ret"), "without ';'"),
        ("unknown_parameter", lambda t: t.replace("[a_1]", "[q_1]"), "no parameter q_1"),
    ],
)
def test_grammar_rejects_malformed_ptx(name, mutate, message):
    good = _mad_text()
    parse(good, ISA_WMMA_FRAGMENTS)
    bad = mutate(good)
    assert bad != good, name
    with pytest.raises(PtxSyntaxError, match=message):
        parse(bad, ISA_WMMA_FRAGMENTS)


def test_integer_satfinite_variant_is_the_only_saturation():
    text = _mad_text(("i8", "i8", "i32", "i32"))
    assert ".satfinite" not in text
    c = next(c for c in _nv_cases() if c.op == "mad" and c.types[0] == "i8")
    assert ".satfinite" in joint_ptx(c, "sm_90", _strides(c), "satfinite_flipped")


@pytest.mark.parametrize(
    "chip, version",
    [
        ("sm_70", "7.0"),
        ("sm_80", "7.0"),
        ("sm_86", "7.1"),
        ("sm_89", "7.8"),
        ("sm_90", "7.8"),
        ("sm_100", "8.6"),
        ("sm_120", "8.7"),
    ],
)
def test_ptx_version_knows_the_target(chip, version):
    from cts.kernels.ptx_joint import ptx_version

    assert ptx_version(chip) == version
    c = next(c for c in _nv_cases() if c.op == "mad")
    assert parse(joint_ptx(c, chip, _strides(c)), ISA_WMMA_FRAGMENTS).version == version
