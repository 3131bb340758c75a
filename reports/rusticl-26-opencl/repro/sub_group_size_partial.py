"""Standalone reproducer: the subgroup built-ins in a partial last subgroup.

OpenCL C 3.0, section 6.15.1 (Work-Item Functions):
  get_sub_group_size():  "Returns the number of work-items in the subgroup. This value is no more than the
                          maximum subgroup size and is implementation-defined based on a combination of the
                          compiled kernel and the dispatch dimensions."
  get_num_sub_groups():  "Returns the number of subgroups that the current work-group is divided into."

One work-group of 20 work-items (global 20, local 20).  The device forms subgroups 0, 1, 2 of 8, 8 and 4
work-items (its own get_sub_group_id / get_sub_group_local_id say so), so get_sub_group_size() must be 4 in
subgroup 2, and get_num_sub_groups() must be 3.

usage: python sub_group_size_partial.py [PLATFORM-OR-DEVICE-SUBSTRING]     (needs pyopencl and numpy)
exit 0: correct; 1: wrong (printed); 2: no such device.
"""

import sys

import numpy as np
import pyopencl as cl

SRC = """
%(attr)skernel void k(global uint *o)
{
    size_t i = get_local_id(0);
    o[5 * i + 0] = get_sub_group_size();
    o[5 * i + 1] = get_sub_group_id();
    o[5 * i + 2] = get_sub_group_local_id();
    o[5 * i + 3] = get_num_sub_groups();
    o[5 * i + 4] = get_max_sub_group_size();
}
"""
want = sys.argv[1].lower() if len(sys.argv) > 1 else ""
devs = [d for p in cl.get_platforms() for d in p.get_devices() if want in f"{p.name} {d.name}".lower()]
if not devs:
    sys.exit(f"no OpenCL device matches {want!r}")
dev = devs[0]
exts = dev.extensions.split()
# a device with cl_intel_required_subgroup_size is asked for size 8; Mesa rusticl has only size 8 and
# needs OpenCL C 3.0 for the subgroup built-ins (it lacks cl_khr_subgroups)
attr = "__attribute__((intel_reqd_sub_group_size(8)))\n" if "cl_intel_required_subgroup_size" in exts else ""
opts = [] if "cl_khr_subgroups" in exts else ["-cl-std=CL3.0"]
ctx = cl.Context([dev])
q = cl.CommandQueue(ctx)
prg = cl.Program(ctx, SRC % {"attr": attr}).build(options=opts)
n = 20
buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 5 * 4 * n)
prg.k(q, (n,), (n,), buf)
r = np.empty(5 * n, np.uint32)
cl.enqueue_copy(q, r, buf)
q.finish()
r = r.reshape(n, 5)
print(f"device: {dev.platform.name.strip()} / {dev.name.strip()} / driver {dev.driver_version}; build options {opts}")
print("get_sub_group_id       ", r[:, 1].tolist())
print("get_sub_group_local_id ", r[:, 2].tolist())
print("get_sub_group_size     ", r[:, 0].tolist())
print("get_num_sub_groups     ", sorted(set(r[:, 3].tolist())), " get_max_sub_group_size", sorted(set(r[:, 4].tolist())))
ids = r[:, 1]
members = np.array([np.count_nonzero(ids == k) for k in ids])
expected_num = len(set(ids.tolist()))
print("expected size (members of each work-item's subgroup)", members.tolist())
print("expected num_sub_groups", expected_num)
wrong = []
if (r[:, 0] != members).any():
    wrong.append(f"get_sub_group_size() wrong in work-items {np.flatnonzero(r[:, 0] != members).tolist()}")
if (r[:, 3] != expected_num).any():
    wrong.append(f"get_num_sub_groups() returns {sorted(set(r[:, 3].tolist()))}, the ids name {expected_num} subgroups")
print("RESULT:", "; ".join(wrong) if wrong else "correct")
sys.exit(1 if wrong else 0)
