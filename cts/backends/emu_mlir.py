"""Emulator mixin: the MLIR gpu dialect program interpreter (``run_mlir_mma``).

A matrix lives as a per-lane register image (P subgroups, S lanes, n = rows
* cols / S thread-local values), in the element's storage order: row-major,
or column-major when it was loaded with ``transpose`` (as a cooperative
matrix unit keeps a column-major operand).  The element -> lane map is this
device's own choice and differs per use: A and B are striped (element e on
lane e % S, index e // S), C is blocked (lane e // n, index e % n).  The
suite never assumes it: it reads it back with extract_thread_local.

``compute`` trusts ``a_transpose`` / ``b_transpose`` to decode the operand
image (that is what the attributes are for); integers wrap to 32 bits, float
products are summed in float64 and rounded once.  Written from the op
descriptions (MLIR gpu dialect op documentation; the Discourse RFC "Add GPU operations to permute data in 2 loaded MMA matrix") without ``reference.mlir``.

Named faults make it a wrong device on purpose (tests/test_mlir_mutations.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from cts.backends.base import CaseError


def _mlir_in_bounds(addr: np.ndarray, buf: np.ndarray, op: str) -> None:
    """An access past the memref is a memory fault of the (emulated) device:
    the case fails with a per-case error, as a real device's crash would."""
    n = buf.shape[1]
    if addr.size and (int(addr.max()) >= n or int(addr.min()) < 0):
        raise CaseError(
            f"{op} accesses element {int(addr.max())} of a memref of {n} elements (out of bounds)"
        )


__all__ = ["MlirEmulation", "MLIR_FAULTS"]

MLIR_FAULTS: dict[str, str] = {
    "mlir_load_transpose_ignored": "load_matrix ignores `transpose` (always row-major)",
    "mlir_lead_dimension_ignored": "load_matrix uses the matrix width as row stride, not leadDimension",
    "mlir_store_transpose_ignored": "store_matrix ignores `transpose`",
    "mlir_compute_transpose_ignored": "compute ignores a_transpose / b_transpose",
    "mlir_b_signedness_from_a": "compute reads an 8-bit B with A's signedness (si8 x ui8 mixed up)",
    "mlir_subf_operands_swapped": "elementwise subf computes b - a",
    "mlir_divs_floor": "elementwise divs rounds toward -inf instead of toward zero",
    "mlir_truncf_truncates": "elementwise truncf chops the mantissa instead of rounding to nearest even",
    "mlir_extract_index_shifted": "extract_thread_local(i) reads index i + 1",
    "mlir_insert_index_shifted": "insert_thread_local(i) writes index i + 1",
    "mlir_constant_first_lane_only": "constant_matrix fills lane 0 only (others zero)",
    "mlir_rotate_reversed": "subgroup rotate in the mma_rotate lowering moves values up",
    "gpu_rotate_width_ignored": "gpu.rotate rotates over the whole subgroup, not width lanes",
    "gpu_rotate_valid_all_lanes": "gpu.rotate reports valid = true on every lane",
    "gpu_rotate_vector_tail_unrotated": "gpu.rotate of a vector value rotates only its first component",
    "mlir_maxf_as_maxnumf": "elementwise maxf / minf return the non-NaN operand (IEEE maxNum, arith.maxnumf) "
    "instead of NaN (arith.maximumf)",
    "mlir_minmax_zero_sign_ignored": "elementwise maxf / minf take -0 and +0 as equal (the second operand wins)",
    "mlir_negatef_as_zero_minus": "elementwise negatef computes 0 - x (-(+0) gives +0)",
    "mlir_subnormal_sign_lost": "elementwise float ops flush subnormal operands to +0 (the sign dropped)",
    "mlir_truncf_overflow_saturates": "elementwise truncf clamps f32 values beyond the f16 range to +-65504 "
    "(infinities included)",
    "mlir_elementwise_ab_layout": "elementwise on an A or B matrix returns its result in the C matrix layout",
    "gpu_rotate_high_word_lost": "gpu.rotate of a 64-bit value (i64, f64) moves only its low 32 bits "
    "(the high word stays the lane's own)",
    "gpu_rotate_wave32_halves": "gpu.rotate in a subgroup of 64 rotates each half of 32 lanes on its own "
    "(a width-64 rotate wraps at lane 32)",
    "gpu_rotate_narrow_packed_words": "gpu.rotate of i8 / i16 / bf16 values kept packed in 32-bit words "
    "moves the offset in words, not elements (the lane offset scaled by the elements a word holds)",
}

_NP = {
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "si8": np.int8,
    "ui8": np.uint8,
    "i32": np.int32,
    "i8": np.int8,
    "i16": np.int16,
    "i64": np.int64,
    "bf16": ml_dtypes.bfloat16,
    "i1": np.int32,  # a Boolean lane value, held as 0 / 1
}


_PACKED = (np.dtype(np.int8), np.dtype(np.int16), np.dtype(ml_dtypes.bfloat16))  # narrow types a
# lowering may keep packed in 32-bit words (f16 has its own storage capability; i1 is held as i32)


@dataclass
class _Mat:
    regs: np.ndarray  # (P, S, n)
    rows: int
    cols: int
    elem: str
    tag: str
    colmajor: bool


def _wrap32(x: np.ndarray) -> np.ndarray:
    return (np.asarray(x, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


class MlirEmulation:
    FAULTS = MLIR_FAULTS

    # --- the element -> (lane, index) map of this device -------------------
    @staticmethod
    def _mlir_slots(rows: int, cols: int, tag: str, S: int) -> tuple[np.ndarray, np.ndarray]:
        e = np.arange(rows * cols)
        n = rows * cols // S
        if tag == "COp":
            return e // n, e % n
        return e % S, e // S

    @staticmethod
    def _mlir_rc(rows: int, cols: int, colmajor: bool) -> tuple[np.ndarray, np.ndarray]:
        e = np.arange(rows * cols)
        return (e % rows, e // rows) if colmajor else (e // cols, e % cols)

    def _mlir_logical(self, m: _Mat, S: int, colmajor: bool | None = None) -> np.ndarray:
        cm = m.colmajor if colmajor is None else colmajor
        lane, idx = self._mlir_slots(m.rows, m.cols, m.tag, S)
        r, c = self._mlir_rc(m.rows, m.cols, cm)
        out = np.empty((m.regs.shape[0], m.rows, m.cols), dtype=m.regs.dtype)
        out[:, r, c] = m.regs[:, lane, idx]
        return out

    def _mlir_from_logical(self, L: np.ndarray, elem: str, tag: str, S: int) -> _Mat:
        P, rows, cols = L.shape
        lane, idx = self._mlir_slots(rows, cols, tag, S)
        r, c = self._mlir_rc(rows, cols, False)
        regs = np.empty((P, S, rows * cols // S), dtype=_NP[elem])
        regs[:, lane, idx] = L[:, r, c]
        return _Mat(regs, rows, cols, elem, tag, False)

    # --- ops -----------------------------------------------------------------
    def _mlir_load(self, buf, row, col, lead, transpose, rows, cols, elem, tag, S):
        f = self.faults
        if "mlir_load_transpose_ignored" in f:
            transpose = False
        if "mlir_lead_dimension_ignored" in f:
            lead = rows if transpose else cols
        e = np.arange(rows * cols)
        minor = rows if transpose else cols
        addr = row * lead + col + (e // minor) * lead + e % minor
        lane, idx = self._mlir_slots(rows, cols, tag, S)
        _mlir_in_bounds(addr, buf, "gpu.subgroup_mma_load_matrix")
        regs = np.empty((buf.shape[0], S, rows * cols // S), dtype=_NP[elem])
        regs[:, lane, idx] = buf[:, addr]
        return _Mat(regs, rows, cols, elem, tag, bool(transpose))

    def _mlir_store(self, m: _Mat, buf, row, col, lead, transpose, S):
        if "mlir_store_transpose_ignored" in self.faults:
            transpose = False
        L = self._mlir_logical(m, S)
        r = np.arange(m.rows)[:, None]
        c = np.arange(m.cols)[None, :]
        addr = row * lead + col + (c * lead + r if transpose else r * lead + c)
        _mlir_in_bounds(addr, buf, "gpu.subgroup_mma_store_matrix")
        buf[:, addr] = L.astype(buf.dtype)

    def _mlir_compute(self, a: _Mat, b: _Mat, c: _Mat, a_t, b_t, S) -> _Mat:
        if "mlir_compute_transpose_ignored" in self.faults:
            a_t = b_t = False
        A = self._mlir_logical(a, S, bool(a_t))
        B = self._mlir_logical(b, S, bool(b_t))
        C = self._mlir_logical(c, S)
        if "mlir_b_signedness_from_a" in self.faults and {a.elem, b.elem} == {"si8", "ui8"}:
            raw = B.astype(np.int64) & 0xFF
            B = raw - 256 * (raw >= 128) if a.elem == "si8" else raw
        narrow = None
        if c.elem != "i32" and "acc_one_step_narrower" in self.faults:
            from cts.backends.emu_common import narrow_acc_mad  # the shared fault

            narrow = narrow_acc_mad(A, B, C, c.elem)
        if narrow is not None:
            D = narrow.astype(_NP[c.elem])
        elif c.elem == "i32":
            D = _wrap32(np.matmul(A.astype(np.int64), B.astype(np.int64)) + C.astype(np.int64))
        else:
            D = (np.matmul(A.astype(np.float64), B.astype(np.float64)) + C.astype(np.float64)).astype(
                _NP[c.elem]
            )
        return self._mlir_from_logical(D, c.elem, "COp", S)

    def _mlir_elementwise(self, op: str, args: list[_Mat], res_elem: str, S: int = 0) -> _Mat:
        f = self.faults
        regs = [m.regs for m in args]
        if "mlir_subnormal_sign_lost" in f and regs[0].dtype.kind == "f":
            regs = [
                np.where((x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny), x.dtype.type(0), x) for x in regs
            ]
        a = regs[0]
        b = regs[1] if len(regs) > 1 else None
        with np.errstate(all="ignore"):
            if op == "addf":
                r = a + b
            elif op == "subf":
                r = b - a if "mlir_subf_operands_swapped" in f else a - b
            elif op == "mulf":
                r = a * b
            elif op == "divf":
                r = a / b
            elif op in ("maxf", "minf"):
                r = self._mlir_maximum(a, b, op == "minf")
            elif op == "negatef":
                r = a.dtype.type(0) - a if "mlir_negatef_as_zero_minus" in f else -a
            elif op in ("addi", "subi", "muli"):
                x, y = a.astype(np.int64), b.astype(np.int64)
                r = _wrap32({"addi": x + y, "subi": x - y, "muli": x * y}[op])
            elif op == "divs":
                x, y = a.astype(np.int64), b.astype(np.int64)
                if "mlir_divs_floor" in f:
                    r = _wrap32(x // y)
                else:
                    r = _wrap32(np.sign(x) * np.sign(y) * (np.abs(x) // np.abs(y)))
            elif op == "divu":
                r = (a.view(np.uint32) // b.view(np.uint32)).view(np.int32)
            elif op == "negates":
                r = _wrap32(-a.astype(np.int64))
            elif op == "extf":
                r = a.astype(np.float32)
            elif op == "truncf":
                if "mlir_truncf_truncates" in f:
                    r = self._mlir_chop_to_f16(a)
                else:
                    r = a.astype(np.float16)
                if "mlir_truncf_overflow_saturates" in f:
                    r = np.where(np.isinf(r), np.copysign(np.float16(65504), r), r).astype(np.float16)
            else:
                raise ValueError(f"unknown opType {op!r}")
        m0 = args[0]
        out = _Mat(np.asarray(r).astype(_NP[res_elem]), m0.rows, m0.cols, res_elem, m0.tag, m0.colmajor)
        if m0.tag != "COp" and S and "mlir_elementwise_ab_layout" in f:
            c = self._mlir_from_logical(self._mlir_logical(out, S, False), res_elem, "COp", S)
            out = _Mat(c.regs, m0.rows, m0.cols, res_elem, m0.tag, m0.colmajor)
        return out

    def _mlir_maximum(self, a: np.ndarray, b: np.ndarray, lo: bool) -> np.ndarray:
        """maxf / minf as arith.maximumf / minimumf: NaN if either is NaN, and
        -0 below +0 (written here from the arith op description)."""
        f = self.faults
        bigger = (a < b) if lo else (a > b)
        if "mlir_minmax_zero_sign_ignored" not in f:
            both_zero = (a == 0) & (b == 0)
            keep_a = np.signbit(a) if lo else ~np.signbit(a)
            bigger = np.where(both_zero, keep_a, bigger)
        r = np.where(bigger, a, b)
        if "mlir_maxf_as_maxnumf" in f:
            return np.where(np.isnan(a), b, np.where(np.isnan(b), a, r))
        nan = np.isnan(a) | np.isnan(b)
        return np.where(nan, a.dtype.type(np.nan), r)

    @staticmethod
    def _mlir_chop_to_f16(a: np.ndarray) -> np.ndarray:
        """float32 -> float16 rounding toward zero (the fault)."""
        r = a.astype(np.float16)
        too_big = np.abs(r.astype(np.float32)) > np.abs(a)
        step = np.nextafter(r, np.float16(0))
        return np.where(too_big, step, r)

    def _mlir_idx(self, i: int, n: int, fault: str) -> int:
        return (i + 1) % n if fault in self.faults else i

    # --- the interpreter -----------------------------------------------------
    def run_mlir_mma(self, case, program: list, buffers: dict) -> dict:
        S = case.sg
        f = self.faults
        bufs = {k: np.array(v, copy=True) for k, v in buffers.items()}
        P = next(iter(bufs.values())).shape[0]
        lanes = np.arange(S)[None, :]
        env: dict = {}
        for op in program:
            kind = op[0]
            if kind == "load":
                _, dst, buf, row, col, lead, tr, rows, cols, elem, tag = op
                env[dst] = self._mlir_load(bufs[buf], row, col, lead, tr, rows, cols, elem, tag, S)
            elif kind == "store":
                _, src, buf, row, col, lead, tr = op
                self._mlir_store(env[src], bufs[buf], row, col, lead, tr, S)
            elif kind == "compute":
                _, dst, a, b, c, a_t, b_t = op
                env[dst] = self._mlir_compute(env[a], env[b], env[c], a_t, b_t, S)
            elif kind == "constant":
                _, dst, value, rows, cols, elem, tag = op
                if isinstance(value, str):  # the scalar of each subgroup from a buffer
                    value = bufs[value][:, :1, None].astype(_NP[elem])
                regs = np.full((P, S, rows * cols // S), value, dtype=_NP[elem])
                if "mlir_constant_first_lane_only" in f:
                    regs[:, 1:] = 0
                env[dst] = _Mat(regs, rows, cols, elem, tag, False)
            elif kind == "elementwise":
                _, dst, opt, args, res_elem = op
                env[dst] = self._mlir_elementwise(opt, [env[x] for x in args], res_elem, S)
            elif kind == "extract_all":
                _, buf, m = op
                regs = env[m].regs
                n = regs.shape[2]
                order = [self._mlir_idx(i, n, "mlir_extract_index_shifted") for i in range(n)]
                bufs[buf][:, : S * n] = regs[:, :, order].reshape(P, S * n).astype(bufs[buf].dtype)
            elif kind == "insert_all":
                _, dst, m, buf = op
                src = env[m]
                n = src.regs.shape[2]
                regs = src.regs.copy()
                vals = bufs[buf][:, : S * n].reshape(P, S, n)
                for i in range(n):
                    regs[:, :, self._mlir_idx(i, n, "mlir_insert_index_shifted")] = vals[:, :, i]
                env[dst] = _Mat(regs, src.rows, src.cols, src.elem, src.tag, src.colmajor)
            elif kind == "extract":
                _, reg, m, i = op
                regs = env[m].regs
                env[reg] = regs[:, :, self._mlir_idx(i, regs.shape[2], "mlir_extract_index_shifted")].copy()
            elif kind == "insert":
                _, dst, m, reg, i = op
                src = env[m]
                regs = src.regs.copy()
                regs[:, :, self._mlir_idx(i, regs.shape[2], "mlir_insert_index_shifted")] = env[reg]
                env[dst] = _Mat(regs, src.rows, src.cols, src.elem, src.tag, src.colmajor)
            elif kind == "lane_ge":
                _, reg, k = op
                env[reg] = np.broadcast_to(lanes >= k, (P, S))
            elif kind == "select":
                _, reg, cond, a, b = op
                env[reg] = np.where(env[cond], env[a], env[b])
            elif kind == "sg_rotate":
                _, reg, src, off = op
                shift = off if "mlir_rotate_reversed" in f else -off
                env[reg] = np.roll(env[src], shift % S, axis=1)
            elif kind == "gpu_rotate":
                _, reg, valid, src, off, width = op
                v = env[src]
                out = v.copy()  # lanes >= width: poison (here: their own value)
                w = S if "gpu_rotate_width_ignored" in f else width
                out[:, :w] = np.roll(v[:, :w], -off % w, axis=1)
                if w == 64 and "gpu_rotate_wave32_halves" in f:
                    for h in (0, 32):
                        out[:, h : h + 32] = np.roll(v[:, h : h + 32], -off % 32, axis=1)
                if "gpu_rotate_narrow_packed_words" in f and v.dtype in _PACKED:
                    per = 4 // v.dtype.itemsize
                    out[:, :w] = np.roll(v[:, :w], -(off * per) % w, axis=1)
                if v.dtype.itemsize == 8 and "gpu_rotate_high_word_lost" in f:
                    lo = np.uint64(0xFFFFFFFF)
                    moved, own = out.view(np.uint64), v.view(np.uint64)
                    out = ((moved & lo) | (own & ~lo)).view(v.dtype)
                if v.ndim == 3 and "gpu_rotate_vector_tail_unrotated" in f:
                    out[:, :, 1:] = v[:, :, 1:]
                env[reg] = out
                ok = np.broadcast_to(lanes < width, (P, S))
                env[valid] = np.ones((P, S), bool) if "gpu_rotate_valid_all_lanes" in f else ok
            elif kind == "read_lane":  # (P, S) or, for vector values, (P, S, V)
                reg, buf, elem = op[1:4]
                V = op[4] if len(op) > 4 else 1
                x = bufs[buf][:, : S * V].astype(_NP[elem])
                env[reg] = x.reshape(P, S, V) if V > 1 else x
            elif kind == "write_lane":
                buf, reg = op[1:3]
                x = np.asarray(env[reg]).reshape(P, -1)
                bufs[buf][:, : x.shape[1]] = x.astype(bufs[buf].dtype)
            else:
                raise ValueError(f"unknown MLIR program op {kind!r}")
        return bufs
