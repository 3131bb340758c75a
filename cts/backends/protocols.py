"""The backend entry of each family as a typed protocol (PEP 544).

A family's cases reach a backend through ``Backend.run(case, **operands)``,
which calls ``run_<family>``; a device backend answers
``unsupported(case)`` through ``unsupported_<family>``.  The methods below
are those entries with their real signatures: the registry
(``cts.families.registry``) names the protocol of each family, and
``tests/test_family_registry.py`` checks every backend class against the
protocol of each family it realises (``inspect.signature``: names, kinds and
defaults of the parameters).

``case`` is the family's frozen case dataclass (``cts.families``); arrays
are numpy arrays in the shapes the family's run flow (``cts.runs``)
documents.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

__all__ = [
    "CoopMatrix",
    "CoopMatrix2",
    "FloatMma",
    "IntelMma",
    "IntelSplitMma",
    "IntelTf32Convert",
    "JointMatrix",
    "MlirMma",
    "SpirvIntelMma",
    "SpirvTf32Round",
    "SubgroupBuiltins",
    "SubgroupRotate",
]


class IntelMma(Protocol):
    def run_intel_mma(self, case: Any, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        """a, b, c: (S, N, comps) raw bits per subgroup and invocation -> d, the same shape."""
        ...


class IntelMmaCheck(Protocol):
    def unsupported_intel_mma(self, case: Any) -> str | None: ...


class IntelSplitMma(Protocol):
    def run_intel_split_mma(self, case: Any, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        """a (G, W, N, comps), b / c / d (G, W, N, .): G work-groups of W = case.wg subgroups."""
        ...


class IntelSplitMmaCheck(Protocol):
    def unsupported_intel_split_mma(self, case: Any) -> str | None: ...


class IntelTf32Convert(Protocol):
    def run_intel_tf32_convert(self, case: Any, x: np.ndarray) -> np.ndarray:
        """x: float32 (items, width) -> the converted values, the same shape."""
        ...


class IntelTf32ConvertCheck(Protocol):
    def unsupported_intel_tf32_convert(self, case: Any) -> str | None: ...


class SpirvIntelMma(Protocol):
    def run_spirv_intel_mma(self, case: Any, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray: ...


class SpirvIntelMmaCheck(Protocol):
    def unsupported_spirv_intel_mma(self, case: Any) -> str | None: ...


class SpirvTf32Round(Protocol):
    def run_spirv_tf32_round(self, case: Any, x: np.ndarray) -> np.ndarray: ...


class SpirvTf32RoundCheck(Protocol):
    def unsupported_spirv_tf32_round(self, case: Any) -> str | None: ...


class CoopMatrix(Protocol):
    def run_coop_matrix(self, case: Any, bufs: dict) -> dict:
        """bufs: the kernel's buffers by name -> the buffers after the launch."""
        ...


class CoopMatrixCheck(Protocol):
    def unsupported_coop_matrix(self, case: Any) -> str | None: ...


class CoopMatrix2(Protocol):
    def run_coop_matrix2(self, case: Any, bufs: dict) -> dict: ...


class CoopMatrix2Check(Protocol):
    def unsupported_coop_matrix2(self, case: Any) -> str | None: ...


class JointMatrix(Protocol):
    def run_joint_matrix(self, case: Any, **kw: np.ndarray) -> np.ndarray:
        """kw: the kernel's buffers by name (operands and outputs)."""
        ...


class JointMatrixCheck(Protocol):
    def unsupported_joint_matrix(self, case: Any) -> str | None: ...


class MlirMma(Protocol):
    def run_mlir_mma(self, case: Any, program: list, buffers: dict) -> dict:
        """program: the case's op list (cts.families.mlir_program); buffers by name -> after the launch."""
        ...


class MlirMmaCheck(Protocol):
    def unsupported_mlir_mma(self, case: Any) -> str | None: ...


class SubgroupRotate(Protocol):
    def run_subgroup_rotate(
        self, case: Any, values: np.ndarray, deltas: np.ndarray, const: Any = None
    ) -> dict: ...


class SubgroupRotateLaunches(Protocol):
    """Optional: the case's launches computed in one call (the emulator);
    without it, ``cts.runs.rotate`` dispatches each launch through ``run``."""

    def run_subgroup_rotate_launches(self, case: Any, launches: list[dict]) -> list[dict]: ...


class SubgroupRotateCheck(Protocol):
    def unsupported_subgroup_rotate(self, case: Any) -> str | None: ...


class SubgroupBuiltins(Protocol):
    def run_subgroup_builtins(self, case: Any, groups: int, local: int) -> dict: ...


class SubgroupBuiltinsCheck(Protocol):
    def unsupported_subgroup_builtins(self, case: Any) -> str | None: ...


class FloatMma(Protocol):
    def run_float_mma(
        self,
        a_type: str,
        c_type: str,
        M: int,
        N: int,
        K: int,
        A: np.ndarray,
        B: np.ndarray,
        C: np.ndarray,
    ) -> np.ndarray:
        """Logical float tiles A (T, M, K), B (T, K, N), C (T, M, N) -> D as float64."""
        ...


class FloatMmaCheck(Protocol):
    def unsupported_float_mma(self, case: Any) -> str | None: ...
