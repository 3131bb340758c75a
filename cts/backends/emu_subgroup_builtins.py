"""Emulator mixin: the subgroup built-ins (``run_subgroup_builtins``).

The emulated device forms subgroups of ``case.sg`` consecutive work-items
of each work-group, the last one partial, and tells each work-item its
subgroup's size, id, its local id, the work-group's subgroup count and the
required size: the picture of OpenCL C 3.0, 6.15.1, drawn by counting,
without the rank formulas of ``cts.runs.subgroup_builtins``.

Named faults make it a wrong device on purpose
(tests/test_subgroup_builtins.py); ``sgb_partial_size_is_max`` is the
defect Mesa rusticl 26.1 shows; the rotate emulation reports the same
wrong size in its kernels' subgroup map (one device, one defect), so the
rotate family's handling of it is tested too.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SubgroupBuiltinsEmulation", "SGB_FAULTS"]

SGB_FAULTS: dict[str, str] = {
    "sgb_partial_size_is_max": "get_sub_group_size() returns the maximum size in a partial last subgroup",
    "sgb_num_ignores_partial": "get_num_sub_groups() leaves the partial last subgroup out",
    "sgb_local_id_from_one": "get_sub_group_local_id() counts from 1",
    "sgb_id_from_one": "get_sub_group_id() counts from 1",
    "sgb_max_is_current": "get_max_sub_group_size() returns the current subgroup's size",
    "sgb_half_size_subgroups": "subgroups of half the required size (the size reported is theirs, the "
    "maximum the required one)",
}


class SubgroupBuiltinsEmulation:
    FAULTS = SGB_FAULTS

    def run_subgroup_builtins(self, case, groups: int, local: int) -> dict:
        f = self.faults
        N = case.sg // 2 if "sgb_half_size_subgroups" in f and case.sg > 1 else case.sg
        info = np.zeros((groups, local, 5), dtype=np.uint32)
        for i in range(local):
            k, first = i // N, (i // N) * N
            size = min(N, local - first)
            num = -(-local // N)
            info[:, i] = (size, k, i - first, num, case.sg)
        if "sgb_partial_size_is_max" in f:
            info[..., 0] = np.maximum(info[..., 0], case.sg)
        if "sgb_num_ignores_partial" in f:
            info[..., 3] = local // N
        if "sgb_local_id_from_one" in f:
            info[..., 2] += 1
        if "sgb_id_from_one" in f:
            info[..., 1] += 1
        if "sgb_max_is_current" in f:
            info[..., 4] = info[..., 0]
        return {"info": info.reshape(-1)}
