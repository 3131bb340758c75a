"""Emulator mixin for the cooperative-matrix family (SPV_KHR_cooperative_matrix, VK_KHR_cooperative_matrix).

It plays a device that implements SPV_KHR_cooperative_matrix: it reads the
named buffers of ``cts.families.coop`` (raw element bits, one row per
subgroup), performs the case's operation and writes the output buffers.
Loads and stores are written here from the addressing rule (element (r, c)
at r*Stride + c, or c*Stride + r) with index arithmetic of its own, not with
``reference.coop``.  Its element-to-invocation mapping is its own choice
(implementation-defined): element e (row-major) lives in invocation
e mod sg at index e div sg.

Arithmetic: exact (int64 / float64) and one rounding to nearest even into
the result type; chained MulAdds round after each step.  With
``--emulator-model NAME`` a float MulAdd computes as that device model
(reference/devmodel.py: block size, alignment window, roundings), so the
family and the numerics ``model`` tier (through ``coop_muladd``) can be run
against a truncating or block-fused device.

Named faults (``--emulator-fault NAME``) make it a wrong device on purpose;
tests/test_coop_mutations.py shows each is caught.
"""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

__all__ = ["CoopEmulation", "COOP_FAULTS", "VK_AXIS_FAULTS"]

COOP_FAULTS: dict[str, str] = {
    "coop_colmajor_as_rowmajor": "ColumnMajor loads read as RowMajor",
    "coop_stride_ignored": "padded strides taken as tight on load and store",
    "coop_stride0_as_tight": "Load with Stride 0 reads a tight matrix",
    "coop_signed_ignored": "MulAdd ignores the Signed bits (zero-extends)",
    "coop_saturation_missing": "SaturatingAccumulation wraps instead of clamping",
    "coop_wrap_saturates": "non-saturating integer MulAdd clamps",
    "coop_store_clobbers_padding": "Store writes zeros into the padding of a strided row",
    "coop_length_short": "OpCooperativeMatrixLengthKHR one short (an element per invocation missed)",
    "coop_acc_ignored": "MulAdd ignores C",
    "coop_k_tail_dropped": "MulAdd drops the last k",
    "coop_sub_reversed": "element-wise sub computes y - x",
    "coop_ftoi_rounds": "float -> integer conversion rounds to nearest",
    "coop_splat_dyn_zero": "OpCompositeConstruct splat of a dynamic value gives zeros",
    "coop_workgroup_offset": "Load/Store through workgroup memory off by one element",
    "coop_chain_restarts": "chained MulAdd restarts from the original C",
    "coop_bf16_as_f16": "bf16 components decoded as fp16",
    # KHR axes (each caught only by the cases of its ``var``)
    "coop_push_stride_tight": "a Stride from a push constant is taken as the tight stride",
    "coop_spec_stride_default": "a Stride specialization constant keeps its default (tight)",
    "coop_runtime_stride_zero": "a Stride read from a buffer at run time is taken as 0",
    "coop_bda_offset": "Load/Store through a PhysicalStorageBuffer pointer off by one element",
    "coop_vec_stride_components": "with a vector element pointer, Stride counted in components",
    "coop_nontemporal_zero": "a Nontemporal Load returns zeros",
    "coop_aligned_shift": "an Aligned Load reads one element late",
    "coop_avail_last_row_lost": "a MakePointerAvailable Store drops its last row",
    "coop_composite_first": "OpCompositeExtract returns the invocation's element 0 for every index",
    "coop_null_not_zero": "OpConstantNull of a matrix type gives ones",
    "coop_func_param_c_dropped": "a matrix parameter of a function call arrives as zeros (C)",
    "coop_array_element0": "element 1 of an array of matrices reads element 0",
    "coop_struct_member_stale": "a matrix struct member assigned by MulAdd keeps its old value",
    "coop_acc_colmajor_as_row": "ColumnMajor C of a MulAdd loaded as RowMajor",
    "coop_muladd_stride0_tight": "a Stride 0 MulAdd operand loaded with the tight stride",
    "coop_wg_subgroups_share": "with several subgroups per workgroup, all compute subgroup 0's problem",
    "coop_required_size_half": "with a required subgroup size, elements of the upper half of the subgroup keep C",
    "coop_cross_sign_from_a": "mixed-signedness MulAdd extends B with A's signedness",
    "coop_varptr_other": "an OpSelect of two pointers takes the other one",
    "coop_convert_nan_zero": "a float conversion turns NaN into 0",
    "coop_f16_bf16_bits_copied": "an f16 <-> bf16 conversion copies the 16 bits",
    "coop_convert_zero_sign_lost": "a float conversion turns -0 into +0",
}

# faults of the KHR axes that only the Vulkan form enumerates (cts.families.coop.VARIANTS)
VK_AXIS_FAULTS = frozenset(
    "coop_" + f
    for f in (
        "push_stride_tight spec_stride_default runtime_stride_zero bda_offset vec_stride_components "
        "nontemporal_zero aligned_shift avail_last_row_lost composite_first null_not_zero "
        "func_param_c_dropped array_element0 struct_member_stale acc_colmajor_as_row "
        "muladd_stride0_tight wg_subgroups_share required_size_half varptr_other convert_nan_zero "
        "f16_bf16_bits_copied convert_zero_sign_lost"
    ).split()
)

_BITS = {"i8": 8, "u8": 8, "i16": 16, "u16": 16, "i32": 32, "u32": 32, "i64": 64, "u64": 64}
_FLOATS = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}
_UINTS = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _width(t: str) -> int:
    return _BITS.get(t) or {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}[t]


@functools.lru_cache(maxsize=1024)
def _element_offsets(rows: int, cols: int, layout: str, stride: int, shift: int) -> np.ndarray:
    """(rows, cols) memory offset of each element: element (r, c) at
    r * stride + c (row) or c * stride + r (col), plus ``shift``."""
    r = np.arange(rows)[:, None]
    c = np.arange(cols)[None, :]
    off = (r * stride + c if layout == "row" else c * stride + r) + shift
    off.setflags(write=False)
    return off


@functools.lru_cache(maxsize=1024)
def _is_tight(rows: int, cols: int, layout: str, stride: int, shift: int) -> bool:
    """Element (r, c) at offset r * cols + c: the matrix is one row-major block."""
    off = _element_offsets(rows, cols, layout, stride, shift)
    return bool(np.array_equal(off, np.arange(rows * cols).reshape(rows, cols)))


class CoopEmulation:
    """``run_coop_matrix``: the cooperative-matrix device of the emulator."""

    FAULTS = COOP_FAULTS

    # ---- element values <-> bits -------------------------------------
    def _val(self, raw: np.ndarray, t: str) -> np.ndarray:
        w = _width(t)
        u = np.asarray(raw).astype(_UINTS[w])
        if t in _FLOATS:
            if t == "bf16" and "coop_bf16_as_f16" in self.faults:
                return u.view(np.float16).astype(np.float64)
            return u.view(_FLOATS[t]).astype(np.float64)
        if t.startswith("i"):
            return u.view({8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[w]).astype(np.int64)
        return u.astype(np.int64)

    def _raw(self, v: np.ndarray, t: str, saturate: bool = False) -> np.ndarray:
        w = _width(t)
        if t in _FLOATS:
            with np.errstate(over="ignore", invalid="ignore"):
                return np.asarray(v, dtype=np.float64).astype(_FLOATS[t]).view(_UINTS[w])
        iv = np.asarray(v).astype(np.int64)
        if saturate:
            lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if t.startswith("i") else (0, (1 << w) - 1)
            iv = np.clip(iv, lo, hi)
        return (iv & ((1 << w) - 1) if w < 64 else iv).astype(_UINTS[w])

    # ---- memory -------------------------------------------------------
    def _load(self, mem, rows, cols, layout, stride, t, workgroup=False, shift=0):
        f = self.faults
        if layout == "col" and "coop_colmajor_as_rowmajor" in f:
            layout = "row"
        tight = cols if layout == "row" else rows
        if stride == 0 and "coop_stride0_as_tight" in f:
            stride = tight
        elif stride > tight and "coop_stride_ignored" in f:
            stride = tight
        shift += 1 if workgroup and "coop_workgroup_offset" in f else 0
        off = _element_offsets(rows, cols, layout, stride, shift)
        n = rows * cols
        if _is_tight(rows, cols, layout, stride, shift) and n <= mem.shape[1]:  # one block of memory
            return self._val(mem[:, :n].reshape(mem.shape[0], rows, cols), t)
        if off.size and off.max() < mem.shape[1]:
            return self._val(mem[:, off], t)
        # read past the end: zeros (robust access)
        out = np.zeros((mem.shape[0], rows, cols), dtype=mem.dtype)
        inside = off < mem.shape[1]
        out[:, inside] = mem[:, off[inside]]
        return self._val(out, t)

    def _store(self, mem, values, layout, stride, t, workgroup=False, copy=True, shift=0):
        f = self.faults
        S, rows, cols = values.shape
        raw = self._raw(values, t)
        tight = cols if layout == "row" else rows
        if stride > tight and "coop_stride_ignored" in f:
            stride = tight
        shift += 1 if workgroup and "coop_workgroup_offset" in f else 0
        mem = np.array(mem, copy=True) if copy else mem  # copy=False: the caller's own buffer
        majors = rows if layout == "row" else cols
        if stride < tight and majors > 1:  # rows overlap in memory: later ones win, in order
            for major in range(majors):
                start = major * stride + shift
                seg = raw[:, major, :] if layout == "row" else raw[:, :, major]
                n = max(0, min(seg.shape[1], mem.shape[1] - start))  # writes past the end are dropped
                mem[:, start : start + n] = seg[:, :n]
            return mem
        off = _element_offsets(rows, cols, layout, stride, shift)
        n = rows * cols
        if _is_tight(rows, cols, layout, stride, shift) and n <= mem.shape[1]:  # one block of memory
            mem[:, :n] = raw.reshape(S, n)
        elif off.size and off.max() < mem.shape[1]:
            mem[:, off] = raw
        else:
            inside = off < mem.shape[1]  # writes past the end are dropped
            mem[:, off[inside]] = raw[:, inside]
        if "coop_store_clobbers_padding" in f and stride > tight:
            pad = (np.arange(majors) * stride + shift + tight)[:, None] + np.arange(stride - tight)[None, :]
            mem[:, pad[pad < mem.shape[1]]] = 0
        return mem

    # ---- arithmetic ---------------------------------------------------
    def _muladd(self, A, B, C, e):
        f = self.faults
        if e.is_int and "coop_cross_sign_from_a" in f and e.A[0] != e.B[0]:
            wb = 1 << _width(e.B)  # B re-read as A's signedness
            B = np.where(B < 0, B + wb, B) if e.A[0] == "u" else np.where(B >= wb // 2, B - wb, B)
        if e.is_int and "coop_signed_ignored" in f:
            A = np.where(A < 0, A + (1 << _width(e.A)), A) if e.A.startswith("i") else A
            B = np.where(B < 0, B + (1 << _width(e.B)), B) if e.B.startswith("i") else B
        if "coop_k_tail_dropped" in f:
            A, B = A[:, :, :-1], B[:, :-1, :]
        if "coop_acc_ignored" in f:
            C = np.zeros_like(C)
        if e.is_int:
            from cts.backends.emu_common import int_matmul

            d = int_matmul(A, B, (1 << _width(e.A), 1 << _width(e.B))) + C.astype(np.int64)
            sat = e.sat != ("coop_saturation_missing" in f) if e.sat else "coop_wrap_saturates" in f
            return self._val(self._raw(d, e.R, saturate=sat), e.R)
        if "acc_one_step_narrower" in f:  # the emulator's shared fault (cts/backends/emulator.py)
            from cts.backends.emu_common import narrow_acc_mad

            d = narrow_acc_mad(A, B, C, e.C, e.R)
            if d is not None:
                return self._val(self._raw(d, e.R), e.R)
        model = getattr(self, "model", None)  # --emulator-model (cts/backends/emu_numerics.py)
        if model is not None and e.A == e.B and e.C == e.R:
            from reference.devmodel import model_mma

            return model_mma(model, A, B, C, e.A, e.R)
        from cts.backends.emu_common import float_mad

        d = float_mad(A, B, C)
        return self._val(self._raw(d, e.R), e.R)

    def _elementwise(self, op, x, y, t, scalar):
        if op == "sub" and "coop_sub_reversed" in self.faults:
            x, y = y, x
        w = _width(t)
        with np.errstate(all="ignore"):
            if t in _FLOATS:
                if op == "neg":
                    return -x
                if op == "scale":
                    return x * scalar
                return {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op](x, y)
            x = x.astype(np.int64)
            if op == "div":
                r = np.trunc(x / y.astype(np.float64)).astype(np.int64) if w < 64 else x // y
            elif op == "neg":
                r = -x
            elif op == "scale":
                r = x * int(scalar)
            else:
                r = {"add": x + y, "sub": x - y, "mul": x * y}[op]
            return r

    def _convert(self, x, src, dst):
        if {src, dst} == {"f16", "bf16"} and "coop_f16_bf16_bits_copied" in self.faults:
            return self._val(self._raw(x, src), dst)
        if dst in _FLOATS:
            if src in _FLOATS and "coop_convert_nan_zero" in self.faults:
                x = np.where(np.isnan(x), 0.0, x)
            if src in _FLOATS and "coop_convert_zero_sign_lost" in self.faults:
                x = np.where(x == 0, 0.0, x)
            return x.astype(np.float64)
        if src in _FLOATS:
            v = np.rint(x) if "coop_ftoi_rounds" in self.faults else np.trunc(x)
            return v.astype(np.int64)
        return x

    # ---- KHR axes (cts.families.coop.VARIANTS) ------------------------
    def _ls_stride(self, case, bufs) -> tuple[int, int]:
        """(Stride in elements, address shift) of a load/store case: the
        stride source of its ``var`` and the faults of the new axes."""
        from cts.families.coop import case_stride

        f, v, m = self.faults, case.var, case.mat
        stride = int(bufs["st"][0, 0]) if v == "sbuf" else case_stride(case)
        tight = m.cols if case.layout == "row" else m.rows
        if (v == "spush" and "coop_push_stride_tight" in f) or (
            v == "sspec" and "coop_spec_stride_default" in f
        ):
            stride = tight
        if v == "sbuf" and "coop_runtime_stride_zero" in f:
            stride = 0
        comp = {"v2": 2, "v4": 4}.get(v, 1)  # components of the element pointer
        if comp > 1 and "coop_vec_stride_components" in f:
            stride //= comp
        bda = case.mem == "bda" and "coop_bda_offset" in f
        return stride, int(bda or (v == "aligned" and "coop_aligned_shift" in f))

    def _muladd_variant(self, case, bufs, d_out):
        """MulAdd forms (buffers: cts.runs.coop.muladd)."""
        f, e, v = self.faults, case.entry, case.var
        M, N, K = e.M, e.N, e.K
        a_at = M * K if v == "array" and "coop_array_element0" not in f else 0
        if v == "stride0":
            sa, sb = (K, N) if "coop_muladd_stride0_tight" in f else (0, 0)
        else:
            sa, sb = K, N
        A = self._load(bufs["a"][:, a_at:], M, K, "row", sa, e.A)
        B = self._load(bufs["b"], K, N, "row", sb, e.B)
        c_lay = "row" if v != "colacc" or "coop_acc_colmajor_as_row" in f else "col"
        C = self._load(bufs["c"], M, N, c_lay, N if c_lay == "row" else M, e.C)
        if v in ("func", "funcconst") and "coop_func_param_c_dropped" in f:
            C = np.zeros_like(C)
        D = self._muladd(A, B, C, e)
        if v == "struct" and "coop_struct_member_stale" in f:
            D = C
        if v == "wg4" and "coop_wg_subgroups_share" in f:
            D = D[np.arange(D.shape[0]) // 4 * 4]
        if v in ("sgmin", "sgmax") and "coop_required_size_half" in f:
            inv = self.coop_owner(type("M", (), {"rows": M, "cols": N})(), case.sg)[..., 0]
            D = np.where(inv >= case.sg // 2, C, D)
        return self._store(d_out, D, "col" if v == "colacc" else "row", M if v == "colacc" else N, e.R)

    # ---- the family entry point -------------------------------------
    def coop_mapping(self, rows: int, cols: int, sg: int) -> np.ndarray:
        """(sg, length) row-major element index held by each invocation."""
        n = rows * cols
        length = -(-n // sg)
        if "coop_length_short" in self.faults:
            length -= 1
        return (np.arange(length)[None, :] * sg + np.arange(sg)[:, None]) % n

    def coop_owner(self, mat, sg: int) -> np.ndarray:
        """(rows, cols, 2): (invocation, index) holding each element (read-only,
        computed once per shape and subgroup size: the mapping depends on
        nothing else)."""
        from cts.families.coop import owner_from_mapping

        cache = self.__dict__.setdefault("_coop_owners", {})
        key = (mat.rows, mat.cols, sg, "coop_length_short" in self.faults)
        if key not in cache:
            owner = owner_from_mapping(self.coop_mapping(mat.rows, mat.cols, sg), mat.rows, mat.cols)
            owner.setflags(write=False)
            cache[key] = owner
        return cache[key]

    def run_coop_matrix(self, case, bufs: dict) -> dict:
        from cts.families.coop import CHAIN, GEMM_TILES, SCALE, SPLAT_CONST

        out = {k: np.array(v, copy=True) for k, v in bufs.items()}
        op, m, e = case.op, case.mat, case.entry
        S = next(iter(bufs.values())).shape[0]
        if m is not None:
            R, Cn, t = m.rows, m.cols, m.t
            kind = "float" if t in _FLOATS else ("int" if t.startswith("i") else "uint")

            def rowmajor(name):
                return self._load(bufs[name], R, Cn, "row", Cn, t)

            def put(name, v, tt=t):  # out[name] is this call's own copy: written in place
                out[name] = self._store(out[name], v, "row", Cn, tt, copy=False)

        if op == "length":
            idx = self.coop_mapping(R, Cn, case.sg)  # (sg, len)
            lo, hi = bufs["lo"].astype(np.int64), bufs["hi"].astype(np.int64)
            lov, hiv = self._val(lo, t), self._val(hi, t)
            out["len"][:, :] = idx.shape[1]
            mp = out["map"]
            mp[:, :, 0 : 2 * idx.shape[1] : 2] = lov[:, idx].astype(np.uint32)
            mp[:, :, 1 : 2 * idx.shape[1] : 2] = hiv[:, idx].astype(np.uint32)
        elif op == "access":
            x = rowmajor("x").reshape(S, -1)
            y = x.copy()
            mp = self.coop_mapping(R, Cn, case.sg)
            idx = mp.ravel()
            src = idx
            if case.var == "composite" and "coop_composite_first" in self.faults:
                src = np.repeat(mp[:, :1], mp.shape[1], axis=1).ravel()
            y[:, idx] = x[:, src] * 2 + 1
            put("out", y.reshape(S, R, Cn))
        elif op == "splat":
            if case.mode in ("const", "null"):
                c = SPLAT_CONST[kind] if case.mode == "const" else int("coop_null_not_zero" in self.faults)
                v = np.full((S, R, Cn), c, dtype=np.float64 if kind == "float" else np.int64)
            else:
                v0 = self._val(bufs["v"][:, :1], t)
                v = np.broadcast_to(v0[:, :, None], (S, R, Cn))
                if "coop_splat_dyn_zero" in self.faults:
                    v = np.zeros_like(v)
            put("out", v)
        elif op == "load":
            wg = case.mem == "workgroup"
            stride, shift = self._ls_stride(case, bufs)
            src = bufs["src"]
            if case.var == "varptr" and "coop_varptr_other" in self.faults:  # subgroup 0's region / unused sh
                src = np.zeros_like(src) if wg else np.broadcast_to(src[:1], src.shape)
            v = self._load(src, R, Cn, case.layout, stride, t, wg, shift)
            if case.var == "nontemporal" and "coop_nontemporal_zero" in self.faults:
                v = np.zeros_like(v)
            put("out", v)
        elif op == "store":
            wg = case.mem == "workgroup"
            stride, shift = self._ls_stride(case, bufs)
            out["dst"] = self._store(bufs["dst"], rowmajor("x"), case.layout, stride, t, wg, shift=shift)
            if case.var == "varptr" and "coop_varptr_other" in self.faults:
                out["dst"] = np.array(bufs["dst"], copy=True)  # written elsewhere: subgroup 0's region / sh
                if not wg:
                    out["dst"][0] = self._store(bufs["dst"][-1:], rowmajor("x")[-1:], case.layout, stride, t)[
                        0
                    ]
            if case.var == "avail" and "coop_avail_last_row_lost" in self.faults:
                last = _element_offsets(R, Cn, case.layout, stride, 0)[-1]
                out["dst"][:, last] = bufs["dst"][:, last]
        elif op in ("add", "sub", "mul", "div", "neg", "scale"):
            x = rowmajor("x")
            y = rowmajor("y")
            put("out", self._elementwise(op, x, y, t, SCALE[kind]))
        elif op == "convert":
            put("out", self._convert(rowmajor("x"), t, case.to), case.to)
        elif op == "muladd" and case.var:
            out["d"] = self._muladd_variant(case, bufs, out["d"])
        elif op == "muladd":
            M, N, K = e.M, e.N, e.K
            lay = case.layout
            A = self._load(bufs["a"], M, K, lay, K if lay == "row" else M, e.A)
            B = self._load(bufs["b"], K, N, lay, N if lay == "row" else K, e.B)
            C = self._load(bufs["c"], M, N, "row", N, e.C)
            out["d"] = self._store(out["d"], self._muladd(A, B, C, e), "row", N, e.R)
        elif op == "chain":
            M, N, K = e.M, e.N, e.K
            C0 = self._load(bufs["c"], M, N, "row", N, e.C)
            D = C0
            for step in range(CHAIN):
                A = self._load(bufs["a"][:, step * M * K :], M, K, "row", K, e.A)
                B = self._load(bufs["b"][:, step * K * N :], K, N, "row", N, e.B)
                acc = C0 if "coop_chain_restarts" in self.faults else D
                D = self._muladd(A, B, acc, e)
            out["d"] = self._store(out["d"], D, "row", N, e.R)
        elif op == "gemm":
            M, N, K = e.M, e.N, e.K
            tm, tn, tk = GEMM_TILES
            sa, sb, sc = tk * K, tn * N, tn * N
            tiles = [(i, j) for i in range(tm) for j in range(tn)]
            a_tile, b_tile = {}, {}  # each A and B tile loaded once
            for k in range(tk):
                for i in range(tm):
                    a_tile[i, k] = self._load(bufs["a"][:, i * M * sa + k * K :], M, K, "row", sa, e.A)
                for j in range(tn):
                    b_tile[k, j] = self._load(bufs["b"][:, k * K * sb + j * N :], K, N, "row", sb, e.B)
            # every result tile's k steps in one MulAdd per step: the tiles stacked as problems
            D = np.concatenate(
                [self._load(bufs["c"][:, i * M * sc + j * N :], M, N, "row", sc, e.C) for i, j in tiles]
            )
            for k in range(tk):
                A = np.concatenate([a_tile[i, k] for i, _ in tiles])
                B = np.concatenate([b_tile[k, j] for _, j in tiles])
                D = self._muladd(A, B, D, e)
            P = bufs["c"].shape[0]
            for n, (i, j) in enumerate(tiles):  # stored tile by tile, in order
                sub = self._store(out["d"][:, i * M * sc + j * N :], D[n * P : (n + 1) * P], "row", sc, e.R)
                out["d"][:, i * M * sc + j * N :] = sub
        else:
            raise ValueError(f"unknown cooperative-matrix op {op!r}")
        return out
