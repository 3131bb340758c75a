"""OpenCL on PoCL 6 (the CPU): the Intel families through the shipped prelude
on its cl_intel_subgroups, the subgroup built-ins (OpenCL C + SPIR-V) and
rotate's skips.

Prepare with ``bash scripts/pocl.sh .cache/pocl .venv/bin/python``, then
``. .cache/pocl/env.sh && "$POCL_PYTHON" -m pytest tests/driver -m driver -k pocl``."""

import pytest

from cts.families.intel import intel_mma_cases, intel_split_cases, tf32_convert_cases
from reference.data import TIERS
from tests.driver.sweep import SWEEP_TIMEOUT, opencl_cache, prepared_python, rows, run, sweep

pytestmark = [pytest.mark.driver, pytest.mark.timeout(SWEEP_TIMEOUT)]

POCL = ("--backend", "opencl", "--device", "Portable")


@pytest.fixture(scope="module")
def python():
    return prepared_python("POCL_PYTHON", "pocl.sh", ".cache/pocl")


def test_intel_families_through_the_prelude_pass_or_skip_naming_fp16(tmp_path, python):
    # the suite's sweep builds each program in one shard (PoCL spends 2-8 s on each of 152)
    report = tmp_path / "prelude"
    run(
        *("-m", "cts", "sweep", "-j", "2", "cases/test_intel_mma.py", *POCL, "--opencl-prelude", "builtin"),
        *("-q", "-p", "no:cacheprovider", "--report-dir", str(report), *opencl_cache()),
        python=python,
    )
    mma = rows(report)
    want = len(intel_mma_cases(TIERS)) + len(intel_split_cases(TIERS)) + len(tf32_convert_cases(TIERS))
    ran = [r for r in mma if r["outcome"] != "skipped"]
    skip = [r for r in mma if r["outcome"] == "skipped"]
    assert all(r["outcome"] == "passed" for r in ran), [
        r["case_id"] for r in ran if r["outcome"] != "passed"
    ][:5]
    assert all("cl_khr_fp16" in (r.get("reason") or "") for r in skip), {r.get("reason") for r in skip}
    assert len(mma) == want, (len(mma), want)
    print(f"PoCL: Intel MMA + prelude {len(ran)} of {want} ran and passed ({len(skip)} need cl_khr_fp16)")


def test_builtins_pass_full_subgroups_and_rotate_skips_naming_it(tmp_path, python):
    r = sweep(
        tmp_path / "pocl",
        *(
            "cases/test_subgroup_builtins.py",
            "cases/test_subgroup_rotate.py",
            "cases/test_spirv_intel_mma.py",
        ),
        *(*POCL, "-n", "2", "-k", "builtins or rotate", "--expectations", "expectations/pocl-6-opencl.txt"),
        *opencl_cache(),
        python=python,
    )
    bad = [
        f"{x['family']}[{x['case_id']}]: {x['outcome']}"
        for x in r
        if x["outcome"] not in ("passed", "skipped", "xfailed")
    ]
    assert not bad, f"PoCL: {bad[:5]}"
    sgb = {x["case_id"]: x["outcome"] for x in r if x["family"] == "subgroup_builtins"}
    assert len(sgb) == 20 and all(
        o == ("passed" if k.endswith("-full") else "xfailed") for k, o in sgb.items()
    ), sgb
    rot = [x for x in r if x["family"] == "subgroup_rotate"]
    assert rot and all(x["outcome"] == "skipped" and "rotate" in (x.get("reason") or "") for x in rot)
    print(
        "PoCL built-ins: 10 full passed (OpenCL C + SPIR-V), 10 partial the known defects; "
        f"rotate {len(rot)} skipped naming it"
    )
