"""The OpenCL backend (pyopencl, any ICD; Intel's CPU runtime from PyPI is
registered automatically, see ``icd.py``).

Stable interface used by other rooms (keep these names):

* ``OpenCLBackend(*_OPENCL_MIXINS, Backend)``.  A family mixin lives in its
  own module (``cts/backends/opencl_<family>.py``), defines
  ``run_<family>(case, **operands)`` and optionally
  ``unsupported_<family>(case) -> str | None`` and
  ``kernel_source_<family>(case, subgroups) -> KernelSource``, and is named
  as the family's ``opencl`` mixin in ``cts.families.registry``.  Mixin modules must not import
  this module at import time (it imports them).
* ``backend.ctx``, ``backend.queue``, ``backend.device`` (pyopencl objects),
  ``backend.info`` (the :class:`DeviceInfo` of ``describe()``).
* ``has_extension(name) -> bool``: device extension string, plus
  ``--assume-extension`` and what the prelude declares it provides.
* ``build_program(source=None, il=None, options="") -> pyopencl.Program``:
  OpenCL C text (give it *with* the prelude, see ``with_prelude``) or SPIR-V
  bytes; cached in-process and on disk (key: platform, device, driver,
  source/IL, options).  A build failure raises :class:`CaseError` carrying
  the build log.
* ``launch(program, kernel_name, global_size, local_size, *args)``: enqueue
  and return after ``finish()``; launch errors raise :class:`CaseError`.
* ``run_kernel(ks, inputs, outputs) -> dict``: build + buffers + launch +
  read-back for a :class:`cts.kernels.KernelSource`.
* ``kernel_source(case, subgroups=32) -> KernelSource``: the exact kernel
  text or IL, entry, options and sizes used for a case (repro bundles).
* ``with_prelude(text) -> str``: prepend ``--opencl-prelude`` to OpenCL C.
* ``stats``: :class:`BuildStats` (compiles, cache hits, build and run seconds).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from cts.backends.base import Backend, BackendError, CaseError, DeviceInfo
from cts.backends.float_mma import intel_mma_fn
from cts.families.float_mma import INTEL_FLOAT_ROWS
from cts.judge.sentinel import width_fill
from cts.kernels import KernelSource
from cts.kernels.opencl_c import (
    Prelude,
    intel_mma_kernel,
    intel_split_kernel,
    load_prelude,
    tf32_convert_kernel,
)


class IntelOpenCL:
    """Families intel_mma, intel_split_mma, intel_tf32_convert on OpenCL
    (cl_intel_subgroup_matrix_multiply_accumulate and its
    split companion); same operand shapes as the emulator
    (cts/backends/base.py)."""

    TF32_ITEMS = 256

    # --- capability skips (a missing feature never turns into a pass) ---
    def _intel_missing(self, case) -> str | None:
        dev = self.describe()
        name = self.device.name.strip()
        if not self.has_extension(case.extension):
            return f"{case.extension} not supported by {name}"
        sg = getattr(case, "sg", None)
        if sg is not None:
            if not dev.subgroup_sizes:
                return f"cl_intel_required_subgroup_size missing on {name}: cannot require subgroup size {sg}"
            if sg not in dev.subgroup_sizes:
                sizes = ", ".join(map(str, dev.subgroup_sizes))
                return f"subgroup size {sg} not supported by {name} (sizes {sizes})"
            # a prelude's cts-provides does not count here: the shipped prelude steps aside
            # (#ifndef) where the device defines the extension, so the native built-ins run
            explicit = getattr(self, "assumed_explicit", self.assumed)
            native = case.extension in dev.extensions and case.extension not in explicit
            if native and "*" not in explicit and min(dev.subgroup_sizes) != sg:
                # cl_intel_subgroup_matrix_multiply_accumulate, Modifications to the OpenCL C
                # Specification: a device provides the N variant of its minimum subgroup size only
                return (
                    f"{name} has minimum subgroup size {min(dev.subgroup_sizes)}: its {case.extension} "
                    f"built-ins are the N={min(dev.subgroup_sizes)} variants, not N={sg}"
                )
            if getattr(case, "acc_scalar", "") == "half" and not self.has_extension("cl_khr_fp16"):
                return f"cl_khr_fp16 not supported by {name} (half accumulator)"
        return None

    unsupported_intel_mma = _intel_missing
    unsupported_intel_split_mma = _intel_missing
    unsupported_intel_tf32_convert = _intel_missing

    # --- float MMA of the numerics model tier (family float_mma) ---
    # The float Intel built-ins (cl_intel_subgroup_matrix_multiply_accumulate, New OpenCL C Functions, N
    # = 16, K = 16, M = 8) as an abstract mma(A, B, C) -> D: cts.backends.float_mma packs the logical
    # tiles
    # into the spec's register images and runs them through run_intel_mma.
    def _float_case(self, a: str, c: str, M: int):
        from cts.families.intel import IntelMmaCase

        return IntelMmaCase("intel_mma", 16, a, a, 16, M, c, "random")

    def numerics_targets(self) -> tuple:
        return tuple((a, c, 8, 16, 16) for a, c in INTEL_FLOAT_ROWS)

    def unsupported_float_mma(self, case) -> str | None:
        if (case.a, case.c, case.M, case.N, case.K) not in self.numerics_targets():
            return (
                f"no Intel float built-in computes {case.a}*{case.a}+{case.c} "
                f"{case.M}x{case.N}x{case.K} (cl_intel_subgroup_matrix_multiply_accumulate, "
                "New OpenCL C Functions: M=8 tiles of N=16, K=16)"
            )
        return self._intel_missing(self._float_case(case.a, case.c, case.M))

    def run_float_mma(self, a_type, c_type, M, N, K, A, B, C) -> np.ndarray:
        return intel_mma_fn(self, self._float_case(a_type, c_type, M))(A, B, C)

    # --- kernels ----------------------------------------------------------
    def kernel_source_intel_mma(self, case, subgroups: int) -> KernelSource:
        return intel_mma_kernel(case, subgroups, self._prelude_text())

    def kernel_source_intel_split_mma(self, case, subgroups: int) -> KernelSource:
        return intel_split_kernel(case, subgroups, self._prelude_text())

    def kernel_source_intel_tf32_convert(self, case, subgroups: int = 0) -> KernelSource:
        return tf32_convert_kernel(case, self.TF32_ITEMS, self._prelude_text())

    def _prelude_text(self) -> str:
        return self.with_prelude("").rstrip("\n") if self.prelude else ""

    def _run_mma(self, ks: KernelSource, case, a, b, c, S: int) -> np.ndarray:
        N, M = case.sg, case.M
        a_dt, c_dt = ks.arg_types[0], ks.arg_types[2]
        out = self.run_kernel(
            ks,
            {
                "a": np.asarray(a).astype(a_dt).reshape(-1),
                "b": np.asarray(b).astype(np.uint32).reshape(-1),
                "c": np.asarray(c).astype(c_dt).reshape(-1),
            },
            {"d": (c_dt, S * N * M), "sgsize": (np.uint32, S * N)},
        )
        bad = out["sgsize"] != N
        if bad.any():
            got = sorted(set(out["sgsize"][bad].tolist()))
            raise CaseError(
                f"{ks.entry} ran with subgroup size {got} on {self.device_label}, not the required {N} "
                "(intel_reqd_sub_group_size not honoured)"
            )
        return out["d"].astype(np.uint64)

    def run_intel_mma(self, case, a, b, c):
        """a (S, N, comps), b (S, N, 8), c (S, N, M) raw bits -> d (S, N, M)."""
        S = a.shape[0]
        ks = self.kernel_source_intel_mma(case, S)
        return self._run_mma(ks, case, a, b, c, S).reshape(S, case.sg, case.M)

    def run_intel_split_mma(self, case, a, b, c):
        """a (G, W, N, M/2), b (G, W, N, 8), c (G, W, N, M) -> d (G, W, N, M):
        G work-groups of W = case.wg subgroups."""
        G, W = a.shape[:2]
        ks = self.kernel_source_intel_split_mma(case, G * W)
        return self._run_mma(ks, case, a, b, c, G * W).reshape(G, W, case.sg, case.M)

    def run_intel_tf32_convert(self, case, x):
        """x float32 (items, width) -> rounded float32 (items, width)."""
        x = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
        items = x.shape[0]
        ks = tf32_convert_kernel(case, items, self._prelude_text())
        out = self.run_kernel(ks, {"x": x.view(np.uint32).reshape(-1)}, {"y": (np.uint32, x.size)})
        return out["y"].view(np.float32).reshape(x.shape)


__all__ = ["OpenCLBackend", "BuildStats", "default_cache_dir", "_OPENCL_MIXINS"]

# Family mixins (their modules: cts/backends/opencl_<family>.py), as the registry of families
# (cts.families.registry) declares them; the rotate and built-ins mixins bring SizesOpenCL
# (opencl_sizes.py) as their base.
from cts.families.registry import device_mixins, resolve  # noqa: E402

_OPENCL_MIXINS: tuple[type, ...] = tuple(resolve(ref) for ref in device_mixins("opencl"))

SUBGROUPS_PER_CASE = 32


def default_cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "subgroup-matrix-cts" / "opencl-programs"


@dataclass
class BuildStats:
    compiled: int = 0
    disk_hits: int = 0
    memory_hits: int = 0
    build_failures: int = 0
    build_seconds: float = 0.0
    launches: int = 0
    run_seconds: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


class OpenCLBackend(*_OPENCL_MIXINS, Backend):
    """One OpenCL device, chosen by ``--device`` (index or name substring)."""

    name = "opencl"

    def __init__(
        self,
        device: str | None = None,
        prelude: str | None = None,
        assume_extensions: tuple[str, ...] = (),
        cache_dir: str | Path | None = None,
    ):
        from cts.backends.devices import select_device

        self.prelude: Prelude | None = load_prelude(prelude)  # BackendError if unreadable
        self.selected = select_device(device)  # registers the Intel ICD first
        import pyopencl as cl

        self.cl = cl
        self.device = self.selected.device
        self.platform = self.selected.platform
        try:
            self.ctx = cl.Context([self.device])
            self.queue = cl.CommandQueue(self.ctx)
        except cl.Error as e:
            raise BackendError(f"cannot open OpenCL device {self.selected.label!r}: {e}") from None
        self.assumed_explicit = frozenset(assume_extensions)  # --assume-extension only
        self.assumed = self.assumed_explicit | (self.prelude.provides if self.prelude else frozenset())
        if cache_dir in ("off", "none", ""):
            self.cache_dir = None
        else:
            self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self._programs: dict[str, object] = {}
        self.stats = BuildStats()
        self._info: DeviceInfo | None = None

    @classmethod
    def from_options(
        cls,
        device=None,
        opencl_prelude=None,
        opencl_assume_extensions=(),
        opencl_cache_dir=None,
        emulator_faults=(),
        **other,
    ) -> OpenCLBackend:
        if emulator_faults:
            raise BackendError("--emulator-fault needs --backend emulator")
        assumed = tuple(opencl_assume_extensions or ())
        if other.get("assume_extension") is True:  # another room's flag form of --assume-extension
            assumed += ("*",)
        backend = cls(device, opencl_prelude, assumed, opencl_cache_dir)
        backend.joint_lowering = other.get("joint_lowering") or "spec"  # --joint-lowering
        return backend

    # ------------------------------------------------------------ describe
    @property
    def info(self) -> DeviceInfo:
        return self.describe()

    def describe(self) -> DeviceInfo:
        if self._info is None:
            from cts.backends.devices import device_report

            r = device_report(self.selected)
            extra = {
                "device_index": r["index"],
                "opencl_c_version": r["opencl_c_version"],
                "il_version": r["il_version"],
                "spirv_extensions": r["spirv_extensions"],
                "spirv_capabilities": r["spirv_capabilities"],
                "prelude": self.prelude.label if self.prelude else "",
                "assumed_extensions": sorted(self.assumed),
            }
            self._info = DeviceInfo(
                backend="opencl",
                name=r["device"] + (f" (+prelude {self.prelude.label})" if self.prelude else ""),
                platform=r["platform"],
                driver=r["driver"],
                version=r["version"],
                extensions=tuple(r["extensions"]),
                subgroup_sizes=tuple(r["subgroup_sizes"]),
                extra=extra,
            )
        return self._info

    @property
    def device_label(self) -> str:
        return self.selected.label

    def has_extension(self, name: str) -> bool:
        return "*" in self.assumed or name in self.assumed or name in self.describe().extensions

    # skip reasons the mixins cache that depend on --assume-extension
    _ASSUMPTION_CACHES = ("_tf32_round_reason",)

    def forced_reason(self, case) -> str | None:
        """Why ``case`` would be a skip without ``--assume-extension`` (what
        the device does not list), None when the device lists all it needs
        (or nothing is assumed).  A prelude's ``cts-provides`` is no
        assumption: the prelude implements what it provides."""
        if not self.assumed_explicit:
            return None
        own = {k: self.__dict__.pop(k) for k in self._ASSUMPTION_CACHES if k in self.__dict__}
        bare = getattr(self, "_unassumed_caches", {})
        self.__dict__.update(bare)
        saved = self.assumed_explicit, self.assumed
        self.assumed_explicit = frozenset()
        self.assumed = self.prelude.provides if self.prelude else frozenset()
        try:
            why = self.unsupported(case)
        finally:
            self.assumed_explicit, self.assumed = saved
            self._unassumed_caches = {
                k: self.__dict__.pop(k) for k in self._ASSUMPTION_CACHES if k in self.__dict__
            }
            self.__dict__.update(own)
        if not why:
            return None
        return f"--assume-extension {', '.join(sorted(saved[0]))}: without it, {why}"

    def unsupported(self, case) -> str | None:
        reason = super().unsupported(case)
        if reason:
            return reason
        return self.unsupported_by_family(case)

    # ------------------------------------------------------------- kernels
    def with_prelude(self, text: str) -> str:
        if not self.prelude:
            return text
        return (
            f"/* --opencl-prelude {self.prelude.label} */\n{self.prelude.text}\n/* end of prelude */\n{text}"
        )

    def kernel_source(self, case, subgroups: int = SUBGROUPS_PER_CASE) -> KernelSource:
        fn = getattr(self, f"kernel_source_{case.family}", None)
        if fn is None:
            raise BackendError(f"backend 'opencl' has no kernel for family {case.family}")
        return fn(case, subgroups)

    def _cache_key(self, kind: str, blob: bytes, options: str) -> str:
        d = self.describe()
        ident = [d.platform, self.platform.version, d.name, d.driver, d.version, kind, options]
        h = hashlib.sha256(json.dumps(ident).encode())
        h.update(blob)
        return h.hexdigest()

    def build_program(
        self,
        source: str | None = None,
        il: bytes | None = None,
        options: str = "",
        spec_constants: tuple[tuple[int, int], ...] = (),
    ):
        """Build (or fetch from the caches) a program for this device;
        ``spec_constants``: (SpecId, uint32 value) set before an IL build."""
        cl = self.cl
        if (source is None) == (il is None):
            raise ValueError("build_program needs exactly one of source= or il=")
        if spec_constants and il is None:
            raise ValueError("specialization constants need an IL program")
        kind, blob = ("src", source.encode()) if source is not None else ("il", bytes(il))
        if source is not None and self.opencl_c_std and "-cl-std=" not in options:
            options = f"{self.opencl_c_std} {options}".strip()
        if spec_constants:  # part of what the binary is
            kind += "+spec " + " ".join(f"{i}={v}" for i, v in sorted(spec_constants))
        key = self._cache_key(kind, blob, options)
        hit = self._programs.get(key)
        if hit is not None:
            self.stats.memory_hits += 1
            if isinstance(hit, CaseError):
                raise hit
            return hit
        t0 = time.perf_counter()
        path = self.cache_dir / f"{key}.bin" if self.cache_dir else None
        prg = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # drivers log even successful builds
            blob = _load_binary(path) if path is not None and path.is_file() else None
            if blob is not None:
                try:
                    prg = cl.Program(self.ctx, [self.device], [blob]).build(options=options)
                    self.stats.disk_hits += 1
                except (cl.Error, OSError):
                    prg = None
            if prg is None:
                try:
                    if source is not None:
                        prg = cl.Program(cl._cl._Program(self.ctx, source))
                    else:
                        prg = cl.Program(self.ctx, bytes(il))
                        for spec_id, value in spec_constants:
                            prg._prg.set_specialization_constant(int(spec_id), np.uint32(value).tobytes())
                    prg.build(options=options)
                except cl.Error as e:
                    self.stats.build_failures += 1
                    self.stats.build_seconds += time.perf_counter() - t0
                    err = CaseError(
                        f"kernel build failed on {self.device_label}:\n{_build_log(e, prg, self.device)}"
                    )
                    self._programs[key] = err
                    raise err from None
                self.stats.compiled += 1
                if path is not None:
                    _store_binary(path, prg)
        self.stats.build_seconds += time.perf_counter() - t0
        self._programs[key] = prg
        return prg

    def launch(self, program, kernel_name: str, global_size, local_size, *args) -> None:
        cl = self.cl
        t0 = time.perf_counter()
        try:
            k = cl.Kernel(program, kernel_name)
            k.set_args(*args)
            cl.enqueue_nd_range_kernel(self.queue, k, tuple(global_size), local_size and tuple(local_size))
            self.queue.finish()
        except cl.Error as e:
            raise CaseError(f"launch of {kernel_name} on {self.device_label} failed: {e}") from None
        finally:
            self.stats.launches += 1
            self.stats.run_seconds += time.perf_counter() - t0

    def run_kernel(self, ks: KernelSource, inputs: dict[str, np.ndarray], outputs: dict[str, tuple]) -> dict:
        """Build ``ks``, bind ``ks.args`` by name (inputs: arrays copied to the
        device; outputs: ``(dtype, count)`` allocated), launch, read back."""
        cl = self.cl
        prg = self.build_program(
            source=ks.source, il=ks.il, options=ks.options, spec_constants=ks.spec_constants
        )
        mf = cl.mem_flags
        bufs, host = [], {}
        t0 = time.perf_counter()
        for name in ks.args:
            if name in inputs:
                arr = np.ascontiguousarray(inputs[name])
                bufs.append(
                    cl.Buffer(
                        self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=arr if arr.size else np.zeros(1)
                    )
                )
            elif name in outputs:  # starts as the sentinel of its width: "never written" shows
                dtype, count = outputs[name]
                host[name] = width_fill(dtype, max(int(count), 1))
                bufs.append(cl.Buffer(self.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host[name]))
                host[name] = host[name][: int(count)]
            else:
                raise ValueError(f"kernel argument {name!r} has neither input nor output")
        self.stats.run_seconds += time.perf_counter() - t0
        self.launch(prg, ks.entry, ks.global_size, ks.local_size, *bufs)
        t0 = time.perf_counter()
        try:
            for name, buf in zip(ks.args, bufs):
                if name in host:
                    cl.enqueue_copy(self.queue, host[name], buf)
            self.queue.finish()
        except cl.Error as e:
            raise CaseError(f"read-back after {ks.entry} on {self.device_label} failed: {e}") from None
        finally:
            self.stats.run_seconds += time.perf_counter() - t0
        return host

    def close(self) -> None:
        try:
            self.queue.finish()
        except Exception:
            pass


def _build_log(err, prg, device) -> str:
    log = ""
    if prg is not None:
        try:
            log = prg.get_build_info(device, 0x1183)  # CL_PROGRAM_BUILD_LOG
        except Exception:
            log = ""
    text = (log or "").strip() or str(err).strip()
    return text[-8000:]


_CACHE_MAGIC = b"cts-program-cache-1\n"


def _store_binary(path: Path, prg) -> None:
    """Write the program binary under its cache key with a header naming the
    key (the file name) and the blob's sha256, so a foreign, renamed or
    damaged file is never loaded as this program (``_load_binary``)."""
    try:
        blob = prg.binaries[0]
        if not blob:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        head = _CACHE_MAGIC + f"{path.stem} {hashlib.sha256(blob).hexdigest()}\n".encode()
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(head + blob)
        os.replace(tmp, path)
    except Exception:  # a read-only cache never fails a case
        pass


def _load_binary(path: Path) -> bytes | None:
    """The blob of a cache file written by ``_store_binary`` for this key, or
    None (missing, foreign, truncated, tampered: then the program is rebuilt)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(_CACHE_MAGIC):
        return None
    line, sep, blob = data[len(_CACHE_MAGIC) :].partition(b"\n")
    if not sep:
        return None
    try:
        key, digest = line.decode("ascii").split(" ")
    except (UnicodeDecodeError, ValueError):
        return None
    if key != path.stem or hashlib.sha256(blob).hexdigest() != digest:
        return None
    return blob
