"""Emulator mixin for the OpenCL cooperative-matrix axes (
``cts.families.coop_ocl_axes``).

It plays an OpenCL device with ``cl_khr_cooperative_matrix`` and capability
``CooperativeMatrixLayoutsARM``.  Its own table (:meth:`coop_ocl_table`): the
session's entries at the session's subgroup size and at half of it (two
reported sizes), ``CL_DEVICE_COOPERATIVE_MATRIX_POINTER_ALIGNMENT_KHR`` = 4 and
``..._STRIDE_MULTIPLE_KHR`` = 4.  Load/Store addresses are computed here, byte
by byte, with index arithmetic of its own (not ``reference.coop_ocl``): a
pointee of p bytes puts row r at r * Stride * p; an ARM block is 4 rows of
16 bytes, groups of Stride blocks interleave their 4-byte chunks.

Named faults (``--emulator-fault NAME``), each caught only by the cases of its
axis (tests/test_coop_ocl_axes.py).
"""

from __future__ import annotations

import numpy as np

__all__ = ["CoopOclEmulation", "COOP_OCL_FAULTS"]

COOP_OCL_FAULTS: dict[str, str] = {
    "coop_ocl_ptr_stride_components": "with a pointee type other than the component type, Stride counted in components",
    "coop_ocl_rtstride_tight": "a Stride passed as a kernel argument is taken as the tight stride",
    "coop_ocl_arm_no_interleave": "ARM blocked layouts ignore the interleave (Stride taken as 1)",
    "coop_ocl_arm_colblk_rowmajor": "ColumnBlockedInterleavedARM lays its blocks out in row-major order",
    "coop_ocl_align_16": "a Load/Store pointer aligned below 16 bytes is taken rounded down to 16 bytes "
    "(the device needs more than its reported POINTER_ALIGNMENT 0x107A)",
    "coop_ocl_stride_multiple_8": "a Stride whose byte size is no multiple of 8 is taken rounded up to one "
    "(the device needs more than its reported STRIDE_MULTIPLE 0x107B)",
    "coop_ocl_sg_length_first": "at a subgroup size other than the first reported, every invocation holds the "
    "first size's share: the elements beyond are lost (length short, MulAdd elements keep C)",
}
POINTER_ALIGNMENT = 4
STRIDE_MULTIPLE = 4
_STORE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _z(t: str) -> int:
    return int("".join(ch for ch in t if ch.isdigit())) // 8


class CoopOclEmulation:
    FAULTS = COOP_OCL_FAULTS

    def coop_ocl_table(self, entries, sg: int):
        """The emulator's own draft table (module docstring)."""
        from cts.families.coop_ocl_axes import OclTable

        sizes = {sg: tuple(entries)}
        if sg >= 8:
            sizes[sg // 2] = tuple(entries)
        return OclTable(sizes, POINTER_ALIGNMENT, STRIDE_MULTIPLE, "emulator")

    # ---- addresses ------------------------------------------------------
    def _arm_addr(self, case, il: int, z: int) -> np.ndarray:
        m, f = case.mat, self.faults
        if "coop_ocl_arm_no_interleave" in f:
            il = 1
        per_row = 16 // z
        row_major = case.layout == "rowblk" or "coop_ocl_arm_colblk_rowmajor" in f
        addr = np.empty((m.rows, m.cols, z), np.int64)
        for r in range(m.rows):
            for c in range(m.cols):
                if row_major:
                    blk = (r // 4) * (m.cols // per_row) + c // per_row
                else:
                    blk = (c // per_row) * (m.rows // 4) + r // 4
                grp, slot = blk // il, blk % il
                for k in range(z):
                    o = ((r % 4) * per_row + c % per_row) * z + k
                    addr[r, c, k] = grp * 64 * il + ((o >> 2) * il + slot) * 4 + (o & 3)
        return addr

    def _khr_addr(self, case, mem, bufs, z: int) -> np.ndarray:
        m, f = case.mat, self.faults
        unit = mem.pointee
        if case.ptr and "coop_ocl_ptr_stride_components" in f:
            unit = z
        stride = int(bufs["st"][0, 0]) if case.rtstride else mem.stride
        if case.rtstride and "coop_ocl_rtstride_tight" in f:
            stride = (m.cols if case.layout == "row" else m.rows) * z // unit
        sb = stride * unit
        if sb % 8 and "coop_ocl_stride_multiple_8" in f:
            sb += 8 - sb % 8
        off = mem.offset
        if off % 16 and "coop_ocl_align_16" in f:
            off -= off % 16
        r = np.arange(m.rows)[:, None, None]
        c = np.arange(m.cols)[None, :, None]
        k = np.arange(z)[None, None, :]
        return off + (r * sb + c * z if case.layout == "row" else c * sb + r * z) + k

    # ---- the family entry point ----------------------------------------
    def run_coop_matrix(self, case, bufs: dict) -> dict:
        axis = getattr(case, "ocl_axis", "")
        if axis in ("", "sg"):
            out = super().run_coop_matrix(case, bufs)
            if axis == "sg" and "coop_ocl_sg_length_first" in self.faults:
                self._first_size_share(case, bufs, out)
            return out
        from cts.families.coop_ocl_axes import axis_memory

        mem = axis_memory(case)  # pointer offset, Stride, region: parameters of the case
        m = case.mat
        z = _z(m.t)
        st = _STORE[z]
        addr = self._arm_addr(case, mem.stride, z) if case.layout in ("rowblk", "colblk") else None
        if addr is None:
            addr = self._khr_addr(case, mem, bufs, z)
        S = next(iter(bufs.values())).shape[0]
        out = {k: np.array(v, copy=True) for k, v in bufs.items()}
        region = "src" if case.op == "load" else "dst"
        mem_bytes = np.ascontiguousarray(bufs[region]).view(np.uint8).reshape(S, -1)
        inside = addr < mem_bytes.shape[1]
        if case.op == "load":
            raw = np.zeros((S,) + addr.shape, np.uint8)  # past the end: zeros
            raw[:, inside] = mem_bytes[:, addr[inside]]
            out["out"] = raw.view(st)[..., 0].reshape(S, -1)
            return out
        x = np.ascontiguousarray(bufs["x"].astype(st)).view(np.uint8).reshape((S,) + addr.shape)
        dst = np.array(mem_bytes, copy=True)
        dst[:, addr[inside]] = x[:, inside]  # writes past the end are dropped
        out["dst"] = dst.view(st).reshape(S, -1)
        return out

    def _first_size_share(self, case, bufs, out) -> None:
        """Fault ``coop_ocl_sg_length_first``: invocation i holds elements
        i, i + sg, ... only up to the first size's per-invocation length."""
        n_first = lambda n: -(-n // case.sg_first)  # noqa: E731
        if case.op == "length":
            m = case.mat
            out["len"][:, :] = min(int(out["len"][0, 0]), n_first(m.rows * m.cols))
        elif case.op == "muladd":
            e = case.entry
            n = e.M * e.N
            lost = np.arange(n) // case.sg >= n_first(n)
            c = self._raw(self._val(bufs["c"], e.C), e.R)
            out["d"][:, lost] = c[:, lost]
