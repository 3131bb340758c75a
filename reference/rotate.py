"""Subgroup rotate: the source-invocation rules of the specs, and the expected
result of a launch given the subgroups the device reports.

Spec facts (spec-digest 6.4, 6.5; peer-suites A.8, B.1):

* ``cl_khr_subgroup_rotate`` (OpenCL C): ``sub_group_rotate(value, int delta)``
  returns the value of the work-item whose subgroup local id is
  (own id + delta) mod *maximum* subgroup size (rule ``opencl_c``: the
  mathematical, non-negative remainder, so ``delta = -1`` reads the lane
  below).  ``sub_group_clustered_rotate(value, delta, c)`` reads
  ((own id within cluster + delta) mod c) + id of the first work-item of the
  cluster.
* ``SPV_KHR_subgroup_rotate`` (rule ``spirv``): Delta is an *unsigned*
  integer; source = ((LocalId + Delta) & (RGS - 1)) + (LocalId & ~(RGS - 1))
  with RotationGroupSize = ClusterSize if present, else SubgroupMaxSize under
  the Kernel capability (OpenCL), else SubgroupSize (Vulkan).
* The two wordings agree exactly when the rotation group size is a power of
  two; :func:`rules_agree` says so, and the cases only use such sizes.
* A value read from an inactive invocation (outside a partial last subgroup)
  is undefined and is not checked.
* ``gpu.rotate`` (MLIR, spec-digest 6.3) uses the SPIR-V formula with
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
_U32 = 1 << 32


def rotate_source(lid: np.ndarray, delta: np.ndarray, group: int, rule: str) -> np.ndarray:
    """Subgroup local id each invocation reads from.

    ``group`` is the rotation group size: the maximum subgroup size for a
    plain rotate, the cluster size for a clustered one.  ``delta`` is the
    value the program passed (an OpenCL C ``int``; for SPIR-V its 32-bit
    pattern is taken as unsigned).
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
        ud = np.mod(d, _U32)  # the 32-bit pattern as unsigned
        return ((lid + ud) & (group - 1)) + (lid & ~(group - 1))
    raise ValueError(f"unknown rotate rule {rule!r}; known: {', '.join(RULES)}")


def rules_agree(group: int, deltas: np.ndarray) -> bool:
    """True when the OpenCL C and SPIR-V wordings give the same sources for
    every lane of a group of this size and these deltas (spec-digest 6.5)."""
    lid = np.arange(group)[:, None]
    d = np.asarray(deltas)[None, :]
    try:
        return bool(
            np.array_equal(rotate_source(lid, d, group, "opencl_c"), rotate_source(lid, d, group, "spirv"))
        )
    except ValueError:
        return False


# The delta classes every case covers (spec-digest 8, issue 7): 0, 1, N-1, N,
# > N and negative; N is the rotation group size.  Values of each class are
# listed by :func:`delta_values`.
DELTA_CLASSES = ("zero", "one", "n_minus_1", "n", "gt_n", "negative")


def delta_values(n: int, cluster: int | None = None) -> list[tuple[str, int]]:
    """(class, delta) pairs for subgroup size ``n`` (and cluster size, whose
    own N-1, N, N+1 are added): every class of :data:`DELTA_CLASSES`,
    including the int32 extremes."""
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
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which invocation each invocation of one launch reads, given the
    subgroups the device reports (arguments as in :func:`expected_rotation`,
    per invocation of the flattened launch).

    Returns (index, checked, source): ``index`` the position (in the
    flattened launch) of the invocation whose value is expected, -1 where
    none is (``checked`` False: the source invocation is inactive, its id
    >= the subgroup's size); ``source`` the source subgroup local id.  The
    result depends on the subgroup map and the deltas only, never on the
    values, so a caller may reuse it for every launch of the same map."""
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
        src[sel] = rotate_source(lid[sel], d[sel], g, rule)
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
