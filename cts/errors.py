"""The suite's shared exceptions (the ground floor: every layer may raise or
catch them, none of them imports anything of the suite)."""

from __future__ import annotations

__all__ = ["BackendError", "CaseError", "Unsupported"]


class BackendError(Exception):
    """A usage or set-up problem that ends the session with a one-line error
    (unknown device, missing runtime requested explicitly, ...)."""


class CaseError(Exception):
    """A per-case failure that is not a wrong result (build failure with its
    log, launch error).  Fails that case only."""


class Unsupported(Exception):
    """Raised when a case cannot run here; the message is the skip reason."""
