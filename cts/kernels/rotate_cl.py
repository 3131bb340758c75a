"""OpenCL C kernels for ``cl_khr_subgroup_rotate`` (spec-digest 6.5).

One program per (gentype, required subgroup size) holds one kernel that
switches over the rotate variants (plain, and each power-of-two cluster
size), so a sweep builds few, small programs.  The kernel:

* reads its value and the work-group's delta (``deltas[get_group_id(0)]``:
  uniform in every subgroup, and not a compile-time constant, so the
  compiler cannot fold it);
* writes ``sub_group_rotate(v, d)`` or ``sub_group_clustered_rotate(v, d, C)``
  (C an integer constant expression, as the extension requires);
* reports ``get_sub_group_id``, ``get_sub_group_local_id``,
  ``get_sub_group_size`` and ``get_max_sub_group_size`` so the host derives
  the expected values from the device's own subgroup map.

The required size comes from ``intel_reqd_sub_group_size``
(cl_intel_required_subgroup_size).
"""

from __future__ import annotations

__all__ = ["rotate_cl_program", "rotate_cl_entry", "HOST_DTYPE"]

# host buffer dtype of each gentype (raw bits)
HOST_DTYPE = {8: "uint8", 16: "uint16", 32: "uint32", 64: "uint64"}

_PRAGMAS = {
    "half": "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n",
    "double": "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
}


def rotate_cl_entry(cluster: int = 0) -> str:
    """All variants share one kernel; ``sel[0]`` picks the variant."""
    return "rotate_k"


def _clusters(sg: int) -> list[int]:
    out, c = [], 1
    while c <= sg:
        out.append(c)
        c *= 2
    return out


def rotate_cl_program(t: str, sg: int) -> str:
    """The program for gentype ``t`` and required subgroup size ``sg``: one
    kernel whose ``switch`` on ``sel[0]`` (0 = plain, else the cluster size)
    calls the built-in with a constant cluster size (as the OpenCL-CTS does;
    one kernel compiles 2-3x faster than one kernel per variant)."""
    cases = "\n".join(
        f"    case {c}: r = sub_group_clustered_rotate(v, d, {c}u); break;" for c in _clusters(sg)
    )
    head = f"/* cl_khr_subgroup_rotate: {t}, required subgroup size {sg} */\n" + _PRAGMAS.get(t, "")
    return (
        head
        + f"""
__attribute__((intel_reqd_sub_group_size({sg})))
kernel void rotate_k(global const {t}* in, global const int* deltas, global {t}* out,
                     global uint* info, global const int* sel)
{{
    size_t g = get_global_id(0);
    int d = deltas[get_group_id(0)];
    {t} v = in[g];
    {t} r = v;
    switch (sel[0]) {{
    case 0: r = sub_group_rotate(v, d); break;
{cases}
    }}
    out[g] = r;
    info[4 * g + 0] = get_sub_group_id();
    info[4 * g + 1] = get_sub_group_local_id();
    info[4 * g + 2] = get_sub_group_size();
    info[4 * g + 3] = get_max_sub_group_size();
}}
"""
    )
