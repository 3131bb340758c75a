"""Property profiles and the cooperative-matrix plugin options."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cts.families.coop import CoopEntry, coop_cases, load_profile, matrix_types, profile_names

ROOT = Path(__file__).resolve().parents[1]


def test_h100_profile_is_the_table_the_driver_reported():
    """cts/profiles/h100.json == the VkCooperativeMatrixPropertiesKHR entries
    recorded by the real run (reports/h100-vulkan/device.json)."""
    facts = json.loads((ROOT / "reports/h100-vulkan/device.json").read_text())
    reported = [CoopEntry(**e) for e in facts["device"]["coop_properties"]]
    assert list(load_profile("h100").entries) == reported


@pytest.mark.parametrize("name", profile_names())
def test_every_profile_has_a_power_of_two_entry_and_unique_ids(name):
    """VK rule: at least one entry with power-of-two M, N, K (spec-digest 4.3)."""
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


def test_unknown_profile_and_api_are_one_line_usage_errors():
    p = _pytest("--coop-profile", "nosuch", "--collect-only")
    assert p.returncode == 4 and "unknown coop profile 'nosuch'" in p.stderr
    p = _pytest("--coop-api", "vk,metal", "--collect-only")
    assert p.returncode == 4 and "unknown --coop-api metal" in p.stderr


def test_profile_option_changes_the_space():
    p = _pytest(
        "--coop-profile", "amd_rdna3", "--coop-api", "vk", "--collect-only", "-k", "muladd and sat-sg"
    )
    assert p.returncode == 0, p.stdout[-2000:]
    assert "vk-muladd-m16n16k16-i8_u8_i32_i32-sat-sg-row-sat" in p.stdout
