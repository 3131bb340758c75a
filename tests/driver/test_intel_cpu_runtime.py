"""The Intel families, subgroup rotate, the MLIR rotate ops, the subgroup
built-ins and joint_matrix's AMX tables on Intel's CPU OpenCL runtime (PyPI
``intel-opencl-rt``, registered by cts/backends/icd.py): each test runs its
sweep and checks the record.

``pytest tests/driver -m driver -k intel_cpu_runtime`` (set CTS_OPENCL_CACHE_DIR to
keep built programs between runs)."""

import pytest

from cts.families.intel import intel_mma_cases, intel_split_cases, tf32_convert_cases
from cts.families.mlir import mlir_cases
from cts.families.rotate import rotate_cases
from reference.data import TIERS
from tests.driver.sweep import SWEEP_TIMEOUT, opencl_cache, sweep

pytestmark = [pytest.mark.driver, pytest.mark.timeout(SWEEP_TIMEOUT)]

INTEL = ("--backend", "opencl", "--device", "Intel")


@pytest.fixture(scope="module", autouse=True)
def _runtime():
    from cts.backends.icd import find_intel_cpu_library

    if find_intel_cpu_library() is None:
        pytest.skip("intel-opencl-rt is not installed: pip install -e '.[all]' brings the Intel CPU runtime")
    pytest.importorskip("pyopencl", reason="pyopencl is not installed: pip install -e '.[all]'")


def intel_cases():
    return intel_mma_cases(TIERS) + intel_split_cases(TIERS) + tf32_convert_cases(TIERS)


def test_intel_families_without_a_prelude_skip_naming_the_missing_extension(tmp_path):
    rows = sweep(tmp_path / "noprelude", "cases/test_intel_mma.py", *INTEL, *opencl_cache())
    want = {f"{c.family}[{c.id}]": c.extension for c in intel_cases()}
    got = {f"{r['family']}[{r['case_id']}]": r for r in rows}
    bad = [
        k
        for k, ext in want.items()
        if k not in got or got[k]["outcome"] != "skipped" or ext not in (got[k].get("reason") or "")
    ]
    print(
        f"opencl, no prelude: {len(want) - len(bad)} of {len(want)} cases skipped naming the missing extension"
    )
    assert not bad, f"not skipped with the extension named: {bad[:5]}"


def test_intel_families_with_the_shipped_prelude_all_run_and_pass(tmp_path):
    rows = sweep(
        tmp_path / "prelude",
        *("cases/test_intel_mma.py", *INTEL, "--opencl-prelude", "builtin", "-n", "2", *opencl_cache()),
    )
    want = len(intel_cases())
    ran = [r for r in rows if r["outcome"] in ("passed", "failed", "error")]
    ok = sum(r["outcome"] == "passed" for r in ran)
    print(f"opencl+prelude: {len(ran)} cases ran (built-ins x tiers = {want}), {ok} passed")
    assert len(ran) == want == ok, (
        "every Intel case must run and pass on the Intel CPU runtime with the prelude"
    )


def test_subgroup_rotate_scalars_pass_and_narrow_deltas_are_the_known_link_failure(tmp_path):
    rows = sweep(
        tmp_path / "rotate",
        *("cases/test_subgroup_rotate.py", *INTEL, "-n", "2"),
        *("--expectations", "expectations/intel-cpu-opencl-2026.txt", *opencl_cache()),
    )
    r = [x for x in rows if x["family"] == "subgroup_rotate"]
    for api in ("opencl_c", "spirv"):
        want = [
            c.id
            for c in rotate_cases()
            if c.api == api and c.width == 1 and c.type != "bool" and c.dbits == 32
        ]
        ok = {x["case_id"] for x in r if x["outcome"] == "passed" and x["case_id"] in want}
        print(f"rotate {api}: {len(ok)} of {len(want)} scalar cases ran and passed on the Intel CPU runtime")
        assert len(ok) == len(want), f"every {api} scalar rotate case must run and pass"
    assert not [x for x in r if x["outcome"] in ("failed", "error", "xpassed")], "no rotate case may fail"
    # 8-, 16- and 64-bit Delta: the runtime's known link failure (expectations/intel-cpu-opencl-2026.txt)
    xf = {x["case_id"] for x in r if x["outcome"] == "xfailed"}
    assert xf == {c.id for c in rotate_cases() if c.dbits != 32}, sorted(xf)[:5]


def test_mlir_rotate_ops_of_an_opencl_c_gentype_pass_and_the_rest_skip_naming_the_gap(tmp_path):
    rows = sweep(
        tmp_path / "mlir-rotate", "cases/test_mlir_mma.py", *INTEL, "-n", "2", "-k", "rotate", *opencl_cache()
    )
    m = [x for x in rows if x["family"] == "mlir_mma"]
    rot = [c for c in mlir_cases() if c.op in ("gpu_rotate", "mma_rotate")]
    want = [c.id for c in rot if c.elem not in ("i1", "bf16")]  # no bool / bfloat16 OpenCL C gentype
    ok = {x["case_id"] for x in m if x["outcome"] == "passed"}
    print(f"mlir rotate ops: {len(ok)} of {len(want)} cases ran and passed")
    assert ok == set(want), "every gpu.rotate / mma_rotate case of an OpenCL C gentype must run and pass"
    gap = {
        x["case_id"]
        for x in m
        if x["outcome"] == "skipped" and "no bool / bfloat16" in (x.get("reason") or "")
    }
    assert gap == {c.id for c in rot if c.elem in ("i1", "bf16")}, (
        "i1 / bf16 gpu.rotate must skip naming the gap"
    )


def test_subgroup_builtins_all_pass(tmp_path):
    rows = sweep(tmp_path / "builtins", "cases/test_subgroup_builtins.py", *INTEL, "-n", "2", *opencl_cache())
    assert len(rows) == 20 and all(r["outcome"] == "passed" for r in rows), [
        (r["case_id"], r["outcome"]) for r in rows
    ]
    print("subgroup built-ins on the Intel CPU runtime: 20 of 20 passed")


def test_joint_matrix_amx_cases_skip_naming_what_is_missing(tmp_path):
    rows = sweep(
        tmp_path / "joint",
        *("cases/test_joint_matrix.py::test_joint_matrix", *INTEL, "-n", "2", "-k", "amx", *opencl_cache()),
    )
    words = ("cl_khr_cooperative_matrix not supported", "lacks CPU flag amx_", "not realized by the suite")
    bad = [
        r["case_id"]
        for r in rows
        if r["outcome"] != "skipped" or not any(w in (r.get("reason") or "") for w in words)
    ]
    print(
        f"joint_matrix on opencl: {len(rows) - len(bad)} of {len(rows)} AMX cases skipped naming what is missing"
    )
    assert rows and not bad, bad[:5]
