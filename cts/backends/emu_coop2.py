"""Emulator mixin for NV cooperative matrix 2 (``run_coop_matrix2``).

It plays a device with all seven VK_NV_cooperative_matrix2 features (the
``ASSUMED`` properties of ``cts.families.coop2``): it reads the buffers of
the contract in ``cts.runs.coop2``, performs the case's operation element by
element and writes the outputs.  The tensor addressing is interpreted here
from the case's plan one element at a time (a loop over (row, col), each
coordinate walked through the view, the span, the clamp and the block), not
with ``reference.coop2``'s array formulas; reductions, per-element functions
and conversions are written as loops over rows, columns and neighbourhoods.

Named faults (``--emulator-fault NAME``) make it a wrong device on purpose;
tests/test_coop2_mutations.py shows each is caught, and only by its op's cases.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

__all__ = ["Coop2Emulation", "COOP2_FAULTS"]

COOP2_FAULTS: dict[str, str] = {
    "coop2_reduce_row_col_swapped": "ReduceNV: Row reduces each column and Column each row",
    "coop2_reduce_2x2_as_1x4": "ReduceNV 2x2: reduces 1x4 runs of a row instead of 2x2 neighbourhoods",
    "coop2_reduce_resize_first_only": "ReduceNV to a Result of another shape: only its first row/column is written",
    "coop2_perelem_row_col_swapped": "PerElementOpNV: Func gets (col, row) instead of (row, col)",
    "coop2_perelem_extra_dropped": "PerElementOpNV: extra operands passed as zero",
    "coop2_convert_acc_a_transposed": "Accumulator -> A conversion reads the accumulator column by column",
    "coop2_convert_acc_b_transposed": "Accumulator -> B conversion reads the accumulator column by column",
    "coop2_transpose_missing": "TransposeNV: elements keep their row-major order (no transpose)",
    "coop2_tensor_span_outer_first": "tensor layout: the linear index is split into span coordinates from dim 0",
    "coop2_tensor_offset_ignored": "tensor layout: slice offsets ignored",
    "coop2_tensor_stride_ignored": "tensor layout: OpTensorLayoutSetStrideNV ignored (tight strides)",
    "coop2_clamp_mirror_as_repeat": "clamp mode RepeatMirrored computed as Repeat",
    "coop2_clamp_const_zero": "clamp mode Constant loads 0 instead of the clamp value",
    "coop2_clamp_edge_as_mirror": "clamp mode ClampToEdge computed as RepeatMirrored",
    "coop2_clamp_repeat_as_edge": "clamp mode Repeat computed as ClampToEdge",
    "coop2_store_oob_clamped": "StoreTensorNV: out-of-bounds elements stored at the clamped edge, not discarded",
    "coop2_view_clip_zeroes": "tensor view clip: clipped loads give 0 instead of the Object's element",
    "coop2_store_clip_ignored": "tensor view clip ignored by StoreTensorNV (every element stored)",
    "coop2_view_perm_ignored": "tensor view: the permutation is ignored",
    "coop2_view_stride_ignored": "tensor view: its own strides ignored (span strides used)",
    "coop2_decode_inblock_reversed": "DecodeFunc: coordInBlock passed in reversed dimension order",
    "coop2_flex_k_tail_dropped": "flexible-dimension MulAdd drops the last K granule",
    "coop2_wg_scope_first_subgroup": "workgroup scope: results past the first subgroup's share are not written",
}

_FLOATS = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}
_INTS = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32}


def _dec(bits: np.ndarray, t: str) -> np.ndarray:
    if t in _FLOATS:
        return bits.view(_FLOATS[t]).astype(np.float64)
    return bits.view(_INTS[t]).astype(np.int64)


def _enc(vals, t: str, like: np.dtype) -> np.ndarray:
    v = np.asarray(vals)
    if t in _FLOATS:
        return v.astype(np.float64).astype(_FLOATS[t]).view(like)
    return v.astype(np.int64).astype(_INTS[t]).view(like)


class Coop2Emulation:
    FAULTS = COOP2_FAULTS

    def run_coop_matrix2(self, case, bufs: dict) -> dict:
        out = {k: np.array(v, copy=True) for k, v in bufs.items()}
        fn = getattr(self, f"_c2_{case.op}")
        fn(case, bufs, out)
        if case.scope == "workgroup" and self._c2_has("coop2_wg_scope_first_subgroup"):
            for name, v in out.items():  # results past the first subgroup's share are not written
                if not np.array_equal(v, bufs[name]):
                    share = max(1, v.shape[1] * case.sg // max(case.wg, 1))
                    v[:, share:] = bufs[name][:, share:]
        return out

    def _c2_has(self, name: str) -> bool:
        return name in getattr(self, "faults", ())

    # ---------------------------------------------------------- helpers
    @staticmethod
    def _mat(buf, n, rows, cols, t):
        return _dec(buf[:, :n], t).reshape(-1, rows, cols)

    @staticmethod
    def _put(out, name, vals, t):
        flat = vals.reshape(vals.shape[0], -1)
        out[name][:, : flat.shape[1]] = _enc(flat, t, out[name].dtype)

    # ---------------------------------------------------------- reduce
    def _c2_reduce(self, case, bufs, out):
        mode, comb, _ = case.variant.split("-")
        R, C, t = case.rows, case.cols, case.t
        x = self._mat(bufs["x"], R * C, R, C, t)
        oR, oC = case.out
        S = x.shape[0]
        is_int = t not in _FLOATS
        mask = (1 << (8 * np.dtype(bufs["x"].dtype).itemsize)) - 1

        def fold(vals):  # vals (S, n): the combine function applied pairwise, left to right
            acc = vals[:, 0]
            for k in range(1, vals.shape[1]):
                v = vals[:, k]
                acc = (
                    acc + v
                    if comb == "sum"
                    else (np.minimum(acc, v) if comb == "min" else np.maximum(acc, v))
                )
            return acc

        if mode in ("row", "col") and self._c2_has("coop2_reduce_row_col_swapped"):
            mode = "col" if mode == "row" else "row"
        res = np.zeros((S, oR, oC), np.float64 if not is_int else np.int64)
        flat = x.reshape(S, -1)
        seen: dict = {}  # a row's (column's, the matrix's) reduction, computed once
        for i in range(oR):
            for j in range(oC):
                key = {"row": ("r", i), "col": ("c", j), "rowcol": ("a",)}.get(mode, (i, j))
                if key in seen:
                    res[:, i, j] = seen[key]
                    continue
                if mode == "row":
                    vals = x[:, i % R, :]
                elif mode == "col":
                    vals = x[:, :, j % C]
                elif mode == "rowcol":
                    vals = flat
                elif self._c2_has("coop2_reduce_2x2_as_1x4"):
                    vals = flat[:, 4 * (i * oC + j) : 4 * (i * oC + j) + 4]
                else:
                    vals = x[:, 2 * i : 2 * i + 2, 2 * j : 2 * j + 2].reshape(S, 4)
                v = fold(vals)
                res[:, i, j] = seen[key] = (v & mask) if is_int else v
        if (oR, oC) != (R, C) and mode != "2x2" and self._c2_has("coop2_reduce_resize_first_only"):
            res[:, 1:, 1:] = 0
        self._put(out, "out", res, t)

    # ---------------------------------------------------------- per element
    def _c2_perelem(self, case, bufs, out):
        R, C, t = case.rows, case.cols, case.t
        x = self._mat(bufs["x"], R * C, R, C, t)
        drop = self._c2_has("coop2_perelem_extra_dropped")
        res = np.zeros_like(x)
        for i in range(R):
            for j in range(C):
                r, c = (j, i) if self._c2_has("coop2_perelem_row_col_swapped") else (i, j)
                if case.variant == "rc":
                    res[:, i, j] = x[:, i, j] + r * C + c
                elif case.variant == "scalar":
                    s = 0 if drop else _dec(bufs["p"][:, :1], t)[:, 0]
                    res[:, i, j] = x[:, i, j] * s + r * C + c
                else:
                    y = 0 if drop else self._mat(bufs["y"], R * C, R, C, t)[:, i, j]
                    res[:, i, j] = x[:, i, j] - 2 * y + r * C + c
        self._put(out, "out", res, t)

    # ---------------------------------------------------------- conversions
    def _c2_convert(self, case, bufs, out):
        R, C, t = case.rows, case.cols, case.t
        x = self._mat(bufs["x"], R * C, R, C, t)
        oR, oC = case.out
        res = np.zeros((x.shape[0], oR, oC), x.dtype)
        for i in range(oR):
            for j in range(oC):
                if case.variant == "transpose" and not self._c2_has("coop2_transpose_missing"):
                    res[:, i, j] = x[:, j, i]
                elif self._c2_has(f"coop2_convert_{case.variant}_transposed"):
                    k = i * oC + j  # the elements taken in column-major order
                    res[:, i, j] = x[:, k % R, k // R]
                else:
                    k = i * oC + j
                    res[:, i, j] = x[:, k // C, k % C]
        self._put(out, "out", res, case.to or t)

    # ---------------------------------------------------------- tensors
    def _c2_state(self, plan):
        st = {"block": [1] * plan.dim, "dim": [0] * plan.dim, "stride": [0] * plan.dim,
              "off": [0] * plan.dim, "span": [0] * plan.dim, "cv": 0}  # fmt: skip
        for op, *a in plan.layout:
            if op == "block":
                st["block"] = list(a)
            elif op == "dim":
                st["dim"], st["span"], st["off"] = list(a), list(a), [0] * plan.dim
                s = 1
                for d in reversed(range(plan.dim)):
                    st["stride"][d] = s
                    s *= -(-a[d] // st["block"][d])
            elif op == "stride" and not self._c2_has("coop2_tensor_stride_ignored"):
                st["stride"] = list(a)
            elif op == "slice":
                st["off"] = [o + q for o, q in zip(st["off"], a[0::2])]
                st["span"] = list(a[1::2])
            elif op == "clampval":
                st["cv"] = a[0]
        if self._c2_has("coop2_tensor_offset_ignored"):
            st["off"] = [0] * plan.dim
        vw = None
        for op, *a in plan.view or ():
            if op == "create":
                perm = list(a[1])
                if self._c2_has("coop2_view_perm_ignored"):
                    perm = sorted(perm)
                vw = {"has": a[0], "perm": perm, "dim": [0] * len(perm), "stride": [0] * len(perm),
                      "clip": (0, 1 << 32, 0, 1 << 32)}  # fmt: skip
            elif op == "dim":
                vw["dim"] = list(a)
                vw["stride"] = [int(np.prod(a[d + 1 :])) for d in range(len(a))]
            elif op == "stride" and not self._c2_has("coop2_view_stride_ignored"):
                vw["stride"] = list(a)
            elif op == "clip":
                vw["clip"] = tuple(a)
        return st, vw

    def _c2_where(self, plan, st, vw, r, c, cols):
        """('mem', index, block, inblock) | ('const',) | ('skip',) for element (r, c)."""
        D = plan.dim
        if vw is not None:
            ro, rs, co, cs = vw["clip"]
            if plan.store and self._c2_has("coop2_store_clip_ignored"):
                ro, rs, co, cs = 0, 1 << 32, 0, 1 << 32
            if not (ro <= r < ro + rs and co <= c < co + cs):
                return ("skip",)
            k = (r - ro) * min(cols, cs) + (c - co)
            dims = vw["dim"] if vw["has"] else st["span"]
            vc = [0] * len(vw["perm"])
            for d in reversed(range(len(vw["perm"]))):
                p = vw["perm"][d]
                vc[p] = k % dims[p]
                k //= dims[p]
            if vw["has"]:
                stride = vw["stride"]
            else:
                stride = [int(np.prod(st["span"][d + 1 :])) for d in range(len(vc))]
            k = sum(a * b for a, b in zip(vc, stride))
        else:
            k = r * cols + c
        sc = [0] * D
        order = range(D) if self._c2_has("coop2_tensor_span_outer_first") else reversed(range(D))
        for d in order:
            sc[d] = k % st["span"][d]
            k //= st["span"][d]
        blk, inb = [0] * D, [0] * D
        for d in range(D):
            x = sc[d] + st["off"][d]
            n = st["dim"][d]
            if x < 0 or x >= n:
                mode = plan.clamp
                if plan.store:
                    if not self._c2_has("coop2_store_oob_clamped"):
                        return ("skip",)
                    mode = "edge"
                if mode == "edge" and self._c2_has("coop2_clamp_edge_as_mirror"):
                    mode = "mirror"
                if mode == "mirror" and self._c2_has("coop2_clamp_mirror_as_repeat"):
                    mode = "repeat"
                elif mode == "repeat" and self._c2_has("coop2_clamp_repeat_as_edge"):
                    mode = "edge"
                if mode == "const":
                    return ("const",)
                if mode == "edge":
                    x = 0 if x < 0 else n - 1
                elif mode == "repeat":
                    x = x % n
                elif mode == "mirror":
                    x = x % (2 * n - 2)
                    if x >= n:
                        x = 2 * n - 2 - x
                else:
                    raise ValueError("undefined out-of-bounds access")
            blk[d], inb[d] = x // st["block"][d], x % st["block"][d]
        return ("mem", sum(b * s for b, s in zip(blk, st["stride"])), blk, inb)

    def _c2_tensor(self, case, bufs, out):
        from cts.families.coop2 import clamp_bits, fill_value, tensor_plan

        R, C, t = case.rows, case.cols, case.t
        plan = tensor_plan(case, clamp_bits(t))
        st, vw = self._c2_state(plan)
        tens = bufs["tens"]
        if plan.store:
            x = self._mat(bufs["x"], R * C, R, C, t)
            for r in range(R):
                for c in range(C):
                    w = self._c2_where(plan, st, vw, r, c, C)
                    if w[0] == "mem":
                        out["tens"][:, w[1]] = _enc(x[:, r, c], t, tens.dtype)
            return
        vals = _dec(tens, t)
        res = np.zeros((tens.shape[0], R, C))
        cv = _dec(np.asarray([st["cv"]], np.uint64).astype(tens.dtype), t)[0]
        for r in range(R):
            for c in range(C):
                w = self._c2_where(plan, st, vw, r, c, C)
                if w[0] == "mem":
                    res[:, r, c] = vals[:, w[1]]
                elif w[0] == "const":
                    res[:, r, c] = 0 if self._c2_has("coop2_clamp_const_zero") else cv
                else:
                    res[:, r, c] = 0 if self._c2_has("coop2_view_clip_zeroes") else fill_value(t, "clip")
        self._put(out, "out", res, t)

    def _c2_decode(self, case, bufs, out):
        from cts.families.coop2 import tensor_plan

        R, C = case.rows, case.cols
        plan = tensor_plan(case)
        st, vw = self._c2_state(plan)
        words = bufs["tens"].astype(np.int64)
        res = np.zeros((words.shape[0], R, C))
        b1 = st["block"][1]
        for r in range(R):
            for c in range(C):
                _, idx, _blk, inb = self._c2_where(plan, st, vw, r, c, C)
                if self._c2_has("coop2_decode_inblock_reversed"):
                    inb = inb[::-1]
                byte = inb[0] * b1 + inb[1]
                res[:, r, c] = (words[:, idx] >> (8 * byte)) & 0xFF
        self._put(out, "out", res, "f16")

    # ---------------------------------------------------------- flexible / workgroup MulAdd
    def _c2_flex(self, case, bufs, out):
        f = case.flex
        M, N, K = case.rows, case.cols, case.K
        a = self._mat(bufs["a"], M * K, M, K, f.A)
        b = self._mat(bufs["b"], K * N, K, N, f.B)
        c = self._mat(bufs["c"], M * N, M, N, f.C)
        kk = K - f.Kg if self._c2_has("coop2_flex_k_tail_dropped") else K
        d = c.copy()
        for k in range(kk):
            d = d + a[:, :, k, None] * b[:, None, k, :]
        if f.R not in _FLOATS:
            d = d.astype(np.int64)
        self._put(out, "d", d, f.R)
