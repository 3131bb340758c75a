"""Hostile emulator faults: a device double whose driver crashes or hangs
inside a case, or returns a build log full of markup.

They exist to prove the sweep machinery: a crash of the worker process
becomes a ``crash`` row for that case while the sweep goes on (pytest-xdist
restarts the worker), a hang becomes ``timeout`` through pytest-timeout, and
driver strings are escaped in the HTML report.  Only ``intel_mma`` cases
with M = 2 misbehave, so the other cases of a sweep show that nothing else
is lost.

The crash and hang faults are armed only when the environment variable
``CTS_HOSTILE=1`` is set; unarmed, they fail the case with a CaseError
instead, so a loop over all faults in one process can never kill or hang it.
"""

from __future__ import annotations

import os
import signal
import time

from cts.backends.base import CaseError
from cts.errors import CaseTimeout

__all__ = ["HostileEmulation", "FAULTS", "PROCESS_FAULTS"]

FAULTS: dict[str, str] = {
    "hostile_segv_M2": "the driver kills the process (SIGSEGV) in intel_mma cases with M=2 (needs CTS_HOSTILE=1)",
    "hostile_hang_M2": "the driver hangs forever in intel_mma cases with M=2 (needs CTS_HOSTILE=1)",
    "hostile_markup_log_M2": "intel_mma cases with M=2 fail to build with a build log full of HTML/script",
    "hostile_child_hang_M2": "intel_mma cases with M=2 hang in the kernel's child process past its limit",
}

# faults that end or wedge the process rather than change a result: not part
# of the device's identity in a record (EmulatorBackend.identity)
PROCESS_FAULTS = ("hostile_segv_M2", "hostile_hang_M2")

MARKUP_LOG = '<script>alert("pwned")</script><img src=x onerror=alert(1)> & </pre><b>bold</b>'


def _armed(fault: str) -> None:
    if os.environ.get("CTS_HOSTILE") != "1":
        raise CaseError(f"hostile fault {fault} is not armed (set CTS_HOSTILE=1); failing the case instead")


class HostileEmulation:
    """Wraps ``run_intel_mma`` of the next mixin in the MRO."""

    FAULTS = FAULTS

    def run_intel_mma(self, case, a, b, c):
        f = self.faults
        if case.M == 2:
            if "hostile_segv_M2" in f:
                _armed("hostile_segv_M2")
                os.kill(os.getpid(), signal.SIGSEGV)
            if "hostile_hang_M2" in f:
                _armed("hostile_hang_M2")
                mark = os.environ.get("CTS_HOSTILE_MARK")
                if mark:  # tells a test the hang has begun (signals sent after this land inside it)
                    with open(mark, "w") as fh:
                        fh.write(case.id)
                while True:  # a wedged driver call
                    time.sleep(0.05)
            if "hostile_child_hang_M2" in f:  # what a child-process runner reports (opencl_coop)
                raise CaseTimeout(f"{case.id}: kernel hung for 1 s in a child process on the emulator")
            if "hostile_markup_log_M2" in f:
                raise CaseError("clBuildProgram failed; build log:\n" + MARKUP_LOG)
        return super().run_intel_mma(case, a, b, c)
