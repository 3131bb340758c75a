"""The suite's shared exceptions (the ground floor: every layer may raise or
catch them, none of them imports anything of the suite)."""

from __future__ import annotations

__all__ = [
    "BackendError",
    "CaseError",
    "CaseTimeout",
    "HarnessError",
    "LAYERS",
    "ToolchainError",
    "Unsupported",
]

# The layer a non-pass blames (journal field ``layer``): the device (its driver and the
# driver's own compiler), the toolchain between the suite and the device (a named external
# tool and its version: mlir-opt, mlir-translate), or the suite itself (a harness error).
LAYERS = ("device", "toolchain", "suite")


class BackendError(Exception):
    """A usage or set-up problem that ends the session with a one-line error
    (unknown device, missing runtime requested explicitly, ...)."""


class CaseError(Exception):
    """A per-case failure of the device that is not a wrong result: the
    driver's compiler refusing a module the device claims to support, a
    launch or read-back error.  A device verdict (``failed``) of that case
    only."""


class CaseTimeout(CaseError):
    """The device did not finish the case within its limit (a kernel that
    hangs in a child process): the ``timeout`` verdict of that case."""


class HarnessError(Exception):
    """The suite could not judge the case: a host tool missing or crashing
    (spirv-as, spirv-val, glslang), a module the suite generated that a host
    tool rejects, an unreadable input.  Reported as ``error``, apart from the
    device verdicts, never as ``failed``; the message names what to install
    or fix."""


class ToolchainError(HarnessError):
    """The compiler between the suite and the device (upstream ``mlir-opt``
    / ``mlir-translate`` for the MLIR family) refused a case the spec
    allows: a verdict on that tool, reported apart from the device verdicts
    (outcome ``error``, journal field ``toolchain``), never ``failed``.  The
    message names the tool, its version and its own words."""


class Unsupported(Exception):
    """Raised when a case cannot run here; the message is the skip reason."""
