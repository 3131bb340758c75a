#!/usr/bin/env python3
"""Standalone reproducer (needs only pyopencl): a SPIR-V module using
OpGroupNonUniformRotateKHR with an 8-bit Delta fails to build on Intel's CPU
OpenCL runtime 2026.2, while the same module with a 32-bit Delta builds.

Rule: SPV_KHR_subgroup_rotate, OpGroupNonUniformRotateKHR: "Delta must be a
scalar of integer type, whose Signedness operand is 0" (any width); the
runtime reports SPV_KHR_subgroup_rotate, GroupNonUniformRotateKHR and Int8 in
its cl_khr_spirv_queries lists, and spirv-val accepts both modules
(rotate-int-sg8-delta{8,32}.spvasm, assembled for SPIR-V 1.3 as the .spv).

    OCL_ICD_VENDORS=DIR python run.py [DEVICE-NAME-SUBSTRING]     # default: Intel
(DIR holds an .icd file naming the runtime's libintelocl.so, e.g. the PyPI intel-opencl-rt's
<venv>/lib/libintelocl.so; a system-wide /etc/OpenCL/vendors entry does as well.)
Expected: both build.  Observed (2026.22.10.0.01): the 8-bit one fails to link,
"Symbols not found: [ _Z16sub_group_rotateic ]".  Exit 1 while it does."""

import sys
from pathlib import Path

import pyopencl as cl

HERE = Path(__file__).resolve().parent
want = sys.argv[1] if len(sys.argv) > 1 else "Intel"
dev = next(d for p in cl.get_platforms() for d in p.get_devices() if want in p.name or want in d.name)
print(f"device: {dev.name} ({dev.platform.name}, driver {dev.driver_version})")
ctx = cl.Context([dev])
failed = False
for bits in (32, 8):
    il = (HERE / f"rotate-int-sg8-delta{bits}.spv").read_bytes()
    try:
        cl.Program(ctx, il).build()
        print(f"{bits}-bit Delta: builds")
    except cl.RuntimeError as e:
        said = [ln.strip() for ln in str(e).splitlines() if "Symbols not found" in ln or "error" in ln.lower()]
        print(f"{bits}-bit Delta: BUILD FAILED: {(said or [str(e)])[0][:300]}")
        failed = failed or bits == 8
sys.exit(1 if failed else 0)
