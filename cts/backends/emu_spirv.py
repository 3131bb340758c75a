"""Emulator mixin for SPV_INTEL_subgroup_matrix_multiply_accumulate.

It behaves like a device that receives the *binary* module: it reads the
assembled words (the same bytes an OpenCL device gets), finds
OpSubgroupMatrixMultiplyAccumulateINTEL (opcode 6237) and takes everything
from there (SPV_INTEL_subgroup_matrix_multiply_accumulate: operands, dimensions, data-to-invocation mapping):

* M from the Result Type's component count, K from the K Dim constant (an
  OpSpecConstant takes the value set for its SpecId at build time, the
  case's ``specialization``, else its default), N from the module's
  SubgroupSize execution mode; K Dim 0 is an empty product (Result = C);
* element types and signedness from the bits of the operand literal, decoded
  generically: the B-side flag of each A-side flag is the next bit up
  (0x1/0x2 signed, 0x10/0x20 int8, 0x40/0x80 int4, 0x100/0x200 tf32,
  0x400/0x800 fp16, 0x1000/0x2000 bf16); 0x4 / 0x8 make C / Result bf16; no
  element flag means the component type itself;
* the A mapping from the container width: N <= K packs K/N elements per
  value, N > K interleaves rows (row f*c + i div K, column i mod K).

It shares no table with the case generator (``cts.families.spirv_intel``)
nor with ``reference.layout``.  Integers are exact then wrapped; floats are
summed in float64 and rounded once (RNE) to the Result type.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from cts.backends.base import CaseError, Unsupported
from cts.backends.emu_words import unpack_words

__all__ = ["SpirvEmulation", "SPIRV_FAULTS", "TF32_ROUND_FAULTS", "parse_mma_instruction", "parse_round_tf32"]

SPIRV_FAULTS: dict[str, str] = {
    "spirv_a_signed_ignored": "SPIR-V: MatrixASignedComponentsINTEL ignored (A read as unsigned)",
    "spirv_int4_as_int8": "SPIR-V: PackedInt4 flags decoded as PackedInt8",
    "spirv_c_bf16_ignored": "SPIR-V: MatrixCBFloat16INTEL ignored (C read as a 16-bit integer)",
    "spirv_result_bf16_ignored": "SPIR-V: MatrixResultBFloat16INTEL ignored (Result written as a 16-bit integer)",
    "spirv_n_gt_k_as_n_lt_k": "SPIR-V: N > K matrix A mapping applied as the N <= K one",
    "spirv_spec_constant_default": "SPIR-V: specialization constants keep their default (the values set "
    "at build time ignored; K Dim of the kspec modules is 0)",
}
TF32_ROUND_FAULTS: dict[str, str] = {
    "spirv_tf32_round_ties_away": "OpRoundFToTF32INTEL: ties rounded away from zero, not to even",
    "spirv_tf32_round_scalar_only": "OpRoundFToTF32INTEL on a vector: only component 0 rounded, "
    "the others returned as they came",
}

_OP_TYPE_INT, _OP_TYPE_FLOAT, _OP_TYPE_VECTOR = 21, 22, 23
_OP_CONSTANT, _OP_EXECUTION_MODE, _OP_MMA = 43, 16, 6237
_OP_SPEC_CONSTANT, _OP_DECORATE, _DECORATION_SPEC_ID = 50, 71, 1
_OP_ROUND_TF32 = 6426  # OpRoundFToTF32INTEL (SPV_INTEL_tensor_float32_conversion)
_MODE_SUBGROUP_SIZE = 35
# value instructions whose word 1 is the result type and word 2 the result id
_VALUE_OPS = {43, 44, 50, 55, 61, 80, 81, 83, 113, 114, 115, 124}

# bit index of each A-side meaning; the B-side bit is one higher
_SIGNED, _INT8, _INT4, _TF32, _F16, _BF16 = 0, 4, 6, 8, 10, 12
_C_BF16, _R_BF16 = 2, 3
_PARSED: dict[bytes, dict] = {}  # module binary -> decoded instruction
_BY_MODULE: dict[tuple, dict] = {}  # case.module_key -> the decoded instruction of its module


def parse_mma_instruction(binary: bytes) -> dict:
    """Decode the first OpSubgroupMatrixMultiplyAccumulateINTEL of a module:
    its operand types (kind, bits, components), K, N and the literal."""
    words = np.frombuffer(binary, dtype="<u4")
    if words.size < 5 or words[0] != 0x07230203:
        raise CaseError("not a SPIR-V module (bad magic number)")
    types: dict[int, tuple[str, int, int]] = {}
    consts: dict[int, int] = {}
    spec_ids: dict[int, int] = {}  # result id -> SpecId
    value_type: dict[int, int] = {}
    sg = None
    mma = None
    words = words.tolist()  # plain ints: one conversion, not one per instruction
    i = 5
    while i < len(words):
        wc, op = words[i] >> 16, words[i] & 0xFFFF
        w = words[i + 1 : i + wc]
        if wc == 0:
            raise CaseError("malformed SPIR-V module (word count 0)")
        if op == _OP_TYPE_INT:
            types[w[0]] = ("int", w[1], 1)
        elif op == _OP_TYPE_FLOAT:
            types[w[0]] = ("float", w[1], 1)
        elif op == _OP_TYPE_VECTOR:
            kind, bits, _ = types[w[1]]
            types[w[0]] = (kind, bits, w[2])
        elif op == _OP_EXECUTION_MODE and w[1] == _MODE_SUBGROUP_SIZE:
            sg = w[2]
        elif op == _OP_MMA and mma is None:
            mma = w
        if op in (_OP_CONSTANT, _OP_SPEC_CONSTANT):
            consts[w[1]] = w[2]
        if op == _OP_DECORATE and w[1] == _DECORATION_SPEC_ID:
            spec_ids[w[0]] = w[2]
        if op in _VALUE_OPS:
            value_type[w[1]] = w[0]
        i += wc
    if mma is None:
        raise CaseError("module has no OpSubgroupMatrixMultiplyAccumulateINTEL")
    if sg is None:
        raise Unsupported("module has no SubgroupSize execution mode: the emulator needs N")
    rtype, _, k_id, a_id, b_id, c_id = mma[:6]
    if k_id not in consts:
        raise CaseError("K Dim of OpSubgroupMatrixMultiplyAccumulateINTEL is no scalar constant")
    return {
        "result": types[rtype],
        "K": consts[k_id],
        "K_spec_id": spec_ids.get(k_id),
        "A": types[value_type[a_id]],
        "B": types[value_type[b_id]],
        "C": types[value_type[c_id]],
        "literal": mma[6] if len(mma) > 6 else 0,
        "N": sg,
    }


def parse_round_tf32(binary: bytes) -> tuple[str, int, int]:
    """(kind, bits, components) of the Result Type of the first
    OpRoundFToTF32INTEL of a module."""
    words = np.frombuffer(binary, dtype="<u4").tolist()
    if len(words) < 5 or words[0] != 0x07230203:
        raise CaseError("not a SPIR-V module (bad magic number)")
    types: dict[int, tuple[str, int, int]] = {}
    i = 5
    while i < len(words):
        wc, op = words[i] >> 16, words[i] & 0xFFFF
        if wc == 0:
            raise CaseError("malformed SPIR-V module (word count 0)")
        w = words[i + 1 : i + wc]
        if op == _OP_TYPE_FLOAT:
            types[w[0]] = ("float", w[1], 1)
        elif op == _OP_TYPE_INT:
            types[w[0]] = ("int", w[1], 1)
        elif op == _OP_TYPE_VECTOR:
            types[w[0]] = (types[w[1]][0], types[w[1]][1], w[2])
        elif op == _OP_ROUND_TF32:
            return types[w[0]]
        i += wc
    raise CaseError("module has no OpRoundFToTF32INTEL")


def _sext(v: np.ndarray, bits: int) -> np.ndarray:
    if v.dtype.kind in "ui" and bits in (8, 16, 32):  # the low bits, read as two's complement
        return v.astype(f"u{bits // 8}").view(f"i{bits // 8}").astype(np.int64)
    if v.dtype.kind in "ui" and bits < 8:  # sign bit moved to bit 7, shifted back arithmetically
        up = (v.astype(np.uint8) << np.uint8(8 - bits)).view(np.int8)
        return (up >> np.int8(8 - bits)).astype(np.int64)
    v = v.astype(np.int64) & ((1 << bits) - 1)
    return np.where(v >= (1 << (bits - 1)), v - (1 << bits), v)


def _float_of(raw: np.ndarray, fmt: str) -> np.ndarray:
    r = raw.astype(np.uint64)
    if fmt == "tf32":  # only sign, exponent and the top 10 mantissa bits count
        r = r & np.uint64(0xFFFFE000)
    with np.errstate(invalid="ignore"):  # signalling NaN payloads
        if fmt == "f16":
            return (r & np.uint64(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64)
        if fmt == "bf16":
            return (r & np.uint64(0xFFFF)).astype(np.uint16).view(ml_dtypes.bfloat16).astype(np.float64)
        return (r & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32).astype(np.float64)


class SpirvEmulation:
    """``run_spirv_intel_mma`` for the emulator backend."""

    FAULTS = {**SPIRV_FAULTS, **TF32_ROUND_FAULTS}

    def _spirv_module(self, case) -> bytes:
        from cts.kernels.spirv_intel import module_text
        from cts.kernels.spirv_tools import assemble

        return assemble(module_text(case))  # SpirvToolError: a HarnessError (the suite cannot judge)

    # --- literal -> element formats ---------------------------------------
    def _spv_element(self, lit: int, side: int, container: tuple[str, int, int]) -> tuple[str, int, bool]:
        """(format, bits, signed) of matrix A (side 0) or B (side 1)."""
        f = self.faults

        def has(bit: int) -> bool:
            return bool(lit >> (bit + side) & 1)

        signed = has(_SIGNED) and not (side == 0 and "spirv_a_signed_ignored" in f)
        kinds = [(b, fmt, bits) for b, fmt, bits in ((_INT8, "int", 8), (_INT4, "int", 4)) if has(b)]
        kinds += [
            (b, fmt, bits)
            for b, fmt, bits in ((_TF32, "tf32", 32), (_F16, "f16", 16), (_BF16, "bf16", 16))
            if has(b)
        ]
        if len(kinds) > 1:
            raise CaseError(
                f"operand literal {lit:#x} names {len(kinds)} element types for matrix {'AB'[side]}"
            )
        if not kinds:  # the component type itself
            kind, bits, _ = container
            return ("int", bits, signed) if kind == "int" else ({16: "f16", 32: "f32"}[bits], bits, True)
        _, fmt, bits = kinds[0]
        if bits == 4 and "spirv_int4_as_int8" in f:
            bits = 8
        return fmt, bits, signed

    @staticmethod
    def _spv_values(raw: np.ndarray, fmt: str, bits: int, signed: bool) -> np.ndarray:
        if fmt == "int":
            return _sext(raw, bits) if signed else raw.astype(np.int64) & ((1 << bits) - 1)
        return _float_of(raw, fmt)

    def _spv_matrix_a(self, a: np.ndarray, info: dict, el: tuple) -> np.ndarray:
        """Registers (S, N, comps) -> A values (S, M, K)."""
        S, N, comps = a.shape
        M, K = info["result"][2], info["K"]
        fmt, ebits, signed = el
        cbits = info["A"][1]
        if N <= K or "spirv_n_gt_k_as_n_lt_k" in self.faults:
            if N > K:  # the fault: invocation i < K holds column i, component r = row r
                vals = self._spv_values(a[:, :K, : min(comps, M)], fmt, ebits, signed)  # (S, K, rows)
                out = np.zeros((S, M, K))
                out[:, : vals.shape[2], :] = vals.transpose(0, 2, 1)
                return out
            per_row = a[:, :, :M].transpose(0, 2, 1)  # (S, M, N): invocation = column group
            return self._spv_values(unpack_words(per_row, cbits, ebits), fmt, ebits, signed)
        f = N // K
        inv, comp = np.meshgrid(np.arange(N), np.arange(comps), indexing="ij")
        rows = f * comp + inv // K
        keep = rows < M  # upper invocations' data beyond M rows is ignored
        vals = self._spv_values(a, fmt, ebits, signed)
        out = np.zeros((S, M, K), dtype=vals.dtype)
        out[:, rows[keep], (inv % K)[keep]] = vals[:, inv[keep], comp[keep]]
        return out

    def _spv_matrix_b(self, b: np.ndarray, info: dict, el: tuple) -> np.ndarray:
        """Registers (S, N, comps): invocation n = column n -> (S, K, N)."""
        fmt, ebits, signed = el
        if ebits > 16:
            cols = b
        else:
            cols = unpack_words(b, info["B"][1], ebits)
        return self._spv_values(cols, fmt, ebits, signed).transpose(0, 2, 1)

    def _spv_accumulator(self, c: np.ndarray, info: dict, lit: int) -> np.ndarray:
        kind, bits, _ = info["C"]
        if lit >> _C_BF16 & 1 and "spirv_c_bf16_ignored" not in self.faults:
            v = _float_of(c, "bf16")
        elif kind == "int":
            v = _sext(
                c, bits
            )  # C is signed (SPV_INTEL_subgroup_matrix_multiply_accumulate, MatrixCSignedComponentsINTEL)
        else:
            v = _float_of(c, {16: "f16", 32: "f32"}[bits])
        return v.transpose(0, 2, 1)

    def _spv_result(self, d: np.ndarray, info: dict, lit: int) -> np.ndarray:
        kind, bits, _ = info["result"]
        if lit >> _R_BF16 & 1 and "spirv_result_bf16_ignored" not in self.faults:
            out = d.astype(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)
        elif kind == "int":
            with np.errstate(invalid="ignore", over="ignore"):
                iv = np.nan_to_num(d, nan=0.0, posinf=0.0, neginf=0.0) if d.dtype.kind == "f" else d
                out = iv.astype(np.int64, copy=False) & ((1 << bits) - 1)
            # non-negative after the mask: the int64 bits are the uint64 ones
            return np.ascontiguousarray(out.transpose(0, 2, 1)).view(np.uint64)
        elif bits == 16:
            with np.errstate(over="ignore"):
                out = d.astype(np.float16).view(np.uint16)
        else:
            with np.errstate(over="ignore"):
                out = d.astype(np.float32).view(np.uint32)
        return np.ascontiguousarray(out.astype(np.uint64).transpose(0, 2, 1))

    def run_spirv_intel_mma(self, case, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        """a (S, N, a_comps), b (S, N, b_comps), c (S, N, M) raw container bits
        -> Result registers (S, N, M)."""
        key = getattr(case, "module_key", None)  # what the module text depends on (not the tier)
        info = _BY_MODULE.get(key) if key is not None else None
        if info is None:
            binary = self._spirv_module(case)
            info = _PARSED.get(binary)
            if info is None:
                info = _PARSED.setdefault(binary, parse_mma_instruction(binary))
            if key is not None:
                _BY_MODULE[key] = info
        lit = info["literal"]
        if info["N"] != a.shape[1]:
            raise CaseError(f"module wants subgroup size {info['N']}, launched with {a.shape[1]}")
        elements = self.__dict__.setdefault("_spv_elements", {})  # per module: faults fixed per device
        key = (lit, info["A"], info["B"])
        if key not in elements:
            elements[key] = (self._spv_element(lit, 0, info["A"]), self._spv_element(lit, 1, info["B"]))
        ea, eb = elements[key]
        info = self._specialized(case, info)
        C = self._spv_accumulator(np.asarray(c), info, lit)
        if info["K"] == 0:  # an empty product: Result = C
            return self._spv_result(C + 0, info, lit)
        A = self._spv_matrix_a(np.asarray(a), info, ea)
        B = self._spv_matrix_b(np.asarray(b), info, eb)
        if A.shape[2] != B.shape[1]:
            raise CaseError(f"A gives {A.shape[2]} columns but B {B.shape[1]} rows (K Dim {info['K']})")
        if ea[0] == "int" and eb[0] == "int":
            from cts.backends.emu_common import int_matmul

            D = int_matmul(A, B, (1 << ea[1], 1 << eb[1])) + (
                C.astype(np.int64, copy=False) if C.dtype.kind == "i" else C
            )
        elif getattr(self, "model", None) is not None:  # --emulator-model: the same modelled device
            D = self._spv_modelled(A, B, C, ea[0], info, lit)
        else:
            from cts.backends.emu_common import float_mad, narrow_acc_mad

            D = None
            if "acc_one_step_narrower" in self.faults:  # the shared fault, by the Result Type
                D = narrow_acc_mad(A, B, C, getattr(case, "c", ""), getattr(case, "result", ""))
            if D is None:
                D = float_mad(A, B, C)
        return self._spv_result(D, info, lit)

    def _specialized(self, case, info: dict) -> dict:
        """The instruction with K Dim specialised as the build sets it
        (``cts.kernels.spirv_intel.specialization``), unless this device
        ignores the values set (fault spirv_spec_constant_default)."""
        sid = info.get("K_spec_id")
        if sid is None or "spirv_spec_constant_default" in self.faults:
            return info
        from cts.kernels.spirv_intel import specialization

        values = specialization(case)
        return {**info, "K": values[sid]} if sid in values else info

    def _spv_modelled(self, A, B, C, a_type: str, info: dict, lit: int) -> np.ndarray:
        """The float MMA through the emulator's device model (as the Intel
        built-ins compute under --emulator-model), types from the literal."""
        from reference.devmodel import model_mma

        def fmt(key: str, bf16_bit: int) -> str:
            return "bf16" if lit >> bf16_bit & 1 else {16: "f16", 32: "f32"}[info[key][1]]

        return model_mma(self.model, A, B, C, a_type, fmt("C", _C_BF16), fmt("result", _R_BF16))

    # --- OpRoundFToTF32INTEL ------------------------------------------------
    def run_spirv_tf32_round(self, case, x: np.ndarray) -> np.ndarray:
        """x float32 (items, width) -> the instruction's result, from the
        module's own Result Type (components) and this device's rounding:
        the 13 low mantissa bits dropped, the kept part rounded up past half
        and on a tie when its last bit is odd; an all-ones exponent (inf,
        NaN) kept, a NaN made quiet."""
        from cts.kernels.spirv_tf32 import module_text
        from cts.kernels.spirv_tools import assemble

        kind, bits, comps = parse_round_tf32(assemble(module_text(case.width)))
        x = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
        if (kind, bits) != ("float", 32) or comps != x.shape[1]:
            raise CaseError(
                f"OpRoundFToTF32INTEL result {comps} x {kind}{bits}, operands of {x.shape[1]} floats"
            )
        u = x.view(np.uint32)
        keep, low = u >> np.uint32(13), u & np.uint32(0x1FFF)
        if "spirv_tf32_round_ties_away" in self.faults:
            up = low >= np.uint32(0x1000)
        else:
            up = (low > np.uint32(0x1000)) | ((low == np.uint32(0x1000)) & (keep & np.uint32(1) == 1))
        rounded = (keep + up.astype(np.uint32)) << np.uint32(13)
        special = (u & np.uint32(0x7F800000)) == np.uint32(0x7F800000)
        nan = special & ((u & np.uint32(0x7FFFFF)) != 0)
        out = np.where(special, np.where(nan, (u | np.uint32(0x400000)) & np.uint32(0xFFFFE000), u), rounded)
        if "spirv_tf32_round_scalar_only" in self.faults and comps > 1:
            out[:, 1:] = u[:, 1:]
        return out.astype(np.uint32).view(np.float32)
