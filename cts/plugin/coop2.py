"""Case source of the NV cooperative matrix 2 family (cases/test_coop_matrix2.py).

The matrix types come from the cooperative-matrix family's entries of this
session (``cts.plugin.coop.coop_state``: the device's, or ``--coop-profile``);
the coop2 features, limits and flexible-dimension entries from the backend's
``coop2_props()`` (Vulkan: VkPhysicalDeviceCooperativeMatrix2FeaturesNV /
PropertiesNV and vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV),
or ``cts.families.coop2.ASSUMED`` where the backend has none (the emulator).
"""

from __future__ import annotations

from cts.families.coop2 import ASSUMED, Coop2Case, Coop2Props, coop2_cases
from cts.plugin.coop import coop_state, session_backend

__all__ = ["coop_matrix2_cases", "coop2_props"]


def coop2_props() -> Coop2Props:
    backend = session_backend()
    got = backend.coop2_props() if backend is not None and hasattr(backend, "coop2_props") else None
    return got if got is not None else ASSUMED


def coop_matrix2_cases(tiers: tuple[str, ...]) -> list[Coop2Case]:
    """Every coop2 case for this session's entries (Vulkan form only)."""
    entries, sg, apis, _ = coop_state()
    return coop2_cases(entries, coop2_props(), sg) if "vk" in apis else []


coop_matrix2_cases.cts_tiers = ("exact",)  # every check of the family is exact
