"""OpenCL mixin for the cooperative-matrix family: the
OpenCL forms ``clspv`` (SPIR-V Kernel module, cl_khr_cooperative_matrix
draft) and ``clc`` (OpenCL C ``coop_mat`` types, the Clang RFC's proposal).

Support detection, per form:

* ``clspv``: the device accepts SPIR-V IL and advertises
  ``cl_khr_cooperative_matrix``.  Its variants come from
  ``clGetDeviceCooperativeMatrixInfoKHR`` (``..._SUB_GROUP_VARIANTS_KHR``
  0x1079 per subgroup size, else ``..._DEFAULT_SUB_GROUP_VARIANTS_KHR``
  0x1078), called through ``clGetExtensionFunctionAddressForPlatform`` with
  ctypes where the entry point exists; a case whose entry (MulAdd) or matrix
  type (other ops) no variant allows is skipped, naming it.
* ``clc``: the OpenCL C compiler defines ``__opencl_c_ext_cooperative_matrix``
  (a probe kernel with ``#ifndef ... #error``, built once per session).

The OpenCL axes: :meth:`CoopOpenCL.coop_ocl_table` reports
the variants of every subgroup size and the draft queries 0x107A / 0x107B
(``clGetDeviceInfo``); every case is cross-checked against them (a kernel whose
pointers or Strides break the reported rules skips naming the query and its
value); ARM blocked layouts skip naming ``CooperativeMatrixLayoutsARM`` unless
the device's SPIR-V capability list has it (and its IL has SPIR-V 1.6); a
run-time Stride is the ``ulong`` kernel argument ``st``.

Otherwise every case skips with a reason naming the missing extension or
feature macro.  ``--assume-extension`` (NAME or ``*``) makes such a device run
the case anyway; Intel's CPU runtime accepts cooperative-matrix SPIR-V
without advertising it and then needs AMX, failing the build or dying with
SIGILL / abort (local-runtimes 2.4).  So a case that runs only because of
``--assume-extension`` builds and launches in a child process
(``python -m cts.backends.opencl_coop JOBDIR``): a signal death or a hang
becomes that case's :class:`CaseError`, the session goes on.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from cts.backends.base import CaseError, Unsupported
from cts.errors import CaseTimeout
from cts.kernels import KernelSource

__all__ = ["CoopOpenCL", "CL_EXTENSION", "CLC_FEATURE", "parse_variants", "CHILD_TIMEOUT_S"]

CL_EXTENSION = "cl_khr_cooperative_matrix"
CLC_FEATURE = "__opencl_c_ext_cooperative_matrix"
ENTRY_POINT = "clGetDeviceCooperativeMatrixInfoKHR"
DEFAULT_VARIANTS = 0x1078
SUB_GROUP_VARIANTS = 0x1079
POINTER_ALIGNMENT = 0x107A  # CL_DEVICE_COOPERATIVE_MATRIX_POINTER_ALIGNMENT_KHR (cl_uint, draft)
STRIDE_MULTIPLE = 0x107B  # CL_DEVICE_COOPERATIVE_MATRIX_STRIDE_MULTIPLE_KHR (cl_uint, draft)
ARM_LAYOUTS_CAPABILITY = 4201  # CooperativeMatrixLayoutsARM (SPV_ARM_cooperative_matrix_layouts)
SCALAR_ARGS = ("st",)  # kernel arguments passed by value (coop_cl_buffers.SCALAR_ARGS)
CHILD_TIMEOUT_S = 120.0  # default of CTS_COOP_CHILD_TIMEOUT (seconds)
MIN_CHILD_TIMEOUT_S = 1.0


def child_timeout_s() -> float:
    """CTS_COOP_CHILD_TIMEOUT (seconds, > 0), read when a child starts; a
    malformed value is a per-case error naming the variable, not a crash."""
    text = os.environ.get("CTS_COOP_CHILD_TIMEOUT", "")
    if not text.strip():
        return CHILD_TIMEOUT_S
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not MIN_CHILD_TIMEOUT_S <= v <= 86400:  # also rejects nan and inf (subprocess cannot wait "forever")
        raise CaseError(
            f"CTS_COOP_CHILD_TIMEOUT={text!r}: expected a number of seconds in [{MIN_CHILD_TIMEOUT_S:g}, 86400] "
            "(a child process needs about a second to start the runtime; a shorter limit cannot judge a kernel)"
        )
    return v


# cl_device_cooperative_matrix_component_type_khr (cl_khr_cooperative_matrix draft)
CL_COMPONENT = {
    0: "f16",
    1: "f32",
    2: "f64",
    3: "i8",
    4: "i16",
    5: "i32",
    6: "i64",
    7: "u8",
    8: "u16",
    9: "u32",
    10: "u64",
}
_PROBE = f"#ifndef {CLC_FEATURE}\n#error {CLC_FEATURE} is not defined\n#endif\nkernel void probe(global int *p) {{ p[0] = 1; }}\n"


class _Variant(ctypes.Structure):
    """cl_device_cooperative_matrix_variant_khr (draft field order)."""

    _fields_ = [
        ("m_size", ctypes.c_uint32),
        ("n_size", ctypes.c_uint32),
        ("k_size", ctypes.c_uint32),
        ("a_type", ctypes.c_uint32),
        ("b_type", ctypes.c_uint32),
        ("c_type", ctypes.c_uint32),
        ("result_type", ctypes.c_uint32),
        ("saturating_accumulation", ctypes.c_uint32),
    ]


def parse_variants(raw: bytes) -> list:
    """Variant records -> CoopEntry list (unknown component types dropped)."""
    from cts.families.coop import CoopEntry

    size = ctypes.sizeof(_Variant)
    out = []
    for i in range(0, len(raw) - size + 1, size):
        v = _Variant.from_buffer_copy(raw[i : i + size])
        types = [CL_COMPONENT.get(x) for x in (v.a_type, v.b_type, v.c_type, v.result_type)]
        if None in types:
            continue
        out.append(CoopEntry(v.m_size, v.n_size, v.k_size, *types, sat=bool(v.saturating_accumulation)))
    return out


def _signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


class CoopOpenCL:
    """Family ``coop_matrix`` on OpenCL (forms clspv and clc)."""

    coop_apis = ("clspv", "clc")

    # --- device queries -------------------------------------------------
    def coop_variants(self, sg: int | None = None) -> list | None:
        """The device's variants, or None when it does not advertise the
        extension or lacks the entry point."""
        key = ("_coop_variants", sg)
        cache = self.__dict__.setdefault("_coop_cache", {})
        if key in cache:
            return cache[key]
        got = None
        if CL_EXTENSION in self.describe().extensions:
            got = self._query_variants(sg)
        cache[key] = got
        return got

    def _query_variants(self, sg: int | None) -> list | None:
        from cts.backends import clquery

        lib = clquery.icd_loader()
        lib.clGetExtensionFunctionAddressForPlatform.restype = ctypes.c_void_p
        lib.clGetExtensionFunctionAddressForPlatform.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        addr = lib.clGetExtensionFunctionAddressForPlatform(self.platform.int_ptr, ENTRY_POINT.encode())
        if not addr:
            return None
        proto = ctypes.CFUNCTYPE(
            ctypes.c_int32,
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.c_size_t,
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_size_t),
        )
        fn = proto(addr)
        if sg is None:
            name, inp, inp_size = DEFAULT_VARIANTS, None, 0
        else:
            name, inp_val = SUB_GROUP_VARIANTS, ctypes.c_uint32(sg)
            inp, inp_size = ctypes.addressof(inp_val), 4
        n = ctypes.c_size_t(0)
        if fn(self.device.int_ptr, name, inp_size, inp, 0, None, ctypes.byref(n)) != 0:
            return None
        buf = ctypes.create_string_buffer(max(n.value, 1))
        if n.value and fn(self.device.int_ptr, name, inp_size, inp, n.value, buf, None) != 0:
            return None
        return parse_variants(buf.raw[: n.value])

    def coop_entries(self):
        """(entries, subgroup size) from the device for ``cts.plugin.coop``, or
        None (then ``--coop-profile`` / the default profile is used)."""
        for sg in self.describe().subgroup_sizes:
            got = self.coop_variants(sg)
            if got:
                return got, sg
        got = self.coop_variants(None)
        if got:
            sizes = self.describe().subgroup_sizes
            return got, (max(sizes) if sizes else 32)
        return None

    def coop_query(self, param: int) -> int | None:
        """A draft ``clGetDeviceInfo`` cl_uint (0x107A / 0x107B), or None where
        the device does not advertise the extension or does not answer."""
        from cts.backends import clquery

        if CL_EXTENSION not in self.describe().extensions:
            return None
        raw = clquery.device_info_bytes(self.device, param)
        return int.from_bytes(raw[:4], "little") if len(raw) >= 4 else None

    def coop_ocl_table(self, entries, sg: int):
        """The draft table (``cts.families.coop_ocl_axes.OclTable``): the
        variants of every reported subgroup size that has any (``sg``, the size
        the plain space runs at, first) and the two queries; without the
        extension, the session's entries at ``sg`` and no query values."""
        from cts.families.coop_ocl_axes import OclTable

        if CL_EXTENSION not in self.describe().extensions:
            return OclTable({sg: tuple(entries)}, source="session entries (no cl_khr_cooperative_matrix)")
        sizes = {sg: tuple(entries)}
        for size in self.describe().subgroup_sizes:
            got = self.coop_variants(size)
            if got and size != sg:
                sizes[size] = tuple(got)
        return OclTable(
            sizes,
            self.coop_query(POINTER_ALIGNMENT),
            self.coop_query(STRIDE_MULTIPLE),
            "clGetDeviceCooperativeMatrixInfoKHR",
        )

    def _clc_defined(self) -> bool:
        cache = self.__dict__.setdefault("_coop_cache", {})
        if "clc" not in cache:
            try:
                self.build_program(source=_PROBE, options="-cl-std=CL3.0")
                cache["clc"] = True
            except CaseError:
                cache["clc"] = False
        return cache["clc"]

    # --- support -----------------------------------------------------------
    def _coop_trusted(self, case) -> bool:
        """The device itself claims the form (not only --assume-extension)."""
        if case.api == "clspv":
            return CL_EXTENSION in self.describe().extensions
        return self._clc_defined()

    def unsupported_coop_matrix(self, case) -> str | None:
        from cts.backends import clquery

        dev = self.describe()
        name = self.device.name.strip()
        if case.api not in self.coop_apis:
            return f"cooperative-matrix form {case.api!r} does not run on OpenCL (use --backend vulkan)"
        types = [case.entry.A, case.entry.B, case.entry.C, case.entry.R] if case.entry else [case.mat.t]
        types += [case.to] if case.to else []
        if case.api == "clspv":
            il = clquery.il_version(self.device)
            if "SPIR-V" not in il:
                return f"{name} accepts no SPIR-V IL (CL_DEVICE_IL_VERSION {il!r}): {CL_EXTENSION} needs it"
            if case.layout in ("rowblk", "colblk"):
                arm = self._arm_missing(il)
                if arm:
                    return arm
            if not self.has_extension(CL_EXTENSION):
                caps = clquery.spirv_capabilities(self.device)
                note = " (its SPIR-V capability list names CooperativeMatrixKHR)" if 6022 in caps else ""
                return f"{CL_EXTENSION} not supported by {name}{note}; --assume-extension {CL_EXTENSION} runs it anyway"
            miss = self._variant_missing(case)
            if miss:
                return miss
        elif not self.has_extension(CLC_FEATURE) and not self._clc_defined():
            return (
                f"{CLC_FEATURE} not defined by the OpenCL C compiler of {name} "
                "(the Clang RFC's coop_mat proposal); "
                f"--assume-extension {CLC_FEATURE} tries it anyway"
            )
        if dev.subgroup_sizes and case.sg not in dev.subgroup_sizes:
            sizes = ", ".join(map(str, dev.subgroup_sizes))
            return f"subgroup size {case.sg} not supported by {name} (sizes {sizes})"
        for t, ext in (("f16", "cl_khr_fp16"), ("f64", "cl_khr_fp64")):
            if t in types and not self.has_extension(ext):
                return f"{ext} not supported by {name} ({t} components)"
        return self._query_violation(case)

    def _arm_missing(self, il: str) -> str | None:
        """ARM blocked layouts need capability 4201 in the device's SPIR-V
        capability list (cl_khr_spirv_queries) and SPIR-V 1.6 IL."""
        from cts.backends import clquery

        name = self.device.name.strip()
        if ARM_LAYOUTS_CAPABILITY not in clquery.spirv_capabilities(self.device):
            return (
                f"CooperativeMatrixLayoutsARM (SPIR-V capability {ARM_LAYOUTS_CAPABILITY}, "
                f"SPV_ARM_cooperative_matrix_layouts) not in the SPIR-V capabilities {name} reports"
                + (
                    ""
                    if CL_EXTENSION in self.describe().extensions
                    else f"; nor does it advertise {CL_EXTENSION}"
                )
            )
        if "SPIR-V_1.6" not in il:
            return f"SPV_ARM_cooperative_matrix_layouts requires SPIR-V 1.6; {name} accepts {il!r}"
        return None

    def _query_violation(self, case) -> str | None:
        """Cross-check of the draft queries against what the case's kernel
        does: a case outside the reported rules is undefined, so it skips
        naming the query and its value (never runs as a verdict)."""
        from cts.families.coop_ocl import buffer_rows
        from cts.kernels.coop_cl_axes import query_violation

        align, mult = self.coop_query(POINTER_ALIGNMENT), self.coop_query(STRIDE_MULTIPLE)
        if not align and not mult:
            return None
        why = query_violation(case, buffer_rows(case), align, mult)
        return f"undefined on {self.device.name.strip()} by the draft's rules: {why}" if why else None

    def _variant_missing(self, case) -> str | None:
        from cts.families.coop import matrix_types

        variants = self.coop_variants(case.sg if self.describe().subgroup_sizes else None)
        if variants is None:  # not advertised (assumed) or no entry point: nothing to match
            return None
        if case.entry is not None:
            e = case.entry
            if all(
                (v.M, v.N, v.K, v.A, v.B, v.C, v.R, v.sat) != (e.M, e.N, e.K, e.A, e.B, e.C, e.R, e.sat)
                for v in variants
            ):
                return f"{ENTRY_POINT} reports no variant {e.tag} for subgroup size {case.sg}"
            return None
        m = case.mat
        allowed = {(x.use, x.rows, x.cols, x.t) for x in matrix_types(variants)}
        for t in (m.t, case.to or m.t):
            if (m.use, m.rows, m.cols, t) not in allowed:
                return f"{ENTRY_POINT}: no variant allows the matrix {m.use}{m.rows}x{m.cols}-{t}"
        return None

    # --- kernels -------------------------------------------------------------
    def kernel_source_coop_matrix(self, case, subgroups: int, rows: dict | None = None) -> KernelSource:
        """The module (clspv, validated by spirv-val) or OpenCL C text (clc)."""
        from cts.families.coop import GEMM_TILES
        from cts.families.coop_ocl import buffer_rows
        from cts.kernels import coop_cl_buffers, coop_cl_c, coop_cl_spv
        from cts.kernels.spirv_tools import assemble

        rows = rows or buffer_rows(case)
        groups = subgroups
        if case.op == "gemm":
            tm, tn, _ = GEMM_TILES
            groups = max(2, subgroups // (tm * tn)) * tm * tn
        args = coop_cl_buffers.buffer_args(case)
        common = dict(
            global_size=(groups * case.sg,),
            local_size=(case.sg,),
            args=tuple(a for a, _ in args),
            arg_types=tuple(f"uint{coop_cl_buffers.TYPES[t][3]}" for _, t in args),
            notes=(f"{case.op}: one subgroup of {case.sg} per work-group; raw element bits, row = subgroup",),
        )
        if case.api == "clspv":
            il = assemble(coop_cl_spv.module_text(case, rows))  # tool failure: HarnessError
            return KernelSource(entry=coop_cl_spv.ENTRY, il=il, **common)
        src = coop_cl_c.kernel_text(case, rows)
        return KernelSource(
            entry=coop_cl_c.ENTRY, source=self.with_prelude(src), options="-cl-std=CL3.0", **common
        )

    # --- run ------------------------------------------------------------------
    def run_coop_matrix(self, case, bufs: dict) -> dict:
        """Buffers of the coop contract in, the same buffers (written) out."""
        reason = self.unsupported_coop_matrix(case)
        if reason:
            raise Unsupported(reason)
        from cts.families.coop import GEMM_TILES

        S = next(iter(bufs.values())).shape[0]  # subgroups (gemm: problems)
        if case.op == "gemm":
            S *= GEMM_TILES[0] * GEMM_TILES[1]
        rows = {k: int(np.prod(v.shape[1:])) for k, v in bufs.items()}
        ks = self.kernel_source_coop_matrix(case, S, rows)
        flat = {k: np.ascontiguousarray(v).reshape(-1) for k, v in bufs.items()}
        if self._coop_trusted(case):
            got = self._run_inline(ks, flat)
        else:
            got = self._run_child(ks, flat, case)
        return {k: got[k].reshape(bufs[k].shape) for k in bufs}

    def _run_inline(self, ks: KernelSource, flat: dict) -> dict:
        cl = self.cl
        prg = self.build_program(source=ks.source, il=ks.il, options=ks.options)
        mf = cl.mem_flags
        host = {k: np.array(flat[k], copy=True) for k in ks.args}
        dev = [
            np.uint64(host[k][0])
            if k in SCALAR_ARGS
            else cl.Buffer(self.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host[k])
            for k in ks.args
        ]
        self.launch(prg, ks.entry, ks.global_size, ks.local_size, *dev)
        try:
            for k, b in zip(ks.args, dev):
                if k not in SCALAR_ARGS:
                    cl.enqueue_copy(self.queue, host[k], b)
            self.queue.finish()
        except cl.Error as e:
            raise CaseError(f"read-back after {ks.entry} on {self.device_label} failed: {e}") from None
        return host

    def _run_child(self, ks: KernelSource, flat: dict, case) -> dict:
        """Build + launch in a fresh process: a crash stays in this case."""
        with tempfile.TemporaryDirectory(prefix="cts-coop-") as tmp:
            d = Path(tmp)
            np.savez(d / "in.npz", **flat)
            meta = {
                "device": str(self.selected.index),
                "entry": ks.entry,
                "source": ks.source,
                "options": ks.options,
                "global": list(ks.global_size),
                "local": list(ks.local_size),
                "args": list(ks.args),
            }
            if ks.il is not None:
                (d / "k.spv").write_bytes(ks.il)
            (d / "job.json").write_text(json.dumps(meta))
            limit = child_timeout_s()
            try:
                r = subprocess.run(
                    [sys.executable, "-m", "cts.backends.opencl_coop", str(d)],
                    capture_output=True,
                    text=True,
                    timeout=limit,
                    cwd=Path(__file__).resolve().parents[2],
                )
            except subprocess.TimeoutExpired:
                raise CaseTimeout(
                    f"{case.id}: kernel hung for {limit:.0f} s in a child process on {self.device_label} "
                    f"(run only because of --assume-extension)"
                ) from None
            tail = (r.stderr or r.stdout).strip()[-3000:]
            if r.returncode < 0 or r.returncode in (132, 134, 139):
                sig = _signal_name(r.returncode if r.returncode < 0 else -(r.returncode - 128))
                raise CaseError(
                    f"{case.id}: the OpenCL runtime died with {sig} in a child process on {self.device_label} "
                    f"(it does not advertise {case.extension}; run only because of --assume-extension)\n{tail}"
                )
            if r.returncode:
                raise CaseError(f"{case.id} failed in a child process on {self.device_label}:\n{tail}")
            with np.load(d / "out.npz") as z:
                return {k: z[k] for k in z.files}


def _child(jobdir: str) -> int:
    """Child side of ``_run_child``: select the device, build, launch, save."""
    d = Path(jobdir)
    meta = json.loads((d / "job.json").read_text())
    from cts.backends.devices import select_device

    dev = select_device(meta["device"])
    import pyopencl as cl

    ctx = cl.Context([dev.device])
    q = cl.CommandQueue(ctx)
    prg = (
        cl.Program(ctx, (d / "k.spv").read_bytes())
        if meta["source"] is None
        else cl.Program(ctx, meta["source"])
    )
    try:
        prg.build(options=meta["options"])
    except cl.Error as e:
        print(f"kernel build failed: {e}", file=sys.stderr)
        return 3
    with np.load(d / "in.npz") as z:
        host = {k: np.array(z[k]) for k in meta["args"]}
    bufs = [
        np.uint64(host[k][0])
        if k in SCALAR_ARGS
        else cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host[k])
        for k in meta["args"]
    ]
    k = cl.Kernel(prg, meta["entry"])
    k.set_args(*bufs)
    cl.enqueue_nd_range_kernel(q, k, tuple(meta["global"]), tuple(meta["local"]))
    for name, b in zip(meta["args"], bufs):
        if name not in SCALAR_ARGS:
            cl.enqueue_copy(q, host[name], b)
    q.finish()
    np.savez(d / "out.npz", **host)
    return 0


if __name__ == "__main__":
    if os.environ.get("CTS_COOP_CHILD_SELFTEST") == "SIGILL":  # tests: a runtime dying with SIGILL
        os.kill(os.getpid(), signal.SIGILL)
    sys.exit(_child(sys.argv[1]))
