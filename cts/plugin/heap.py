"""Keep freed host buffers in the process heap (glibc).

A case allocates and frees numpy buffers of 128 KiB to a few MiB (operands,
memory images, canaries, the backend's copies).  glibc hands buffers of that
size out as fresh ``mmap`` pages, or gives the top of the heap back to the
system when they are freed, so the next case faults the same memory in
again; on a virtual machine a page fault costs microseconds, which made up
a fifth of the joint_matrix family's case time.  Raising the mmap threshold
to glibc's maximum (32 MiB) and the trim threshold (512 MiB) keeps freed
buffers for reuse; the process then holds on to its peak heap until it ends.

Only the harness process changes (pytest and its xdist workers), only under
glibc; ``CTS_KEEP_HEAP=0`` leaves the C library's defaults alone.
"""

from __future__ import annotations

import ctypes
import os
import platform

__all__ = ["keep_freed_memory"]

_M_TRIM_THRESHOLD = -1  # <malloc.h>
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 << 20  # glibc's largest (DEFAULT_MMAP_THRESHOLD_MAX, 64-bit)
_TRIM_THRESHOLD = 512 << 20

_DONE: list[bool] = []


def keep_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds once per process; True when set."""
    if _DONE:
        return _DONE[0]
    ok = False
    if os.environ.get("CTS_KEEP_HEAP", "1") != "0" and platform.system() == "Linux":
        try:
            mallopt = ctypes.CDLL(None).mallopt  # glibc and a few others; absent: left alone
            if platform.libc_ver()[0] == "glibc":
                ok = mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD) == 1
                ok = mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD) == 1 and ok
        except (OSError, AttributeError):
            ok = False
    _DONE.append(ok)
    return ok
