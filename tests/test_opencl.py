"""Self-tests of the OpenCL backend (cts/backends/opencl.py, icd.py, devices.py,
the shipped prelude).  Tests that need Intel's CPU runtime (PyPI
intel-opencl-rt) skip with a reason when it is absent."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cts.backends.base import BackendError
from cts.backends.devices import ClDevice, select_device
from cts.backends.icd import ICD_ENV, find_intel_cpu_library, register_intel_cpu_runtime
from cts.kernels.opencl_c import BUILTIN_PRELUDE, load_prelude

ROOT = Path(__file__).resolve().parents[1]
INTEL_LIB = find_intel_cpu_library()
needs_intel = pytest.mark.skipif(
    INTEL_LIB is None, reason="Intel CPU OpenCL runtime (intel-opencl-rt) not installed"
)
INTEL_EXT = "cl_intel_subgroup_matrix_multiply_accumulate"


# ------------------------------------------------------------ device selection
class _Named:
    def __init__(self, name: str):
        self.name = name


def _devs(*labels: tuple[str, str]) -> list[ClDevice]:
    return [ClDevice(i, _Named(p), _Named(d)) for i, (p, d) in enumerate(labels)]


DEVS = _devs(("Intel(R) OpenCL", "Intel(R) Xeon(R)"), ("Portable Computing Language", "cpu-x86-64"))


def test_select_by_index_and_substring():
    assert select_device("1", DEVS).index == 1
    assert select_device("xeon", DEVS).index == 0
    assert select_device("Portable", DEVS).index == 1


@pytest.mark.parametrize(
    "sel, words",
    [
        ("nvidia", ["matches no OpenCL device", "[0] Intel(R) OpenCL: Intel(R) Xeon(R)", "[1] Portable"]),
        ("7", ["no device with that index", "[1] Portable"]),
        ("c", ["matches several devices", "use an index"]),
        (None, ["several devices, choose one with --device", "[0] Intel"]),
    ],
)
def test_selection_errors_are_one_line_listing_devices(sel, words):
    with pytest.raises(BackendError) as e:
        select_device(sel, DEVS)
    msg = str(e.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg


def test_no_devices_is_an_error():
    with pytest.raises(BackendError, match="no OpenCL devices"):
        select_device(None, [])


# ------------------------------------------------------- capability skips
def _backend(exts=(), sizes=(8, 16, 32), assumed=()):
    """An OpenCLBackend whose device facts are given (no runtime needed)."""
    from cts.backends.base import DeviceInfo
    from cts.backends.opencl import OpenCLBackend

    b = OpenCLBackend.__new__(OpenCLBackend)
    b.device, b.prelude, b.assumed = _Named("Dev"), None, frozenset(assumed)
    b._info = DeviceInfo("opencl", "Dev", extensions=tuple(exts), subgroup_sizes=tuple(sizes))
    return b


def _case(sg: int, acc: str = "i32", a: str = "i8"):
    from cts.families.intel import intel_mma_cases

    return next(c for c in intel_mma_cases(("exact",)) if (c.sg, c.acc, c.a) == (sg, acc, a))


def test_capability_skips_name_what_is_missing():
    assert _backend().unsupported(_case(8)) == f"{INTEL_EXT} not supported by Dev"
    native = _backend(exts=(INTEL_EXT,))
    assert native.unsupported(_case(8)) is None
    # cl_intel_subgroup_matrix_multiply_accumulate: a device whose minimum subgroup size is 8 has only the N = 8 built-ins
    assert "minimum subgroup size 8" in native.unsupported(_case(16))
    assert "subgroup size 8 not supported by Dev (sizes 16, 32)" in _backend(
        (INTEL_EXT,), (16, 32)
    ).unsupported(_case(8))
    assert "cl_intel_required_subgroup_size missing" in _backend((INTEL_EXT,), ()).unsupported(_case(8))
    layered = _backend(sizes=(8, 16), assumed=(INTEL_EXT,))  # a prelude provides both variants
    assert layered.unsupported(_case(16)) is None
    assert (
        layered.unsupported(_case(16, "f16", "f16")) == "cl_khr_fp16 not supported by Dev (half accumulator)"
    )
    assert _backend(sizes=(8, 16), assumed=("*",)).unsupported(_case(16)) is None
    # the shipped prelude on a device with the native extension: the prelude steps aside
    # (#ifndef), the native built-ins run, so the minimum-subgroup-size rule still applies
    native_prelude = _backend(exts=(INTEL_EXT,), assumed=(INTEL_EXT,))
    native_prelude.assumed_explicit = frozenset()
    assert "minimum subgroup size 8" in native_prelude.unsupported(_case(16))
    assert native_prelude.unsupported(_case(8)) is None


# ------------------------------------------------------------ ICD registration
def test_user_ocl_icd_vendors_is_left_alone(tmp_path):
    env = {ICD_ENV: "/my/own/vendors"}
    assert register_intel_cpu_runtime(env, system_vendors=tmp_path, cache_base=tmp_path) is None
    assert env == {ICD_ENV: "/my/own/vendors"}


@needs_intel
def test_registration_keeps_system_icds(tmp_path):
    system = tmp_path / "etc"
    system.mkdir()
    (system / "pocl.icd").write_text("libpocl.so.2\n")
    env: dict[str, str] = {}
    d = register_intel_cpu_runtime(env, system_vendors=system, cache_base=tmp_path / "cache")
    assert d is not None and env[ICD_ENV] == str(d)
    files = {f.name: f.read_text().strip() for f in d.glob("*.icd")}
    lib = Path(files["intel-cpu.icd"])  # the corrected path: the runtime installed in this environment
    assert lib.name == "libintelocl.so" and lib.is_file()
    assert lib.is_relative_to(Path(sys.prefix).resolve()) or lib.is_relative_to(
        Path(sys.base_prefix).resolve()
    )
    shipped = Path(sys.prefix) / "etc" / "OpenCL" / "vendors" / "intel-cpu.icd"
    if shipped.is_file():  # the wheel's own entry names a build-machine path that does not exist
        assert shipped.read_text().strip() != str(lib)
    assert files["system-pocl.icd"] == "libpocl.so.2"  # system entries still visible
    # a second process (inheriting our value) refreshes the same folder
    (system / "pocl.icd").unlink()
    assert register_intel_cpu_runtime(env, system_vendors=system, cache_base=tmp_path / "cache") == d
    assert sorted(f.name for f in d.glob("*.icd")) == ["intel-cpu.icd"]


# ------------------------------------------------------------------- prelude
def test_prelude_missing_is_one_line_error(tmp_path):
    with pytest.raises(BackendError) as e:
        load_prelude(str(tmp_path / "nope.cl"))
    assert "\n" not in str(e.value) and "nope.cl" in str(e.value)


def test_builtin_prelude_declares_the_three_extensions():
    p = load_prelude("builtin")
    assert p.path == BUILTIN_PRELUDE
    assert p.provides == {
        INTEL_EXT,
        INTEL_EXT + "_tf32",
        "cl_intel_subgroup_split_matrix_multiply_accumulate",
    }


def _pytest(*args: str, cache: Path | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--no-report", *args]
    if cache is not None:
        cmd += ["--opencl-cache-dir", str(cache)]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=os.environ.copy(), timeout=600)


@pytest.mark.e2e
def test_prelude_missing_ends_the_session_with_one_line():
    r = _pytest("cases/test_intel_mma.py", "--backend", "opencl", "--opencl-prelude", "/no/such/prelude.cl")
    assert r.returncode == 4, r.stdout + r.stderr
    err = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(err) == 1 and "--opencl-prelude /no/such/prelude.cl" in err[0], r.stderr


@pytest.mark.e2e
@pytest.mark.parametrize(
    "opt",
    [("--opencl-prelude", "builtin"), ("--assume-extension", INTEL_EXT), ("--opencl-cache-dir", "off")],
    ids=["prelude", "assume", "cache"],
)
def test_opencl_options_need_the_opencl_backend(opt):
    """Given to the emulator they would be silently ignored: a usage error instead."""
    r = _pytest("cases/test_intel_mma.py", *opt)
    err = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 4 and len(err) == 1 and "need --backend opencl" in err[0], r.stderr


# ------------------------------------------------- on the Intel CPU runtime
@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("opencl-cache")


@pytest.mark.e2e
@needs_intel
def test_devices_command_shows_subgroups_and_spirv():
    r = subprocess.run([sys.executable, "-m", "cts", "devices"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr  # the overview: every backend, each device with its selector
    assert re.search(r"\[\d+\] Intel\(R\) OpenCL: .*: --backend opencl --device \d+", r.stdout), r.stdout
    assert "\nvulkan: " in r.stdout and "\ncuda: " in r.stdout
    r = subprocess.run([sys.executable, "-m", "cts", "devices", "--backend", "opencl"], cwd=ROOT,
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "Intel(R) OpenCL" in r.stdout
    assert "subgroup_sizes                   4, 8, 16, 32, 64" in r.stdout
    assert "GroupNonUniformRotateKHR" in r.stdout and "SPV_KHR_subgroup_rotate" in r.stdout
    assert "SPIR-V_1.4" in r.stdout


@pytest.mark.e2e
@needs_intel
def test_without_prelude_cases_skip_naming_the_extension(cache):
    r = _pytest(
        "cases/test_intel_mma.py", "--backend", "opencl", "-k", "M2 and exact", "-rs", "-q", cache=cache
    )
    assert r.returncode == 0, r.stdout[-3000:]
    skips = [ln for ln in r.stdout.splitlines() if ln.startswith("SKIPPED")]
    assert skips and "passed" not in r.stdout.splitlines()[-1]
    for ext in (INTEL_EXT, INTEL_EXT + "_tf32", "cl_intel_subgroup_split_matrix_multiply_accumulate"):
        assert any(f"{ext} not supported by" in s for s in skips), ext


@pytest.mark.e2e
@needs_intel
def test_build_failure_fails_that_case_and_the_run_goes_on(tmp_path, cache):
    bad = tmp_path / "broken.cl"
    bad.write_text(
        BUILTIN_PRELUDE.read_text() + "\n#define intel_sub_group_u8_u8_matrix_mad_k32 ) cts_broken (\n"
    )
    r = _pytest(
        "cases/test_intel_mma.py::test_intel_mma",
        "--backend",
        "opencl",
        "--opencl-prelude",
        str(bad),
        "-k",
        "sg8 and M1 and exact and (u8_u8 or i8_i8)",
        "-q",
        cache=cache,
    )
    out = r.stdout
    assert r.returncode == 1, out[-3000:]
    assert "1 failed, 1 passed" in out.splitlines()[-1]
    assert "kernel build failed" in out and "cts_broken" in out  # the build log is in the failure
    body = out.split("short test summary info")[0]  # the summary line repeats it when the terminal is wide
    assert body.count("kernel build failed") == 1 and "During handling" not in out  # once, not chained
    assert f"--opencl-prelude {bad}" in out  # rerun command carries the prelude


@pytest.mark.e2e
@needs_intel
def test_wrong_layered_implementation_is_caught(tmp_path, cache):
    """A prelude that reads A's packed elements from the wrong end fails with
    the element-level diagnostic (the suite is not blind on this backend)."""
    text = BUILTIN_PRELUDE.read_text()
    old = "const int x = AX(w >> (t * (AB)), AB);"
    assert old in text
    bad = tmp_path / "reversed.cl"
    bad.write_text(text.replace(old, "const int x = AX(w >> (((K) / (N) - 1 - t) * (AB)), AB);"))
    r = _pytest(
        "cases/test_intel_mma.py::test_intel_mma",
        "--backend",
        "opencl",
        "--opencl-prelude",
        str(bad),
        "-k",
        "sg16-i8_i8-k32-M1 and onehot",
        "-q",
        cache=cache,
    )
    assert r.returncode == 1 and "1 failed" in r.stdout.splitlines()[-1], r.stdout[-3000:]
    assert "one-hot at k=" in r.stdout and "(invocation " in r.stdout


@needs_intel
def test_program_cache_memory_and_disk(tmp_path):
    import warnings

    from cts.backends.opencl import OpenCLBackend

    src = "__kernel void k(__global uint *x) { x[get_global_id(0)] = 7u; }"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = OpenCLBackend(device="Intel", cache_dir=tmp_path)
        p1 = b.build_program(source=src)
        assert b.build_program(source=src) is p1
        assert (b.stats.compiled, b.stats.memory_hits, b.stats.disk_hits) == (1, 1, 0)
        b2 = OpenCLBackend(device="Intel", cache_dir=tmp_path)
        b2.build_program(source=src)
        assert (b2.stats.compiled, b2.stats.disk_hits) == (0, 1)
        import numpy as np

        from cts.kernels import KernelSource

        out = b2.run_kernel(
            KernelSource("k", source=src, global_size=(4,), args=("x",)), {}, {"x": (np.uint32, 4)}
        )
        assert out["x"].tolist() == [7, 7, 7, 7]  # the cached binary really runs
        with pytest.raises(Exception) as e:
            b2.build_program(source="__kernel void k( { }")
        assert "kernel build failed" in str(e.value) and type(e.value).__name__ == "CaseError"


@needs_intel
def test_a_foreign_cache_file_is_never_loaded_as_another_program(tmp_path):
    """A binary put under another program's key (copied, renamed, or a bug)
    must be rebuilt, not run: the file's header names its key and digest."""
    import shutil
    import warnings

    import numpy as np

    from cts.backends.opencl import OpenCLBackend
    from cts.kernels import KernelSource

    one = "__kernel void k(__global uint *x) { x[get_global_id(0)] = 1u; }"
    two = "__kernel void k(__global uint *x) { x[get_global_id(0)] = 2u; }"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = OpenCLBackend(device="Intel", cache_dir=tmp_path)
        b.build_program(source=one)
        f_one = set(tmp_path.glob("*.bin"))
        b.build_program(source=two)
        (f_two,) = set(tmp_path.glob("*.bin")) - f_one
        (f_one,) = f_one
        shutil.copyfile(f_two, f_one)  # program two's binary under program one's key
        b2 = OpenCLBackend(device="Intel", cache_dir=tmp_path)
        out = b2.run_kernel(
            KernelSource("k", source=one, global_size=(4,), args=("x",)), {}, {"x": (np.uint32, 4)}
        )
        assert out["x"].tolist() == [1, 1, 1, 1] and (b2.stats.compiled, b2.stats.disk_hits) == (1, 0)
        data = f_two.read_bytes()
        f_two.write_bytes(data[:-7] + bytes(7))  # damaged tail: rebuilt too
        b3 = OpenCLBackend(device="Intel", cache_dir=tmp_path)
        b3.build_program(source=two)
        assert (b3.stats.compiled, b3.stats.disk_hits) == (1, 0)


# ------------------------------------------- isolation on a real driver
HOSTILE = {
    # M = 2 overload of i8_i8 (sg 8) spins forever inside the kernel; the others stay correct
    "hang": "volatile int spin = 1; while (spin) { }",
    # ... or writes through a wild pointer: the driver process dies (SIGSEGV)
    "crash": "*(volatile __global int *)(ulong)0x10 = 1;",
}
_PICK = "sg8 and i8_i8 and exact and not split"  # M1, M2, M4, M8
_M2 = "cases/test_intel_mma.py::test_intel_mma[sg8-i8_i8-k32-M2-acc_i32-exact]"


@pytest.mark.e2e
@needs_intel
@pytest.mark.parametrize("kind", ["hang", "crash"])
def test_driver_hang_or_crash_stays_inside_its_case(tmp_path, cache, kind):
    """A case that hangs or kills the driver process: pytest-xdist restarts the
    worker, ``--timeout-method thread`` ends a hang that never returns to Python
    (a signal cannot interrupt clFinish), and the journal's start marker turns
    the lost case into a ``timeout`` / ``crash`` row; the other cases pass."""
    prelude = tmp_path / f"{kind}.cl"
    prelude.write_text(
        BUILTIN_PRELUDE.read_text()
        + f"""
CTS_DEF int2 cts_hostile(int2 a, int8 b, int2 acc) {{ {HOSTILE[kind]} return acc; }}
CTS_DEF int cts_hostile(int a, int8 b, int acc) {{ return (intel_sub_group_i8_i8_matrix_mad_k32)(a, b, acc); }}
CTS_DEF int4 cts_hostile(int4 a, int8 b, int4 acc) {{ return (intel_sub_group_i8_i8_matrix_mad_k32)(a, b, acc); }}
CTS_DEF int8 cts_hostile(int8 a, int8 b, int8 acc) {{ return (intel_sub_group_i8_i8_matrix_mad_k32)(a, b, acc); }}
#define intel_sub_group_i8_i8_matrix_mad_k32(a, b, acc) cts_hostile(a, b, acc)
"""
    )
    report = tmp_path / "report"
    cmd = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "cases/test_intel_mma.py", "-q",
        "-n", "2", "-k", _PICK, "--backend", "opencl", "--opencl-prelude", str(prelude),
        "--opencl-cache-dir", str(cache), "--timeout", "15", "--timeout-method", "thread",
        "--report-dir", str(report),
    ]  # fmt: skip
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stdout[-3000:]
    from cts.report.record import read_journals

    rows = {row["nodeid"]: row["outcome"] for row in read_journals([report / "journal"])}
    assert rows.pop(_M2) == ("timeout" if kind == "hang" else "crash"), r.stdout[-3000:]
    assert len(rows) == 3 and set(rows.values()) == {"passed"}, rows


@pytest.mark.e2e
@needs_intel
def test_numerics_model_tier_runs_on_the_intel_builtins(cache):
    """float_mma (the numerics fingerprint's model tier) is realized on OpenCL through the
    Intel float built-ins: the 8x16x16 targets are fingerprinted and checked
    bit for bit on the device; cooperative-matrix shapes skip naming why."""
    r = _pytest(
        "cases/test_numerics_model.py", "--backend", "opencl", "--opencl-prelude", "builtin",
        "--tiers", "model", "-q", "-rs", "-p", "no:randomly", cache=cache,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-3000:]
    assert r.stdout.splitlines()[-1].startswith("4 passed, 3 skipped"), r.stdout[-2000:]
    assert r.stdout.count("no Intel float built-in computes") == 3
    r = _pytest(
        "cases/test_numerics_model.py", "--backend", "opencl", "--tiers", "model", "-q", "-rs", cache=cache
    )
    assert r.returncode == 0 and f"{INTEL_EXT} not supported by" in r.stdout, r.stdout[-2000:]


@pytest.mark.e2e
@needs_intel
def test_a_non_ascii_digit_device_selector_is_a_one_line_error():
    r = _pytest(
        "cases/test_intel_mma.py", "--backend", "opencl", "--device", "\u00b2", "--collect-only", "-q"
    )
    err = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 4 and len(err) == 1 and "matches no OpenCL device" in err[0], r.stderr[-2000:]
