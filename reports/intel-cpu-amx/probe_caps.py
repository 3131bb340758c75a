"""Which SPV_INTEL_joint_matrix capabilities Intel's CPU OpenCL runtime
accepts: one trivial kernel per capability (with and without the
extension declared), built on the selected device.  Output: one line per
(capability, extension) with "accepted" or the runtime's words."""

import re
import sys

import pyopencl as cl

from cts.backends.devices import select_device
from cts.kernels.joint_spv import INTEL_CAPS
from cts.kernels.joint_spv_check import assemble_raw

HEAD = """OpCapability Addresses
OpCapability Kernel
OpCapability Int64
OpCapability CooperativeMatrixKHR
{cap}
OpExtension "SPV_KHR_cooperative_matrix"
{ext}
OpMemoryModel Physical64 OpenCL
OpEntryPoint Kernel %k "k"
%void = OpTypeVoid
%u32 = OpTypeInt 32 0
%p = OpTypePointer CrossWorkgroup %u32
%fn = OpTypeFunction %void %p
%c = OpConstant %u32 7
%k = OpFunction %void None %fn
%a = OpFunctionParameter %p
%e = OpLabel
OpStore %a %c
OpReturn
OpFunctionEnd
"""

dev = select_device(sys.argv[1] if len(sys.argv) > 1 else "Intel")
ctx = cl.Context([dev.device])
print(f"device: {dev.label}; driver {dev.device.driver_version}")
for _key, (token, name) in [("none", (0, "(no INTEL capability)")), *INTEL_CAPS.items()]:
    for ext in (False, True):
        text = HEAD.format(
            cap=f"OpCapability !{token}" if token else "",
            ext='OpExtension "SPV_INTEL_joint_matrix"' if ext else "",
        )
        try:
            cl.Program(ctx, assemble_raw(text)).build()
            verdict = "accepted"
        except cl.Error as e:
            found = re.findall(r"requires unsupported capability \d+|Unsupported SPIR-V module", str(e))
            verdict = "refused: " + ("; ".join(sorted(set(found))) or str(e).strip().splitlines()[-1])
        print(f"{token:5d} {name:48s} {'with' if ext else 'without':7s} extension: {verdict}")
