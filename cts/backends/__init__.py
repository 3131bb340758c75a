"""Backend registry: name -> class, created from the pytest/CLI options."""

from __future__ import annotations

import importlib

from cts.backends.base import Backend, BackendError, CaseError, DeviceInfo, Unsupported

__all__ = ["BACKENDS", "make_backend", "Backend", "BackendError", "CaseError", "DeviceInfo", "Unsupported"]

BACKENDS = {
    "emulator": "cts.backends.emulator:EmulatorBackend",
    "opencl": "cts.backends.opencl:OpenCLBackend",
    "vulkan": "cts.backends.vulkan:VulkanBackend",
    "cuda": "cts.backends.cuda:CudaBackend",
}


def make_backend(name: str, **options) -> Backend:
    """Create a backend.  Options a backend does not take are ignored only if
    they are None/empty, so a misplaced option is an error, not a no-op."""
    if name not in BACKENDS:
        raise BackendError(f"unknown backend {name!r}; known: {', '.join(BACKENDS)}")
    mod, cls = BACKENDS[name].split(":")
    klass = getattr(importlib.import_module(mod), cls)
    return klass.from_options(**options)
