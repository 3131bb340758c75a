"""Vulkan on Mesa 26 lavapipe (a real driver on the CPU): cooperative matrix,
subgroup rotate, NV cooperative matrix 2, the MLIR family through mlir-opt 22,
and the numerics fingerprint of the device.

Prepare with ``bash scripts/lavapipe.sh .cache/lavapipe .venv/bin/python``, then
``. .cache/lavapipe/env.sh && "$LVP_PYTHON" -m pytest tests/driver -m driver -k lavapipe``."""

import json

import pytest

from cts.families.rotate import rotate_cases
from tests.driver.sweep import SWEEP_TIMEOUT, mlir_tools_present, prepared_python, run, sweep

pytestmark = [pytest.mark.driver, pytest.mark.timeout(SWEEP_TIMEOUT)]

LVP = ("--backend", "vulkan", "--device", "llvmpipe")


@pytest.fixture(scope="module")
def python():
    return prepared_python("LVP_PYTHON", "lavapipe.sh", ".cache/lavapipe")


def test_cooperative_matrix_passes_and_rotate_passes_at_subgroup_size_8(tmp_path, python):
    rows = sweep(
        tmp_path / "lavapipe",
        *("cases/test_coop_matrix.py", "cases/test_subgroup_rotate.py", *LVP, "-n", "2"),
        python=python,
    )
    bad = [
        f"{r['family']}[{r['case_id']}]: {r['outcome']}"
        for r in rows
        if r["outcome"] not in ("passed", "skipped")
    ]
    assert not bad, f"lavapipe: cases not passed: {bad[:5]}"
    coop = [r for r in rows if r["family"] == "coop_matrix"]
    assert coop and all(r["outcome"] == "passed" for r in coop), (
        "every cooperative-matrix case of lavapipe's entries must run"
    )
    want = {
        c.id for c in rotate_cases() if c.api == "spirv" and c.sg == 8 and c.width <= 4
    }  # 8, 16: Kernel only
    ok = {r["case_id"] for r in rows if r["family"] == "subgroup_rotate" and r["outcome"] == "passed"}
    assert ok == want, f"rotate: {len(ok)} of the {len(want)} SPIR-V cases at subgroup size 8 passed"
    print(f"lavapipe: coop {len(coop)} passed; rotate {len(ok)} of {len(want)} SPIR-V size-8 cases passed")


def test_cooperative_matrix_2_passes_but_its_known_defects(tmp_path, python):
    rows = sweep(
        tmp_path / "coop2",
        *(
            "cases/test_coop_matrix2.py",
            *LVP,
            "-n",
            "2",
            "--expectations",
            "expectations/lavapipe-26-coop2.txt",
        ),
        python=python,
    )
    bad = [
        f"{r['case_id']}: {r['outcome']}"
        for r in rows
        if r["outcome"] not in ("passed", "skipped", "xfailed")
    ]
    assert not bad, f"lavapipe coop2: {bad[:5]}"
    n = sum(r["outcome"] == "passed" for r in rows)
    assert n >= 60, f"lavapipe coop2: only {n} cases passed"
    print(
        f"lavapipe coop2: {n} passed, {sum(r['outcome'] == 'xfailed' for r in rows)} known lavapipe defects"
    )


def test_mlir_through_mlir_opt_passes_or_names_the_toolchain(tmp_path, python):
    if not mlir_tools_present():
        pytest.skip(
            "mlir-opt 22 is not found: `export CTS_MLIR_TOOLS=$(bash scripts/mlir-tools.sh .cache/mlir)` prepares it"
        )
    rows = sweep(
        tmp_path / "mlir",
        *("cases/test_mlir_mma.py", *LVP, "-n", "2", "--expectations", "expectations/mlir-22-vulkan.txt"),
        python=python,
        check=False,  # toolchain verdicts exit 1
    )
    n = {}
    for r in rows:
        n[r["outcome"]] = n.get(r["outcome"], 0) + 1
    print(f"lavapipe MLIR: {n}")
    bad = [
        r["case_id"] for r in rows if r["outcome"] in ("failed", "crash", "timeout", "xpassed", "interrupted")
    ]
    assert not bad, f"MLIR on lavapipe: device verdicts other than pass / known lowering bug: {bad[:5]}"
    nontool = [r["case_id"] for r in rows if r["outcome"] == "error" and not r.get("toolchain")]
    assert not nontool, f"MLIR on lavapipe: harness errors that are not toolchain verdicts: {nontool[:5]}"
    assert n.get("passed", 0) >= 123, "every MLIR case lavapipe can run must pass"


def test_the_numerics_fingerprint_explains_lavapipe(tmp_path, python):
    out = tmp_path / "numerics"
    run("-m", "cts", "numerics", *LVP, "--out", str(out), python=python)
    recs = json.loads((out / "fingerprint.json").read_text())
    assert len(recs) >= 2 and not [r for r in recs if "error" in r], [r.get("error") for r in recs]
    for r in recs:
        checks = [r["model_tier"]] + r["model_tier"].get("more", [])
        agree = min(c["tiles_bit_exact"] / c["tiles"] for c in checks)
        print(f"{r['target']}: {r['status']}, random tiles bit-exact (worst distribution) {agree:.4f}")
        assert r["status"] in ("model", "selected") and agree >= 0.999, (
            "the fingerprint must explain lavapipe"
        )
