"""Mutation proof for the cooperative-matrix family: the clean emulator
passes every case of every built-in profile, and each named fault of the
cooperative-matrix emulator (cts/backends/emu_coop.py) is caught.

Runs in-process with 4 subgroups per case; ``-s`` prints the fault table.
"""

import pytest

from cts.backends.emu_coop import COOP_FAULTS
from cts.backends.emulator import EmulatorBackend
from cts.families.coop import coop_cases, load_profile, profile_names
from cts.runs.coop import run_coop
from reference.data import TIERS
from tests.mutation import Mutations, assert_kills_only

SEED = 1
SUBGROUPS = 4
COOP = Mutations("cooperative-matrix", lambda c, be: run_coop(c, be, SEED, subgroups=SUBGROUPS))


def cases_of(name, apis=("vk",)):
    p = load_profile(name)
    return coop_cases(p.entries, TIERS, p.subgroup_size, apis)


def fault_cases():
    # h100 for everything, amd_rdna3 adds saturating and mixed-signedness entries
    return cases_of("h100") + [c for c in cases_of("amd_rdna3") if c.entry is not None]


@pytest.mark.parametrize("name", profile_names())
def test_clean_emulator_passes_every_profile(name):
    COOP.assert_clean(cases_of(name, ("vk", "clspv", "clc")))


@pytest.fixture(scope="module")
def catches():
    return COOP.kills(COOP_FAULTS, fault_cases())


@pytest.mark.e2e
@pytest.mark.parametrize("fault", list(COOP_FAULTS))
def test_coop_fault_is_caught(fault, catches):
    COOP.assert_killed(catches, fault)


@pytest.mark.e2e
def test_faults_are_caught_where_they_should_be(catches):
    """Each targeted fault is caught by the op that targets it."""
    want = {
        "coop_colmajor_as_rowmajor": "-load-",
        "coop_stride_ignored": "-padded-",
        "coop_stride0_as_tight": "-zero-",
        "coop_signed_ignored": "i8_i8_i32_i32",
        "coop_saturation_missing": "-sat-sg-row-sat",
        "coop_wrap_saturates": "-wrap",
        "coop_store_clobbers_padding": "vk-store-",
        "coop_length_short": "vk-length-",
        "coop_workgroup_offset": "-workgroup",
        "coop_chain_restarts": "vk-chain-",
    }
    for fault, frag in want.items():
        assert any(frag in c for c in catches[fault]), (fault, catches[fault][:3])


# each fault of a KHR axis (cts.families.coop.VARIANTS) -> the id tokens of the only cases that may
# catch it (a fault only the new axis catches)
KHR_FAULTS = {
    "coop_push_stride_tight": ("-spush-",),
    "coop_spec_stride_default": ("-sspec-",),
    "coop_runtime_stride_zero": ("-sbuf-",),
    "coop_bda_offset": ("-bda-",),
    "coop_vec_stride_components": ("-v2-", "-v4-"),
    "coop_nontemporal_zero": ("-nontemporal-",),
    "coop_aligned_shift": ("-aligned-",),
    "coop_avail_last_row_lost": ("-avail-",),
    "coop_composite_first": ("-composite-",),
    "coop_null_not_zero": ("-null-",),
    "coop_func_param_c_dropped": ("-func-", "-funcconst-"),
    "coop_array_element0": ("-array-",),
    "coop_struct_member_stale": ("-struct-",),
    "coop_acc_colmajor_as_row": ("-colacc-",),
    "coop_muladd_stride0_tight": ("-stride0-",),
    "coop_wg_subgroups_share": ("-wg4-",),
    "coop_required_size_half": ("-sgmin-", "-sgmax-"),
    "coop_cross_sign_from_a": ("u8_i8_", "i8_u8_"),
    "coop_varptr_other": ("-varptr-",),
    "coop_convert_nan_zero": ("-special",),
    "coop_convert_zero_sign_lost": ("-special",),
    "coop_f16_bf16_bits_copied": ("f16_to_bf16", "bf16_to_f16"),
}


@pytest.mark.e2e
@pytest.mark.parametrize("fault", list(KHR_FAULTS))
def test_khr_axis_fault_is_caught_only_by_its_axis(fault, catches):
    got = catches[fault]
    assert_kills_only(got, fault, lambda c: any(t in c for t in KHR_FAULTS[fault]))
    # and by every case of the axis where the fault changes the result: all of them, except where
    # PARTIAL says which cases of the token the fault leaves unchanged
    assert all(any(t in c for c in got) for t in KHR_FAULTS[fault]), fault
    ids = {c.id for c in fault_cases()}
    axis = {
        i for i in ids if any(t in i for t in KHR_FAULTS[fault]) and not PARTIAL.get(fault, lambda i: 0)(i)
    }
    assert axis <= set(got), (fault, sorted(axis - set(got))[:3])


# cases of a fault's tokens that it does not change
PARTIAL = {
    # exact-tier B values are below 128: u8 and i8 readings agree; the random / special tiers catch it
    "coop_cross_sign_from_a": lambda i: i.endswith("-exact") or i.endswith("-onehot"),
    # "-special" also names MulAdd special tiers, which hold no float conversion
    "coop_convert_nan_zero": lambda i: not i.startswith("vk-convert-"),
    "coop_convert_zero_sign_lost": lambda i: not i.startswith("vk-convert-"),
}


def test_modelled_devices_fp16_accumulation_is_caught():
    """``--emulator-model``: a float MulAdd computed as a device model.  The
    H100's kind (one fused step, 26-bit window, truncation) passes the fp32
    MulAdd / chain / gemm cases; a device that accumulates fp32 results in
    fp16 (``f16acc_b4``) fails them."""
    cases = [
        c
        for c in cases_of("h100")
        if c.entry is not None and c.entry.R == "f32" and c.tier in ("random", "special")
    ]
    good, bad = EmulatorBackend(), EmulatorBackend()
    good.set_model("inputs_b16_e2")
    bad.set_model("f16acc_b4")
    COOP.assert_clean(cases, good)
    caught = COOP.failing(bad, cases)
    assert {i.split("-")[1] for i in caught} == {"muladd", "chain", "gemm"}, caught


def test_random_elementwise_results_are_never_subnormal():
    """Vulkan lets a device flush subnormal results of element-wise float ops
    (no DenormPreserve in the generated shaders), so the random tier must not
    produce any: then a flushing device cannot fail it."""
    import numpy as np

    from reference.dtypes import etype

    ops = ("add", "sub", "mul", "div", "scale", "neg")
    cases = [c for c in cases_of("h100") if c.op in ops and c.tier == "random" and etype(c.mat.t).is_float]
    assert cases
    for seed in (1, 2, 3):
        for c in cases:
            res = run_coop(c, EmulatorBackend(), seed)
            t = etype(c.mat.t)
            vals = t.decode(np.asarray(res.expected))
            sub = (vals != 0) & (np.abs(vals) < t.tiny)
            assert not sub.any(), (c.id, seed, vals[sub][:4])
