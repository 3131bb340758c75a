"""pytest side of the numerics fingerprint, registered in
``cts.plugin.ROOM_PLUGINS``.

* ``--emulator-model NAME``: the emulator computes float multiply-accumulates
  through a device model of ``reference.devmodel.MODELS`` (the Intel float
  built-ins included), so the suite can be run against a device that
  truncates, fuses blocks of 8, keeps few alignment bits, ...
* ``--numerics-tiles N``: random tiles per ``model``-tier case (default 32).

The ``model`` tier (cases/test_numerics_model.py): the backend's float MMA
is fingerprinted (cts.numerics.probes), and random tiles are checked bit for bit
against the inferred model.  Spec-digest 7.1: no spec fixes precision or
order, so a device is judged against *its own* fingerprint; where it is
consistent, its float results are reproducible exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from cts.families.coop import CoopEntry
from cts.families.float_mma import FLOAT_MMA_TARGETS
from cts.runs.coop import device_muladd, is_coop_device
from reference.devmodel import MODELS
from reference.dtypes import etype

__all__ = ["NumericsCase", "numerics_cases", "run_numerics_model"]

KNOWN_TARGETS = FLOAT_MMA_TARGETS  # every float MMA target a backend may offer
_STATE: dict = {"tiles": 32}


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("cts")
    g.addoption(
        "--emulator-model",
        default=None,
        metavar="NAME",
        help=f"emulator float MMAs through a device model: {', '.join(MODELS)}",
    )
    g.addoption("--numerics-tiles", default="32", help="random tiles per model-tier case (default 32)")


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config.option, "emulator_model"):
        return
    from cts.plugin import HARNESS

    try:
        _STATE["tiles"] = int(config.option.numerics_tiles)
    except ValueError:
        raise pytest.UsageError(
            f"--numerics-tiles expects an integer, got {config.option.numerics_tiles!r}"
        ) from None
    if _STATE["tiles"] < 1:
        raise pytest.UsageError("--numerics-tiles must be >= 1")
    name = config.option.emulator_model
    h = config.stash.get(HARNESS, None)
    if name is not None:
        if name not in MODELS:
            raise pytest.UsageError(f"unknown --emulator-model {name!r}; known: {', '.join(MODELS)}")
        if config.option.backend != "emulator":
            raise pytest.UsageError("--emulator-model needs --backend emulator")
        if h is not None:
            h.backend.set_model(name)
    if h is not None and not hasattr(h.backend, "run_float_mma") and is_coop_device(h.backend):
        # Vulkan cooperative matrix: the cases go through device_muladd and the
        # backend's own checks (reported entry, subgroup size, bf16 feature)
        _STATE["family"] = "coop_muladd"
        _STATE["sg"] = int(getattr(h.backend, "subgroup_size", 32) or 32)


def cts_rerun_args(config: pytest.Config) -> list[str]:
    out = []
    if getattr(config.option, "emulator_model", None):
        out += ["--emulator-model", config.option.emulator_model]
    if str(getattr(config.option, "numerics_tiles", "32")) != "32":
        out += ["--numerics-tiles", str(config.option.numerics_tiles)]
    return out


@dataclass(frozen=True)
class NumericsCase:
    a: str
    c: str
    M: int
    N: int
    K: int
    tier: str = "model"
    family: str = "float_mma"  # backend entry: run_float_mma (emulator) or device_muladd (vulkan)
    sg: int = 32  # cooperative matrix: the subgroup size the backend reports
    api: str = "vk"

    @property
    def entry(self):
        """The VkCooperativeMatrixPropertiesKHR entry this target needs (vulkan)."""
        from cts.families.coop import CoopEntry

        return CoopEntry(self.M, self.N, self.K, self.a, self.a, self.c, self.c)

    @property
    def id(self) -> str:
        return f"{self.a}_{self.c}-{self.M}x{self.N}x{self.K}"

    @property
    def spec_row(self) -> str:
        return f"float MMA {self.a}*{self.a}+{self.c} {self.M}x{self.N}x{self.K} (no spec fixes its rounding)"

    @property
    def axes(self) -> dict:
        return {"types": f"{self.a}_{self.c}", "shape": f"{self.M}x{self.N}x{self.K}", "tier": self.tier}


def numerics_cases(tiers: tuple[str, ...]) -> list[NumericsCase]:
    """One case per float MMA target (the backend skips those it lacks), when
    the opt-in tier ``model`` is asked for (``--tiers model``)."""
    if "model" not in tiers:
        return []
    fam = _STATE.get("family", "float_mma")
    return [NumericsCase(*t, family=fam, sg=_STATE.get("sg", 32)) for t in KNOWN_TARGETS]


numerics_cases.cts_tiers = ("model",)  # the plugin hands this generator only these tiers


def float_mma_of(backend, a: str, c: str, M: int, N: int, K: int):
    """The backend's float MMA for one target as ``mma(A, B, C) -> D``:
    ``run_float_mma`` (emulator) or ``cts.runs.coop.device_muladd`` (Vulkan
    cooperative matrix).  Unsupported (a skip) when it has neither."""
    from cts.errors import Unsupported

    if hasattr(backend, "run_float_mma"):
        if (a, c, M, N, K) not in tuple(backend.numerics_targets()):
            raise Unsupported(f"backend {backend.name!r} offers no float MMA {a}*{a}+{c} {M}x{N}x{K}")
        return lambda A, B, C: backend.run_float_mma(a, c, M, N, K, A, B, C)
    if is_coop_device(backend):
        entry = CoopEntry(M, N, K, a, a, c, c)
        return lambda A, B, C: device_muladd(backend, entry, A, B, C)
    raise Unsupported(
        f"backend {backend.name!r} has no float MMA entry (run_float_mma / cooperative-matrix MulAdd)"
    )


@dataclass
class _Result:
    verdict: object
    inputs: dict
    expected: np.ndarray
    actual: np.ndarray


_FINGERPRINTS: dict = {}


def run_numerics_model(case: NumericsCase, backend, seed: int) -> _Result:
    """Fingerprint the backend's float MMA, then check random tiles bit for
    bit against the inferred model (rule M)."""
    from cts.judge import compare
    from cts.numerics.model import equal_bits, fingerprint, random_operands
    from cts.numerics.probes import Target
    from reference.data import case_rng

    key = (case.a, case.c, case.M, case.N, case.K)
    # run_float_mma (emulator) or device_muladd (Vulkan); Unsupported otherwise
    mma = float_mma_of(backend, *key)
    t = Target(backend.name, case.M, case.N, case.K, case.a, case.c, mma)
    fkey = (id(backend), getattr(backend, "model", None), key)
    if fkey not in _FINGERPRINTS:
        _FINGERPRINTS[fkey] = fingerprint(t)
    fp = _FINGERPRINTS[fkey]
    rng = case_rng(seed, f"{case.family}[{case.id}]")
    A, B, C = random_operands(
        case.a, case.c, _STATE["tiles"], case.M, case.N, case.K, int(rng.integers(1 << 31))
    )
    D = np.asarray(mma(A, B, C), dtype=np.float64)
    from reference.devmodel import model_mma

    Mo = model_mma(fp.model, A, B, C, case.a, case.c)
    ct = etype(case.c)
    ok = equal_bits(D, Mo)
    v = compare(ct.encode(Mo), ct.encode(D), ct, ok, "M", lambda s, r, c: (c, r))
    v.notes.append(f"inferred model: {fp.model.summary()}")
    rep = fp.replay
    if rep["consistent"] != rep["probes"]:
        v.passed = False
        v.notes.append(
            f"the model reproduces only {rep['consistent']} of {rep['probes']} probes: {rep['mismatches'][:3]}"
        )
    return _Result(v, {"A": A, "B": B, "C": C}, ct.encode(Mo), ct.encode(D))
