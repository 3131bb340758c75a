"""Case space of the subgroup built-ins every subgroup family's oracle
relies on: which work-items form a subgroup, and what each of them is told.

OpenCL C (OpenCL C 3.0, 6.15.1 "Work-Item Functions"; cl_khr_subgroups):
``get_sub_group_size``, ``get_sub_group_id``, ``get_sub_group_local_id``,
``get_num_sub_groups``, ``get_max_sub_group_size``.  SPIR-V (OpenCL SPIR-V
environment, "Built-in Variables"): ``SubgroupSize``, ``SubgroupId``,
``SubgroupLocalInvocationId``, ``NumSubgroups``, ``SubgroupMaxSize``.

A case is one API, one subgroup size (required with
cl_intel_required_subgroup_size / ``OpExecutionMode SubgroupSize``, or the
device's only size) and one launch shape:

* ``full``: work-groups of 4N work-items (every subgroup full);
* ``partial``: work-groups of 2N + t for each t of
  :func:`cts.families.rotate.partial_tails` (N/2 and 3N/4), so each ends in
  a partial subgroup: the shape the rotate family's launches have.

A defect here is its own verdict, named by built-in; the rotate family
then says which built-in it could not rely on instead of failing every
case for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from cts.families.rotate import SUBGROUP_SIZES, partial_tails
from cts.space import space

__all__ = [
    "BUILTINS",
    "SHAPES",
    "SubgroupBuiltinsCase",
    "SgLaunch",
    "builtins_launches",
    "subgroup_builtins_cases",
]

# (column, OpenCL C built-in, SPIR-V BuiltIn): the order the kernels write them
BUILTINS: tuple[tuple[str, str, str], ...] = (
    ("size", "get_sub_group_size()", "SubgroupSize"),
    ("id", "get_sub_group_id()", "SubgroupId"),
    ("local_id", "get_sub_group_local_id()", "SubgroupLocalInvocationId"),
    ("num", "get_num_sub_groups()", "NumSubgroups"),
    ("max", "get_max_sub_group_size()", "SubgroupMaxSize"),
)
SHAPES = ("full", "partial")
GROUPS = 2  # work-groups per launch


@dataclass(frozen=True)
class SgLaunch:
    """``groups`` work-groups of ``local`` work-items; ``tail`` the size of
    the partial last subgroup (0: every subgroup full)."""

    groups: int
    local: int
    tail: int


@dataclass(frozen=True)
class SubgroupBuiltinsCase:
    api: str  # "opencl_c" | "spirv"
    sg: int
    shape: str  # "full" | "partial"
    family: str = "subgroup_builtins"
    tier: str = ""

    @property
    def id(self) -> str:
        return f"{self.api}-sg{self.sg}-{self.shape}"

    @property
    def kernel_group(self) -> str:
        return f"{self.api}-sg{self.sg}"

    def builtin(self, column: str) -> str:
        """The name of a built-in in this case's API."""
        for col, c_name, spv in BUILTINS:
            if col == column:
                return c_name if self.api == "opencl_c" else f"BuiltIn {spv}"
        raise KeyError(column)

    @property
    def spec_row(self) -> str:
        names = ", ".join(self.builtin(c) for c, _, _ in BUILTINS)
        where = "partial last subgroups" if self.shape == "partial" else "full subgroups"
        return f"{names} in {where}"

    @property
    def axes(self) -> dict:
        return {"api": self.api, "sg": self.sg, "shape": self.shape}


def builtins_launches(case: SubgroupBuiltinsCase) -> tuple[SgLaunch, ...]:
    N = case.sg
    if case.shape == "full":
        return (SgLaunch(GROUPS, 4 * N, 0),)
    return tuple(SgLaunch(GROUPS, 2 * N + t, t) for t in partial_tails(N))


def subgroup_builtins_cases(tiers: tuple[str, ...] = ()) -> list[SubgroupBuiltinsCase]:
    """2 APIs x 5 subgroup sizes x 2 shapes (data tiers do not apply)."""
    del tiers
    pts = space().combine("api", ["opencl_c", "spirv"]).combine("sg", SUBGROUP_SIZES).combine("shape", SHAPES)
    return [SubgroupBuiltinsCase(p.api, p.sg, p.shape) for p in pts]
