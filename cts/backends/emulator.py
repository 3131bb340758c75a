"""The emulator backend: numpy, vectorised over subgroups, at work-item level.

It plays the part of a device.  Each invocation's operands are decoded the
way the extension's coding sample does it (cl_intel_subgroup_matrix_multiply_accumulate, Sample Code): for every
k-chunk, the packed value of ``a`` is *broadcast from invocation j* and its
elements are multiplied with the elements of this invocation's ``b`` that
hold the same k.  The decoding here is written from the built-in's
signature (element types, K, subgroup size, vector widths) and shares no
code with ``reference.layout``, which goes the other way (logical matrix ->
registers).

Arithmetic: integers exactly in int64 then wrapped to 32 bits; floats summed
in float64 and rounded once to the result type (round to nearest even), a
legal and faithful device.

Named faults (``--emulator-fault NAME``) make it a wrong device on purpose so
the suite can prove it catches each one (tests/test_mutations.py).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from cts.backends.base import Backend, DeviceInfo
from cts.backends.emu_common import float_mad, int_matmul, narrow_acc_mad, sign_extend
from cts.backends.emu_words import unpack_words

__all__ = ["EmulatorBackend", "FAULTS", "all_faults"]

FAULTS: dict[str, str] = {
    "a_column_order": "A columns taken from invocations in reverse order",
    "a_bit_order": "A elements inside a packed value read from the high bits first",
    "b_vnni_row_order": "B rows inside a VNNI dword read in reverse order",
    "i8_as_u8": "signed 8-bit elements read as unsigned",
    "u8_as_i8": "unsigned 8-bit elements read as signed",
    "int4_no_sign_extend": "signed 4-bit elements not sign-extended",
    "acc_ignored": "the accumulator operand is ignored",
    "result_rows_permuted": "result rows written to reversed vector components",
    "bf16_as_fp16": "bf16 elements decoded as fp16",
    "tf32_not_rounded": "tf32 conversion returns its input unrounded",
    "n_gt_k_interleave": "N > K: rows of A taken as blocks instead of interleaved",
    "split_rows_misplaced": "split: the second subgroup's rows interleaved with the first's",
    "split_pair_with_itself": "split, work-groups of more than 2 subgroups: subgroups 2 and up pair with "
    "themselves (their own A half taken for both halves)",
    "split_pair_across_workgroups": "split, work-groups of more than 2 subgroups: subgroup j >= 2 pairs with "
    "subgroup j of the neighbouring work-group",
    "bf16_result_truncated": "bf16 results truncated instead of rounded to nearest even",
    "tf32_inputs_full_precision": "tf32 matrix inputs used with all 23 mantissa bits, not as tf32",
    "acc16_rounds_each_step": "fp16/bf16 accumulators: the sum rounded to the accumulator type after "
    "every product (not the 'full precision' the extension names)",
    "acc_one_step_narrower": "float multiply-accumulate (every family): the accumulator held one precision "
    "step narrower than the C/Result type (f64 -> f32, f32 -> f16, f16 -> bf16): C converted to it, the "
    "running sum rounded to it after every product, then widened to the Result",
}


class IntelEmulation:
    """run_intel_* families (this module); other families live in their own
    mixin modules (emu_*.py), each with a FAULTS dict, combined below."""

    FAULTS = FAULTS

    # --- element decoding (from the built-in name) -----------------------
    def _elements(self, raw: np.ndarray, tname: str) -> np.ndarray:
        """Raw element bits -> values (int64 or float64) for type ``tname``."""
        f = self.faults
        if tname in ("i8", "u8"):
            signed = tname == "i8"
            if signed and "i8_as_u8" in f:
                signed = False
            elif not signed and "u8_as_i8" in f:
                signed = True
            return sign_extend(raw, 8) if signed else (raw.astype(np.int64) & 0xFF)
        if tname in ("i4", "u4"):
            if tname == "i4" and "int4_no_sign_extend" not in f:
                return sign_extend(raw, 4)
            return raw.astype(np.int64) & 0xF
        if tname == "f16":
            return (raw.astype(np.uint16)).view(np.float16).astype(np.float64)
        if tname == "bf16":
            r = raw.astype(np.uint16)
            if "bf16_as_fp16" in f:
                return r.view(np.float16).astype(np.float64)
            return r.view(ml_dtypes.bfloat16).astype(np.float64)
        if tname == "tf32":
            u = raw.astype(np.uint32)
            if "tf32_inputs_full_precision" not in f:
                # cl_intel_subgroup_matrix_multiply_accumulate_tf32: only the upper 10 of the 23 stored mantissa bits take
                # part in the math (this device ignores the rest; NaN stays NaN)
                nan = (u & np.uint32(0x7F800000)) == np.uint32(0x7F800000)
                u = np.where(nan & ((u & np.uint32(0x7FFFFF)) != 0), u | np.uint32(0x400000), u)
                u = u & np.uint32(0xFFFFE000)
            with np.errstate(invalid="ignore"):
                return u.view(np.float32).astype(np.float64)
        raise ValueError(tname)

    @staticmethod
    def _bits(tname: str) -> int:
        return {"i8": 8, "u8": 8, "i4": 4, "u4": 4, "f16": 16, "bf16": 16, "tf32": 32}[tname]

    # --- A: this invocation's view after broadcasting from invocation j ----
    def _a_matrix(self, a: np.ndarray, case, rows: int) -> np.ndarray:
        """a (S, N, comps) registers -> element values (S, rows, K)."""
        S, N, _ = a.shape
        K, ebits = case.k, self._bits(case.a)
        f = self.faults
        src = a[:, ::-1, :] if "a_column_order" in f else a
        if N <= K:
            word = K * ebits // N
            # row m: concatenate invocations 0..N-1 of component m
            per_row = src[:, :, :rows].transpose(0, 2, 1)  # (S, rows, N)
            elems = unpack_words(per_row, word, ebits, "a_bit_order" in f)  # (S, rows, K)
            return self._elements(elems, case.a)
        # N > K: invocation i gives column i % K of row (N/K)*c + i // K
        fct = N // K
        vals = self._elements(src.astype(np.uint64), case.a)  # (S, N, comps)
        out = np.zeros((S, rows, K))
        comps = vals.shape[2]
        for i in range(N):
            for c in range(comps):
                if "n_gt_k_interleave" in f:
                    row = c + (i // K) * comps
                else:
                    row = fct * c + i // K
                if row < rows:
                    out[:, row, i % K] = vals[:, i, c]
        return out

    def _b_matrix(self, b: np.ndarray, case) -> np.ndarray:
        """b (S, N, 8) 32-bit words, invocation n = column n -> (S, K, N)."""
        ebits = self._bits(case.b)
        elems = unpack_words(b, 32, ebits, "b_vnni_row_order" in self.faults)  # (S, N, K)
        return self._elements(elems, case.b).transpose(0, 2, 1)

    def _acc(self, c: np.ndarray, case) -> np.ndarray:
        """c (S, N, M) -> values (S, M, N)."""
        if "acc_ignored" in self.faults:
            return np.zeros(c.shape[:1] + c.shape[:0:-1])
        if case.acc == "i32":
            v = sign_extend(c, 32)
        elif case.acc == "f32":
            v = c.astype(np.uint32).view(np.float32).astype(np.float64)
        elif case.acc == "f16":
            v = c.astype(np.uint16).view(np.float16).astype(np.float64)
        else:  # bf16 carried in short
            v = c.astype(np.uint16).view(ml_dtypes.bfloat16).astype(np.float64)
        return v.transpose(0, 2, 1)

    def _result_bits(self, d: np.ndarray, case) -> np.ndarray:
        """Exact values (S, M, N) -> result registers (S, N, M) raw bits."""
        if case.acc == "i32":
            bits = d.astype(np.int64) & 0xFFFFFFFF
        elif case.acc == "f32":
            with np.errstate(over="ignore"):  # overflow to inf is the device's result
                bits = d.astype(np.float32).view(np.uint32)
        elif case.acc == "f16":
            bits = d.astype(np.float16).view(np.uint16)
        else:
            if "bf16_result_truncated" in self.faults:
                f32 = d.astype(np.float32)  # exact for the sums this suite forms
                bits = (f32.view(np.uint32) >> np.uint32(16)).astype(np.uint16)
            else:
                bits = d.astype(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)
        regs = bits.astype(np.uint64).transpose(0, 2, 1)
        if "result_rows_permuted" in self.faults:
            regs = regs[:, :, ::-1]
        return np.ascontiguousarray(regs)

    def _mad(self, A: np.ndarray, B: np.ndarray, C: np.ndarray, is_int: bool) -> np.ndarray:
        case = getattr(self, "_num_case", None)  # the Intel case being run (emu_numerics sets it)
        if not is_int and case is not None and "acc_one_step_narrower" in self.faults:
            D = narrow_acc_mad(A, B, C, case.acc)
            if D is not None:
                return D
        if is_int:
            return int_matmul(A, B, (1 << 8, 1 << 8)) + C.astype(np.int64)  # elements of <= 8 bits
        return float_mad(A, B, C)

    # --- families ---------------------------------------------------------
    def run_intel_mma(self, case, a, b, c):
        A = self._a_matrix(a, case, case.M)
        B = self._b_matrix(b, case)
        if "acc16_rounds_each_step" in self.faults and case.acc in ("f16", "bf16"):
            D = self._mad_acc16(A, B, self._acc(c, case), case.acc)
        else:
            D = self._mad(A, B, self._acc(c, case), not case.is_float)
        return self._result_bits(D, case)

    @staticmethod
    def _mad_acc16(A: np.ndarray, B: np.ndarray, C: np.ndarray, acc: str) -> np.ndarray:
        """Fault acc16_rounds_each_step: a 16-bit running sum, k ascending."""
        ft = np.float16 if acc == "f16" else ml_dtypes.bfloat16
        s = C.astype(ft)
        with np.errstate(invalid="ignore", over="ignore"):
            for k in range(A.shape[2]):
                s = (s.astype(np.float64) + A[:, :, k, None] * B[:, None, k, :]).astype(np.float32).astype(ft)
        return s.astype(np.float64)

    def run_intel_split_mma(self, case, a, b, c):
        """a (G, W, N, M/2): work-group g, subgroup j passes M/2 rows of A;
        b, c (G, W, N, .) are each subgroup's own.  This device pairs
        subgroups 2i and 2i+1 of a work-group, the even one first (rows
        0..M/2-1); the pairing faults change that for subgroups 2 and up
        (two-subgroup work-groups stay right)."""
        G, W = a.shape[:2]
        h = case.M // 2
        halves = np.stack([self._a_matrix(a[:, j], case, h) for j in range(W)], axis=1)  # (G, W, h, K)
        groups = np.arange(G)
        out = []
        for j in range(W):
            (g1, j1), (g2, j2) = self._split_partners(groups, j)
            first, second = halves[g1, j1], halves[g2, j2]
            A = np.zeros((G, case.M, case.k))
            if "split_rows_misplaced" in self.faults:
                A[:, 0::2], A[:, 1::2] = first, second
            else:
                A[:, :h], A[:, h:] = first, second
            B = self._b_matrix(b[:, j], case)
            D = self._mad(A, B, self._acc(c[:, j], case), not case.is_float)
            out.append(self._result_bits(D, case))
        return np.stack(out, axis=1)

    def _split_partners(self, groups: np.ndarray, j: int):
        """((groups, subgroup) of the first, (groups, subgroup) of the second)
        of the pair that subgroup j of each work-group belongs to."""
        if j >= 2 and "split_pair_with_itself" in self.faults:
            return (groups, j), (groups, j)
        if j >= 2 and "split_pair_across_workgroups" in self.faults:
            other = np.minimum(groups ^ 1, groups.size - 1)  # subgroup j of the neighbouring work-group
            return (np.minimum(groups, other), j), (np.maximum(groups, other), j)
        return (groups, j & ~1), (groups, j | 1)

    def run_intel_tf32_convert(self, case, x):
        x = np.asarray(x, dtype=np.float32)
        if "tf32_not_rounded" in self.faults:
            return x.copy()
        u = x.view(np.uint32).astype(np.uint64)
        exp_all_ones = (u & np.uint64(0x7F800000)) == np.uint64(0x7F800000)
        rounded = (u + np.uint64(0x0FFF) + ((u >> np.uint64(13)) & np.uint64(1))) & np.uint64(0xFFFFE000)
        keep = np.where(exp_all_ones, u | np.where(u & np.uint64(0x7FFFFF), np.uint64(0x400000), 0), rounded)
        return (keep & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32)


# The emulator's own wrappers stand in front of every family's run: NoWriteEmulation first
# (a device that stores nothing), LatitudeEmulation (Vulkan's float latitude), NumericsEmulation
# (wraps _mad of the families below it; it also realises float_mma), HostileEmulation (wraps
# run_intel_mma: crash/hang doubles).  The family mixins follow in the order of the registry
# of families (cts.families.registry), which declares each family's emulator mixin once.
from cts.backends.emu_hostile import HostileEmulation  # noqa: E402
from cts.backends.emu_latitude import LatitudeEmulation  # noqa: E402
from cts.backends.emu_nowrite import NoWriteEmulation  # noqa: E402
from cts.backends.emu_numerics import NumericsEmulation  # noqa: E402
from cts.families.registry import emulator_mixins, resolve  # noqa: E402

_WRAPPERS: tuple[type, ...] = (NoWriteEmulation, LatitudeEmulation, NumericsEmulation, HostileEmulation)


def family_mixins(registry=None) -> tuple[type, ...]:
    """The family mixins the registry declares, resolved, after the wrappers."""
    out: list[type] = []
    for ref in emulator_mixins(registry):
        m = resolve(ref)  # this module's own IntelEmulation resolves from the module being imported
        if m not in _WRAPPERS and m not in out:
            out.append(m)
    return tuple(out)


_MIXINS: tuple[type, ...] = _WRAPPERS + family_mixins()


def all_faults() -> dict[str, str]:
    out: dict[str, str] = {}
    for m in _MIXINS:
        out.update(getattr(m, "FAULTS", {}))
    return out


class EmulatorBackend(*_MIXINS, Backend):
    """The numpy emulator device (default backend)."""

    name = "emulator"

    def __init__(self, faults: tuple[str, ...] = ()):
        known = {k: v for m in type(self).__mro__ for k, v in vars(m).get("FAULTS", {}).items()}
        unknown = [f for f in faults if f not in known]
        if unknown:
            raise ValueError(f"unknown emulator fault(s) {', '.join(unknown)}; known: {', '.join(known)}")
        self.faults = frozenset(faults)

    @classmethod
    def from_options(cls, emulator_faults=(), device=None, **other):
        from cts.backends.base import BackendError

        if device not in (None, "", "0", "emulator"):
            raise BackendError(f"backend 'emulator' has one device ('emulator'), not {device!r}")
        try:
            return cls(tuple(emulator_faults or ()))
        except ValueError as e:
            raise BackendError(str(e)) from None

    def identity(self) -> dict:
        """The faults that make it a different device.  The hostile crash
        and hang faults are left out: they model a driver that dies or hangs
        now and then (a process event), not other results, so a resumed run
        without them continues the same record and a crash that does not
        recur shows as changed (cts/backends/emu_hostile.py)."""
        from cts.backends.emu_hostile import PROCESS_FAULTS

        return {
            "device": "numpy emulator",
            "faults": sorted(f for f in self.faults if f not in PROCESS_FAULTS),
        }

    def describe(self) -> DeviceInfo:
        return DeviceInfo(
            backend="emulator",
            name="numpy emulator" + (f" (faults: {','.join(sorted(self.faults))})" if self.faults else ""),
            platform="cts",
            driver=(
                f"device model {self.model.name}: {self.model.summary()}"
                if getattr(self, "model", None) is not None
                else "float64 accumulation, one RNE rounding"
            ),
            extensions=(
                "cl_intel_subgroup_matrix_multiply_accumulate",
                "cl_intel_subgroup_matrix_multiply_accumulate_tf32",
                "cl_intel_subgroup_split_matrix_multiply_accumulate",
            ),
            subgroup_sizes=(8, 16),
        )


def emulator_class(registry) -> type:
    """The emulator of another registry of families (a family being added, in
    a self-test): EmulatorBackend with the registry's family mixins it lacks
    put in front of it."""
    extra = tuple(m for m in family_mixins(registry) if m not in EmulatorBackend.__mro__)
    return type("EmulatorBackend", (*extra, EmulatorBackend), {}) if extra else EmulatorBackend
