"""SPIR-V assembly of ``SPV_KHR_subgroup_rotate`` compute shaders for Vulkan
(``VK_KHR_shader_subgroup_rotate``, core in Vulkan 1.4; SPV_KHR_subgroup_rotate).

One module per (element type, vector width, subgroup size): a GLCompute
entry point ``main`` whose work-group size is the specialization constant
``SpecId 0`` (``WorkgroupSize`` built-in), so the launches of a case (two
partial-subgroup sizes) share it.  Every invocation

* loads its W components from 32-bit words (8- and 16-bit values are
  narrowed with ``OpUConvert``, 64-bit ones are two words bitcast from a
  ``uvec2``, Boolean is ``!= 0``), so no 8/16-bit storage feature is needed:
  only the arithmetic capability of the type (Int8, Int16, Float16, Int64,
  Float64);
* selects a variant with ``OpSwitch`` on ``sel[0] * 1024 + dsel[WorkgroupId.x]``
  (uniform in every subgroup): ``OpGroupNonUniformRotateKHR`` at Subgroup
  scope, without ClusterSize (sel 0) or with ClusterSize = sel, its Delta read
  from ``deltas[WorkgroupId.x]`` (dynamically uniform; dsel 0) or the
  dsel-th constant of :func:`cts.families.rotate.const_deltas`;
* stores the result's components as words, and reports SubgroupId,
  SubgroupLocalInvocationId, the number of active invocations of its subgroup
  (``OpGroupNonUniformBallotBitCount`` of ``Ballot(true)``) and SubgroupSize
  (the rotation group size of a plain rotate in the Shader environment).

Buffers (descriptor set 0, bindings in :data:`BINDINGS` order): in, deltas,
out, info, sel, dsel; all arrays of 32-bit words.  Modules are SPIR-V 1.3,
validated with ``spirv-val --target-env vulkan1.1`` before a driver sees them.
"""

from __future__ import annotations

from cts.families.rotate import const_deltas
from cts.kernels.rotate_spv import KEY_STRIDE, cluster_sizes, delta_constant

__all__ = ["rotate_vk_module", "BINDINGS", "WORDS", "VK_TARGET_ENV"]

VK_TARGET_ENV = "vulkan1.1"  # SPIR-V 1.3, the version GroupNonUniform needs
BINDINGS = ("in", "deltas", "out", "info", "sel", "dsel")

# element type -> (SPIR-V scalar name, declaration, capabilities, words per component)
_ELEM = {
    "char": ("uchar", "OpTypeInt 8 0", ("Int8",)),
    "uchar": ("uchar", "OpTypeInt 8 0", ("Int8",)),
    "short": ("ushort", "OpTypeInt 16 0", ("Int16",)),
    "ushort": ("ushort", "OpTypeInt 16 0", ("Int16",)),
    "int": ("uint", "OpTypeInt 32 0", ()),
    "uint": ("uint", "OpTypeInt 32 0", ()),
    "long": ("ulong", "OpTypeInt 64 0", ("Int64",)),
    "ulong": ("ulong", "OpTypeInt 64 0", ("Int64",)),
    "float": ("float", "OpTypeFloat 32", ()),
    "half": ("half", "OpTypeFloat 16", ("Float16",)),
    "double": ("double", "OpTypeFloat 64", ("Float64",)),
    "bool": ("bool", "OpTypeBool", ()),
}
WORDS = {t: 2 if t in ("long", "ulong", "double") else 1 for t in _ELEM}


def _load(t: str, x: str, w0: str, w1: str | None) -> list[str]:
    """Instructions turning the word(s) %w0 (%w1) into the value %v_x of type t."""
    st = _ELEM[t][0]
    if t == "bool":
        return [f"%v_{x} = OpINotEqual %bool {w0} %u0"]
    if st in ("uchar", "ushort"):
        return [f"%v_{x} = OpUConvert %{st} {w0}"]
    if st == "half":  # the low 16 bits of the word are component 0 of a half2
        return [f"%h_{x} = OpBitcast %v2half {w0}", f"%v_{x} = OpCompositeExtract %half %h_{x} 0"]
    if st == "float":
        return [f"%v_{x} = OpBitcast %float {w0}"]
    if st == "uint":
        return [f"%v_{x} = OpCopyObject %uint {w0}"]
    return [f"%p2_{x} = OpCompositeConstruct %v2uint {w0} {w1}", f"%v_{x} = OpBitcast %{st} %p2_{x}"]


def _store(t: str, x: str, r: str) -> tuple[list[str], list[str]]:
    """Instructions turning the component %r of type t into words; returns (code, word ids)."""
    st = _ELEM[t][0]
    if t == "bool":
        return [f"%o_{x} = OpSelect %uint {r} %u1 %u0"], [f"%o_{x}"]
    if st in ("uchar", "ushort"):
        return [f"%o_{x} = OpUConvert %uint {r}"], [f"%o_{x}"]
    if st == "half":
        return [f"%oh_{x} = OpCompositeConstruct %v2half {r} %h0", f"%o_{x} = OpBitcast %uint %oh_{x}"], [
            f"%o_{x}"
        ]
    if st == "float":
        return [f"%o_{x} = OpBitcast %uint {r}"], [f"%o_{x}"]
    if st == "uint":
        return [], [r]
    return (
        [
            f"%o2_{x} = OpBitcast %v2uint {r}",
            f"%oa_{x} = OpCompositeExtract %uint %o2_{x} 0",
            f"%ob_{x} = OpCompositeExtract %uint %o2_{x} 1",
        ],
        [f"%oa_{x}", f"%ob_{x}"],
    )


# Delta / ClusterSize width -> (SPIR-V type name, capability)
DELTA_TYPES = {8: ("uchar", "Int8"), 16: ("ushort", "Int16"), 32: ("uint", ""), 64: ("ulong", "Int64")}


def rotate_vk_module(
    t: str,
    sg: int,
    width: int = 1,
    clusters: tuple[int, ...] | None = None,
    dbits: int = 32,
    nonuniform: bool = False,
) -> str:
    """Assembly text for element type ``t`` (a gentype or ``bool``), vector
    width and subgroup size ``sg`` (which fixes the cluster sizes and
    constant deltas the module holds; the size itself is required by the
    pipeline).  ``clusters``: the ClusterSize variants (default every power
    of two up to ``sg``).  ``dbits``: the width of Delta and ClusterSize
    (a 64-bit Delta is two words of ``deltas``, 8 / 16 bits one word
    narrowed); ``nonuniform``: only invocations with subgroup local id % 3
    != 2 run the switch."""
    if t not in _ELEM:
        raise ValueError(f"no SPIR-V element type for {t!r}")
    st, decl, caps = _ELEM[t]
    nw = WORDS[t]
    cl = [c for c in cluster_sizes(sg) if clusters is None or c in clusters]
    dt, dcap = DELTA_TYPES[dbits]
    caps_all = ["Shader", "GroupNonUniform", "GroupNonUniformBallot", "GroupNonUniformRotateKHR", *caps]
    if dcap and dcap not in caps_all:
        caps_all.append(dcap)
    L = [f"; SPV_KHR_subgroup_rotate (Vulkan): {t} x{width}, subgroup size {sg}"]
    L += [f"OpCapability {c}" for c in caps_all]
    L += ['OpExtension "SPV_KHR_subgroup_rotate"', "OpMemoryModel Logical GLSL450"]
    L.append('OpEntryPoint GLCompute %main "main" %gid %wgid %sgid %sglid %sgsize')
    L.append("OpExecutionMode %main LocalSize 1 1 1")
    for name, bi in (
        ("gid", "GlobalInvocationId"),
        ("wgid", "WorkgroupId"),
        ("sgid", "SubgroupId"),
        ("sglid", "SubgroupLocalInvocationId"),
        ("sgsize", "SubgroupSize"),
        ("wgsize", "WorkgroupSize"),
    ):
        L.append(f"OpDecorate %{name} BuiltIn {bi}")
    L += [
        "OpDecorate %lsx SpecId 0",
        "OpDecorate %rta ArrayStride 4",
        "OpMemberDecorate %S 0 Offset 0",
        "OpDecorate %S Block",
    ]
    for i, b in enumerate(BINDINGS):
        L += [f"OpDecorate %b_{b} DescriptorSet 0", f"OpDecorate %b_{b} Binding {i}"]
    L += [
        "%void = OpTypeVoid",
        "%fn = OpTypeFunction %void",
        "%bool = OpTypeBool",
        "%uint = OpTypeInt 32 0",
        "%v2uint = OpTypeVector %uint 2",
        "%v3uint = OpTypeVector %uint 3",
        "%v4uint = OpTypeVector %uint 4",
    ]
    if st not in ("uint", "bool"):
        L.append(f"%{st} = {decl}")
    if dt not in ("uint", st):
        L.append(f"%{dt} = OpTypeInt {dbits} 0")
    if st == "half":
        L += ["%v2half = OpTypeVector %half 2", "%h0 = OpConstant %half 0"]
    rt = f"%{st}" if width == 1 else ("%vec" if st != "uint" else f"%v{width}uint")
    if width > 1 and st != "uint" and not (st == "half" and width == 2):
        L.append(f"%vec = OpTypeVector %{st} {width}")
    elif st == "half" and width == 2:
        rt = "%v2half"
    L += [
        "%in_v3 = OpTypePointer Input %v3uint",
        "%in_u = OpTypePointer Input %uint",
        "%gid = OpVariable %in_v3 Input",
        "%wgid = OpVariable %in_v3 Input",
        "%sgid = OpVariable %in_u Input",
        "%sglid = OpVariable %in_u Input",
        "%sgsize = OpVariable %in_u Input",
        "%rta = OpTypeRuntimeArray %uint",
        "%S = OpTypeStruct %rta",
        "%pS = OpTypePointer StorageBuffer %S",
        "%pu = OpTypePointer StorageBuffer %uint",
    ]
    L += [f"%b_{b} = OpVariable %pS StorageBuffer" for b in BINDINGS]
    L += ["%lsx = OpSpecConstant %uint 1", "%true = OpConstantTrue %bool", "%scope_sg = OpConstant %uint 3"]
    small = sorted({*range(max(5, width * nw + 1)), *cl, KEY_STRIDE})
    L += [f"%u{c} = OpConstant %uint {c}" for c in small]
    L.append("%wgsize = OpSpecConstantComposite %v3uint %lsx %u1 %u1")
    if dbits == 32:
        consts = sorted({delta_constant(d) for c in [0, *cl] for d in const_deltas(sg, c)})
        L += [f"%dc{v} = OpConstant %uint {v}" for v in consts if v not in small]
    else:  # Delta and ClusterSize constants of the Delta type
        consts = sorted({d % (1 << dbits) for c in [0, *cl] for d in const_deltas(sg, c, dbits)})
        L += [f"%dd{v} = OpConstant %{dt} {v}" for v in consts]
        L += [f"%kc{c} = OpConstant %{dt} {c}" for c in cl]
    L += _main(t, width, nw, cl, rt, sg, set(small), dbits, nonuniform)
    return "\n".join(L) + "\n"


def _cref(v: int, small: set) -> str:
    return f"%u{v}" if v in small else f"%dc{v}"


def _delta_load(dbits: int) -> list[str]:
    """%d: the work-group's Delta from the deltas words (of the Delta type)."""
    dt = DELTA_TYPES[dbits][0]
    if dbits == 32:
        return ["%dp = OpAccessChain %pu %b_deltas %u0 %wg", "%d = OpLoad %uint %dp"]
    if dbits < 32:
        return [
            "%dp = OpAccessChain %pu %b_deltas %u0 %wg",
            "%dw = OpLoad %uint %dp",
            f"%d = OpUConvert %{dt} %dw",
        ]
    return [
        "%dwi = OpIMul %uint %wg %u2",
        "%dwj = OpIAdd %uint %dwi %u1",
        "%dp = OpAccessChain %pu %b_deltas %u0 %dwi",
        "%dq = OpAccessChain %pu %b_deltas %u0 %dwj",
        "%dlo = OpLoad %uint %dp",
        "%dhi = OpLoad %uint %dq",
        "%d2 = OpCompositeConstruct %v2uint %dlo %dhi",
        f"%d = OpBitcast %{dt} %d2",
    ]


def _main(
    t: str,
    width: int,
    nw: int,
    cl: list[int],
    rt: str,
    sg: int,
    small: set,
    dbits: int = 32,
    nonuniform=False,
) -> list[str]:
    st = _ELEM[t][0]
    L = [
        "%main = OpFunction %void None %fn",
        "%entry = OpLabel",
        "%gid3 = OpLoad %v3uint %gid",
        "%g = OpCompositeExtract %uint %gid3 0",
        "%wg3 = OpLoad %v3uint %wgid",
        "%wg = OpCompositeExtract %uint %wg3 0",
        *_delta_load(dbits),
        "%selp = OpAccessChain %pu %b_sel %u0 %u0",
        "%s0 = OpLoad %uint %selp",
        "%dsp = OpAccessChain %pu %b_dsel %u0 %wg",
        "%ds = OpLoad %uint %dsp",
        f"%sk = OpIMul %uint %s0 %u{KEY_STRIDE}",
        "%key = OpIAdd %uint %sk %ds",
        f"%base = OpIMul %uint %g %u{width * nw}",
    ]
    comps = []
    for k in range(width):
        x = f"c{k}"
        words = []
        for j in range(nw):
            off = k * nw + j
            L += [
                f"%i_{x}_{j} = OpIAdd %uint %base %u{off}",
                f"%pi_{x}_{j} = OpAccessChain %pu %b_in %u0 %i_{x}_{j}",
                f"%w_{x}_{j} = OpLoad %uint %pi_{x}_{j}",
            ]
            words.append(f"%w_{x}_{j}")
        L += _load(t, x, words[0], words[1] if nw > 1 else None)
        comps.append(f"%v_{x}")
    val = comps[0] if width == 1 else "%val"
    if width > 1:
        L.append(f"%val = OpCompositeConstruct {rt} {' '.join(comps)}")
    variants = []
    for c in [0, *cl]:
        variants.append((c * KEY_STRIDE, f"{c}", c, "%d"))
        for k, d in enumerate(const_deltas(sg, c, dbits), start=1):
            dop = _cref(delta_constant(d), small) if dbits == 32 else f"%dd{d % (1 << dbits)}"
            variants.append((c * KEY_STRIDE + k, f"{c}k{k}", c, dop))
    targets = " ".join(f"{key} %blk{sfx}" for key, sfx, _, _ in variants)
    if nonuniform:  # only invocations with local id % 3 != 2 take the switch (a non-uniform branch)
        L += [
            "%nl = OpLoad %uint %sglid",
            "%nm = OpUMod %uint %nl %u3",
            "%nr = OpINotEqual %bool %nm %u2",
            "OpSelectionMerge %after None",
            "OpBranchConditional %nr %go %after",
            "%go = OpLabel",
        ]
    L += ["OpSelectionMerge %merge None", f"OpSwitch %key %dflt {targets}"]
    phi = []
    for _, sfx, c, dop in variants:
        cs = (f" %u{c}" if dbits == 32 else f" %kc{c}") if c else ""
        L += [
            f"%blk{sfx} = OpLabel",
            f"%r{sfx} = OpGroupNonUniformRotateKHR {rt} %scope_sg {val} {dop}{cs}",
            "OpBranch %merge",
        ]
        phi.append(f"%r{sfx} %blk{sfx}")
    L += ["%dflt = OpLabel", "OpBranch %merge", "%merge = OpLabel"]
    if nonuniform:
        L.append(f"%rs = OpPhi {rt} {' '.join(phi)} {val} %dflt")
        L += ["OpBranch %after", "%after = OpLabel", f"%r = OpPhi {rt} %rs %merge {val} %entry"]
    else:
        L.append(f"%r = OpPhi {rt} {' '.join(phi)} {val} %dflt")
    for k in range(width):
        x = f"c{k}"
        rk = "%r"
        if width > 1:
            rk = f"%rk_{x}"
            L.append(f"{rk} = OpCompositeExtract %{st} %r {k}")
        code, words = _store(t, x, rk)
        L += code
        for j, wd in enumerate(words):
            L += [
                f"%po_{x}_{j} = OpAccessChain %pu %b_out %u0 %i_{x}_{j}",
                f"OpStore %po_{x}_{j} {wd}",
            ]
    L += [
        "%ib = OpIMul %uint %g %u4",
        "%bal = OpGroupNonUniformBallot %v4uint %scope_sg %true",
        "%act = OpGroupNonUniformBallotBitCount %uint %scope_sg Reduce %bal",
    ]
    for k, name in enumerate(("sgid", "sglid", "act", "sgsize")):
        src = "%act" if name == "act" else f"%bi{k}"
        if name != "act":
            L.append(f"%bi{k} = OpLoad %uint %{name}")
        L += [
            f"%ii{k} = OpIAdd %uint %ib %u{k}",
            f"%ip{k} = OpAccessChain %pu %b_info %u0 %ii{k}",
            f"OpStore %ip{k} {src}",
        ]
    L += ["OpReturn", "OpFunctionEnd"]
    return [x for x in L if x]
