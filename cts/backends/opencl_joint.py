"""OpenCL mixin for SYCL ``joint_matrix``: the Intel AMX tables
(sycl_ext_oneapi_matrix_no_use for the deprecated API; sycl_ext_oneapi_matrix, "Supported
Combinations Per Hardware", for the current API) through SPIR-V modules in the
form DPC++ gives Intel's CPU runtime (``cts.kernels.joint_spv``).

When a case runs, in this order (each miss is a skip naming it):

1. the case's table is ``amx`` (the other tables are other device classes);
2. the suite can write the case as SPIR-V (old-API ``packed_a`` cannot);
3. the device takes SPIR-V IL, is a CPU, and has ``cl_khr_cooperative_matrix``
   (or ``--assume-extension cl_khr_cooperative_matrix``: Intel's CPU runtime
   compiles cooperative-matrix SPIR-V for AMX without advertising it);
4. the host CPU (``/proc/cpuinfo`` flags, what ``lscpu`` shows) has the AMX
   feature of the case's table row: ``amx_int8`` (u8/s8 rows),
   ``amx_bf16`` (bf16), ``amx_fp16`` (fp16: intel_cpu_gnr), ``amx_tf32``
   (tf32: intel_cpu_dmr); a row this CPU does not have is outside the table
   for it;
5. the device's ``cl_khr_spirv_queries`` list names every SPIR-V capability
   the spec-valid module must declare (or ``--assume-extension`` names its
   extension: SPV_INTEL_joint_matrix for 6434 / 6435 / 6436 / 6437 / 6192).

A case that passes these only thanks to ``--assume-extension`` is forced
(``forced_reason``): reported apart from the conformance verdicts.

Every case then builds and runs in a child process (a server per backend,
restarted after a death): the runtime's compiler aborting (SIGABRT
"Unsuppoted Layout ...") or a hang fails that case only, with the runtime's
own words: a device verdict where the device lists what the case needs,
a forced observation where only an assumption let it run.  The
``--joint-lowering intel-cpu`` deviation's modules that omit a capability
SPV_INTEL_joint_matrix requires are never handed to the device.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from functools import cache
from pathlib import Path

import numpy as np

from cts.errors import CaseError, CaseTimeout, HarnessError, Unsupported
from cts.families.joint import ARCHES
from cts.kernels import KernelSource
from cts.kernels.joint_spv import ENTRY, SUBGROUP_SIZE, buffer_slots, stride_slots, unrealizable

__all__ = ["JointOpenCL", "host_cpu_flags", "row_feature", "COOP_EXTENSION"]

COOP_EXTENSION = "cl_khr_cooperative_matrix"
# table row -> (CPU flag, the architectures sycl_ext_oneapi_matrix, Supported Combinations Per Hardware
# names for it)
_ROW_FEATURES = {
    "int8": ("amx_int8", "intel_cpu_spr, intel_cpu_gnr (impl. intel_cpu_dmr)"),
    "bf16": ("amx_bf16", "intel_cpu_spr, intel_cpu_gnr (impl. intel_cpu_dmr)"),
    "f16": ("amx_fp16", "intel_cpu_gnr (impl. intel_cpu_dmr)"),
    "tf32": ("amx_tf32", "intel_cpu_dmr (implementation table only)"),
}
_BITS = {"i8": 8, "u8": 8, "i16": 16, "u16": 16, "f16": 16, "bf16": 16, "i32": 32, "u32": 32}
_DTYPE = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


@cache
def host_cpu_flags() -> frozenset[str] | None:
    """The CPU flags of this host (``/proc/cpuinfo``), None if unreadable."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.split(":", 1)[1].split())
    return None


def row_feature(types: tuple[str, ...]) -> str:
    """The AMX table row a case's types come from (an accumulator alone:
    the first row listing it, int8 for i32, bf16 for f32)."""
    for t, row in (("tf32", "tf32"), ("f16", "f16"), ("bf16", "bf16"), ("i8", "int8"), ("u8", "int8")):
        if t in types:
            return row
    return "int8" if "i32" in types else "bf16"


def _width(t: str) -> int:
    return _BITS.get(t, 64 if t in ("f64", "u64") else 32)


# SPIR-V capability -> the extension names whose --assume-extension covers it (first: its SPIR-V extension)
CAPABILITY_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "CooperativeMatrixKHR": ("SPV_KHR_cooperative_matrix", COOP_EXTENSION),
    **{
        name: ("SPV_INTEL_joint_matrix",)
        for name in (
            "PackedCooperativeMatrixINTEL",
            "CooperativeMatrixInvocationInstructionsINTEL",
            "CooperativeMatrixTF32ComponentTypeINTEL",
            "CooperativeMatrixBFloat16ComponentTypeINTEL",
            "CooperativeMatrixCheckedInstructionsINTEL",
        )
    },
}


def declared_capabilities(text: str) -> list[str]:
    """The capability names a module's assembly declares (``OpCapability
    Name``, or ``OpCapability !N ; Name`` for a token the assembler lacks)."""
    out = []
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "OpCapability":
            out.append(words[-1] if words[1].startswith("!") and len(words) >= 4 else words[1])
    return out


class JointOpenCL:
    """Family ``joint_matrix`` on OpenCL (AMX tables only)."""

    joint_lowering = "spec"

    # --- support -----------------------------------------------------------
    def unsupported_joint_matrix(self, case) -> str | None:
        if case.arch != "amx":
            return (
                "joint_matrix on OpenCL realizes the Intel AMX tables "
                "(sycl_ext_oneapi_matrix, Supported Combinations Per Hardware); table "
                f"{case.arch} is another device class ({ARCHES.get(case.arch, case.arch)})"
            )
        why = unrealizable(case)
        if why:
            return f"not realized by the suite: {why} (a coverage gap of the suite, not a device verdict)"
        name = self.device.name.strip()
        il = str(self.describe().extra.get("il_version", ""))
        if "SPIR-V" not in il:
            return f"{name} accepts no SPIR-V IL (CL_DEVICE_IL_VERSION {il!r}): the AMX joint_matrix path needs it"
        if not self.device.type & self.cl.device_type.CPU:
            return f"the AMX tables are Intel CPU tables (intel_cpu_spr/gnr/dmr); {name} is not a CPU device"
        flags = host_cpu_flags()
        amx = sorted(f for f in (flags or ()) if f.startswith("amx"))
        have = f"host CPU flags {' '.join(amx)}" if amx else "no AMX flag on this host CPU (lscpu)"
        if not self.has_extension(COOP_EXTENSION):
            return (
                f"{COOP_EXTENSION} not supported by {name} ({have}): the AMX joint_matrix path is "
                f"cooperative-matrix SPIR-V; Intel's CPU runtime compiles it for AMX without advertising "
                f"the extension: --assume-extension {COOP_EXTENSION}"
            )
        row = row_feature(case.types)
        flag, arches = _ROW_FEATURES[row]
        if flags is not None and flag not in flags:
            return (
                "outside the AMX table for this CPU: sycl_ext_oneapi_matrix, Supported Combinations Per "
                f"Hardware lists the {row} row for {arches}; "
                f"this host lacks CPU flag {flag} ({have})"
            )
        return self._joint_caps_unlisted(case)

    def _joint_caps_unlisted(self, case) -> str | None:
        """The SPIR-V capabilities the case's module must declare (the spec
        form: SPV_INTEL_joint_matrix rev 16 requires PackedCooperativeMatrixINTEL
        for the PackedINTEL layout and CooperativeMatrixCheckedInstructionsINTEL
        for the checked instructions) that the device's cl_khr_spirv_queries
        list does not name and no ``--assume-extension`` of their extension
        covers: a skip naming them (a device is held only to what it lists).
        None where the device has no capability query (its extension
        string decided above)."""
        from cts.backends import clquery
        from cts.kernels.joint_spv import module_texts

        if "cl_khr_spirv_queries" not in self.describe().extensions:
            return None
        listed = {clquery.capability_name(n) for n in clquery.spirv_capabilities(self.device)}
        text = module_texts(case, "spec")[0]
        missing = []
        for name in declared_capabilities(text):
            exts = CAPABILITY_EXTENSIONS.get(name, ())
            assumed = getattr(self, "assumed", frozenset())
            if name in listed or "*" in assumed or any(e in assumed for e in exts):
                continue
            missing.append(f"{name} ({exts[0] if exts else 'core'})")
        if not missing:
            return None
        return (
            f"SPIR-V capabilit{'y' if len(missing) == 1 else 'ies'} {', '.join(missing)} not listed by "
            f"{self.device.name.strip()} (cl_khr_spirv_queries): the case's module must declare "
            f"{'it' if len(missing) == 1 else 'them'}"
        )

    # --- kernels -------------------------------------------------------------
    def kernel_source_joint_matrix(self, case, subgroups: int) -> KernelSource:
        """The validated device module (spirv-val on its twin + the
        structural check, ``cts.kernels.joint_spv_check``)."""
        from cts.kernels.joint_spv import module_texts
        from cts.kernels.joint_spv_check import validated_module

        il, text = validated_module(case, self.joint_lowering)
        omitted = sorted(
            set(declared_capabilities(module_texts(case, "spec")[0])) - set(declared_capabilities(text))
        )
        if omitted:  # SPV_INTEL_joint_matrix requires them: the module would be invalid input
            raise HarnessError(
                f"--joint-lowering {self.joint_lowering}: the module of this case omits OpCapability "
                f"{', '.join(omitted)}, which SPV_INTEL_joint_matrix requires for what it uses; an invalid module "
                "of the suite's own is not handed to the device (what a device does with it is no verdict)"
            )
        bufs = buffer_slots(case)
        names = [n for n, _ in bufs] + ["meta"]
        return KernelSource(
            entry=ENTRY,
            il=il,
            global_size=(subgroups * SUBGROUP_SIZE,),
            local_size=(SUBGROUP_SIZE,),
            args=tuple(names),
            arg_types=tuple(f"uint{_width(t)}" for _, t in bufs) + ("uint64",),
            notes=(
                f"one subgroup of {SUBGROUP_SIZE} per work-group, work-group w on tile w of every buffer; "
                f"meta = per-tile lengths of {', '.join(n for n, _ in bufs)}, then strides "
                f"{', '.join(stride_slots(case))}; lowering {self.joint_lowering}",
            ),
        )

    # --- run ------------------------------------------------------------------
    def run_joint_matrix(self, case, **kw) -> np.ndarray:
        """The runner's buffers (``cts.runs.joint``: (tiles, size) raw bits,
        strides, per-tile checked-op bounds) in, the written D / dst out."""
        reason = self.unsupported_joint_matrix(case)
        if reason:
            raise Unsupported(reason)
        bufs = buffer_slots(case)
        host: dict[str, np.ndarray] = {}
        for name, t in bufs:
            if name == "geo":
                geo = np.stack([kw["height"], kw["width"], kw["cx"], kw["cy"]], axis=1)
                host[name] = np.ascontiguousarray(geo, dtype=np.uint32)
                continue
            x = np.asarray(kw[name], dtype=np.uint64)
            x = x.reshape(x.shape[0], -1)
            w = _width(t)
            if w < 64:
                x = x & np.uint64((1 << w) - 1)
            host[name] = np.ascontiguousarray(x.astype(_DTYPE[w]))
        S = next(iter(host.values())).shape[0]
        lengths = [int(host[n].shape[1]) for n, _ in bufs]
        host["meta"] = np.array(lengths + [int(kw[s]) for s in stride_slots(case)], dtype=np.uint64)
        ks = self.kernel_source_joint_matrix(case, S)
        out_name = bufs[1][0] if case.op != "mad" else "d"
        got = self._joint_child().run(self, case, ks, {k: v.reshape(-1) for k, v in host.items()}, out_name)
        return got.reshape(S, -1).astype(np.uint64)

    def _joint_child(self) -> _Server:
        srv = self.__dict__.get("_joint_server")
        if srv is None:
            srv = self.__dict__["_joint_server"] = _Server(str(self.selected.index))
        return srv


def _signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


class _Server:
    """A child process that builds and launches one case per request; it
    dies with the runtime, and the next request starts a new one."""

    def __init__(self, device: str):
        self.device = device
        self.proc: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "cts.backends.opencl_joint", "--serve", self.device],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=Path(__file__).resolve().parents[2],
            )
        return self.proc

    def run(self, backend, case, ks: KernelSource, flat: dict, out_name: str) -> np.ndarray:
        from cts.backends.opencl_coop import child_timeout_s

        limit = child_timeout_s()
        with tempfile.TemporaryDirectory(prefix="cts-joint-") as tmp:
            d = Path(tmp)
            np.savez(d / "in.npz", **flat)
            (d / "k.spv").write_bytes(ks.il)
            job = {"entry": ks.entry, "global": list(ks.global_size), "local": list(ks.local_size)}
            job.update(args=list(ks.args), out=out_name)
            (d / "job.json").write_text(json.dumps(job))
            proc = self._start()
            try:
                proc.stdin.write((str(d) + "\n").encode())
                proc.stdin.flush()
            except OSError:
                pass
            line = _read_line(proc, limit)
            log = _tail(d / "log.txt")
            phase = (d / "phase").read_text().strip() if (d / "phase").is_file() else "start"
            where = f"in a child process on {backend.device_label}"
            if line is None:
                proc.kill()
                proc.wait()
                raise CaseTimeout(f"{case.id}: no answer within {limit:.0f} s ({phase}) {where}\n{log}")
            if not line:  # EOF: the child died
                rc = proc.wait()
                sig = _signal_name(rc) if rc < 0 else f"exit status {rc}"
                raise CaseError(
                    f"{case.id}: the OpenCL runtime died with {sig} during {phase} {where}; the AMX table "
                    "(sycl_ext_oneapi_matrix, Supported Combinations Per Hardware) promises this combination, "
                    "so this is the device's failure. "
                    f"Its output:\n{log or '(nothing)'}"
                )
            res = json.loads(line)
            if res["status"] != "ok":
                raise CaseError(f"{case.id}: {res['status']} failed {where}:\n{res.get('log', '')[-6000:]}")
            with np.load(d / "out.npz") as z:
                return np.array(z[out_name])


def _read_line(proc: subprocess.Popen, limit: float) -> bytes | None:
    """The child's answer line; b"" when it died, None past ``limit``."""
    fd = proc.stdout.fileno()
    end = time.monotonic() + limit
    buf = b""
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return None
        chunk = os.read(fd, 65536)
        if not chunk:
            return b""
        buf += chunk
        if b"\n" in buf:
            return buf.split(b"\n", 1)[0]


def _tail(path: Path, n: int = 4000) -> str:
    try:
        return path.read_text(errors="replace").strip()[-n:]
    except OSError:
        return ""


# ----------------------------------------------------------------- child side
def _serve(device: str) -> int:
    """Answer one job directory per stdin line with one JSON line on the
    original stdout; the runtime's own output (both fds) goes to the job's
    log.txt."""
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    from cts.backends.devices import select_device

    dev = select_device(device)
    import pyopencl as cl

    ctx = cl.Context([dev.device])
    q = cl.CommandQueue(ctx)
    programs: dict[bytes, object] = {}
    for line in sys.stdin:
        d = Path(line.strip())
        log = os.open(d / "log.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        (d / "phase").write_text("build")
        selftest = os.environ.get("CTS_JOINT_CHILD_SELFTEST", "")
        if selftest == "SIGABRT":  # tests: a compiler aborting, with its words on stderr
            print("selftest: Unsuppoted Layout:matrix.rowmajor!", file=sys.stderr, flush=True)
            os.abort()
        if selftest == "hang":  # tests: a kernel that never returns
            time.sleep(3600)
        job = json.loads((d / "job.json").read_text())
        il = (d / "k.spv").read_bytes()
        prg = programs.get(il)
        if prg is None:
            p = None
            try:
                p = cl.Program(ctx, il)
                p.build()
            except cl.Error as e:
                sys.stderr.flush()
                proto.write(
                    json.dumps({"status": "kernel build", "log": _build_log(e, p, dev.device, d)}) + "\n"
                )
                continue
            prg = programs[il] = p
        (d / "phase").write_text("launch")
        with np.load(d / "in.npz") as z:
            host = {k: np.array(z[k]) for k in job["args"]}
        mf = cl.mem_flags
        try:
            bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host[k]) for k in job["args"]]
            k = cl.Kernel(prg, job["entry"])
            k.set_args(*bufs)
            cl.enqueue_nd_range_kernel(q, k, tuple(job["global"]), tuple(job["local"]))
            out = job["out"]
            cl.enqueue_copy(q, host[out], bufs[job["args"].index(out)])
            q.finish()
        except cl.Error as e:
            proto.write(json.dumps({"status": "launch", "log": str(e)}) + "\n")
            continue
        np.savez(d / "out.npz", **{out: host[out]})
        proto.write(json.dumps({"status": "ok"}) + "\n")
    return 0


def _build_log(err, prg, device, d: Path) -> str:
    try:
        text = prg.get_build_info(device, 0x1183) if prg is not None else ""  # CL_PROGRAM_BUILD_LOG
    except Exception:
        text = ""
    runtime = _tail(d / "log.txt")
    log = (text or "").strip() or str(err).strip()
    return "\n".join(x for x in (log, runtime) if x)[-8000:]


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        sys.exit(_serve(sys.argv[2]))
    print("usage: python -m cts.backends.opencl_joint --serve DEVICE", file=sys.stderr)
    sys.exit(2)
