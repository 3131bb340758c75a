"""Emulator mixin: float multiply-accumulate through a chosen device model
(reference/devmodel.py).

* ``run_float_mma(a_type, c_type, M, N, K, A, B, C) -> D`` is the abstract
  float MMA the numerics experiments and the ``model`` tier call (values in,
  values out, batched over tiles).  It uses the configured model, or the
  IEEE-faithful ``exact_rne`` model (exact sum, one RNE rounding) when none
  is configured.
* With ``--emulator-model NAME`` the Intel float built-ins are computed
  through the same model (their operand decoding is unchanged), so the whole
  suite can be run against a device that truncates, fuses blocks of 8, ...
"""

from __future__ import annotations

import numpy as np

from cts.families.float_mma import FLOAT_MMA_TARGETS
from reference.devmodel import MODELS, DevModel, model_mma

__all__ = ["NumericsEmulation", "NUMERICS_TARGETS", "emulator_models"]

NUMERICS_TARGETS = FLOAT_MMA_TARGETS  # the emulator offers every target the experiments know


def emulator_models() -> dict[str, DevModel]:
    return dict(MODELS)


class NumericsEmulation:
    FAULTS: dict[str, str] = {
        "numerics_order_drift": "float MMA: every other tile sums its products in reverse blocks of 4 "
        "(a device no single fingerprint explains)",
        "numerics_rne_ties_away": "float MMA: ties of the final rounding go away from zero on odd tiles",
    }
    model: DevModel | None = None
    _num_case = None

    def set_model(self, name: str | DevModel | None) -> None:
        """Configure the device model (a name of reference.devmodel.MODELS)."""
        if name is None or isinstance(name, DevModel):
            self.model = name
            return
        if name not in MODELS:
            raise ValueError(f"unknown emulator model {name!r}; known: {', '.join(MODELS)}")
        self.model = MODELS[name]

    def numerics_targets(self) -> tuple[tuple[str, str, int, int, int], ...]:
        return NUMERICS_TARGETS

    def run_float_mma(self, a_type, c_type, M, N, K, A, B, C) -> np.ndarray:
        if (a_type, c_type, M, N, K) not in NUMERICS_TARGETS:
            from cts.backends.base import Unsupported

            raise Unsupported(f"emulator has no float MMA {a_type}*{a_type}+{c_type} {M}x{N}x{K}")
        m = self.model or MODELS["exact_rne"]
        D = model_mma(m, A, B, C, a_type, c_type)
        faults = getattr(self, "faults", frozenset())
        if A.shape[0] > 1 and faults & {"numerics_order_drift", "numerics_rne_ties_away"}:
            odd = slice(1, None, 2)
            if "numerics_order_drift" in faults:
                alt = m.with_(
                    block=4, order="reverse", extra_bits=m.extra_bits if m.extra_bits is not None else 2
                )
            else:
                alt = m.with_(acc_rounding="rna", out_rounding="rna")
            D[odd] = model_mma(alt, A[odd], B[odd], C[odd], a_type, c_type)
        return D

    # --- Intel built-ins through the model ------------------------------
    def run_intel_mma(self, case, a, b, c):
        self._num_case = case
        try:
            return super().run_intel_mma(case, a, b, c)
        finally:
            self._num_case = None

    def run_intel_split_mma(self, case, a, b, c):
        self._num_case = case
        try:
            return super().run_intel_split_mma(case, a, b, c)
        finally:
            self._num_case = None

    def _mad(self, A, B, C, is_int):
        case = self._num_case
        if is_int or self.model is None or case is None:
            return super()._mad(A, B, C, is_int)
        return model_mma(self.model, A, B, C, case.a, case.acc)
