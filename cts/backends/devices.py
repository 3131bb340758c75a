"""OpenCL device enumeration and selection, and ``python -m cts devices``.

Selection (``--device SEL``): ``SEL`` is an index into the list printed by
``python -m cts devices`` or a case-insensitive substring of
``"<platform name>: <device name>"``.  No match, or several matches, is a
one-line :class:`BackendError` that lists the devices.  Without ``--device``
the only device is taken; with several, the user must choose.  The Intel CPU
runtime from PyPI is registered with the ICD loader first (``icd.py``).
"""

from __future__ import annotations

import argparse
import json
import warnings
from dataclasses import dataclass, field

from cts.backends.icd import register_intel_cpu_runtime, registration_note
from cts.errors import BackendError

__all__ = ["ClDevice", "opencl_devices", "select_device", "device_report", "devices_main"]


@dataclass
class ClDevice:
    index: int
    platform: object  # pyopencl.Platform
    device: object  # pyopencl.Device
    label: str = field(default="")

    def __post_init__(self) -> None:
        if not self.label:
            self.label = f"{self.platform.name.strip()}: {self.device.name.strip()}"


def _import_cl():
    register_intel_cpu_runtime()  # before pyopencl's first platform query
    try:
        import pyopencl as cl
    except ImportError as e:
        raise BackendError(f"pyopencl is not installed ({e}); pip install '.[opencl]'") from None
    return cl


def opencl_devices() -> list[ClDevice]:
    """Every device of every platform, in the loader's order."""
    cl = _import_cl()
    try:
        platforms = cl.get_platforms()
    except cl.Error as e:  # no ICD at all: ocl-icd reports PLATFORM_NOT_FOUND_KHR
        if "PLATFORM_NOT_FOUND" in str(e) or "-1001" in str(e):
            return []
        raise BackendError(f"OpenCL platform query failed: {e}") from None
    out: list[ClDevice] = []
    for p in platforms:
        try:
            devs = p.get_devices()
        except cl.Error:
            continue  # a platform with no devices (e.g. Clover) lists none
        for d in devs:
            out.append(ClDevice(len(out), p, d))
    return out


def _listing(devs: list[ClDevice]) -> str:
    if not devs:
        return f"no OpenCL devices ({registration_note()})"
    return "; ".join(f"[{d.index}] {d.label}" for d in devs)


def select_device(selector: str | None, devs: list[ClDevice] | None = None) -> ClDevice:
    """Pick one device by index or name substring (module docstring)."""
    devs = opencl_devices() if devs is None else devs
    if not devs:
        raise BackendError(f"--backend opencl: {_listing(devs)}")
    sel = (selector or "").strip()
    if not sel:
        if len(devs) == 1:
            return devs[0]
        raise BackendError(f"--backend opencl: several devices, choose one with --device: {_listing(devs)}")
    if sel.isascii() and sel.isdigit():
        i = int(sel)
        if i < len(devs):
            return devs[i]
        raise BackendError(f"--device {sel}: no device with that index; devices: {_listing(devs)}")
    hits = [d for d in devs if sel.lower() in d.label.lower()]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise BackendError(f"--device {sel!r} matches no OpenCL device; devices: {_listing(devs)}")
    raise BackendError(
        f"--device {sel!r} matches several devices ({_listing(hits)}); use an index or a longer name"
    )


def _info(dev, name: str, default=""):
    try:
        return getattr(dev, name)
    except Exception:
        return default


def device_report(d: ClDevice) -> dict:
    """Everything ``cts devices`` prints for one device (JSON-ready)."""
    from cts.backends import clquery as q

    dev = d.device
    caps = q.spirv_capabilities(dev)
    return {
        "index": d.index,
        "platform": d.platform.name.strip(),
        "platform_version": d.platform.version.strip(),
        "device": dev.name.strip(),
        "vendor": _info(dev, "vendor").strip(),
        "driver": _info(dev, "driver_version").strip(),
        "version": _info(dev, "version").strip(),
        "opencl_c_version": _info(dev, "opencl_c_version").strip(),
        "compute_units": _info(dev, "max_compute_units", 0),
        "max_work_group_size": _info(dev, "max_work_group_size", 0),
        "local_mem_size": _info(dev, "local_mem_size", 0),
        "subgroup_sizes": list(q.subgroup_sizes(dev)),
        "il_version": q.il_version(dev),
        "spirv_extensions": list(q.spirv_extensions(dev)),
        "spirv_extended_instruction_sets": list(q.spirv_extended_instruction_sets(dev)),
        "spirv_capabilities": [q.capability_name(c) for c in caps],
        "extensions": sorted(_info(dev, "extensions").split()),
    }


def _print_text(r: dict) -> None:
    print(f"[{r['index']}] {r['platform']}: {r['device']}")
    for key in (
        "platform_version",
        "vendor",
        "driver",
        "version",
        "opencl_c_version",
        "compute_units",
        "max_work_group_size",
        "local_mem_size",
    ):
        print(f"    {key:32s} {r[key]}")
    sg = ", ".join(map(str, r["subgroup_sizes"])) or "(not reported: no cl_intel_required_subgroup_size)"
    print(f"    {'subgroup_sizes':32s} {sg}")
    print(f"    {'il_version':32s} {r['il_version'] or '(none)'}")
    for key in ("spirv_extensions", "spirv_extended_instruction_sets", "spirv_capabilities", "extensions"):
        vals = r[key]
        print(f"    {key:32s} ({len(vals)}){'' if vals else ' (none reported)'}")
        for i in range(0, len(vals), 4):
            print("        " + "  ".join(vals[i : i + 4]))


def devices_main(argv: list[str]) -> int:
    """``python -m cts devices [--json] [--device SEL]``."""
    ap = argparse.ArgumentParser(
        prog="python -m cts devices",
        description="Every OpenCL platform and device: driver, OpenCL C version, extensions, "
        "subgroup sizes (CL_DEVICE_SUB_GROUP_SIZES_INTEL), IL versions and the SPIR-V "
        "extensions and capabilities of cl_khr_spirv_queries.",
    )
    ap.add_argument("--json", action="store_true", help="print JSON instead of text")
    ap.add_argument("--device", default=None, help="only this device (index or name substring)")
    a = ap.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            devs = opencl_devices()
            if a.device is not None:
                devs = [select_device(a.device, devs)]
        except BackendError as e:
            raise ValueError(str(e)) from None
        reports = [device_report(d) for d in devs]
    if a.json:
        print(json.dumps({"icd": registration_note(), "devices": reports}, indent=2))
        return 0
    print(f"# {registration_note()}")
    if not reports:
        print("no OpenCL devices found")
    for r in reports:
        _print_text(r)
    return 0
