"""The one registry of families: each family declared once, every consumer
reads it.

A family is the value of ``case.family``: the key by which a backend runs a
case (``run_<family>``, ``unsupported_<family>``).  Its declaration names

* its tests in ``cases/`` (module, test function, case generator, run flow);
* the kernel generator modules (``cts.kernels``);
* the typed protocol of its backend entry (``cts.backends.protocols``) and,
  for device backends, the protocol of its capability check;
* the emulator mixin(s) that realise it, and the mixin of each device
  backend (``opencl``, ``vulkan``, ``cuda``) that realises it;
* its pytest options plugin (``cts.plugin.<module>``), if any;
* its repro bundle support, or in words why it has none.

The report needs no piece per family: it groups journal rows by their
``family`` field (``cts.report.markdown``, ``cts.report.html``).

Layering: this module sits in the case-space layer (``cts.families``) so that
every consumer may read it, the emulator and the device backends included.
It therefore names higher layers only by dotted strings (``"module:attr"``),
resolved lazily by ``resolve``; a consumer resolves only the references of
its own layer or below (the emulator its mixins, ``cts.report.repro`` the
case generators and run flows, ``cts.plugin`` the option plugins).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = [
    "BACKENDS",
    "FAMILIES",
    "CaseTest",
    "Family",
    "Repro",
    "emulator_mixins",
    "device_mixins",
    "family",
    "plugins",
    "resolve",
]

# the device backends a family may name a mixin for (the emulator realises every family)
BACKENDS = ("opencl", "vulkan", "cuda")


@dataclass(frozen=True)
class CaseTest:
    """One test of ``cases/``: ``module`` (path from the repository root),
    the ``test`` function, its case generator ``cases`` and the ``run`` flow
    it hands to ``cts.check`` (references ``"module:attr"``)."""

    module: str
    test: str
    cases: str
    run: str


@dataclass(frozen=True)
class Repro:
    """Repro bundle support (``python -m cts repro``): a case generator that
    needs no session (``cases``) and the run flow (``run``)."""

    cases: str
    run: str


@dataclass(frozen=True)
class Family:
    name: str
    spec: str  # the public specification (document, section)
    tests: tuple[CaseTest, ...]
    kernels: tuple[str, ...]  # cts.kernels modules
    protocol: str | None  # the backend entry (cts.backends.protocols), None when realised ``via``
    emulator: tuple[str, ...]  # EmulatorBackend mixins, in MRO order
    check: str | None = None  # the device backends' capability check (unsupported_<family>)
    devices: Mapping[str, str] = field(default_factory=dict)  # backend -> mixin
    plugin: str | None = None  # cts.plugin module of its options
    repro: Repro | str = ""  # bundle support, or why not (a sentence)
    via: str | None = None  # the family whose device view runs these cases, and its adapter
    via_adapter: str | None = None
    launches: str | None = None  # the emulator's batched entry run_<family>_launches, if the run flow uses it

    def __post_init__(self):
        object.__setattr__(self, "devices", MappingProxyType(dict(self.devices)))
        if not isinstance(self.repro, Repro) and not self.repro:
            raise ValueError(f"family {self.name}: repro is a Repro or the reason there is no bundle")


def resolve(ref: str):
    """``"package.module:attr"`` -> the object; ``"package.module"`` -> the module."""
    mod, _, attr = ref.partition(":")
    m = importlib.import_module(mod)
    return getattr(m, attr) if attr else m


def _t(module: str, test: str, cases: str, run: str) -> CaseTest:
    return CaseTest(f"cases/{module}.py", test, cases, run)


_INTEL_EMU = ("cts.backends.emulator:IntelEmulation",)
_INTEL_OCL = {"opencl": "cts.backends.opencl:IntelOpenCL"}
_INTEL_KERNELS = ("cts.kernels.opencl_c",)
_SPIRV_OCL = {"opencl": "cts.backends.opencl_spirv:SpirvOpenCL"}
_P = "cts.backends.protocols:"

# The declaration order is the order of the emulator's family mixins (its MRO): a mixin
# that answers another's run_<family> for some cases and defers to it for the rest
# (CoopOclEmulation before CoopEmulation) comes first.
_DECLARED: tuple[Family, ...] = (
    Family(
        "intel_mma",
        "cl_intel_subgroup_matrix_multiply_accumulate, 'New Functions'",
        (
            _t(
                "test_intel_mma",
                "test_intel_mma",
                "cts.families.intel:intel_mma_cases",
                "cts.runs.intel:run_intel_mma",
            ),
        ),
        _INTEL_KERNELS,
        _P + "IntelMma",
        _INTEL_EMU,
        check=_P + "IntelMmaCheck",
        devices=_INTEL_OCL,
        repro=Repro("cts.families.intel:intel_mma_cases", "cts.runs.intel:run_intel_mma"),
    ),
    Family(
        "intel_split_mma",
        "cl_intel_subgroup_split_matrix_multiply_accumulate, 'New Functions'",
        (
            _t(
                "test_intel_mma",
                "test_intel_split_mma",
                "cts.families.intel:intel_split_cases",
                "cts.runs.intel:run_intel_mma",
            ),
        ),
        _INTEL_KERNELS,
        _P + "IntelSplitMma",
        _INTEL_EMU,
        check=_P + "IntelSplitMmaCheck",
        devices=_INTEL_OCL,
        repro=Repro("cts.families.intel:intel_split_cases", "cts.runs.intel:run_intel_mma"),
    ),
    Family(
        "intel_tf32_convert",
        "cl_intel_subgroup_matrix_multiply_accumulate_tf32, 'New Functions'",
        (
            _t(
                "test_intel_mma",
                "test_intel_tf32_convert",
                "cts.families.intel:tf32_convert_cases",
                "cts.runs.intel:run_tf32_convert",
            ),
        ),
        _INTEL_KERNELS,
        _P + "IntelTf32Convert",
        _INTEL_EMU,
        check=_P + "IntelTf32ConvertCheck",
        devices=_INTEL_OCL,
        repro=Repro("cts.families.intel:tf32_convert_cases", "cts.runs.intel:run_tf32_convert"),
    ),
    Family(
        "subgroup_rotate",
        "SPV_KHR_subgroup_rotate (OpGroupNonUniformRotateKHR); cl_khr_subgroup_rotate",
        (
            _t(
                "test_subgroup_rotate",
                "test_subgroup_rotate",
                "cts.families.rotate:rotate_cases",
                "cts.runs.rotate:run_rotate",
            ),
        ),
        ("cts.kernels.rotate_cl", "cts.kernels.rotate_spv", "cts.kernels.rotate_vk"),
        _P + "SubgroupRotate",
        ("cts.backends.emu_rotate:RotateEmulation",),
        check=_P + "SubgroupRotateCheck",
        launches=_P + "SubgroupRotateLaunches",
        devices={
            "opencl": "cts.backends.opencl_rotate:RotateOpenCL",
            "vulkan": "cts.backends.vulkan_rotate:RotateVulkan",
        },
        repro="no bundle: bundles hold one OpenCL launch; a rotate case is several launches on OpenCL or Vulkan",
    ),
    Family(
        "subgroup_builtins",
        "OpenCL C 3.0, 6.15.18 'Subgroup Functions'",
        (
            _t(
                "test_subgroup_builtins",
                "test_subgroup_builtins",
                "cts.families.subgroup_builtins:subgroup_builtins_cases",
                "cts.runs.subgroup_builtins:run_subgroup_builtins",
            ),
        ),
        ("cts.kernels.subgroup_builtins",),
        _P + "SubgroupBuiltins",
        ("cts.backends.emu_subgroup_builtins:SubgroupBuiltinsEmulation",),
        check=_P + "SubgroupBuiltinsCheck",
        devices={"opencl": "cts.backends.opencl_subgroup_builtins:SubgroupBuiltinsOpenCL"},
        repro="no bundle: the case has no operands to replay (the built-ins' results are the verdict)",
    ),
    Family(
        "mlir_mma",
        "MLIR 'gpu' dialect: gpu.subgroup_mma_load_matrix / compute / store_matrix / elementwise",
        (_t("test_mlir_mma", "test_mlir_mma", "cts.families.mlir:mlir_cases", "cts.runs.mlir:run_mlir"),),
        ("cts.kernels.mlir_text", "cts.kernels.mlir_tools"),
        _P + "MlirMma",
        ("cts.backends.emu_mlir:MlirEmulation",),
        check=_P + "MlirMmaCheck",
        devices={
            "opencl": "cts.backends.opencl_mlir:MlirOpenCL",
            "vulkan": "cts.backends.vulkan_mlir:MlirVulkan",
            "cuda": "cts.backends.cuda:CudaBackend",
        },
        repro="no bundle: the kernel is MLIR lowered by mlir-opt per target; the rerun command replays it",
    ),
    Family(
        "spirv_intel_mma",
        "SPV_INTEL_subgroup_matrix_multiply_accumulate, OpSubgroupMatrixMultiplyAccumulateINTEL",
        (
            _t(
                "test_spirv_intel_mma",
                "test_spirv_intel_mma",
                "cts.plugin.spirv:spirv_cases",
                "cts.runs.spirv:run_spirv_intel_mma",
            ),
            _t(
                "test_spirv_intel_mma",
                "test_spirv_builtin_crosscheck",
                "cts.runs.spirv:crosscheck_cases",
                "cts.runs.spirv:run_builtin_crosscheck",
            ),
        ),
        ("cts.kernels.spirv_intel",),
        _P + "SpirvIntelMma",
        ("cts.backends.emu_spirv:SpirvEmulation",),
        check=_P + "SpirvIntelMmaCheck",
        devices=_SPIRV_OCL,
        plugin="cts.plugin.spirv",
        repro=Repro("cts.families.spirv_intel:spirv_intel_all_cases", "cts.runs.spirv:run_spirv_intel_mma"),
    ),
    Family(
        "spirv_tf32_round",
        "SPV_INTEL_tensor_float32_conversion, OpRoundFToTF32INTEL",
        (
            _t(
                "test_spirv_intel_mma",
                "test_spirv_round_tf32",
                "cts.families.spirv_tf32:spirv_tf32_round_cases",
                "cts.runs.spirv:run_spirv_tf32_round",
            ),
        ),
        ("cts.kernels.spirv_tf32",),
        _P + "SpirvTf32Round",
        ("cts.backends.emu_spirv:SpirvEmulation",),
        check=_P + "SpirvTf32RoundCheck",
        devices=_SPIRV_OCL,
        repro=Repro("cts.families.spirv_tf32:spirv_tf32_round_cases", "cts.runs.spirv:run_spirv_tf32_round"),
    ),
    Family(
        "joint_matrix",
        "SYCL sycl_ext_oneapi_matrix (joint_matrix), its Intel AMX/XMX and ext_oneapi_cuda tables",
        (
            _t(
                "test_joint_matrix",
                "test_joint_matrix",
                "cts.families.joint:joint_cases",
                "cts.runs.joint:run_joint",
            ),
            _t(
                "test_joint_matrix",
                "test_joint_matrix_nv_layouts",
                "cts.families.joint_nv:joint_nv_layout_cases",
                "cts.runs.joint:run_joint",
            ),
        ),
        (
            "cts.kernels.joint_spv",
            "cts.kernels.joint_spv_ops",
            "cts.kernels.joint_spv_check",
            "cts.kernels.ptx_joint",
        ),
        _P + "JointMatrix",
        ("cts.backends.emu_joint:JointEmulation",),
        check=_P + "JointMatrixCheck",
        devices={
            "opencl": "cts.backends.opencl_joint:JointOpenCL",
            "cuda": "cts.backends.cuda_joint:CudaJoint",
        },
        plugin="cts.plugin.joint",
        repro="no bundle: its kernels are SPIR-V or PTX from a lowering chosen per device; the rerun command replays it",
    ),
    Family(
        "joint_matrix_coop",
        "SYCL sycl_ext_oneapi_matrix on SPV_KHR_cooperative_matrix (the joint_matrix lowering)",
        (
            _t(
                "test_joint_matrix",
                "test_joint_matrix_coop",
                "cts.families.joint:joint_coop_cases",
                "cts.runs.joint:run_joint",
            ),
        ),
        (),
        None,
        (),
        via="coop_matrix",
        via_adapter="cts.runs.joint_coop:coop_joint_device",
        repro="no bundle: it runs through the cooperative-matrix device view, which bundles do not cover",
    ),
    Family(
        "coop_matrix",
        "SPV_KHR_cooperative_matrix; VK_KHR_cooperative_matrix; the OpenCL cooperative-matrix forms",
        (
            _t(
                "test_coop_matrix",
                "test_coop_matrix",
                "cts.plugin.coop:coop_matrix_cases",
                "cts.runs.coop.run:run_coop",
            ),
            _t(
                "test_coop_opencl",
                "test_coop_opencl",
                "cases.test_coop_opencl:coop_opencl_cases",
                "cts.runs.coop.opencl:run_coop_opencl",
            ),
        ),
        (
            "cts.kernels.coop_glsl",
            "cts.kernels.coop_glsl_axes",
            "cts.kernels.coop_glsl_text",
            "cts.kernels.coop_cl_c",
            "cts.kernels.coop_cl_spv",
            "cts.kernels.coop_cl_axes",
            "cts.kernels.coop_cl_buffers",
        ),
        _P + "CoopMatrix",
        ("cts.backends.emu_coop_ocl:CoopOclEmulation", "cts.backends.emu_coop:CoopEmulation"),
        check=_P + "CoopMatrixCheck",
        devices={
            "opencl": "cts.backends.opencl_coop:CoopOpenCL",
            "vulkan": "cts.backends.vulkan_coop:CoopVulkan",
        },
        plugin="cts.plugin.coop",
        repro="no bundle: its cases need the device's reported matrix entries (a session), which a bundle lacks",
    ),
    Family(
        "coop_matrix2",
        "SPV_NV_cooperative_matrix2; VK_NV_cooperative_matrix2",
        (
            _t(
                "test_coop_matrix2",
                "test_coop_matrix2",
                "cts.plugin.coop2:coop_matrix2_cases",
                "cts.runs.coop2:run_coop2",
            ),
        ),
        ("cts.kernels.coop2_spv",),
        _P + "CoopMatrix2",
        ("cts.backends.emu_coop2:Coop2Emulation",),
        check=_P + "CoopMatrix2Check",
        devices={"vulkan": "cts.backends.vulkan_coop2:Coop2Vulkan"},
        repro="no bundle: its cases need the device's reported entries (a session), which a bundle lacks",
    ),
    Family(
        "float_mma",
        "the numerics fingerprint's model tier: the float MMA of each family's built-in",
        (
            _t(
                "test_numerics_model",
                "test_numerics_model",
                "cts.plugin.numerics:numerics_cases",
                "cts.plugin.numerics:run_numerics_model",
            ),
        ),
        _INTEL_KERNELS,
        _P + "FloatMma",
        ("cts.backends.emu_numerics:NumericsEmulation",),
        check=_P + "FloatMmaCheck",
        devices={"opencl": "cts.backends.opencl:IntelOpenCL"},
        plugin="cts.plugin.numerics",
        repro="no bundle: the verdict compares the device with the model inferred from its own probes",
    ),
)

FAMILIES: Mapping[str, Family] = MappingProxyType({f.name: f for f in _DECLARED})


def family(name: str, registry: Mapping[str, Family] | None = None) -> Family:
    return (FAMILIES if registry is None else registry)[name]


def _unique(refs: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(refs))


def emulator_mixins(registry: Mapping[str, Family] | None = None) -> tuple[str, ...]:
    """The emulator's family mixins, in declaration order, each once."""
    return _unique(r for f in (registry or FAMILIES).values() for r in f.emulator)


def device_mixins(backend: str, registry: Mapping[str, Family] | None = None) -> tuple[str, ...]:
    """The mixins of a device backend, in declaration order, each once."""
    return _unique(f.devices[backend] for f in (registry or FAMILIES).values() if backend in f.devices)


def plugins(registry: Mapping[str, Family] | None = None) -> tuple[str, ...]:
    """The families' option plugins, in declaration order, each once."""
    return _unique(f.plugin for f in (registry or FAMILIES).values() if f.plugin)
