"""The execution environment's float rules, part of every verdict.

A result is judged by the operation's rule *and* the client API's.  Each
backend states the environment a module ran in (``float_env(case)``; a
backend without the method runs IEEE arithmetic: the emulator, OpenCL's full
profile for the operations the suite judges):

* Vulkan (the Vulkan specification, "Precision and Operation of SPIR-V
  Instructions"): without ``SignedZeroInfNanPreserve`` for a width, an
  implementation may ignore the sign of a zero and assume that operands and
  results are not NaN or infinite; without ``DenormPreserve`` it may flush
  denormal inputs and results to zero; ``OpFDiv`` is bounded (2.5 ULP) only
  for divisors in [2^-126, 2^126] (16-bit: [2^-14, 2^14], 64-bit:
  [2^-1022, 2^1022]), whatever the modes.  The modes a module declares are
  read from its ``OpExecutionMode`` instructions (:func:`vulkan_env_from_spirv`).
* IEEE (emulator, OpenCL full profile, CUDA / PTX ``div.rn``): zeros, infinities
  and NaNs as IEEE 754; a subnormal flushed to a zero of its sign stays
  accepted, as before (PTX has ``.ftz`` forms, OpenCL lets a device without
  CL_FP_DENORM flush).

Elements whose result the environment leaves undefined are not judged: they
are counted per reason and named in the verdict ("undefined by the
environment: 37 elements: divisor outside [2^-126, 2^126]").
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

__all__ = ["FloatEnv", "IEEE", "PTX", "VULKAN", "VULKAN_PRESERVE", "vulkan_env_from_spirv", "float_env_of"]

WIDTHS = frozenset({16, 32, 64})
# OpFDiv's bounded divisor range per width (Vulkan, "Precision and Operation of SPIR-V Instructions")
FDIV_RANGE = {16: (2.0**-14, 2.0**14), 32: (2.0**-126, 2.0**126), 64: (2.0**-1022, 2.0**1022)}
_EXP = {16: "14", 32: "126", 64: "1022"}


@dataclass(frozen=True)
class FloatEnv:
    """What an environment promises for float results, per width."""

    name: str
    signed_zero_inf_nan: frozenset = WIDTHS  # widths whose zeros, inf and NaN are IEEE
    denorm_preserve: frozenset = frozenset()  # widths where a flushed subnormal is wrong
    fdiv_range: bool = False  # division bounded only for divisors inside FDIV_RANGE

    def flush_allowed(self, bits: int) -> bool:
        return bits not in self.denorm_preserve

    def describe(self) -> str:
        szin = ",".join(str(w) for w in sorted(self.signed_zero_inf_nan)) or "none"
        dp = ",".join(str(w) for w in sorted(self.denorm_preserve)) or "none"
        return f"{self.name} (SignedZeroInfNanPreserve: {szin}; DenormPreserve: {dp})"

    def undefined(
        self, op: str, inputs: list[np.ndarray], exact: np.ndarray, actual: np.ndarray, bits: int
    ) -> dict:
        """reason -> mask of the elements of an element-wise float result
        (``exact``: the IEEE result, ``actual``: the device's values) that this
        environment leaves undefined."""
        out: dict[str, np.ndarray] = {}
        shape = np.shape(exact)
        with np.errstate(invalid="ignore"):
            if bits not in self.signed_zero_inf_nan:
                why = f"no SignedZeroInfNanPreserve for {bits}-bit floats"
                nonfinite = ~np.isfinite(exact)
                for x in inputs:
                    nonfinite = nonfinite | ~np.isfinite(np.broadcast_to(x, shape))
                out[f"an inf or NaN operand or result ({why})"] = nonfinite
                a = np.asarray(actual, dtype=np.float64)
                out[f"the sign of a zero result ({why})"] = (
                    (exact == 0) & (a == 0) & (np.signbit(exact) != np.signbit(a))
                )
            if self.fdiv_range and op == "divf" and len(inputs) == 2:
                lo, hi = FDIV_RANGE[bits]
                y = np.abs(np.broadcast_to(inputs[1], shape))
                e = _EXP[bits]
                out[f"divisor outside [2^-{e}, 2^{e}]"] = ~((y >= lo) & (y <= hi))
        return {k: m for k, m in out.items() if np.any(m)}


IEEE = FloatEnv("IEEE 754 (emulator / OpenCL full profile)")
PTX = FloatEnv("CUDA PTX")
VULKAN = FloatEnv("Vulkan SPIR-V environment", signed_zero_inf_nan=frozenset(), fdiv_range=True)
VULKAN_PRESERVE = FloatEnv("Vulkan SPIR-V environment", denorm_preserve=WIDTHS, fdiv_range=True)

# SPIR-V: OpExecutionMode = 16, OpExecutionModeId = 331; modes (SPV_KHR_float_controls)
_OP_EXECUTION_MODE = 16
_DENORM_PRESERVE, _SIGNED_ZERO_INF_NAN_PRESERVE = 4459, 4461


def vulkan_env_from_spirv(code: bytes) -> FloatEnv:
    """The Vulkan environment of a SPIR-V binary: the widths its
    OpExecutionMode instructions declare SignedZeroInfNanPreserve and
    DenormPreserve for (none declared: :data:`VULKAN`)."""
    n = len(code) // 4
    if n < 5:
        return VULKAN
    magic = struct.unpack_from("<I", code, 0)[0]
    fmt = "<" if magic == 0x07230203 else ">"
    words = struct.unpack_from(f"{fmt}{n}I", code, 0)
    szin, dp = set(), set()
    i = 5
    while i < n:
        wc, op = words[i] >> 16, words[i] & 0xFFFF
        if wc == 0:
            break
        if op == _OP_EXECUTION_MODE and wc >= 4:
            mode, width = words[i + 2], words[i + 3]
            if mode == _SIGNED_ZERO_INF_NAN_PRESERVE:
                szin.add(width)
            elif mode == _DENORM_PRESERVE:
                dp.add(width)
        i += wc
    return FloatEnv(VULKAN.name, frozenset(szin), frozenset(dp), fdiv_range=True)


def float_env_of(backend, case) -> FloatEnv:
    """The environment ``backend`` ran ``case`` in (IEEE where it states none)."""
    fn = getattr(backend, "float_env", None)
    env = fn(case) if callable(fn) else None
    return env if isinstance(env, FloatEnv) else IEEE
