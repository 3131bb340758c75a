"""Property profiles and the cooperative-matrix plugin options."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cts.families.coop import CoopEntry, coop_cases, load_profile, matrix_types, profile_names

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"


def test_h100_profile_is_the_table_the_driver_reported():
    """cts/profiles/h100.json == the VkCooperativeMatrixPropertiesKHR entries
    recorded by the real run (its device facts, tests/data/h100-vulkan-coop-properties.json)."""
    facts = json.loads((DATA / "h100-vulkan-coop-properties.json").read_text())
    reported = [CoopEntry(**e) for e in facts["coop_properties"]]
    assert list(load_profile("h100").entries) == reported


@pytest.mark.parametrize("name", profile_names())
def test_every_profile_has_a_power_of_two_entry_and_unique_ids(name):
    """VK rule: at least one entry with power-of-two M, N, K (VK_KHR_cooperative_matrix)."""
    p = load_profile(name)
    assert any(all(v & (v - 1) == 0 for v in (e.M, e.N, e.K)) for e in p.entries)
    ids = [
        c.id
        for c in coop_cases(
            p.entries, ("exact", "onehot", "random", "special"), p.subgroup_size, ("vk", "clspv", "clc")
        )
    ]
    assert len(ids) == len(set(ids))
    assert matrix_types(p.entries)


def test_signed_bits_follow_the_types():
    e = CoopEntry(16, 16, 16, "u8", "i8", "i32", "i32", True)
    assert e.signed_bits == 0x2 | 0x4 | 0x8 | 0x10


def _pytest(*args):
    return subprocess.run(
        [sys.executable, "-m", "pytest", "cases/test_coop_matrix.py", "--no-report", "-q", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.e2e
def test_unknown_profile_and_api_are_one_line_usage_errors():
    p = _pytest("--coop-profile", "nosuch", "--collect-only")
    assert p.returncode == 4 and "unknown coop profile 'nosuch'" in p.stderr
    p = _pytest("--coop-api", "vk,metal", "--collect-only")
    assert p.returncode == 4 and "unknown --coop-api metal" in p.stderr


@pytest.mark.e2e
@pytest.mark.parametrize(
    "text, why",
    [
        ("{not json", "not a coop profile (Expecting property name"),
        ('{"name": "x"}', "missing key 'entries'"),
    ],
)
def test_a_broken_profile_file_is_named_in_one_line(tmp_path, text, why):
    f = tmp_path / "mine.json"
    f.write_text(text)
    p = _pytest("--coop-profile", str(f), "--collect-only")
    err = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 4 and len(err) == 1 and str(f) in err[0] and why in err[0], p.stderr


@pytest.mark.e2e
def test_profile_option_changes_the_space():
    p = _pytest(
        "--coop-profile", "amd_rdna3", "--coop-api", "vk", "--collect-only", "-k", "muladd and sat-sg"
    )
    assert p.returncode == 0, p.stdout[-2000:]
    assert "vk-muladd-m16n16k16-i8_u8_i32_i32-sat-sg-row-sat" in p.stdout


# ------------------------------------------------ the Vulkan case grid, op by op
TIERS4 = ("exact", "onehot", "random", "special")


def _want_ids(entries) -> set[str]:
    """The ``vk`` ids of the Vulkan case grid, written out by hand from the
    spec's operations (not from ``coop_cases``): per matrix type of every entry length,
    access, splat const/dyn, Load RowMajor/ColumnMajor x tight/padded/stride 0
    x storage/workgroup, Store the same without stride 0, add sub mul div
    negate scale (exact and random data), conversions to every other component
    type of the same use and shape; per entry MulAdd on every tier plus
    ColumnMajor operands, ``wrap`` exactly for non-saturating and ``sat``
    exactly for saturating integer entries, chain and gemm.  Documented
    exclusions: no arithmetic on bf16 (SPV_KHR_bfloat16), no f16 <-> bf16
    conversion (glslang 13), no negate of unsigned components."""
    want: set[str] = set()
    mats: dict[tuple, set[str]] = {}
    for e in entries:
        for use, r, c, t in (
            ("A", e.M, e.K, e.A),
            ("B", e.K, e.N, e.B),
            ("C", e.M, e.N, e.C),
            ("C", e.M, e.N, e.R),
        ):
            mats.setdefault((use, r, c), set()).add(t)
    for (use, r, c), ts in mats.items():
        for t in ts:
            m = f"{use}{r}x{c}-{t}"
            want |= {f"vk-length-{m}-exact", f"vk-access-{m}-exact"}
            want |= {f"vk-splat-{m}-{md}-exact" for md in ("const", "dyn")}
            for lay in ("row", "col"):
                for mem in ("storage", "workgroup"):
                    for st in ("tight", "padded", "zero"):
                        want.add(f"vk-load-{m}-{lay}-{st}-{mem}-exact")
                        if st != "zero":
                            want.add(f"vk-store-{m}-{lay}-{st}-{mem}-exact")
            if t != "bf16":
                for op in ("add", "sub", "mul", "div", "neg", "scale"):
                    if not (op == "neg" and t.startswith("u")):
                        want |= {f"vk-{op}-{m}-{tier}" for tier in ("exact", "random")}
            for d in ts - {t}:
                want.add(f"vk-convert-{m}_to_{d}-exact")  # f16 <-> bf16 too (patched module)
                if {t, d} <= {"f16", "f32", "f64"}:
                    want.add(f"vk-convert-{m}_to_{d}-special")  # inf, NaN, out of range
    want |= _want_khr_ids(entries)
    for e in entries:
        ints = not e.A.startswith(("f", "bf"))
        tiers = list(TIERS4) + ([("sat" if e.sat else "wrap")] if ints else [])
        want |= {f"vk-muladd-{e.tag}-row-{tier}" for tier in tiers}
        want |= {f"vk-muladd-{e.tag}-col-onehot", f"vk-chain-{e.tag}-random", f"vk-gemm-{e.tag}-random"}
    return want


def _want_khr_ids(entries) -> set[str]:
    """The load/store axes, composite access and OpConstantNull
    on the first shape of each (use, component type); the MulAdd forms on every entry."""
    want, first = set(), {}
    for e in entries:
        for use, r, c, t in (
            ("A", e.M, e.K, e.A),
            ("B", e.K, e.N, e.B),
            ("C", e.M, e.N, e.C),
            ("C", e.M, e.N, e.R),
        ):
            first.setdefault((use, t), f"{use}{r}x{c}-{t}")
    for m in first.values():
        for mem, srcs in (
            ("storage", "spush sspec sbuf"),
            ("workgroup", "spush sspec sbuf"),
            ("bda", ". spush sspec sbuf"),
        ):
            want |= {f"vk-load-{m}-row-padded-{mem}-{s}-exact".replace("-.-", "-") for s in srcs.split()}
        want |= {
            f"vk-store-{m}-col-padded-{x}-exact"
            for x in ("bda", "storage-spush", "workgroup-sbuf", "bda-sspec")
        }
        want |= {
            f"vk-{x}-exact"
            for x in (
                f"load-{m}-row-tight-storage-v4",
                f"load-{m}-col-tight-storage-v2",
                f"store-{m}-row-tight-storage-v2",
                f"store-{m}-col-tight-storage-v4",
            )
        }
        want |= {f"vk-load-{m}-row-tight-storage-{x}-exact" for x in ("nontemporal", "aligned")}
        want |= {f"vk-store-{m}-row-tight-storage-avail-exact", f"vk-access-{m}-composite-exact"}
        want.add(f"vk-splat-{m}-null-exact")
        want |= {
            f"vk-{op}-{m}-row-padded-{mem}-varptr-exact"
            for op in ("load", "store")
            for mem in ("storage", "workgroup")
        }
    forms = ("func", "funcconst", "array", "struct", "colacc", "stride0", "wg4", "sgmin", "sgmax")
    return want | {f"vk-muladd-{e.tag}-row-{f}-exact" for e in entries for f in forms}  # fmt: skip


@pytest.mark.parametrize("name", profile_names())
def test_every_operation_for_every_profile_entry(name):
    """The case space is exactly the Vulkan case grid for each profile:
    nothing missing (an op or variant dropped for some type) and nothing the
    grid does not hold."""
    p = load_profile(name)
    got = {c.id for c in coop_cases(p.entries, TIERS4, p.subgroup_size, ("vk",))}
    want = _want_ids(p.entries)
    assert not want - got, f"missing: {sorted(want - got)[:10]}"
    assert not got - want, f"unexpected: {sorted(got - want)[:10]}"
    sat = [i for i in got if i.endswith("-sat")]
    assert all("-sat-sg-" in i for i in sat)  # saturating tier only on reported saturating entries
    assert not any("-nosat-" in i and i.endswith("-sat") for i in got)


def test_opencl_forms_never_name_bf16():
    """cl_khr_cooperative_matrix (draft) has no bf16 component: not even as a
    conversion target (cl_khr_cooperative_matrix draft)."""
    p = load_profile("h100")
    for api in ("clspv", "clc"):
        ids = [c.id for c in coop_cases(p.entries, TIERS4, p.subgroup_size, (api,))]
        assert ids and not [i for i in ids if "bf16" in i], api
