"""Subgroup rotate on a real Vulkan driver (lavapipe in CI where prepared,
the H100 on the GPU machine; skipped with the reason where none is found).

* The SPIR-V form of the family runs and passes at the device's subgroup
  size: every element type the device allows, plain and clustered.
* Wrong implementations of our own, fed to the real driver as SPIR-V (the
  suite's module with the rotate rewritten), are caught, and by the launch
  that exists to catch them:
  - ``shuffle_mod_current``: OpGroupNonUniformShuffle from lane
    (id + delta) mod (active invocations of the subgroup): right on full
    subgroups and on power-of-two partial ones, wrong only where the partial
    subgroup has 3N/4 invocations;
  - ``const_delta_plus_one``: every constant Delta operand off by one (the
    dynamically uniform form stays right): caught only by the constant form.

``CTS_VULKAN_DEVICE`` picks the device by name (default: the backend's own
choice).
"""

import os
import re

import pytest

from cts.errors import BackendError
from cts.families.rotate import rotate_cases
from cts.runs.rotate import run_rotate
from tests.conftest import vulkan_or_skip

SEED = 5


@pytest.fixture(scope="module")
def vk():
    vulkan_or_skip()
    from cts.backends.vulkan import VulkanBackend

    try:
        b = VulkanBackend.from_options(device=os.environ.get("CTS_VULKAN_DEVICE"))
    except BackendError as e:
        pytest.skip(f"no Vulkan device: {e}")
    if b.reason:
        pytest.skip(b.reason)
    probe = _case(b.subgroup_size, "uint", 1, 0)
    why = b.unsupported(probe) if probe else "no case at the device's subgroup size"
    if why:
        pytest.skip(f"{b.info.name}: {why}")
    yield b
    b.close()


def _case(sg, t, width, cluster):
    ids = f"spirv-{t}{width if width > 1 else ''}-sg{sg}-{f'c{cluster}' if cluster else 'rotate'}"
    return next((c for c in rotate_cases() if c.id == ids), None)


def test_spirv_rotate_runs_and_passes_on_the_device(vk):
    sg = vk.subgroup_size
    picks = [(t, 1, c) for t in ("uint", "half", "uchar", "double", "bool") for c in (0, 2, sg)]
    picks += [(t, w, c) for t in ("float", "ushort", "long") for w in (2, 3, 4) for c in (0, 2)]
    ran = 0
    for t, w, c in picks:
        case = _case(sg, t, w, c)
        if case is None or vk.unsupported(case):
            continue
        v = run_rotate(case, vk, SEED).verdict
        assert v.passed and v.elements > 0, f"{case.id}: {v.summary()}"
        ran += 1
    assert ran >= 6, f"only {ran} cases ran on {vk.info.name}"


def _shuffle_mod_current(real):
    """The suite's module with every plain rotate replaced by a shuffle from
    lane (id + delta) mod (the subgroup's active invocations)."""

    def module(t, sg, width=1, clusters=None, dbits=32, nonuniform=False):
        text = real(t, sg, width, clusters, dbits, nonuniform)
        text = text.replace(
            "OpCapability GroupNonUniformRotateKHR",
            "OpCapability GroupNonUniformRotateKHR\nOpCapability GroupNonUniformShuffle",
        )
        text = text.replace(
            "OpSelectionMerge %merge None",
            "%mlid = OpLoad %uint %sglid\n%mbal = OpGroupNonUniformBallot %v4uint %scope_sg %true\n"
            "%mact = OpGroupNonUniformBallotBitCount %uint %scope_sg Reduce %mbal\n"
            "OpSelectionMerge %merge None",
        )
        pat = re.compile(r"^%(r0\w*) = OpGroupNonUniformRotateKHR (\S+) %scope_sg (\S+) (\S+)$", re.M)
        return pat.sub(
            lambda m: (
                f"%ma{m[1]} = OpIAdd %uint %mlid {m[4]}\n%mb{m[1]} = OpUMod %uint %ma{m[1]} %mact\n"
                f"%{m[1]} = OpGroupNonUniformShuffle {m[2]} %scope_sg {m[3]} %mb{m[1]}"
            ),
            text,
        )

    return module


def _const_plus_one(real):
    """The suite's module with its large constant Delta operands (%dc<v>)
    one higher; the dynamically uniform form is untouched."""

    def module(t, sg, width=1, clusters=None, dbits=32, nonuniform=False):
        out = []
        for line in real(t, sg, width, clusters, dbits, nonuniform).splitlines():
            mm = re.match(r"^(%dc\d+) = OpConstant %uint (\d+)$", line)
            out.append(f"{mm[1]} = OpConstant %uint {(int(mm[2]) + 1) % (1 << 32)}" if mm else line)
        return "\n".join(out) + "\n"

    return module


def _hints(v) -> list[str]:
    return [m.hint for m in v.mismatches]


def test_wrong_modulo_is_caught_on_the_device_by_the_non_power_of_two_launch(vk, monkeypatch):
    import cts.backends.vulkan_rotate as vr

    monkeypatch.setattr(vr, "rotate_vk_module", _shuffle_mod_current(vr.rotate_vk_module))
    sg = vk.subgroup_size
    case = _case(sg, "uint", 1, 0)
    v = run_rotate(case, vk, SEED).verdict
    assert not v.passed, f"{vk.info.name}: the wrong modulo passed {case.id}"
    print(f"{vk.info.name} {case.id}, shuffle_mod_current: {v.summary()}; first: {v.mismatches[0].line()}")
    assert all(f"partial subgroup of {3 * sg // 4})" in h for h in _hints(v)), _hints(v)[:2]


def test_wrong_constant_delta_is_caught_on_the_device_by_the_constant_form(vk, monkeypatch):
    import cts.backends.vulkan_rotate as vr

    monkeypatch.setattr(vr, "rotate_vk_module", _const_plus_one(vr.rotate_vk_module))
    case = _case(vk.subgroup_size, "uint", 1, 0)
    v = run_rotate(case, vk, SEED).verdict
    assert not v.passed, f"{vk.info.name}: wrong constant deltas passed {case.id}"
    print(f"{vk.info.name} {case.id}, const_delta_plus_one: {v.summary()}; first: {v.mismatches[0].line()}")
    assert all(", constant)" in h for h in _hints(v)), _hints(v)[:2]
