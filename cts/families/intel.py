"""Case spaces for the Intel subgroup-MMA OpenCL extensions.

Tables mirror the built-in lists of cl_intel_subgroup_matrix_multiply_accumulate
v1.1.0 (New OpenCL C Functions), its _tf32 companion and the split extension.
Every built-in overload is one row; rows x data tiers are the cases.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from cts.space import space
from reference.data import accprec_type
from reference.dtypes import etype

__all__ = [
    "IntelMmaCase",
    "Tf32ConvertCase",
    "intel_mma_cases",
    "intel_split_cases",
    "tf32_convert_cases",
    "INTEL_EXTENSION",
    "INTEL_TF32_EXTENSION",
    "INTEL_SPLIT_EXTENSION",
    "SPLIT_WG_VALUES",
]

INTEL_EXTENSION = "cl_intel_subgroup_matrix_multiply_accumulate"
INTEL_TF32_EXTENSION = "cl_intel_subgroup_matrix_multiply_accumulate_tf32"
INTEL_SPLIT_EXTENSION = "cl_intel_subgroup_split_matrix_multiply_accumulate"

# K is fixed by the element width (cl_intel_subgroup_matrix_multiply_accumulate, Modifications to the
# OpenCL C Specification): k32 for 8-bit, k64 for 4-bit, k16 for fp16/bf16, k8 for tf32.
K_OF = {"i8": 32, "u8": 32, "i4": 64, "u4": 64, "f16": 16, "bf16": 16, "tf32": 8}
INT_PAIRS = [(a, b) for w in ("8", "4") for a in ("i" + w, "u" + w) for b in ("i" + w, "u" + w)]
FLOAT_PAIRS = [("bf16", "bf16"), ("f16", "f16")]
M_VALUES = (1, 2, 4, 8)
SPLIT_M_VALUES = (2, 4, 8)
# subgroups per work-group of the split cases: the spec leaves "which two
# subgroups pair up" to the implementation (cl_intel_subgroup_split_matrix_multiply_accumulate, Issues,
# the first); with 2 the pairing is forced, with 4 and 8 a device must pick mutual partners
SPLIT_WG_VALUES = (2, 4, 8)


def base_rows(sg: int) -> list[tuple[str, str, str]]:
    """(a, b, acc) rows of the base extension for subgroup size ``sg``
    (cl_intel_subgroup_matrix_multiply_accumulate, New OpenCL C Functions: 10 rows for N=8, 12 for N=16)."""
    rows = [(a, b, "i32") for a, b in INT_PAIRS]
    rows += [(a, b, "f32") for a, b in FLOAT_PAIRS]
    if sg == 16:  # fp16/bf16 accumulator overloads, N = 16 devices only
        rows += [("bf16", "bf16", "bf16"), ("f16", "f16", "f16")]
    return rows


@dataclass(frozen=True)
class IntelMmaCase:
    family: str  # "intel_mma" or "intel_split_mma"
    sg: int
    a: str
    b: str
    k: int
    M: int
    acc: str
    tier: str
    wg: int = 2  # split only: subgroups per work-group (one pair at 2)

    # --- identity ------------------------------------------------------
    @property
    def id(self) -> str:
        wg = f"-wg{self.wg}" if self.split and self.wg != 2 else ""  # wg2: the ids before the wg axis
        return f"sg{self.sg}-{self.a}_{self.b}-k{self.k}-M{self.M}-acc_{self.acc}{wg}-{self.tier}"

    @property
    def kernel_group(self) -> str:
        """The cases one program holds: every data tier of one built-in,
        subgroup size and work-group shape (``cts.kernels.opencl_c``: the
        kernel does not depend on the tier).  A sweep's shards keep them
        together, so a driver builds the program once (a hint for placement:
        a wrong group costs time, never a verdict)."""
        return self.id.removesuffix(f"-{self.tier}")

    @property
    def split(self) -> bool:
        return self.family == "intel_split_mma"

    @property
    def builtin(self) -> str:
        mid = "split_matrix_mad" if self.split else "matrix_mad"
        return f"intel_sub_group_{self.a}_{self.b}_{mid}_k{self.k}"

    @property
    def extension(self) -> str:
        if self.split:
            return INTEL_SPLIT_EXTENSION
        return INTEL_TF32_EXTENSION if self.a == "tf32" else INTEL_EXTENSION

    @property
    def spec_row(self) -> str:
        """The coverage row: one built-in overload."""
        return f"{self.builtin}({self.a_ctype}, {self.b_ctype}, {self.acc_ctype}) sg{self.sg}"

    @property
    def axes(self) -> dict:
        axes = {
            "sg": self.sg,
            "types": f"{self.a}_{self.b}",
            "k": self.k,
            "M": self.M,
            "acc": self.acc,
            "tier": self.tier,
        }
        if self.split:
            axes["wg"] = self.wg
        return axes

    # --- operand shapes and OpenCL C types -------------------------------
    @property
    def a_elem_bits(self) -> int:
        return etype(self.a).bits

    @property
    def b_elem_bits(self) -> int:
        return etype(self.b).bits

    @property
    def a_rows_per_sg(self) -> int:
        return self.M // 2 if self.split else self.M

    @property
    def a_comps(self) -> int:
        from reference.layout import a_components

        return a_components(self.a_rows_per_sg, self.k, self.sg)

    @property
    def a_container_bits(self) -> int:
        if self.sg > self.k:
            return self.a_elem_bits
        return self.k * self.a_elem_bits // self.sg

    @cached_property
    def a_scalar(self) -> str:
        if self.a == "tf32":
            return "float"
        base = {32: "int", 16: "short"}[self.a_container_bits]
        return ("u" + base) if self.a.startswith("u") else base

    @property
    def b_scalar(self) -> str:
        if self.b == "tf32":
            return "float"
        return "uint" if self.b.startswith("u") else "int"

    @property
    def acc_scalar(self) -> str:
        return {"i32": "int", "f32": "float", "f16": "half", "bf16": "short"}[self.acc]

    @staticmethod
    def _vec(scalar: str, n: int) -> str:
        return scalar if n == 1 else f"{scalar}{n}"

    @property
    def a_ctype(self) -> str:
        return self._vec(self.a_scalar, self.a_comps)

    @property
    def b_ctype(self) -> str:
        return self._vec(self.b_scalar, 8)

    @property
    def acc_ctype(self) -> str:
        return self._vec(self.acc_scalar, self.M)

    @property
    def acc_bits(self) -> int:
        return etype(self.acc).bits

    @property
    def is_float(self) -> bool:
        return etype(self.a).is_float


def _tiers_for(acc: str, tiers: tuple[str, ...], a: str = "") -> list[str]:
    """``rounding`` applies only to 16-bit results (Rule R); ``accprec`` to
    the float built-ins whose accumulator is wider than the products' inputs
    (f32 from f16 / bf16 / tf32: reference.data.accprec_operands)."""
    return [
        t
        for t in tiers
        if (t != "rounding" or acc in ("f16", "bf16")) and (t != "accprec" or accprec_wider(a, acc))
    ]


def accprec_wider(a: str, acc: str, result: str | None = None) -> bool:
    """The ``accprec`` tier applies to a float MMA with inputs ``a`` and
    C / Result ``acc`` / ``result`` whose accumulator is wider than ``a``."""
    if not a:
        return False
    t = accprec_type(a, acc, result)
    return t is not None and etype(t).precision > etype(a).precision


def intel_mma_cases(tiers: tuple[str, ...]) -> list[IntelMmaCase]:
    """40 (N=8) + 48 (N=16) base built-ins and 4 tf32 built-ins, x tiers."""
    sp = (
        space()
        .combine("sg", (8, 16))
        .expand_many(lambda p: ({"a": a, "b": b, "acc": acc} for a, b, acc in base_rows(p.sg)))
    )
    rows = [dict(p) for p in sp]
    rows.append({"sg": 16, "a": "tf32", "b": "tf32", "acc": "f32"})  # _tf32 extension
    sp = (
        space()
        .expand_many(lambda p: rows)
        .combine("M", M_VALUES)
        .expand("tier", lambda p: _tiers_for(p.acc, tiers, p.a))
    )
    return [IntelMmaCase("intel_mma", p.sg, p.a, p.b, K_OF[p.a], p.M, p.acc, p.tier) for p in sp]


def intel_split_cases(tiers: tuple[str, ...]) -> list[IntelMmaCase]:
    """18 split built-ins (cl_intel_subgroup_split_matrix_multiply_accumulate): i8/u8 pairs and
    bf16/f16, M = 2, 4, 8, subgroup size 8 only; x 2, 4, 8 subgroups per work-group (``wg4``, ``wg8``
    in the id; 2 is the id without it)."""
    pairs = [(a, b, "i32") for a, b in INT_PAIRS if a[1] == "8"] + [(a, b, "f32") for a, b in FLOAT_PAIRS]
    sp = (
        space()
        .expand_many(lambda p: ({"a": a, "b": b, "acc": acc} for a, b, acc in pairs))
        .combine("M", SPLIT_M_VALUES)
        .combine("wg", SPLIT_WG_VALUES)
        .expand("tier", lambda p: _tiers_for(p.acc, tiers, p.a))
    )
    return [IntelMmaCase("intel_split_mma", 8, p.a, p.b, K_OF[p.a], p.M, p.acc, p.tier, p.wg) for p in sp]


@dataclass(frozen=True)
class Tf32ConvertCase:
    """intel_convert_tfloat32{,2,3,4,8,16}_as_float{n} (cl_intel_subgroup_matrix_multiply_accumulate_tf32)."""

    width: int
    tier: str
    family: str = "intel_tf32_convert"

    @property
    def id(self) -> str:
        return f"w{self.width}-{self.tier}"

    @property
    def kernel_group(self) -> str:
        """Every data tier of one width: one program (see ``IntelMmaCase``)."""
        return f"w{self.width}"

    @property
    def builtin(self) -> str:
        w = "" if self.width == 1 else str(self.width)
        return f"intel_convert_tfloat32{w}_as_float{w}"

    @property
    def extension(self) -> str:
        return INTEL_TF32_EXTENSION

    @property
    def spec_row(self) -> str:
        return self.builtin

    @property
    def axes(self) -> dict:
        return {"width": self.width, "tier": self.tier}

    @property
    def ctype(self) -> str:
        return "float" if self.width == 1 else f"float{self.width}"


def tf32_convert_cases(tiers: tuple[str, ...]) -> list[Tf32ConvertCase]:
    sp = (
        space()
        .combine("width", (1, 2, 3, 4, 8, 16))
        .combine("tier", [t for t in tiers if t in ("exact", "random", "special")])
    )
    return [Tf32ConvertCase(p.width, p.tier) for p in sp]
