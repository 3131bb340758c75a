"""Registration of Intel's CPU OpenCL runtime (PyPI ``intel-opencl-rt``) with
the ICD loader.

Facts (shared/specs/local-runtimes.md section 1): the wheel ships
``etc/OpenCL/vendors/intel-cpu.icd`` pointing at a build-machine path
(``/opt/anaconda1anaconda2anaconda3/lib/libintelocl.so``), so the loader never
finds it.  pyopencl bundles its own ocl-icd loader, which honours
``OCL_ICD_VENDORS`` (a folder of ``.icd`` files) but ignores
``OCL_ICD_FILENAMES``, and reads it on the first platform query.  Once
``OCL_ICD_VENDORS`` is set, the loader no longer reads ``/etc/OpenCL/vendors``.

So :func:`register_intel_cpu_runtime` writes a private vendors folder holding a
corrected ``intel-cpu.icd`` *plus a copy of every system ``.icd`` entry*, and
points ``OCL_ICD_VENDORS`` at it, unless the user already set
``OCL_ICD_VENDORS`` themselves: then nothing is changed (their choice wins).
It must run before pyopencl's first ``get_platforms()``; the OpenCL backend
and ``python -m cts devices`` call it before importing pyopencl.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

__all__ = [
    "ICD_ENV",
    "SYSTEM_VENDORS",
    "find_intel_cpu_library",
    "private_vendors_dir",
    "register_intel_cpu_runtime",
    "registration_note",
]

ICD_ENV = "OCL_ICD_VENDORS"
SYSTEM_VENDORS = Path("/etc/OpenCL/vendors")
_MARK = "cts-icd-"  # our private folders carry this in their name
_NOTE: list[str] = []


def find_intel_cpu_library() -> Path | None:
    """The real path of ``libintelocl.so`` from the installed ``intel-opencl-rt``
    distribution (its RECORD), else from ``<prefix>/lib``; None if absent."""
    try:
        import importlib.metadata as md

        dist = md.distribution("intel-opencl-rt")
        for f in dist.files or ():
            if f.name == "libintelocl.so":
                p = Path(f.locate()).resolve()
                if p.is_file():
                    return p
    except Exception:  # not installed, or a broken RECORD
        pass
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        p = Path(prefix) / "lib" / "libintelocl.so"
        if p.is_file():
            return p.resolve()
    return None


def private_vendors_dir(base: Path | None = None) -> Path:
    """Where our vendors folder lives: ``$XDG_CACHE_HOME`` (or ``~/.cache``),
    one folder per Python prefix so two virtual environments never mix."""
    if base is None:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    tag = hashlib.sha256(sys.prefix.encode()).hexdigest()[:12]
    return Path(base) / "subgroup-matrix-cts" / f"{_MARK}{tag}"


def _write_atomic(path: Path, text: str) -> None:
    if path.exists() and path.read_text(errors="replace") == text:
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)  # concurrent workers write the same content


def _is_ours(value: str) -> bool:
    return _MARK in Path(value).name


def register_intel_cpu_runtime(
    environ: dict | None = None,
    system_vendors: Path = SYSTEM_VENDORS,
    cache_base: Path | None = None,
) -> Path | None:
    """Make the Intel CPU runtime visible to the ICD loader.

    Returns the vendors folder now in ``OCL_ICD_VENDORS``, or None when nothing
    was done (runtime not installed, or the user's own ``OCL_ICD_VENDORS`` is
    set and is left untouched).  Idempotent and safe across processes.
    """
    env = os.environ if environ is None else environ
    _NOTE.clear()
    current = env.get(ICD_ENV)
    if current and not _is_ours(current):
        _NOTE.append(f"{ICD_ENV} is set by the user ({current}); the Intel CPU runtime is not added")
        return None
    lib = find_intel_cpu_library()
    if lib is None:
        _NOTE.append("intel-opencl-rt is not installed (pip install '.[intel-cpu]')")
        return None
    d = private_vendors_dir(cache_base)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError:  # unwritable cache (read-only HOME): fall back to the temp folder
        import tempfile

        d = private_vendors_dir(Path(tempfile.gettempdir()))
        d.mkdir(parents=True, exist_ok=True)
    wanted = {"intel-cpu.icd": f"{lib}\n"}
    if system_vendors.is_dir():
        for f in sorted(system_vendors.glob("*.icd")):
            try:
                text = f.read_text()
            except OSError:
                continue
            name = f"system-{f.name}"
            if text.strip() and text.strip() != str(lib):
                wanted[name] = text if text.endswith("\n") else text + "\n"
    for old in d.glob("*.icd"):
        if old.name not in wanted:
            old.unlink(missing_ok=True)
    for name, text in wanted.items():
        _write_atomic(d / name, text)
    env[ICD_ENV] = str(d)
    _NOTE.append(f"Intel CPU runtime {lib} registered via {d}")
    return d


def registration_note() -> str:
    """One line saying what the last registration did (for `cts devices`)."""
    return _NOTE[-1] if _NOTE else "no ICD registration attempted"
