"""Emulator mixin: subgroup rotate (``run_subgroup_rotate``).

The emulated device forms subgroups of ``case.sg`` consecutive work-items
of each work-group (the last one partial), pads the partial one with junk
lanes up to the maximum size and rotates inside each rotation group (the
whole subgroup, or each cluster) as ``numpy.roll`` by -delta would, all
work-groups in one gather.  That is the picture
of spec-digest 6.4's overview ("rotating by N moves values down N lanes"),
written without the index formulas of ``reference.rotate``.

Named faults make it a wrong device on purpose (tests/test_rotate_mutations.py).
"""

from __future__ import annotations

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
}

_JUNK = np.uint64(0xA5A5A5A5A5A5A5A5)


class RotateEmulation:
    FAULTS = ROTATE_FAULTS

    def run_subgroup_rotate(self, case, values: np.ndarray, deltas: np.ndarray, const=None) -> dict:
        """``const`` (which work-groups take their delta as a constant
        operand) changes nothing on the emulated device."""
        f = self.faults
        G, L, W = values.shape
        sg = case.sg
        nsub = -(-L // sg)
        pad = np.full((G, nsub * sg, W), _JUNK, dtype=np.uint64)
        pad[:, :L] = values
        lanes = pad.reshape(G, nsub, sg, W)
        group = case.cluster or sg
        grouped = lanes.reshape(G, nsub, sg // group, group, W)
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
        out = np.take_along_axis(grouped, src[:, None, None, :, None], axis=3)
        if not case.cluster and "rotate_modulo_current_size" in f and L % sg:
            tail = L % sg  # the partial subgroup wraps around its own size
            src_t = (np.arange(tail)[None, :] + d[:, None] % (1 << 32)) % tail
            part = np.take_along_axis(lanes[:, -1, :tail], src_t[:, :, None], axis=1)
            out = out.copy()
            out[:, -1, 0, :tail] = part
        if case.cluster and "rotate_cluster_base_wrong" in f:
            out = np.broadcast_to(out[:, :, :1], out.shape)  # every cluster gets the first one's result
        res = out.reshape(G, nsub * sg, W)[:, :L].copy()
        if "rotate_vector_tail_unrotated" in f and W > 1:
            res[:, :, 1:] = values[:, :, 1:]
        if "rotate_long_high_word_lost" in f and case.gentype.bits == 64:
            lo = np.uint64(0xFFFFFFFF)
            res = (res & lo) | (values & ~lo)
        if "rotate_subnormal_flushed" in f and case.gentype.kind == "float":
            res = self._rotate_flush(res, case)
        lid = np.arange(L)
        if "rotate_required_size_ignored" in f:  # each work-item its own subgroup
            return {
                "out": values.copy(),
                "sg_id": np.broadcast_to(lid, (G, L)),
                "sg_lid": np.zeros((G, L), dtype=np.int64),
                "sg_size": np.ones((G, L), dtype=np.int64),
                "sg_max": np.full((G, L), sg),
            }
        size = np.minimum(sg, L - (lid // sg) * sg)
        return {
            "out": res,
            "sg_id": np.broadcast_to(lid // sg, (G, L)),
            "sg_lid": np.broadcast_to(lid % sg, (G, L)),
            "sg_size": np.broadcast_to(size, (G, L)),
            "sg_max": np.full((G, L), sg),
        }

    @staticmethod
    def _rotate_flush(bits: np.ndarray, case) -> np.ndarray:
        width = case.gentype.bits
        man = {16: 10, 32: 23, 64: 52}[width]
        exp_bits = width - 1 - man
        exp = (bits >> np.uint64(man)) & np.uint64((1 << exp_bits) - 1)
        sign = bits & np.uint64(1 << (width - 1))
        return np.where(exp == 0, sign, bits)
