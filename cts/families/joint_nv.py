"""The NVIDIA Tensor Core rows of joint_matrix (sycl_ext_oneapi_matrix, Supported Combinations Per
Hardware: sm70 / sm72 / sm80, ext_oneapi_cuda) in every shape x layout combination the table
allows.

On CUDA every A and B may be row_major or col_major and every accumulator
load and store either layout, in each listed shape (DPC++ passes the layout
to one WMMA load / store each; PTX ISA 9.7.14.4: ``.row`` / ``.col`` for
every WMMA shape and type).  ``cts.families.joint.mad_cases`` runs the
canonical (all row-major) layouts in every shape and the layout variants in
the largest shape only; this sweep adds the rest: each (A, B, C, D) layout
in {row, col}^4 in each shape, strides alternating tight / padded, on the
onehot tier (each result element names the input element that reached
it, so a misread layout says where it went wrong).
"""

from __future__ import annotations

from itertools import product

from cts.families.joint import COMBOS, JointCase, joint_cases

__all__ = ["NV_ARCHES", "joint_nv_layout_cases"]

NV_ARCHES = ("sm70", "sm72", "sm80")


def joint_nv_layout_cases(tiers: tuple[str, ...]) -> list[JointCase]:
    """The layout combinations of the NVIDIA rows that ``joint_cases`` does
    not already hold (same ids, so no case runs twice)."""
    if "onehot" not in tiers:
        return []
    have = {c.id for c in joint_cases(("onehot",))}
    out = []
    for arch, a, b, c, d, shapes, note in COMBOS:
        if arch not in NV_ARCHES:
            continue
        for M, N, K in shapes:
            for i, lay in enumerate(product(("row", "col"), repeat=4)):
                case = JointCase(
                    arch,
                    "cur",
                    "mad",
                    (a, b, c, d),
                    M,
                    N,
                    K,
                    "mad",
                    lay,
                    ("tight", "pad")[i % 2],
                    "onehot",
                    note,
                )
                if case.id not in have:
                    out.append(case)
    return out
