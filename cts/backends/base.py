"""The backend interface shared by the emulator, OpenCL and Vulkan backends."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cts.errors import BackendError, CaseError, Unsupported

__all__ = ["Backend", "DeviceInfo", "BackendError", "CaseError", "Unsupported"]


@dataclass
class DeviceInfo:
    backend: str
    name: str
    platform: str = ""
    driver: str = ""
    version: str = ""
    extensions: tuple[str, ...] = ()
    subgroup_sizes: tuple[int, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "backend": self.backend,
            "name": self.name,
            "platform": self.platform,
            "driver": self.driver,
            "version": self.version,
            "extensions": list(self.extensions),
            "subgroup_sizes": list(self.subgroup_sizes),
            **{k: v for k, v in self.extra.items() if isinstance(v, (str, int, float, list, dict))},
        }


class Backend:
    """Base class.  A family's entry point is a method ``run_<family>``;
    a backend that does not implement a family says so through
    ``unsupported``, which every case consults before running."""

    name = "base"

    def describe(self) -> DeviceInfo:  # pragma: no cover - overridden
        raise NotImplementedError

    def identity(self) -> dict:
        """What names this device in a record of verdicts (journal
        ``ident``) beyond ``describe()``: {"device": name, "faults": [...]}
        where a backend names them apart.  Default: nothing more."""
        return {}

    def unsupported(self, case) -> str | None:
        """A skip reason naming what is missing, or None if the case can run."""
        if not hasattr(self, f"run_{case.family}"):
            return (
                f"not realized by the suite: backend {self.name!r} has no {case.family} runner "
                "(a coverage gap of the suite, not a device verdict)"
            )
        return None

    def unsupported_by_family(self, case) -> str | None:
        """The family's own capability check, ``unsupported_<family>(case)``
        (the protocol ``cts.families.registry`` names as the family's
        ``check``), or None where this backend has none."""
        check = getattr(self, f"unsupported_{case.family}", None)
        return check(case) if check else None

    def close(self) -> None:
        pass

    # Families implemented by subclasses: run_<family> with the signature of the family's
    # protocol (cts.backends.protocols, named by the registry cts.families.registry); a
    # family whose case runs several launches may offer run_<family>_launches(case,
    # [operands, ...]) -> [results, ...] (the emulator does, for subgroup_rotate); a backend
    # without it runs each launch as its own dispatch through run().

    def run(self, case, **operands: np.ndarray):
        fn = getattr(self, f"run_{case.family}")
        return fn(case, **operands)
