"""The MLIR family as MLIR text: every case's program written as
a ``gpu.func``, checked against the case without tools, then parsed and
verified by upstream ``mlir-opt`` (Debian ``mlir-22-tools``; skipped with
that name where it is absent) in a few batched runs; wrong texts (transpose
dropped, leadDimension off by one, wrong rotate width) are valid MLIR that
lowers to a different binary, so only a device run can catch them
(tests/test_mlir_vulkan.py does, on lavapipe)."""

from __future__ import annotations

import re

import pytest

from cts.families.mlir import mlir_cases
from cts.families.mlir_program import case_program
from cts.kernels import mlir_text as mt

VK = mt.VulkanTarget(
    8,
    caps=("Shader", "CooperativeMatrixKHR", "Float16", "Float64", "Int8", "Int16", "Int64",
          "StorageBuffer16BitAccess", "StorageBuffer8BitAccess", "GroupNonUniform", "GroupNonUniformRotateKHR"),
    exts=("SPV_KHR_cooperative_matrix", "SPV_KHR_16bit_storage", "SPV_KHR_8bit_storage", "SPV_KHR_subgroup_rotate"),
    coop=(mt.CoopProp(8, 8, 8, "f16", "f16", "f32", "f32"),),
)  # fmt: skip
CUDA = mt.CudaTarget()

# What mlir-opt 22.1.8's parser and verifiers refuse of texts the spec allows (MLIR gpu dialect):
# (which cases, the words of the refusal).  A change here is a change of the toolchain: say it.
REFUSED_BY_THE_DIALECT = (
    (
        lambda c: c.op == "thread_local" and c.elem in ("si8", "ui8"),
        "'gpu.subgroup_mma_extract_thread_local' op result #0 must be Integer or Float, but got '",
    ),
    (
        lambda c: c.op == "elementwise" and c.optype == "truncf",
        "'gpu.subgroup_mma_elementwise' expected ::mlir::gpu::MMAElementwiseOp to be one of: addf,",
    ),
    (
        lambda c: c.op == "constant" and c.elem == "f64",
        "'gpu.subgroup_mma_constant_matrix' op operand #0 must be 8-bit signed integer or 8-bit unsigned",
    ),
)


def _funcs(target) -> dict:
    return {mt.func_name(c): mt.case_func(c, case_program(c), target) for c in mlir_cases()}


@pytest.fixture(scope="module")
def tools():
    from cts.kernels import mlir_tools

    try:
        mlir_tools.tool_path("mlir-opt")
        mlir_tools.tool_path("mlir-translate")
        version = mlir_tools.tool_version()
    except mlir_tools.MlirToolError as e:
        pytest.skip(f"no MLIR tools ({mlir_tools.PACKAGE}): {e}")
    return mlir_tools, version


# ------------------------------------------------------------ without tools
def test_every_case_has_a_text_that_says_what_the_case_says():
    """Per case: one gpu.func; each load / store carries the program's
    leadDimension and transpose; compute carries a_transpose / b_transpose;
    gpu.rotate its offset and width; a memref per buffer of the program."""
    names = set()
    for c in mlir_cases():
        prog = case_program(c)
        text = mt.case_func(c, prog, VK)
        name = mt.func_name(c)
        assert name not in names
        names.add(name)
        assert text.count("gpu.func @") == 1 and f"// mlir_mma[{c.id}]" in text
        loads = [op for op in prog.ops if op[0] in ("load", "store")]
        got = re.findall(r"\{leadDimension = (\d+) : index(, transpose)?\}", text)
        want = [(str(op[5]), ", transpose" if op[6] else "") for op in loads]
        assert got == want, c.id
        if c.op == "compute":
            flags = re.search(r"gpu.subgroup_mma_compute %\w+, %\w+, %\w+( \{[^}]*\})?", text).group(1) or ""
            assert ("a_transpose" in flags, "b_transpose" in flags) == (c.t1, c.t2), c.id
        rot = re.findall(r"gpu.rotate %\w+, (\d+), (\d+) :", text)
        if c.op == "gpu_rotate":
            assert rot == [(str(c.offset), str(c.width))], c.id
        if c.op == "mma_rotate":
            n = {"AOp": c.mnk[0] * c.mnk[2], "BOp": c.mnk[2] * c.mnk[1], "COp": c.mnk[0] * c.mnk[1]}[
                c.tag
            ] // c.sg
            assert rot == [(str(c.offset), str(c.sg))] * n, c.id
            assert text.count("arith.select") == n and text.count("gpu.subgroup_mma_insert_thread_local") == n
        args = re.search(r"gpu.func @\w+\((.*)\) kernel", text).group(1)
        assert [a.split(":")[0].strip("% ") for a in args.split(", %")] == list(prog.buffers), c.id
        assert f"workgroup_size = [{c.sg}, 1, 1]" in text


def test_targets_wrap_the_same_body():
    c = next(c for c in mlir_cases() if c.id == "compute-f16_f16_f32-aT-bN-padded-m8n8k8")
    prog = case_program(c)
    vk, cu = mt.case_module(c, prog, VK), mt.case_module(c, prog, CUDA)
    assert "spirv.target_env" in vk and "#spirv.storage_class<StorageBuffer>" in vk
    assert '#nvvm.target<chip = "sm_90">' in cu and "storage_class" not in cu
    strip = [
        re.sub(r", #spirv.storage_class<StorageBuffer>| attributes \{.*\}| \[#nvvm.*\]", "", t)
        for t in (vk, cu)
    ]
    assert strip[0] == strip[1]


def test_a_missing_tool_names_the_package(tmp_path, monkeypatch):
    from cts.errors import HarnessError
    from cts.kernels import mlir_tools

    monkeypatch.setenv("CTS_MLIR_TOOLS", str(tmp_path))
    mlir_tools.tool_path.cache_clear()
    mlir_tools.tool_version.cache_clear()
    try:
        with pytest.raises(mlir_tools.MlirToolError) as e:
            mlir_tools.verify("module {}")
        assert isinstance(e.value, HarnessError)  # a harness error, never a device verdict
        assert "mlir-opt not found" in str(e.value) and "mlir-22-tools" in str(e.value)
    finally:
        monkeypatch.undo()
        mlir_tools.tool_path.cache_clear()
        mlir_tools.tool_version.cache_clear()


# ------------------------------------------------------------ with mlir-opt
@pytest.mark.parametrize("target", [VK, CUDA], ids=["vulkan", "cuda"])
def test_every_case_text_parses_and_verifies(tools, target):
    """All cases in one module (a few mlir-opt runs, seconds): every text
    verifies except what mlir-opt 22 refuses (REFUSED_BY_THE_DIALECT)."""
    mlir_tools, version = tools
    refused = mlir_tools.verify_funcs(_funcs(target), lambda fs: mt.module_text(fs, target))
    expected = {}
    for c in mlir_cases():
        for pick, words in REFUSED_BY_THE_DIALECT:
            if pick(c):
                expected[mt.func_name(c)] = words
    assert set(refused) == set(expected), (version, sorted(set(refused) ^ set(expected))[:10])
    for name, msg in refused.items():
        assert expected[name] in msg, (name, msg)
    assert len(expected) < len(mlir_cases()) // 10


MUTANTS = {
    # case, what the mutant changes in the text (valid MLIR, wrong program)
    "transpose dropped": ("compute-f16_f16_f32-aT-bN-padded", (", transpose}", "}")),
    "leadDimension off by one": ("load_store-f32-padded-loadN-storeN", ("leadDimension = 19 ", "leadDimension = 20 ")),
    "rotate width": ("gpu_rotate-i32-sg8-w4-off1", (", 1, 4 : i32", ", 1, 8 : i32")),
}  # fmt: skip


def mutate(text: str, what: tuple[str, str]) -> str:
    old, new = what
    assert old in text, old
    return text.replace(old, new, 1)


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_a_wrong_text_is_valid_mlir_and_lowers_to_another_binary(tools, mutant, tmp_path, monkeypatch):
    """The compiler cannot know the text is wrong: it verifies and lowers
    (to SPIR-V, and to PTX where NVVM lowers the op), to a different binary."""
    mlir_tools, _ = tools
    monkeypatch.setenv("CTS_CACHE_DIR", str(tmp_path))
    case_id, change = MUTANTS[mutant]
    c = next(c for c in mlir_cases() if c.id == case_id)
    good = mt.case_module(c, case_program(c), VK)
    bad = mutate(good, change)
    mlir_tools.verify(bad)
    assert mlir_tools.to_spirv(good)[0] != mlir_tools.to_spirv(bad)[0]
    if c.op != "gpu_rotate":  # no NVVM lowering of gpu.rotate in MLIR 22
        good_cu = mt.case_module(c, case_program(c), CUDA)
        assert mlir_tools.to_ptx(good_cu) != mlir_tools.to_ptx(mutate(good_cu, change))


def test_lowered_binaries_are_cached_on_disk(tools, tmp_path, monkeypatch):
    mlir_tools, version = tools
    monkeypatch.setenv("CTS_CACHE_DIR", str(tmp_path))
    c = next(c for c in mlir_cases() if c.id == "compute-f16_f16_f32-aN-bN-tight-m8n8k8")
    text = mt.case_module(c, case_program(c), VK)
    code, meta = mlir_tools.to_spirv(text)
    assert code[:4] == b"\x03\x02\x23\x07" and meta["tool"] == version
    assert isinstance(meta["findings"], list) and meta["pipeline"] == mlir_tools.SPIRV_PIPELINE
    assert len(list((tmp_path / "mlir").glob("*.spv"))) == 1
    calls = []
    real = mlir_tools.run_tool
    monkeypatch.setattr(mlir_tools, "run_tool", lambda *a, **k: calls.append(a) or real(*a, **k))
    assert mlir_tools.to_spirv(text) == (code, meta) and calls == []  # from the cache: no tool ran


def test_carried_mode_runs_only_what_the_cache_holds(tools, tmp_path, monkeypatch):
    """CTS_MLIR_CARRIED=1 (a machine without the tools, e.g. the GPU machine):
    a binary and a refusal lowered elsewhere come from the carried cache with
    the version they were made with; a text it lacks is a harness error."""
    mlir_tools, version = tools
    from cts.errors import ToolchainError

    monkeypatch.setenv("CTS_CACHE_DIR", str(tmp_path))
    by_id = {c.id: c for c in mlir_cases()}
    good = mt.case_module(
        by_id["load_store-f16-tight-loadN-storeN"],
        case_program(by_id["load_store-f16-tight-loadN-storeN"]),
        CUDA,
    )
    rot = by_id["gpu_rotate-i32-sg32-w8-off1"]
    refused = mt.case_module(rot, case_program(rot), CUDA)
    ptx = mlir_tools.to_ptx(good)
    with pytest.raises(ToolchainError):
        mlir_tools.to_ptx(refused)
    monkeypatch.setenv("CTS_MLIR_TOOLS", str(tmp_path / "no-tools"))  # no tool from here on
    monkeypatch.setenv("CTS_MLIR_CARRIED", "1")
    mlir_tools.tool_path.cache_clear()
    mlir_tools.tool_version.cache_clear()
    try:
        assert mlir_tools.tool_version() == version
        assert mlir_tools.to_ptx(good) == ptx
        with pytest.raises(ToolchainError, match="failed to legalize operation 'gpu.rotate'"):
            mlir_tools.to_ptx(refused)
        with pytest.raises(mlir_tools.MlirToolError, match="carried cache"):
            mlir_tools.to_ptx(good.replace("leadDimension = 16", "leadDimension = 17", 1))
    finally:
        monkeypatch.undo()
        mlir_tools.tool_path.cache_clear()
        mlir_tools.tool_version.cache_clear()


@pytest.mark.parametrize("target", [VK, CUDA], ids=["vulkan", "cuda"])
def test_the_suites_own_text_is_checked_before_the_tool_is_blamed(tools, target, tmp_path, monkeypatch):
    """The same mlir-opt parses and verifies the suite's text first: an op
    variant the version lacks (truncf of gpu.subgroup_mma_elementwise) is a
    skip naming the version; a verifier error on the suite's text (a constant
    matrix of f64, outside the op's operand types) is a harness error, not a
    toolchain verdict; only a verified text the lowering refuses is the
    tool's (gpu.rotate has no NVVM lowering in MLIR 22).  The same from the
    cache, which keeps what each refusal was."""
    from cts.errors import ToolchainError, Unsupported

    mlir_tools, version = tools
    monkeypatch.setenv("CTS_CACHE_DIR", str(tmp_path))
    lower = mlir_tools.to_spirv if target is VK else mlir_tools.to_ptx
    pick = {
        "truncf": lambda c: c.op == "elementwise" and c.optype == "truncf",
        "f64 constant": lambda c: c.op == "constant" and c.elem == "f64",
        "rotate": lambda c: c.op == "gpu_rotate" and c.elem == "i32",
    }
    text = {
        k: mt.case_module(c, case_program(c), target) for k, f in pick.items() for c in mlir_cases() if f(c)
    }
    for _ in range(2):  # the second time from the cache
        with pytest.raises(Unsupported, match=re.escape(version) + ".*MMAElementwiseOp"):
            lower(text["truncf"])
        with pytest.raises(mlir_tools.MlirTextError, match="fails the verifier") as e:
            lower(text["f64 constant"])
        assert not isinstance(e.value, ToolchainError) and "operand #0 must be" in str(e.value)
        if target is CUDA:
            with pytest.raises(ToolchainError, match="failed to legalize operation 'gpu.rotate'"):
                lower(text["rotate"])


def test_the_lowerings_shown_wrong_are_found_in_the_module_alone(tools, tmp_path, monkeypatch):
    """The evidence a toolchain verdict carries, from the lowered module
    without a device: PTX of a padded leadDimension (wmma ldm not a multiple
    of 16 bytes) and of maxf / minf (setp + selp: -0 and +0 unordered) and
    nothing else; SPIR-V of a bf16 gpu.rotate (bf16 memrefs as 32-bit words)
    and not of the f16 one."""
    mlir_tools, _ = tools
    monkeypatch.setenv("CTS_CACHE_DIR", str(tmp_path))
    cu = mt.CudaTarget("sm_90")
    flagged, lowered = set(), set()
    shown = [
        c
        for c in mlir_cases()
        if c.id.startswith(("load_store-f16-padded", "elementwise-maxf", "elementwise-minf"))
    ]
    others = [c for c in mlir_cases() if "padded" not in c.id and not c.id.startswith("elementwise-m")][::20]
    for c in shown + others:
        text = mt.case_module(c, case_program(c), cu)
        try:
            ptx = mlir_tools.to_ptx(text)
        except Exception:  # noqa: BLE001 - no NVVM lowering, or an op variant MLIR 22 lacks
            continue
        lowered.add(c.id)
        if mlir_tools.ptx_findings(text, ptx):
            flagged.add(c.id)
    want = {c.id for c in shown}
    assert len(lowered) >= 20 and flagged and flagged <= want, sorted(flagged - want)[:5]
    assert {i for i in want & lowered if "padded" in i} <= flagged
    assert {i for i in flagged if "max" in i or "min" in i} == {
        i for i in want & lowered if "max" in i or "min" in i
    }
    rot = {c.elem: c for c in mlir_cases() if c.op == "gpu_rotate" and c.sg == 8 and c.id.endswith("off1")}
    bf16 = mlir_tools.to_spirv(mt.case_module(rot["bf16"], case_program(rot["bf16"]), VK))[1]["findings"]
    f16 = mlir_tools.to_spirv(mt.case_module(rot["f16"], case_program(rot["f16"]), VK))[1]["findings"]
    assert any("memref of bf16 lowered to an array of 32-bit float words" in f for f in bf16), bf16
    assert not any("bf16" in f for f in f16), f16
