"""Emulator mixin for SYCL ``joint_matrix`` (sycl_ext_oneapi_matrix).

Written from the extension text, independently of ``reference.joint``: the
reference packs and unpacks whole matrices (reshape / transpose); this mixin
computes, for every logical element (r, c), the memory-matrix coordinate it
lives at and gathers / scatters through flat addresses, as a device's
address generator would:

* row_major  (r, c)        -> (r, c)
* col_major  (r, c)        -> (c, r)
* packed     (r, c)        -> (r // f, c*f + r % f)     (ext_intel_packed, packed_b)
* packed_a   (r, c)        -> (c // f, r*f + c % f)     (old API, column-major A)
  with address = row * stride + col and f = 4 (8-bit), 2 (16-bit), 1 otherwise.

Reads outside a tile's buffer return 0 and writes outside it are dropped
(this only happens under faults).  Arithmetic: integers exact then wrapped
to 32 bits; floats summed in float64 and rounded once to the D type.
"""

from __future__ import annotations

import math
import sys
from functools import lru_cache
from typing import NamedTuple

import ml_dtypes
import numpy as np

__all__ = ["JointEmulation", "JOINT_FAULTS"]

JOINT_FAULTS: dict[str, str] = {
    "joint_packed_as_row": "ext_intel_packed / packed_b memory read and written as row-major",
    "joint_stride_ignored": "the stride argument ignored (the minimum stride used)",
    "joint_col_major_transposed_twice": "col_major transposed twice (treated as row-major)",
    "joint_vnni_factor_wrong": "VNNI factor 2 used for 8-bit elements",
    "joint_checked_no_zero_fill": "checked load / fill do not zero out-of-bounds elements",
    "joint_checked_store_not_dropped": "checked store writes out-of-bounds elements",
    "joint_apply_coords_swapped": "apply passes (col, row) instead of (row, col)",
    "joint_apply_packed_coords": "apply on a packed matrix passes packed (post-VNNI) coordinates",
    "joint_store_overwrites_gaps": "store writes zeros into the padding between rows",
    "joint_d_as_c_type": "mad stores D encoded as the C type",
    "joint_copy_reinterprets": "copy reinterprets bits instead of converting values",
    "joint_packed_a_as_packed_b": "old API packed_a addressed like packed_b",
}

_BITS = {"i8": 8, "u8": 8, "i16": 16, "i32": 32, "f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64}
_FLOAT = {
    "f16": (np.float16, np.uint16),
    "bf16": (ml_dtypes.bfloat16, np.uint16),
    "f32": (np.float32, np.uint32),
}


_SIGNED = {"i8": (np.int8, np.uint8), "i16": (np.int16, np.uint16), "i32": (np.int32, np.uint32)}


@lru_cache(maxsize=1024)
def _coords(layout: str, R: int, C: int, f: int) -> tuple[np.ndarray, np.ndarray]:
    """Memory-matrix (row, col) of every logical element (r, c), each (R, C)
    (read-only: shared by every call with the same shape)."""
    r = np.arange(R)[:, None] + np.zeros((1, C), dtype=np.int64)
    c = np.arange(C)[None, :] + np.zeros((R, 1), dtype=np.int64)
    if layout == "row":
        out = r, c
    elif layout == "col":
        out = c, r
    elif layout == "packed":
        out = r // f, c * f + r % f
    elif layout == "packed_a":
        out = c // f, r * f + c % f
    else:
        raise ValueError(f"unknown layout {layout!r}")
    for x in out:
        x.flags.writeable = False
    return out


class _Addr(NamedTuple):
    """Flat addresses row * stride + col of a tile's elements, (R, C), with
    their range and whether no two elements share an address; ``scaled``:
    k -> a * k (the address of an element's low bytes in memory read as
    8 // k-byte units)."""

    a: np.ndarray
    lo: int
    hi: int
    unique: bool
    scaled: dict


def _read_only(x: np.ndarray) -> np.ndarray:
    x.flags.writeable = False
    return x


@lru_cache(maxsize=4096)
def _addresses(layout: str, R: int, C: int, f: int, stride: int) -> _Addr:
    mr, mc = _coords(layout, R, C, f)
    a = _read_only(mr * stride + mc)
    s = np.sort(a, axis=None)
    unique = bool((s[1:] != s[:-1]).all())
    return _Addr(a, int(s[0]), int(s[-1]), unique, {k: _read_only(a * k) for k in (2, 4, 8)})


# element types whose bits are the low bytes of a memory word, read as such
# (little-endian hosts): bytes, the numpy type of the value, the type it widens to
_LOW = {
    "i8": (1, np.int8, np.int64),
    "u8": (1, np.uint8, np.int64),
    "i16": (2, np.int16, np.int64),
    "i32": (4, np.int32, np.int64),
    "f16": (2, np.float16, np.float64),
    "bf16": (2, ml_dtypes.bfloat16, np.float64),
    "f32": (4, np.float32, np.float64),
}
_LITTLE = sys.byteorder == "little"


def _on_grid(X: np.ndarray, g: int) -> bool:
    """Every element of X (finite) a multiple of 2^g (scaling by a power of
    two is exact where nothing overflows: |X| * 2^-g stays below 2^53)."""
    s = X * 2.0**-g if -1000 < g < 1000 else np.ldexp(X, -g)
    return bool((s == np.trunc(s)).all())


def _exact_sums(A: np.ndarray, B: np.ndarray) -> bool:
    """True when every product a*b and every sum of up to K of them is exact
    in float64, whatever the order.  With |a| < 2^ea, |b| < 2^eb and the
    elements multiples of 2^(ea - h) and 2^(eb - h), every product is a
    multiple of u = 2^(ea + eb - 2h) and every partial sum too, below
    K * 2^(ea + eb) = 2^(log2 K + 2h) u in magnitude: exact when
    ceil(log2 K) + 2h <= 53 and u is no finer than float64's 2^-1074."""
    K = A.shape[2]
    if A.size == 0 or B.size == 0:
        return False
    amax, bmax = max(float(A.max()), -float(A.min())), max(float(B.max()), -float(B.min()))
    if not (math.isfinite(amax) and math.isfinite(bmax)):  # NaN: max gives NaN
        return False
    if amax == 0.0 or bmax == 0.0:
        return True
    h = (53 - (K - 1).bit_length()) // 2
    ea, eb = math.frexp(amax)[1], math.frexp(bmax)[1]
    if ea + eb - 2 * h < -1074:
        return False
    return _on_grid(A, ea - h) and _on_grid(B, eb - h)


def _vnni(faults: frozenset, t: str) -> int:
    bits = _BITS[t] if t != "tf32" else 32
    if bits == 8:
        return 2 if "joint_vnni_factor_wrong" in faults else 4
    return 2 if bits == 16 else 1


def _applied_layout(faults: frozenset, layout: str) -> str:
    """The layout the (possibly faulty) address generator applies."""
    if layout == "packed_a" and "joint_packed_a_as_packed_b" in faults:
        layout = "packed"
    if layout in ("packed", "packed_a") and "joint_packed_as_row" in faults:
        layout = "row"
    if layout == "col" and "joint_col_major_transposed_twice" in faults:
        layout = "row"
    return layout


def _applied_stride(faults: frozenset, stride: int, layout: str, R: int, C: int, t: str) -> int:
    if "joint_stride_ignored" not in faults:
        return int(stride)
    _, mc = _coords(_applied_layout(faults, layout), R, C, _vnni(faults, t))
    return int(mc.max()) + 1


@lru_cache(maxsize=4096)
def _fault_addr(faults: frozenset, layout: str, R: int, C: int, t: str, stride: int) -> _Addr:
    """The addresses the (possibly faulty) address generator uses for an
    R x C matrix of type t in ``layout`` with ``stride``."""
    st = _applied_stride(faults, stride, layout, R, C, t)
    return _addresses(_applied_layout(faults, layout), R, C, _vnni(faults, t), st)


def _tf32_rne(bits32: np.ndarray) -> np.ndarray:
    u = bits32.astype(np.uint64) & np.uint64(0xFFFFFFFF)
    special = (u & np.uint64(0x7F800000)) == np.uint64(0x7F800000)
    r = (u + np.uint64(0xFFF) + ((u >> np.uint64(13)) & np.uint64(1))) & np.uint64(0xFFFFE000)
    return np.where(special, u, r)


class JointEmulation:
    """``run_joint_matrix``: one entry point, the case's ``op`` selects the
    group functions executed per tile (all tiles of a case in one call)."""

    FAULTS = JOINT_FAULTS

    # --- element values --------------------------------------------------
    @staticmethod
    def _jm_dec(bits: np.ndarray, t: str) -> np.ndarray:
        b = np.asarray(bits, dtype=np.uint64)
        if t in _SIGNED:  # the low w bits as two's complement (a narrowing cast keeps them)
            return b.astype(_SIGNED[t][1]).view(_SIGNED[t][0]).astype(np.int64)
        if t == "u8":
            return (b & np.uint64(0xFF)).astype(np.int64)
        if t == "f64":
            return b.view(np.float64).copy()
        if t == "tf32":
            return _tf32_rne(b).astype(np.uint32).view(np.float32).astype(np.float64)
        ft, ut = _FLOAT[t]
        return b.astype(ut).view(ft).astype(np.float64)

    @staticmethod
    def _jm_enc(vals: np.ndarray, t: str) -> np.ndarray:
        v = np.asarray(vals)
        if t in ("i8", "u8", "i16", "i32"):  # the low bits (non-negative: the same as uint64)
            return np.bitwise_and(v.astype(np.int64, copy=False), (1 << _BITS[t]) - 1).view(np.uint64)
        with np.errstate(over="ignore", invalid="ignore"):
            if t == "f64":
                return np.array(v, dtype=np.float64).view(np.uint64)
            if t == "tf32":
                return _tf32_rne(v.astype(np.float32).view(np.uint32))
            ft, ut = _FLOAT[t]
            return v.astype(np.float64, copy=False).astype(ft).view(ut).astype(np.uint64)

    # --- addressing --------------------------------------------------------
    def _jm_vnni(self, t: str) -> int:
        return _vnni(self.faults, t)

    def _jm_layout(self, layout: str) -> str:
        """The layout the (possibly faulty) address generator applies."""
        return _applied_layout(self.faults, layout)

    def _jm_coords(self, layout: str, R: int, C: int, t: str):
        """Memory-matrix (row, col) of every logical element, each (R, C)."""
        return _coords(self._jm_layout(layout), R, C, self._jm_vnni(t))

    def _jm_stride(self, stride: int, layout: str, R: int, C: int, t: str) -> int:
        return _applied_stride(self.faults, stride, layout, R, C, t)

    def _jm_addr(self, layout: str, R: int, C: int, t: str, stride: int) -> _Addr:
        return _fault_addr(self.faults, layout, R, C, t, int(stride))

    @staticmethod
    def _jm_gather(mem: np.ndarray, addr) -> np.ndarray:
        """mem (S, size) read at addr: an :class:`_Addr` (one (R, C) address
        per element, the same for every tile) or per-tile (S, R, C)
        addresses; out-of-range reads give 0."""
        S, size = mem.shape
        if isinstance(addr, _Addr):
            if addr.lo >= 0 and addr.hi < size:
                return mem[:, addr.a]
            addr = addr.a
        a = np.broadcast_to(addr, (S, *addr.shape[-2:])) if addr.ndim == 2 else addr
        ok = (a >= 0) & (a < size)
        out = mem[np.arange(S)[:, None, None], np.where(ok, a, 0)]
        return np.where(ok, out, np.uint64(0)).astype(np.uint64)

    @staticmethod
    def _jm_scatter(mem: np.ndarray, addr, bits: np.ndarray, write: np.ndarray | None = None):
        """mem (S, size) written in place at addr (as for :meth:`_jm_gather`)
        where ``write`` (default: everywhere); out-of-range writes dropped."""
        S, size = mem.shape
        if isinstance(addr, _Addr):
            if write is None and addr.unique and addr.lo >= 0 and addr.hi < size:
                mem[:, addr.a] = bits
                return
            addr = addr.a
        a = np.broadcast_to(addr, bits.shape)
        ok = (a >= 0) & (a < size)
        if write is not None:
            ok &= write
        s_idx = np.broadcast_to(np.arange(S)[:, None, None], bits.shape)
        mem[s_idx[ok], a[ok]] = bits[ok]

    def _jm_load(self, mem, layout, R, C, t, stride) -> np.ndarray:
        addr = self._jm_addr(layout, R, C, t, stride)
        mem = np.asarray(mem, dtype=np.uint64)
        low = _LOW.get(t) if _LITTLE and mem.ndim == 2 and mem.flags.c_contiguous else None
        if low and addr.lo >= 0 and addr.hi < mem.shape[1]:
            width, vtype, wide = low  # each element's low bytes, read as its type: the same as _jm_dec
            return mem.view(vtype)[:, addr.scaled[8 // width]].astype(wide)
        return self._jm_dec(self._jm_gather(mem, addr), t)

    def _jm_store(self, mem, vals, layout, t, stride) -> np.ndarray:
        S, R, C = vals.shape
        out = np.array(mem, dtype=np.uint64, copy=True)
        addr = self._jm_addr(layout, R, C, t, stride)
        if "joint_store_overwrites_gaps" in self.faults:
            mr, mc = self._jm_coords(layout, R, C, t)
            st = self._jm_stride(stride, layout, R, C, t)
            width = int(mc.max()) + 1
            for row in range(int(mr.max())):
                out[:, row * st + width : (row + 1) * st] = 0
        self._jm_scatter(out, addr, self._jm_enc(vals, t))
        return out

    # --- operations ----------------------------------------------------------
    def _jm_apply(self, vals, layout, t, coords: bool):
        S, R, C = vals.shape
        if coords:
            r, c = np.arange(R)[:, None], np.arange(C)[None, :]
            if layout in ("packed", "packed_a") and "joint_apply_packed_coords" in self.faults:
                r, c = self._jm_coords(layout, R, C, t)
            if "joint_apply_coords_swapped" in self.faults:
                r, c = c, r
            w = (r % 8) * 8 + (c % 8)
        else:
            w = 0
        if t in ("i8", "u8", "i16", "i32"):
            return self._jm_dec(self._jm_enc(2 * vals.astype(np.int64) + w, t), t)
        return 2.0 * vals + w

    def _jm_convert(self, vals, ts, td):
        if "joint_copy_reinterprets" in self.faults and ts != td:
            return self._jm_dec(self._jm_enc(vals, ts), td)
        return vals

    def _jm_mad(self, A, B, C, is_int):
        """sum_k A[:, m, k] * B[:, k, n] + C: integers exact; floats in
        float64, this device's order: small tiles (S*M*N < 4096 or K < 2) one
        reduction over k from +0, big tiles a running sum from the k = 0
        product.  Where every partial sum is exact (:func:`_exact_sums`) the
        order does not matter, and one BLAS product gives the same values;
        only the sign of a zero sum is the order's: the reduction's is +0,
        the running sum's -0 exactly where every product is -0."""
        if is_int:  # |a|, |b| <= 255: K * 255^2 < 2^53, so the float64 product is exact
            Ci = C.astype(np.int64, copy=False)
            if A.shape[2] * 255 * 255 < 2**53:
                return np.matmul(A.astype(np.float64), B.astype(np.float64)).astype(np.int64) + Ci
            return np.matmul(A.astype(np.int64), B.astype(np.int64)) + Ci
        S, M, K = A.shape
        N = B.shape[2]
        small = S * M * N < 4096 or K < 2
        with np.errstate(invalid="ignore", over="ignore"):
            if _exact_sums(A, B):
                acc = np.matmul(A, B)
                zero = acc == 0
                if zero.any():
                    acc[zero] = 0.0
                    if not small:  # -0 where all K products are -0
                        s, m, n = np.nonzero(zero)
                        p = A[s, m, :] * B[s, :, n]
                        acc[s, m, n] = np.where(((p == 0) & np.signbit(p)).all(axis=1), -0.0, 0.0)
                return acc + C
            if small:  # small tiles: one broadcast product
                return (A[:, :, :, None] * B[:, None, :, :]).sum(axis=2) + C
            # big tiles: the same sum, k = 0, 1, ... in order, without the (S, M, K, N) products
            acc = np.multiply(A[:, :, 0, None], B[:, None, 0, :])
            tmp = np.empty_like(acc)
            for k in range(1, K):
                acc += np.multiply(A[:, :, k, None], B[:, None, k, :], out=tmp)
            return acc + C

    def _jm_checked_mask(self, R, C, layout, t, height, width, cx, cy):
        mr, mc = self._jm_coords(layout, R, C, t)
        gr = np.asarray(cx)[:, None, None] + mr[None]
        gc = np.asarray(cy)[:, None, None] + mc[None]
        ok = (gr < np.asarray(height)[:, None, None]) & (gc < np.asarray(width)[:, None, None])
        return ok, gr, gc

    def run_joint_matrix(self, case, **kw):
        op, (li, lo) = case.op, case.layouts[:2]
        if op == "mad":
            a, b, c, d = case.types
            la, lb, lc, ld = case.layouts
            A = self._jm_load(kw["a"], la, case.M, case.K, a, kw["sa"])
            B = self._jm_load(kw["b"], lb, case.K, case.N, b, kw["sb"])
            Cv = self._jm_load(kw["c"], lc, case.M, case.N, c, kw["sc"])
            D = None
            if "acc_one_step_narrower" in self.faults and a not in ("i8", "u8"):
                from cts.backends.emu_common import narrow_acc_mad  # the shared fault

                D = narrow_acc_mad(A, B, Cv, c, d)
            if D is None:
                D = self._jm_mad(A, B, Cv, a in ("i8", "u8"))
            if a in ("i8", "u8"):
                D = self._jm_dec(self._jm_enc(D, "i32"), "i32")
            dt = c if "joint_d_as_c_type" in self.faults else d
            return self._jm_store(kw["d"], D, ld, dt, kw["sd"])
        use = case.use
        if op == "copy":
            ts, td = case.types
            us, ud = use.split(">")
            R, C = case.dims(us)
            vals = self._jm_convert(self._jm_load(kw["src"], li, R, C, ts, kw["s_src"]), ts, td)
            return self._jm_store(kw["dst"], vals, lo, td, kw["s_dst"])
        (t,) = case.types
        R, C = case.dims(use)
        S = kw["dst"].shape[0]
        if op == "ldst":
            return self._jm_store(
                kw["dst"], self._jm_load(kw["src"], li, R, C, t, kw["s_src"]), lo, t, kw["s_dst"]
            )
        if op in ("apply", "apply_plain"):
            vals = self._jm_load(kw["src"], li, R, C, t, kw["s_src"])
            return self._jm_store(kw["dst"], self._jm_apply(vals, li, t, op == "apply"), lo, t, kw["s_dst"])
        if op == "fill":
            v = self._jm_dec(np.asarray(kw["value"], dtype=np.uint64), t)
            return self._jm_store(kw["dst"], np.broadcast_to(v[:, None, None], (S, R, C)), lo, t, kw["s_dst"])
        h, w, cx, cy = kw["height"], kw["width"], kw["cx"], kw["cy"]
        if op == "fill_checked":
            ok, _, _ = self._jm_checked_mask(R, C, "row", t, h, w, cx, cy)
            if "joint_checked_no_zero_fill" in self.faults:
                ok = np.ones_like(ok)
            v = self._jm_dec(np.asarray(kw["value"], dtype=np.uint64), t)
            vals = np.where(ok, v[:, None, None], 0)
            return self._jm_store(kw["dst"], vals, lo, t, kw["s_dst"])
        if op == "load_checked":
            ok, gr, gc = self._jm_checked_mask(R, C, li, t, h, w, cx, cy)
            st = self._jm_stride(kw["s_src"], li, R, C, t)
            raw = self._jm_gather(np.asarray(kw["src"], dtype=np.uint64), gr * st + gc)
            if "joint_checked_no_zero_fill" not in self.faults:
                raw = np.where(ok, raw, np.uint64(0))
            return self._jm_store(kw["dst"], self._jm_dec(raw, t), lo, t, kw["s_dst"])
        if op == "store_checked":
            vals = self._jm_load(kw["src"], li, R, C, t, kw["s_src"])
            ok, gr, gc = self._jm_checked_mask(R, C, lo, t, h, w, cx, cy)
            if "joint_checked_store_not_dropped" in self.faults:
                ok = np.ones_like(ok)
            st = self._jm_stride(kw["s_dst"], lo, R, C, t)
            out = np.array(kw["dst"], dtype=np.uint64, copy=True)
            self._jm_scatter(out, gr * st + gc, self._jm_enc(vals, t), ok)
            return out
        raise ValueError(f"unknown joint_matrix op {op!r}")
