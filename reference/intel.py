"""Rules of the Intel extensions beyond the MMA arithmetic itself.

* ``split_pairings`` -- cl_intel_subgroup_split_matrix_multiply_accumulate
  (cl_intel_subgroup_split_matrix_multiply_accumulate): two subgroups cooperate, "the first M/2 rows of
  the matrix source are provided by the first subgroup, the remaining M/2 rows by the
  second"; *which* two subgroups pair up is left to the implementation (the
  extension's Issues, the first, UNRESOLVED).  What any implementation must still
  give: every subgroup's result is A x B_own + acc_own, where A is the halves
  of itself and exactly one partner; partners are mutual (if s pairs with t,
  t pairs with s, the two see the same A), distinct (never itself) and belong
  to the same work-group (the built-in is a work-group-local cooperation:
  "must be encountered by all work items in both subgroups", and only
  subgroups of one work-group share local memory and barriers).  Which of the
  two is "first" is not defined either, so both orders are accepted, the
  same for both partners.
* ``round_f_to_tf32`` -- OpRoundFToTF32INTEL (SPV_INTEL_tensor_float32_
  conversion rev 3, "Conversion Instructions"; cl_intel_subgroup_matrix_multiply_accumulate_tf32): round a
  32-bit float to tf32 (1 sign, 8 exponent, 10 fraction bits) to nearest
  even, per component; an infinity stays the same infinity, a NaN stays a
  NaN (not necessarily the same).  The same rule as the OpenCL built-ins
  ``intel_convert_tfloat32*_as_float*`` (Rule T).
* ``k_dim_value`` -- SPV_INTEL_subgroup_matrix_multiply_accumulate
  (OpSubgroupMatrixMultiplyAccumulateINTEL): K Dim "must come from a constant instruction with
  scalar 32-bit integer type"; a constant instruction is an OpConstant* or
  an OpSpec* instruction (SPIR-V 2.2.1, "Constant Instruction"), and a
  specialization constant takes the value the client API sets for its
  SpecId, else its default (SPIR-V 2.12, "Specialization"; OpenCL:
  clSetProgramSpecializationConstant before clBuildProgram).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .dtypes import round_to_tf32

__all__ = ["split_pairings", "round_f_to_tf32", "k_dim_value"]


def round_f_to_tf32(x: np.ndarray) -> np.ndarray:
    """OpRoundFToTF32INTEL on float32 values (scalars or vector components):
    nearest even, +-inf kept, NaN stays NaN (``reference.dtypes.round_to_tf32``)."""
    return round_to_tf32(x)


def k_dim_value(default: int, spec_id: int | None, specialization: Mapping[int, int]) -> int:
    """The K the instruction computes with: a plain constant's value
    (``spec_id`` None), or a specialization constant's value from
    ``specialization`` (SpecId -> value), else its default."""
    if spec_id is None:
        return int(default)
    return int(specialization.get(spec_id, default))


def _pair_ok(first: int, second: int, top_ok: np.ndarray, bot_ok: np.ndarray) -> bool:
    """Both members' results are explained by A = [half of first; half of second]."""
    return bool(
        top_ok[first, first] and bot_ok[second, first] and top_ok[first, second] and bot_ok[second, second]
    )


def split_pairings(top_ok: np.ndarray, bot_ok: np.ndarray, wg: int) -> list[list[tuple[int, int]] | None]:
    """Per work-group, a set of pairs (first, second) that explains every
    subgroup's result under the rule above, or None where none does.

    ``top_ok[x, u]``: the result rows 0 .. M/2-1 of subgroup ``u`` equal the
    product with the A half that subgroup ``x`` passed (its own B and
    accumulator); ``bot_ok[y, u]`` the same for rows M/2 .. M-1.  Subgroups
    are numbered work-group by work-group (``u = g * wg + j``).  Where the data
    allow several pairings, the one with the lowest partners, the lower id
    first, is returned.
    """
    S = top_ok.shape[0]
    out: list[list[tuple[int, int]] | None] = []
    for g in range(S // wg):
        members = list(range(g * wg, (g + 1) * wg))
        out.append(_match(members, top_ok, bot_ok))
    return out


def _match(free: list[int], top_ok: np.ndarray, bot_ok: np.ndarray) -> list[tuple[int, int]] | None:
    """A perfect matching of ``free`` into ordered pairs (backtracking; a
    work-group has at most 8 subgroups)."""
    if not free:
        return []
    u, rest = free[0], free[1:]
    for v in rest:
        others = [w for w in rest if w != v]
        for first, second in ((u, v), (v, u)):
            if _pair_ok(first, second, top_ok, bot_ok):
                tail = _match(others, top_ok, bot_ok)
                if tail is not None:
                    return [(first, second), *tail]
    return None
