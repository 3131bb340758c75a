"""Subgroup rotate: the source-invocation rules of the specs, and the expected
result of a launch given the subgroups the device reports.

Spec facts (SPV_KHR_subgroup_rotate, cl_khr_subgroup_rotate; as read by VK-GL-CTS and OpenCL-CTS):

* ``cl_khr_subgroup_rotate`` (OpenCL C): ``sub_group_rotate(value, int delta)``
  returns the value of the work-item whose subgroup local id is
  (own id + delta) mod *maximum* subgroup size (rule ``opencl_c``: the
  mathematical, non-negative remainder, so ``delta = -1`` reads the lane
  below).  ``sub_group_clustered_rotate(value, delta, c)`` reads
  ((own id within cluster + delta) mod c) + id of the first work-item of the
  cluster.
* ``SPV_KHR_subgroup_rotate`` (rule ``spirv``): Delta is an *unsigned*
  integer of any width ("a scalar of integer type, whose Signedness operand
  is 0": 8, 16, 32 or 64 bits where the module declares Int8 / Int16 /
  Int64), its value the bit pattern read as unsigned; source = ((LocalId + Delta) & (RGS - 1)) + (LocalId & ~(RGS - 1))
  with RotationGroupSize = ClusterSize if present, else SubgroupMaxSize under
  the Kernel capability (OpenCL), else SubgroupSize (Vulkan).
* The two wordings agree exactly when the rotation group size is a power of
  two; :func:`rules_agree` says so, and the cases only use such sizes.
* A value read from an inactive invocation (outside a partial last subgroup,
  or one that does not execute the instruction: the other side of a
  non-uniform branch) is undefined and is not checked ("the resulting value
  is undefined if the selected invocation is inactive"; OpenCL C: the
  built-ins "need not be encountered by all work-items").
* ``gpu.rotate`` (MLIR, MLIR GPU dialect, gpu.rotate) uses the SPIR-V formula with
  width as the group size; see :mod:`reference.mlir`.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "RULES",
    "DELTA_CLASSES",
    "delta_values",
    "rotate_source",
    "rules_agree",
    "rotation_sources",
    "expected_rotation",
]

RULES = ("opencl_c", "spirv")


def rotate_source(lid: np.ndarray, delta: np.ndarray, group: int, rule: str, bits: int = 32) -> np.ndarray:
    """Subgroup local id each invocation reads from.

    ``group`` is the rotation group size: the maximum subgroup size for a
    plain rotate, the cluster size for a clustered one.  ``delta`` is the
    value the program passed (an OpenCL C ``int``; for SPIR-V its ``bits``
    -bit pattern is taken as unsigned: a 64-bit Delta is given as the int64
    with that pattern).
    """
    lid = np.asarray(lid, dtype=np.int64)
    d = np.asarray(delta, dtype=np.int64)
    if group < 1:
        raise ValueError(f"rotation group size must be >= 1, got {group}")
    if rule == "opencl_c":
        base = lid - np.mod(lid, group)
        return base + np.mod(np.mod(lid, group) + d, group)
    if rule == "spirv":
        if group & (group - 1):
            raise ValueError(f"SPIR-V rotation group size must be a power of two, got {group}")
        # Delta's pattern as unsigned; only its value modulo the (power-of-two) group size matters,
        # which the low bits of the two's complement int64 give for every width
        ud = d & ((1 << bits) - 1) if bits < 64 else d
        return ((lid + (ud & (group - 1))) & (group - 1)) + (lid & ~(group - 1))
    raise ValueError(f"unknown rotate rule {rule!r}; known: {', '.join(RULES)}")


def rules_agree(group: int, deltas: np.ndarray) -> bool:
    """True when the OpenCL C and SPIR-V wordings give the same sources for
    every lane of a group of this size and these deltas (cl_khr_subgroup_rotate)."""
    lid = np.arange(group)[:, None]
    d = np.asarray(deltas)[None, :]
    try:
        return bool(
            np.array_equal(rotate_source(lid, d, group, "opencl_c"), rotate_source(lid, d, group, "spirv"))
        )
    except ValueError:
        return False


# The delta classes every case covers (as OpenCL-CTS subgroup_functions_rotate): 0, 1, N-1, N,
# > N and negative; N is the rotation group size.  Values of each class are
# listed by :func:`delta_values`.
DELTA_CLASSES = ("zero", "one", "n_minus_1", "n", "gt_n", "negative")


def delta_values(n: int, cluster: int | None = None, bits: int = 32) -> list[tuple[str, int]]:
    """(class, delta) pairs for subgroup size ``n`` (and cluster size, whose
    own N-1, N, N+1 are added): every class of :data:`DELTA_CLASSES`,
    including the int32 extremes.  ``bits`` 8 / 16: a SPIR-V Delta of that
    width (unsigned values; "negative" = the pattern of one, e.g. 255);
    64: the int64 extremes and values whose high word differs from their
    low word (a device reading the wrong half shows), as int64 patterns."""
    if bits in (8, 16):
        m = 1 << bits
        out = [("zero", 0), ("one", 1), ("n_minus_1", n - 1), ("n", n), ("gt_n", n + 1), ("gt_n", 2 * n + 3)]
        out += [("gt_n", m // 2 - 1), ("negative", m - 1), ("negative", m - (n - 1))]
        out += [("negative", m - n - 1), ("negative", m // 2)]
        if cluster is not None and cluster < n:
            out += [
                ("n_minus_1", cluster - 1),
                ("n", cluster),
                ("gt_n", cluster + 1),
                ("negative", m - cluster - 1),
            ]
        return _unique(out)
    if bits == 64:
        out = [("zero", 0), ("one", 1), ("n_minus_1", n - 1), ("n", n), ("gt_n", n + 1), ("gt_n", 2 * n + 3)]
        out += [("gt_n", 2**63 - 1), ("negative", -1), ("negative", -(n - 1)), ("negative", -n - 1)]
        out += [
            ("negative", -(2**63)),
            ("gt_n", 2**32 + 1),
            ("gt_n", 5 * 2**32 + n - 1),
            ("negative", -(2**32) + 3),
        ]
        if cluster is not None and cluster < n:
            out += [
                ("n_minus_1", cluster - 1),
                ("n", cluster),
                ("gt_n", cluster + 1),
                ("negative", -cluster - 1),
            ]
        return _unique(out)
    out = [
        ("zero", 0),
        ("one", 1),
        ("n_minus_1", n - 1),
        ("n", n),
        ("gt_n", n + 1),
        ("gt_n", 2 * n + 3),
        ("gt_n", 2**31 - 1),
        ("negative", -1),
        ("negative", -(n - 1)),
        ("negative", -n - 1),
        ("negative", -(2**31)),
    ]
    if cluster is not None and cluster < n:
        out += [("n_minus_1", cluster - 1), ("n", cluster), ("gt_n", cluster + 1), ("negative", -cluster - 1)]
    return _unique(out)


def _unique(out: list[tuple[str, int]]) -> list[tuple[str, int]]:
    seen, uniq = set(), []
    for cls, d in out:
        if d not in seen:
            seen.add(d)
            uniq.append((cls, d))
    return uniq


def rotation_sources(
    sg_key: np.ndarray,
    sg_lid: np.ndarray,
    sg_size: np.ndarray,
    sg_max: np.ndarray,
    delta: np.ndarray,
    cluster: int | None,
    rule: str,
    bits: int = 32,
    active: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which invocation each invocation of one launch reads, given the
    subgroups the device reports (arguments as in :func:`expected_rotation`,
    per invocation of the flattened launch).

    Returns (index, checked, source): ``index`` the position (in the
    flattened launch) of the invocation whose value is expected, -1 where
    none is (``checked`` False: the source invocation is inactive, its id
    >= the subgroup's size); ``source`` the source subgroup local id.  The
    result depends on the subgroup map and the deltas only, never on the
    values, so a caller may reuse it for every launch of the same map.
    ``bits``: the width of the (SPIR-V) Delta; ``active`` (per invocation):
    which invocations execute the rotate (non-uniform control flow; None:
    all).  Invocations that do not execute it, and those whose source does
    not, are not checked (a value from a non-executing invocation is
    undefined)."""
    key = np.asarray(sg_key, dtype=np.int64)
    lid = np.asarray(sg_lid, dtype=np.int64)
    size = np.asarray(sg_size, dtype=np.int64)
    mx = np.asarray(sg_max, dtype=np.int64)
    d = np.asarray(delta, dtype=np.int64)
    n = lid.shape[0]
    src = np.empty(n, dtype=np.int64)
    groups = [int(cluster)] if cluster is not None else np.unique(mx).tolist()
    for g in groups:
        sel = np.ones(n, bool) if cluster is not None else (mx == g)
        src[sel] = rotate_source(lid[sel], d[sel], g, rule, bits)
    checked = (src >= 0) & (src < size)
    if n and int(key.min()) >= 0:  # number the subgroups 0, 1, ... in key order: a table of their size
        present = np.zeros(int(key.max()) + 1, dtype=bool)
        present[key] = True
        key = (np.cumsum(present) - 1)[key]
    # locate (key, src) among all invocations
    width = int(lid.max()) + 1 if n else 1
    width = max(width, int(src.max()) + 1 if n else 1)
    table = np.full((int(key.max()) + 1 if n else 1, width), -1, dtype=np.int64)
    table[key, lid] = np.arange(n)
    idx = np.where(checked, table[key, np.clip(src, 0, width - 1)], -1)
    checked &= idx >= 0
    if active is not None:
        act = np.asarray(active, dtype=bool)
        checked &= act & act[np.clip(idx, 0, max(n - 1, 0))]
        idx = np.where(checked, idx, -1)
    return idx, checked, src


def expected_rotation(
    values: np.ndarray,
    sg_key: np.ndarray,
    sg_lid: np.ndarray,
    sg_size: np.ndarray,
    sg_max: np.ndarray,
    delta: np.ndarray,
    cluster: int | None,
    rule: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Expected per-invocation results of one launch.

    Every argument is per invocation (flattened launch): ``values`` (n, ...)
    raw bits, ``sg_key`` a unique id of the invocation's subgroup (e.g.
    group * subgroups-per-group + sub_group_id), ``sg_lid`` its subgroup
    local id, ``sg_size`` / ``sg_max`` the subgroup size and the maximum
    subgroup size it reported, ``delta`` the delta it passed.

    Returns (expected, checked, source): ``checked`` is False where the
    source invocation is inactive (its id >= the subgroup's size); there
    ``expected`` holds zeros.  ``source`` is the source local id.
    """
    values = np.asarray(values)
    idx, checked, src = rotation_sources(sg_key, sg_lid, sg_size, sg_max, delta, cluster, rule)
    expected = np.zeros_like(values)
    expected[checked] = values[idx[checked]]
    return expected, checked, src
