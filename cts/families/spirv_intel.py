"""Case space of SPV_INTEL_subgroup_matrix_multiply_accumulate.

The instruction ``OpSubgroupMatrixMultiplyAccumulateINTEL`` (opcode 6237,
capability 6236) takes its element types from an operand literal
(SPV_INTEL_subgroup_matrix_multiply_accumulate, "Matrix Multiply Accumulate Operands").  The *required* set is
the list of "Modifications to the OpenCL SPIR-V Environment Specification" in
cl_intel_subgroup_matrix_multiply_accumulate >= 1.1.0 and its _tf32 companion
(cl_intel_subgroup_matrix_multiply_accumulate, Modifications to the OpenCL SPIR-V Environment
Specification): 40 combinations for subgroup size 8, 48 for 16 and 4 tf32 ones.  The *extended* set
(``--spirv-extended``) adds the combinations beyond
that list whose meaning the instruction's mapping rules (SPV_INTEL_subgroup_matrix_multiply_accumulate,
Mapping Matrix Data to Invocations) still define exactly: subgroup sizes 4 and 32, other K for the same
element
types (the general N < K packing and N > K interleaving), and the mixed
C / Result precisions of the float types.

Axis ``kdim``: K Dim "must come from a constant instruction with scalar
32-bit integer type" (SPV_INTEL_subgroup_matrix_multiply_accumulate); SPIR-V 2.2.1 counts OpSpec* instructions
as constant instructions.  Every combination runs with K Dim an OpConstant
(``const``, the ids without the axis) and an OpSpecConstant whose value is
set when the program is built (``spec``, ``-kspec`` in the id).  The operand
literal is a literal operand, not an <id>, so the flags can never be
specialization constants: no such case exists to make.

This module is the case *generator*: it turns element types into flag bits
through ``FLAG`` below.  The emulator (``cts.backends.emu_spirv``) decodes
the literal from its bits with its own code and shares nothing with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from cts.space import space
from reference.dtypes import etype

__all__ = [
    "SpirvMmaCase",
    "FLAG",
    "operand_literal",
    "required_rows",
    "extended_rows",
    "spirv_intel_cases",
    "spirv_intel_all_cases",
    "SPIRV_EXTENSION",
    "SPIRV_CAPABILITY",
    "M_VALUES",
    "KDIM_VALUES",
]

SPIRV_EXTENSION = "SPV_INTEL_subgroup_matrix_multiply_accumulate"
SPIRV_CAPABILITY = 6236  # SubgroupMatrixMultiplyAccumulateINTEL
M_VALUES = (1, 2, 4, 8)
KDIM_VALUES = ("const", "spec")  # K Dim: OpConstant, or OpSpecConstant set at build time

# Matrix Multiply Accumulate Operands (SPV_INTEL_subgroup_matrix_multiply_accumulate), by name.
FLAG = {
    "MatrixASignedComponentsINTEL": 0x1,
    "MatrixBSignedComponentsINTEL": 0x2,
    "MatrixCBFloat16INTEL": 0x4,
    "MatrixResultBFloat16INTEL": 0x8,
    "MatrixAPackedInt8INTEL": 0x10,
    "MatrixBPackedInt8INTEL": 0x20,
    "MatrixAPackedInt4INTEL": 0x40,
    "MatrixBPackedInt4INTEL": 0x80,
    "MatrixATF32INTEL": 0x100,
    "MatrixBTF32INTEL": 0x200,
    "MatrixAPackedFloat16INTEL": 0x400,
    "MatrixBPackedFloat16INTEL": 0x800,
    "MatrixAPackedBFloat16INTEL": 0x1000,
    "MatrixBPackedBFloat16INTEL": 0x2000,
}

# element type -> the flag names that say it for matrix A ("A") or B ("B")
_ELEMENT_FLAGS = {
    "i8": ("Matrix{}PackedInt8INTEL", "Matrix{}SignedComponentsINTEL"),
    "u8": ("Matrix{}PackedInt8INTEL",),
    "i4": ("Matrix{}PackedInt4INTEL", "Matrix{}SignedComponentsINTEL"),
    "u4": ("Matrix{}PackedInt4INTEL",),
    "f16": ("Matrix{}PackedFloat16INTEL",),
    "bf16": ("Matrix{}PackedBFloat16INTEL",),
    "tf32": ("Matrix{}TF32INTEL",),
}

INT8_PAIRS = [(a, b) for a in ("i8", "u8") for b in ("i8", "u8")]
INT4_PAIRS = [(a, b) for a in ("i4", "u4") for b in ("i4", "u4")]
NATURAL_K = {"i8": 32, "u8": 32, "i4": 64, "u4": 64, "f16": 16, "bf16": 16, "tf32": 8}


def operand_literal(a: str, b: str, c: str, result: str) -> int:
    """The Matrix Multiply Accumulate Operands literal for element types
    (a, b, c, result): A-side bits | B-side bits | CBFloat16 | ResultBFloat16."""
    lit = 0
    for side, t in (("A", a), ("B", b)):
        for name in _ELEMENT_FLAGS[t]:
            lit |= FLAG[name.format(side)]
    if c == "bf16":
        lit |= FLAG["MatrixCBFloat16INTEL"]
    if result == "bf16":
        lit |= FLAG["MatrixResultBFloat16INTEL"]
    return lit


# --------------------------------------------------------------- the cases
@dataclass(frozen=True)
class SpirvMmaCase:
    """One OpSubgroupMatrixMultiplyAccumulateINTEL form on one data tier.

    ``a``/``b`` are element types (i8 u8 i4 u4 f16 bf16 tf32), ``c``/``result``
    the C and Result element types (i32 f32 f16 bf16); N is the subgroup size,
    M the Result component count, K the K Dim operand.
    """

    sg: int
    k: int
    M: int
    a: str
    b: str
    c: str
    result: str
    tier: str
    level: str = "required"  # or "extended"
    family: str = "spirv_intel_mma"
    kdim: str = "const"  # K Dim an OpConstant, or "spec": an OpSpecConstant set at build time

    @property
    def literal(self) -> int:
        return operand_literal(self.a, self.b, self.c, self.result)

    @property
    def flag_names(self) -> tuple[str, ...]:
        """The literal's operand names, lowest bit first."""
        return tuple(n for n, bit in sorted(FLAG.items(), key=lambda x: x[1]) if self.literal & bit)

    @property
    def default_acc(self) -> bool:
        """C and Result are what the literal alone implies (i32 for integer
        inputs, f32 for float inputs, bf16 where the bf16 bits say so)."""
        base = "f32" if etype(self.a).is_float else "i32"
        want_c = "bf16" if self.literal & FLAG["MatrixCBFloat16INTEL"] else base
        want_r = "bf16" if self.literal & FLAG["MatrixResultBFloat16INTEL"] else base
        return (self.c, self.result) == (want_c, want_r)

    @property
    def id(self) -> str:
        acc = "" if self.default_acc else f"-c{self.c}_r{self.result}"
        kdim = "" if self.kdim == "const" else f"-k{self.kdim}"
        return f"n{self.sg}-k{self.k}-lit{self.literal:#x}-M{self.M}{acc}{kdim}-{self.tier}"

    @property
    def module_key(self) -> tuple:
        """Everything the SPIR-V module depends on (not the tier)."""
        return (self.sg, self.k, self.M, self.a, self.b, self.c, self.result, self.kdim)

    @property
    def spec_row(self) -> str:
        return (
            f"OpSubgroupMatrixMultiplyAccumulateINTEL N={self.sg} K={self.k} "
            f"operands {self.literal:#x} ({self.a} x {self.b} + {self.c} -> {self.result}) [{self.level}]"
        )

    @property
    def extension(self) -> str:
        return SPIRV_EXTENSION

    @property
    def axes(self) -> dict:
        return {
            "sg": self.sg,
            "k": self.k,
            "M": self.M,
            "literal": f"{self.literal:#x}",
            "types": f"{self.a}_{self.b}",
            "acc": f"{self.c}_{self.result}",
            "level": self.level,
            "kdim": self.kdim,
            "tier": self.tier,
        }

    # --- operand shapes (SPV_INTEL_subgroup_matrix_multiply_accumulate, Mapping Matrix Data to
    # Invocations) --------------------------------
    @property
    def is_float(self) -> bool:
        return etype(self.a).is_float

    @property
    def a_elem_bits(self) -> int:
        return etype(self.a).bits

    @property
    def b_elem_bits(self) -> int:
        return etype(self.b).bits

    @property
    def a_container_bits(self) -> int:
        """N <= K: K/N elements packed per value; N > K: one element."""
        if self.sg > self.k:
            return self.a_elem_bits
        return self.k * self.a_elem_bits // self.sg

    @property
    def a_comps(self) -> int:
        if self.sg <= self.k:
            return self.M
        f = self.sg // self.k
        return -(-self.M // f)

    @property
    def b_comps(self) -> int:
        """> 16-bit elements: one row per component; else 32-bit VNNI words."""
        bits = self.b_elem_bits
        return self.k if bits > 16 else self.k * bits // 32

    @property
    def c_container_bits(self) -> int:
        return etype(self.c).bits

    @property
    def result_container_bits(self) -> int:
        return etype(self.result).bits

    @property
    def acc(self) -> str:
        """The accumulation / Result type (name shared with the Intel cases,
        used by repro bundles)."""
        return self.result


# ---------------------------------------------------------------- the tables
def required_rows() -> list[dict]:
    """cl_intel_subgroup_matrix_multiply_accumulate, Modifications to the OpenCL SPIR-V Environment
    Specification: (N, K, a, b, c, result) rows the OpenCL SPIR-V
    environment lists; each x M in {1, 2, 4, 8}."""
    rows = []
    for n in (8, 16):
        for a, b in INT8_PAIRS + INT4_PAIRS:
            rows.append(dict(sg=n, k=NATURAL_K[a], a=a, b=b, c="i32", result="i32"))
        for t in ("f16", "bf16"):
            rows.append(dict(sg=n, k=16, a=t, b=t, c="f32", result="f32"))
        if n == 16:  # fp16 and bf16 accumulators: N = 16 devices only
            rows.append(dict(sg=16, k=16, a="f16", b="f16", c="f16", result="f16"))
            rows.append(dict(sg=16, k=16, a="bf16", b="bf16", c="bf16", result="bf16"))
    rows.append(dict(sg=16, k=8, a="tf32", b="tf32", c="f32", result="f32"))  # _tf32
    return rows


_VEC_SIZES = (1, 2, 3, 4, 8, 16)  # OpenCL SPIR-V vectors (8, 16 with Vector16)


def well_defined(sg: int, k: int, a: str, b: str, M: int) -> bool:
    """Whether the mapping rules of SPV_INTEL_subgroup_matrix_multiply_accumulate, Mapping Matrix Data
    to Invocations give (N, K, types, M) one exact meaning with legal OpenCL SPIR-V types:

    * A, N <= K: K/N elements packed in one integer value per row, container
      of 8, 16, 32 or 64 bits (tf32: exactly one 32-bit float, so N == K);
    * A, N > K: N a multiple of K, one element per value (no 4-bit values),
      ceil(M / (N/K)) components;
    * B: <= 16-bit elements packed into whole 32-bit words, else K components;
    * every vector a legal OpenCL size.
    """
    ea, eb = etype(a).bits, etype(b).bits
    if sg <= k:
        if k % sg:
            return False
        cbits = k // sg * ea
        if a == "tf32" and cbits != 32:
            return False
        if cbits not in (8, 16, 32, 64):
            return False
        a_comps = M
    else:
        if sg % k or ea < 8:
            return False
        a_comps = -(-M // (sg // k))
    if eb <= 16:
        if (k * eb) % 32:
            return False
        b_comps = k * eb // 32
    else:
        b_comps = k
    return a_comps in _VEC_SIZES and b_comps in _VEC_SIZES and M in _VEC_SIZES


def _acc_options(a: str) -> list[tuple[str, str]]:
    if not etype(a).is_float:
        return [("i32", "i32")]
    if a == "tf32":
        return [("f32", "f32")]
    return [("f32", "f32"), (a, a), (a, "f32"), ("f32", a)]


def extended_rows() -> list[dict]:
    """Combinations beyond the required list that the instruction still
    defines (see ``well_defined``), for N in {4, 8, 16, 32} and K in
    {4, 8, 16, 32, 64}; M is checked per case."""
    req = {tuple(sorted(r.items())) for r in required_rows()}
    pairs = INT8_PAIRS + INT4_PAIRS + [("f16", "f16"), ("bf16", "bf16"), ("tf32", "tf32")]
    rows = []
    for n in (4, 8, 16, 32):
        for a, b in pairs:
            for k in (4, 8, 16, 32, 64):
                if not any(well_defined(n, k, a, b, m) for m in M_VALUES):
                    continue
                for c, r in _acc_options(a):
                    row = dict(sg=n, k=k, a=a, b=b, c=c, result=r)
                    if tuple(sorted(row.items())) not in req:
                        rows.append(row)
    return rows


def _tiers_for(result: str, tiers: tuple[str, ...], a: str = "", c: str = "") -> list[str]:
    """``rounding`` applies only to 16-bit float results (Rule R); ``accprec``
    where C and Result are float and wider than A (reference.data)."""
    from cts.families.intel import accprec_wider

    return [
        t
        for t in tiers
        if (t != "rounding" or result in ("f16", "bf16")) and (t != "accprec" or accprec_wider(a, c, result))
    ]


def spirv_intel_all_cases(tiers: tuple[str, ...]) -> list[SpirvMmaCase]:
    """Required and extended cases (lookup by id, e.g. repro bundles)."""
    return spirv_intel_cases(tiers, extended=True)


def spirv_intel_cases(tiers: tuple[str, ...], extended: bool = False) -> list[SpirvMmaCase]:
    """Required rows x M x K Dim form x tiers (+ the extended rows when ``extended``)."""
    levels = [("required", required_rows())]
    if extended:
        levels.append(("extended", extended_rows()))
    out = []
    for level, rows in levels:
        sp = (
            space()
            .expand_many(lambda p, rows=rows: rows)
            .combine("M", M_VALUES)
            .filter(lambda p: well_defined(p.sg, p.k, p.a, p.b, p.M))
            .combine("kdim", KDIM_VALUES)
            .expand("tier", lambda p: _tiers_for(p.result, tiers, p.a, p.c))
        )
        out += [SpirvMmaCase(p.sg, p.k, p.M, p.a, p.b, p.c, p.result, p.tier, level, kdim=p.kdim) for p in sp]
    return out
