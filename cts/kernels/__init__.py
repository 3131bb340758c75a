"""Kernel code generators (OpenCL C, SPIR-V, GLSL) and shipped preludes (*.cl).

:class:`KernelSource` is the one description of "what runs for a case" that
every backend family returns from ``kernel_source(case)``: the exact text or
IL, the entry point, build options and launch sizes.  The repro-bundle room
writes standalone bundles from it; backends build and launch from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["KernelSource", "KERNEL_DIR"]

KERNEL_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class KernelSource:
    """One kernel as it is built and launched.

    * ``source``: the complete OpenCL C text (any prelude already prepended),
      or None for an IL kernel; ``il``: SPIR-V words as bytes, or None.
    * ``entry``: kernel name; ``options``: build options string.
    * ``global_size`` / ``local_size``: the NDRange (1-D for the Intel families).
    * ``args``: kernel argument names in order; ``arg_types``: the host numpy
      dtype of each buffer argument (e.g. ``"uint32"``), same order.
    * ``notes``: free text for a human reading a bundle (pairing, layout).
    * ``spec_constants``: (SpecId, 32-bit value) pairs to set before building
      an IL kernel (OpenCL clSetProgramSpecializationConstant).
    """

    entry: str
    source: str | None = None
    il: bytes | None = None
    options: str = ""
    global_size: tuple[int, ...] = ()
    local_size: tuple[int, ...] | None = None
    args: tuple[str, ...] = ()
    arg_types: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    spec_constants: tuple[tuple[int, int], ...] = ()

    @property
    def language(self) -> str:
        return "spirv" if self.il is not None else "opencl-c"
