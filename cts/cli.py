"""`python -m cts <command>`: one entry per room, each implemented in its own
module as ``main(argv) -> int`` so rooms stay independent."""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "faults": ("cts.cli:faults_main", "list the emulator's named faults"),
    "devices": (
        "cts.cli:devices_main",
        "list every backend's devices (OpenCL, Vulkan, CUDA) with the --device selector of each",
    ),
    "sweep": ("cts.launch:main", "run a sweep as N concurrent shard processes, merged into one report"),
    "report": ("cts.report.cli:main", "merge journals into report.md / report.html / results.csv"),
    "repro": ("cts.report.repro:main", "write a standalone repro bundle for one case"),
    "numerics": (
        "cts.numerics.cli:main",
        "numerics fingerprint of a device: how it rounds, fuses and aligns",
    ),
}


def faults_main(argv: list[str]) -> int:
    """``python -m cts faults [--family PREFIX]``: the emulator's named faults."""
    import argparse

    from cts.backends.emulator import all_faults

    ap = argparse.ArgumentParser(prog="python -m cts faults", description="list the emulator's named faults")
    ap.add_argument("--family", default="", help="only faults whose name starts with this prefix")
    opts = ap.parse_args(argv)
    for name, text in all_faults().items():
        if name.startswith(opts.family):
            print(f"{name:28s} {text}")
    return 0


def _vulkan_devices() -> tuple[list[str], str]:
    """(names of the Vulkan physical devices, why none) in the loader's order
    (the order ``--backend vulkan --device INDEX`` counts)."""
    try:
        import vulkan as vk
    except Exception as e:  # noqa: BLE001 - OSError without a loader, ImportError without the package
        return [], f"no Vulkan loader/package: {type(e).__name__}: {str(e)[:160]}"
    try:
        app = vk.VkApplicationInfo(
            pApplicationName="subgroup-matrix-cts", apiVersion=vk.VK_MAKE_VERSION(1, 3, 0)
        )
        inst = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=app), None)
        try:
            names = [
                vk.vkGetPhysicalDeviceProperties(p).deviceName for p in vk.vkEnumeratePhysicalDevices(inst)
            ]
        finally:
            vk.vkDestroyInstance(inst, None)
    except Exception as e:  # noqa: BLE001 - no ICD, an instance the loader refuses
        return [], f"no Vulkan device: {type(e).__name__}: {str(e)[:160]}"
    return names, "" if names else "no Vulkan physical device"


def _cuda_devices() -> tuple[list[str], str]:
    """(names of the CUDA devices, why none), as ``--backend cuda --device INDEX`` counts them."""
    try:
        from cuda.bindings import driver as cu
    except Exception as e:  # noqa: BLE001 - ImportError without the package
        return [], f"no CUDA Python bindings (pip install -e '.[cuda]'): {str(e)[:160]}"
    try:
        if int(cu.cuInit(0)[0]) != 0:
            return [], "no CUDA driver or device (cuInit failed)"
        err, n = cu.cuDeviceGetCount()
        names = []
        for i in range(int(n) if int(err) == 0 else 0):
            _, dev = cu.cuDeviceGet(i)
            _, raw = cu.cuDeviceGetName(256, dev)
            names.append(raw.split(b"\0", 1)[0].decode(errors="replace"))
    except Exception as e:  # noqa: BLE001 - no driver library (no GPU)
        return [], f"no CUDA driver: {type(e).__name__}: {str(e)[:160]}"
    return names, "" if names else "no CUDA device"


def devices_main(argv: list[str]) -> int:
    """``python -m cts devices [--backend NAME] [--json] [--device SEL]``:
    every backend's devices, each with the options that select it; with
    ``--backend opencl`` (or ``--json``, ``--device``) the OpenCL details
    (``cts.backends.devices``)."""
    import argparse
    import shlex

    ap = argparse.ArgumentParser(
        prog="python -m cts devices",
        description="every backend's devices (OpenCL, Vulkan, CUDA), each with the --backend/--device "
        "options that select it; --backend opencl adds the OpenCL details (extensions, subgroup sizes, "
        "SPIR-V)",
    )
    ap.add_argument("--backend", choices=("opencl", "vulkan", "cuda"), default=None, help="only this backend")
    ap.add_argument("--json", action="store_true", help="OpenCL details as JSON")
    ap.add_argument("--device", default=None, help="OpenCL details of this device only (index or name)")
    a = ap.parse_args(argv)
    if a.json or a.device is not None or a.backend == "opencl":
        from cts.backends.devices import devices_main as opencl_main

        return opencl_main([*(["--json"] if a.json else []), *(["--device", a.device] if a.device else [])])
    import warnings

    from cts.backends.devices import opencl_devices
    from cts.errors import BackendError

    def opencl() -> tuple[list[str], str]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                names = [d.label for d in opencl_devices()]
            except BackendError as e:
                return [], str(e)
        return names, "" if names else "no OpenCL device"

    print("emulator: the suite's own reference device, always there: --backend emulator (the default)")
    listers = {"opencl": opencl, "vulkan": _vulkan_devices, "cuda": _cuda_devices}
    for backend, lister in listers.items():
        if a.backend not in (None, backend):
            continue
        names, why = lister()
        if not names:
            print(f"{backend}: none ({why})")
            continue
        print(f"{backend}: {len(names)} device(s)")
        for i, name in enumerate(names):
            print(f"  [{i}] {name}: --backend {backend} --device {shlex.quote(str(i))}")
    print("details of the OpenCL devices: python -m cts devices --backend opencl")
    return 0


def _one_line_usage_error(self, message: str) -> None:
    """argparse's error() prints the whole usage block; a CTS command says
    what is wrong in one line (``<prog>: error: <message>; see --help``)."""
    self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m cts <command> [options]\n\ncommands:")
        for name, (_, text) in COMMANDS.items():
            print(f"  {name:10s} {text}")
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"cts: unknown command {name!r}; known: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    mod, fn = COMMANDS[name][0].split(":")
    import argparse

    argparse.ArgumentParser.error = _one_line_usage_error  # every sub-command's parser, this process only
    try:
        return int(getattr(importlib.import_module(mod), fn)(rest) or 0)
    except (OSError, ValueError) as e:  # one-line errors for bad input
        print(f"cts {name}: {e}", file=sys.stderr)
        return 2
