"""Emulator mixin: subgroup rotate (``run_subgroup_rotate``, and
``run_subgroup_rotate_launches`` for all launches of a case at once).

The emulated device forms subgroups of ``case.sg`` consecutive work-items
of each work-group (the last one partial), pads the partial one with junk
lanes up to the maximum size and rotates inside each rotation group (the
whole subgroup, or each cluster) as ``numpy.roll`` by -delta would, all
work-groups in one gather.  That is the picture
of SPV_KHR_subgroup_rotate's overview ("rotating by N moves values down N lanes"),
written without the index formulas of ``reference.rotate``.

The picture is drawn once per launch shape and deltas on the work-items'
own numbers instead of their values (which work-item's value lands where;
a junk lane is -1), kept read-only in a cache, and every launch's values
then move in one gather.  Several launches of a case are still separate
launches (their own work-groups and subgroups, nothing shared); only the
numpy pass is one.

Named faults make it a wrong device on purpose (tests/test_rotate_mutations.py).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["RotateEmulation", "ROTATE_FAULTS"]

ROTATE_FAULTS: dict[str, str] = {
    "rotate_direction_reversed": "rotate: values move up instead of down (source lane - delta)",
    "rotate_cluster_base_wrong": "clustered rotate: every cluster reads from the first cluster",
    "rotate_no_wraparound": "rotate: a source past the end of the group keeps its own value (shuffle-down)",
    "rotate_negative_delta_as_zero": "rotate: a negative delta is taken as 0",
    "rotate_vector_tail_unrotated": "rotate: vector components after the first are not rotated",
    "rotate_long_high_word_lost": "rotate: 64-bit values keep their own high 32 bits",
    "rotate_subnormal_flushed": "rotate: float subnormals are flushed to zero on the way",
    "rotate_modulo_current_size": "rotate: the source lane is taken modulo the current (partial) subgroup's "
    "size instead of the maximum subgroup size",
    "rotate_required_size_ignored": "rotate: subgroups of one work-item (required size ignored, "
    "max size still reported): every read is of an inactive lane",
    "rotate_vector_wide_tail_unrotated": "rotate: components 4 and up of a vector of 8 or 16 are not rotated "
    "(split into vec4 pieces, the rest dropped)",
    "rotate_delta64_high_word": "rotate: a 64-bit Delta is read from its high 32 bits",
    "rotate_narrow_delta_as_zero": "rotate: an 8- or 16-bit Delta with its top bit set is taken as 0 "
    "(sign-extended, then clamped)",
    "rotate_nonuniform_compacted": "rotate in non-uniform control flow: the k-th executing lane reads the "
    "(k + delta)-th executing lane (a rotate over the active lanes only)",
}


def _branch_active(lid: np.ndarray) -> np.ndarray:
    """The lanes that execute the rotate in a ``nonuniform`` case: the
    kernels' branch condition (subgroup local id % 3 != 2)."""
    return lid % 3 != 2


_JUNK = np.uint64(0xA5A5A5A5A5A5A5A5)

# faults that change which lane is read (drawn into the cached picture); the
# others change the values on the way (applied after the gather)
_LANE_FAULTS = frozenset(
    {
        "rotate_direction_reversed",
        "rotate_cluster_base_wrong",
        "rotate_no_wraparound",
        "rotate_negative_delta_as_zero",
        "rotate_modulo_current_size",
        "rotate_delta64_high_word",
        "rotate_narrow_delta_as_zero",
        "rotate_nonuniform_compacted",
    }
)


def _lane_picture(
    sg: int, cluster: int, G: int, L: int, deltas: tuple, f: frozenset, bits: int = 32, flow: str = ""
) -> np.ndarray:
    """(G * L,) which work-item of the launch (g * L + i) each work-item's
    result comes from, -1 for a junk lane; ``f`` the lane faults, ``bits``
    the Delta width, ``flow`` "nonuniform": only some lanes execute."""
    d = np.asarray(deltas, dtype=np.int64).reshape(G)
    if bits == 64 and "rotate_delta64_high_word" in f:
        d = (d >> 32) & 0xFFFFFFFF
    if bits in (8, 16) and "rotate_narrow_delta_as_zero" in f:
        d = np.where(d >= 1 << (bits - 1), 0, d)
    if flow == "nonuniform":
        return _nonuniform_picture(sg, cluster, G, L, d, f)
    deltas = tuple(d.tolist())
    nsub = -(-L // sg)
    pad = np.full((G, nsub * sg), -1, dtype=np.int64)
    pad[:, :L] = np.arange(G * L).reshape(G, L)
    lanes = pad.reshape(G, nsub, sg)
    group = cluster or sg
    grouped = lanes.reshape(G, nsub, sg // group, group)
    # source lane of every lane of each work-group's rotation groups: np.roll by -delta
    # (roll(a, s)[j] == a[(j - s) % n]), one row of indices per work-group
    d = np.asarray(deltas, dtype=np.int64).reshape(G)
    if "rotate_negative_delta_as_zero" in f:
        d = np.where(d < 0, 0, d)
    lane = np.arange(group)[None, :]
    if "rotate_no_wraparound" in f:
        idx = lane + d[:, None] % (1 << 32)
        src = np.where(idx >= group, lane, np.minimum(idx, group - 1))
    else:
        shift = d if "rotate_direction_reversed" in f else -d
        src = (lane - shift[:, None] % group) % group
    out = np.take_along_axis(grouped, src[:, None, None, :], axis=3)
    if not cluster and "rotate_modulo_current_size" in f and L % sg:
        tail = L % sg  # the partial subgroup wraps around its own size
        src_t = (np.arange(tail)[None, :] + d[:, None] % (1 << 32)) % tail
        part = np.take_along_axis(lanes[:, -1, :tail], src_t, axis=1)
        out = out.copy()
        out[:, -1, 0, :tail] = part
    if cluster and "rotate_cluster_base_wrong" in f:
        out = np.broadcast_to(out[:, :, :1], out.shape)  # every cluster gets the first one's result
    return out.reshape(G, nsub * sg)[:, :L].reshape(-1)


def _nonuniform_picture(sg: int, cluster: int, G: int, L: int, d: np.ndarray, f: frozenset) -> np.ndarray:
    """:func:`_lane_picture` when only the branch's lanes execute: they
    rotate as usual, a read of a lane that does not execute is junk, the
    others keep their own value (the kernel's else path).  The fault
    ``rotate_nonuniform_compacted`` rotates over the executing lanes only."""
    full = _lane_picture(sg, cluster, G, L, tuple(d.tolist()), f - {"rotate_nonuniform_compacted"})
    item = np.arange(G * L)
    lid = (item % L) % sg
    run = _branch_active(lid)
    src_ok = np.where(full >= 0, run[np.clip(full, 0, None)], False)
    out = np.where(run, np.where(src_ok, full, -1), item)
    if "rotate_nonuniform_compacted" in f:
        group = cluster or sg
        for g in range(G):
            for start in range(0, L, group):  # each rotation group of work-group g (sg divides L's runs)
                lanes = np.arange(start, min(start + group, L))
                on = lanes[run[g * L + lanes]]
                if on.size:
                    k = np.arange(on.size)
                    out[g * L + on] = g * L + on[(k + int(d[g])) % on.size]
    return out


@lru_cache(maxsize=512)
def _batch_picture(
    sg: int, cluster: int, launches: tuple, f: frozenset, bits: int = 32, flow: str = ""
) -> np.ndarray:
    """:func:`_lane_picture` of launches ((G, L, deltas), ...) as rows of
    their values stacked one launch after the other, with one junk row last
    (read-only: shared by every case of this subgroup size, cluster and
    launches)."""
    total = sum(G * L for G, L, _ in launches)
    parts, off = [], 0
    for G, L, deltas in launches:
        p = _lane_picture(sg, cluster, G, L, deltas, f, bits, flow)
        parts.append(np.where(p >= 0, p + off, total))
        off += G * L
    out = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    out.flags.writeable = False
    return out


@lru_cache(maxsize=256)
def _subgroup_map(sg: int, G: int, L: int) -> dict:
    """What every work-item of a (G, L) launch reports: subgroups of ``sg``
    consecutive work-items, the last one partial (read-only)."""
    lid = np.arange(L)
    size = np.minimum(sg, L - (lid // sg) * sg)
    return {
        "sg_id": np.broadcast_to(lid // sg, (G, L)),
        "sg_lid": np.broadcast_to(lid % sg, (G, L)),
        "sg_size": np.broadcast_to(size, (G, L)),
        "sg_max": np.broadcast_to(np.array(sg), (G, L)),
    }


class RotateEmulation:
    FAULTS = ROTATE_FAULTS

    def run_subgroup_rotate(self, case, values: np.ndarray, deltas: np.ndarray, const=None) -> dict:
        """``const`` (which work-groups take their delta as a constant
        operand) changes nothing on the emulated device."""
        return self._rotate_launches(case, [{"values": values, "deltas": deltas, "const": const}])[0]

    def run_subgroup_rotate_launches(self, case, launches: list[dict]) -> list[dict]:
        """Each launch's result as :meth:`run_subgroup_rotate` gives it, the
        launches (``{"values", "deltas", "const"}`` each) computed in one
        numpy pass (launch by launch where a subclass runs a launch its own
        way)."""
        if type(self).run_subgroup_rotate is not RotateEmulation.run_subgroup_rotate:
            return [self.run_subgroup_rotate(case, **ln) for ln in launches]
        return self._rotate_launches(case, launches)

    def _rotate_launches(self, case, launches: list[dict]) -> list[dict]:
        """The picture of the launches (which value lands where, cached),
        then every launch's values moved by one gather, then the faults
        that change values on the way."""
        f = self.faults
        if "rotate_required_size_ignored" in f:  # each work-item its own subgroup
            return [self._one_item_subgroups(case, np.asarray(ln["values"])) for ln in launches]
        vals = [np.asarray(ln["values"]) for ln in launches]
        W = vals[0].shape[2] if vals else case.width
        shape = tuple(
            (v.shape[0], v.shape[1], tuple(np.asarray(ln["deltas"], dtype=np.int64).reshape(-1).tolist()))
            for v, ln in zip(vals, launches)
        )
        dbits, flow = getattr(case, "dbits", 32), getattr(case, "flow", "")
        pic = _batch_picture(case.sg, case.cluster, shape, f & _LANE_FAULTS, dbits, flow)
        flat = np.empty((sum(G * L for G, L, _ in shape) + 1, W), dtype=np.uint64)  # the values, a junk row
        off = 0
        for v in vals:
            flat[off : off + v.shape[0] * v.shape[1]] = v.reshape(-1, W)
            off += v.shape[0] * v.shape[1]
        flat[off:] = _JUNK
        res = np.take(flat, pic, axis=0)
        own = flat[:-1]
        if "rotate_vector_tail_unrotated" in f and W > 1:
            res[:, 1:] = own[:, 1:]
        if "rotate_vector_wide_tail_unrotated" in f and W > 4:
            res[:, 4:] = own[:, 4:]
        if "rotate_long_high_word_lost" in f and case.gentype.bits == 64:
            lo = np.uint64(0xFFFFFFFF)
            res = (res & lo) | (own & ~lo)
        if "rotate_subnormal_flushed" in f and case.gentype.kind == "float":
            res = self._rotate_flush(res, case)
        out, off = [], 0
        for G, L, _ in shape:
            m = _subgroup_map(case.sg, G, L)
            if "sgb_partial_size_is_max" in f:  # the size built-in's defect (emu_subgroup_builtins)
                m = {**m, "sg_size": np.broadcast_to(np.array(case.sg), (G, L))}
            out.append({"out": res[off : off + G * L].reshape(G, L, W), **m})
            off += G * L
        return out

    @staticmethod
    def _one_item_subgroups(case, values: np.ndarray) -> dict:
        """The ``rotate_required_size_ignored`` device: every work-item its
        own subgroup (the maximum size still reported); results unrotated."""
        G, L, _ = values.shape
        return {
            "out": values.copy(),
            "sg_id": np.broadcast_to(np.arange(L), (G, L)),
            "sg_lid": np.zeros((G, L), dtype=np.int64),
            "sg_size": np.ones((G, L), dtype=np.int64),
            "sg_max": np.full((G, L), case.sg),
        }

    @staticmethod
    def _rotate_flush(bits: np.ndarray, case) -> np.ndarray:
        width = case.gentype.bits
        man = {16: 10, 32: 23, 64: 52}[width]
        exp_bits = width - 1 - man
        exp = (bits >> np.uint64(man)) & np.uint64((1 << exp_bits) - 1)
        sign = bits & np.uint64(1 << (width - 1))
        return np.where(exp == 0, sign, bits)
