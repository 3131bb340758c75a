"""SPIR-V Kernel modules for SYCL ``joint_matrix`` on OpenCL, in the form
DPC++ hands Intel's CPU runtime (SPV_KHR_cooperative_matrix; sycl_ext_oneapi_matrix).

DPC++ lowers ``joint_matrix`` to ``SPV_KHR_cooperative_matrix`` and uses
``SPV_INTEL_joint_matrix`` (rev 16, intel/llvm
``sycl/doc/design/spirv-extensions``) where the SYCL API needs more:

==============================  ==========================================  =====
SYCL                            SPIR-V                                      token
==============================  ==========================================  =====
layout::row_major / col_major   Cooperative Matrix Layout RowMajorKHR /
                                ColumnMajorKHR                              0 / 1
ext_intel_packed, old packed_b  Cooperative Matrix Layout PackedINTEL
                                (capability PackedCooperativeMatrixINTEL)   2 (6434)
bfloat16 A and B                16-bit integer components + MulAdd operand
                                MatrixAAndBBFloat16ComponentsINTEL          0x40 (6437)
precision::tf32 A and B         32-bit float components + MulAdd operand
                                MatrixAAndBTF32ComponentsINTEL              0x20 (6436)
joint_matrix_load_checked       OpCooperativeMatrixLoadCheckedINTEL         6193 (6192)
joint_matrix_store_checked      OpCooperativeMatrixStoreCheckedINTEL        6194 (6192)
joint_matrix_fill_checked       OpCooperativeMatrixConstructCheckedINTEL    6195 (6192)
joint_matrix_apply (row, col)   OpCooperativeMatrixGetElementCoordINTEL     6440 (6435)
==============================  ==========================================  =====

(capability in parentheses).  SPIRV-Tools 2025.5 knows none of these
tokens, so they are written as raw words (``!<word>``: an instruction whose
first word is ``!0x<count><opcode>`` takes its operands raw, ids by name;
an ``OpNop`` before it, dropped from the binary, keeps spirv-as from reading
the raw word as one more operand of the instruction before).
``cts.kernels.joint_spv_check`` validates each module: spirv-val on its
*twin* (every INTEL-only token replaced by its nearest KHR counterpart) and
a structural check of the INTEL words against the extension text.

One module per case: one subgroup of ``SUBGROUP_SIZE`` per work-group,
work-group ``w`` on tile ``w`` of every buffer (base = buffer + w * length).
Buffer lengths and strides are run-time values from the ``meta`` buffer
(64-bit, like DPC++'s ``size_t`` stride); checked ops read Height, Width,
coordX, coordY per tile from ``geo`` (32-bit, as DPC++ passes them).

Lowerings (``--joint-lowering``):

* ``spec`` (default): every declaration the extensions require.
* ``intel-cpu``: the same module without the two capabilities Intel's CPU
  runtime 2026.2 refuses ("SPIRV module requires unsupported capability"),
  measured one by one on a trivial kernel, here and on the AMX host
  (``reports/intel-cpu-amx/probe_caps.py``, ``capabilities.txt``):
  ``PackedCooperativeMatrixINTEL`` (6434, required for
  layout PackedINTEL) and ``CooperativeMatrixCheckedInstructionsINTEL``
  (6192, required for the checked instructions).  It accepts 6435, 6436,
  6437, 6411 and the extension, and takes the tokens undeclared.  A
  deviation the report names.
"""

from __future__ import annotations

from dataclasses import dataclass

from cts.kernels.joint_spv_types import ELEM, USE_IDS

__all__ = [
    "ENTRY",
    "SUBGROUP_SIZE",
    "LOWERINGS",
    "Lowering",
    "INTEL_EXTENSION",
    "INTEL_CAPS",
    "INTEL_OPS",
    "unrealizable",
    "buffer_slots",
    "stride_slots",
    "module_texts",
]

ENTRY = "joint"
SUBGROUP_SIZE = 16  # the sub-group size DPC++'s AMX joint_matrix kernels are built with
INTEL_EXTENSION = "SPV_INTEL_joint_matrix"

# SPV_INTEL_joint_matrix rev 16 tokens (intel/llvm sycl/doc/design/spirv-extensions)
INTEL_CAPS: dict[str, tuple[int, str]] = {
    "packed": (6434, "PackedCooperativeMatrixINTEL"),
    "invocation": (6435, "CooperativeMatrixInvocationInstructionsINTEL"),
    "tf32": (6436, "CooperativeMatrixTF32ComponentTypeINTEL"),
    "bf16": (6437, "CooperativeMatrixBFloat16ComponentTypeINTEL"),
    "checked": (6192, "CooperativeMatrixCheckedInstructionsINTEL"),
}
# opcode -> (name, words including the opcode word, capability key)
INTEL_OPS: dict[int, tuple[str, int, str]] = {
    6193: ("OpCooperativeMatrixLoadCheckedINTEL", 10, "checked"),
    6194: ("OpCooperativeMatrixStoreCheckedINTEL", 9, "checked"),
    6195: ("OpCooperativeMatrixConstructCheckedINTEL", 8, "checked"),
    6440: ("OpCooperativeMatrixGetElementCoordINTEL", 5, "invocation"),
}


@dataclass(frozen=True)
class Lowering:
    name: str
    omit_caps: frozenset[int]  # INTEL capability tokens left undeclared
    omit_extension: bool  # no OpExtension "SPV_INTEL_joint_matrix"
    deviation: str  # what the report says ("" = none: the spec-valid module)


LOWERINGS: dict[str, Lowering] = {
    "spec": Lowering("spec", frozenset(), False, ""),
    "intel-cpu": Lowering(
        "intel-cpu",
        frozenset({6434, 6192}),
        False,
        "modules omit OpCapability PackedCooperativeMatrixINTEL (6434) and "
        "CooperativeMatrixCheckedInstructionsINTEL (6192), which SPV_INTEL_joint_matrix requires for the "
        "PackedINTEL layout (ext_intel_packed / packed_b) and the checked load / store / construct and "
        "Intel's CPU runtime 2026.2 refuses ('SPIRV module requires unsupported capability')",
    ),
}


def unrealizable(case) -> str | None:
    """Why the case has no module in this form (a coverage gap of the suite),
    or None."""
    lays = case.layouts
    if "packed_a" in lays:
        return (
            "old-API packed_a (VNNI of the column-major A, seed 001) has no Cooperative Matrix Layout in "
            "SPV_KHR_cooperative_matrix + SPV_INTEL_joint_matrix rev 16 (PackedINTEL packs the matrix as "
            "stored row by row)"
        )
    bad = [t for t in case.types if t not in ELEM]
    if bad:
        return f"component type {bad[0]} has no SPIR-V form here"
    return None


def buffer_slots(case) -> list[tuple[str, str]]:
    """(buffer, joint type) in kernel-argument order, before ``meta``
    (64-bit lengths then strides, :func:`stride_slots`)."""
    op = case.op
    if op == "mad":
        a, b, c, d = case.types
        return [("a", a), ("b", b), ("c", c), ("d", d)]
    ts = case.types[0]
    td = case.types[-1]
    first = ("value", ts) if op in ("fill", "fill_checked") else ("src", ts)
    out = [first, ("dst", td)]
    if op in ("load_checked", "store_checked", "fill_checked"):
        out.append(("geo", "u32"))
    return out


def stride_slots(case) -> list[str]:
    """Names of the strides in ``meta`` after the buffer lengths."""
    return ["sa", "sb", "sc", "sd"] if case.op == "mad" else ["s_src", "s_dst"]


class _Asm:
    """Declarations (deduplicated, in order), function variables and a body
    whose lines have a device form and a twin form (see module docstring)."""

    def __init__(self) -> None:
        self.caps: dict[str, None] = dict.fromkeys(
            ("Addresses", "Kernel", "Int64", "CooperativeMatrixKHR", "SubgroupDispatch")
        )
        self.intel: dict[str, None] = {}  # INTEL_CAPS keys this module uses
        self.decls: dict[str, str] = {}
        self.vars: list[str] = []
        self.body: list[tuple[str, str]] = []  # (device line, twin line)
        self.n = 0
        for t in ("u32", "u64"):
            self.elem(t)

    def fresh(self, stem: str = "t") -> str:
        self.n += 1
        return f"%{stem}{self.n}"

    def decl(self, name: str, text: str) -> str:
        self.decls.setdefault(name, f"{name} = {text}")
        return name

    def elem(self, t: str) -> str:
        sid, text, cap, _, _ = ELEM[t]
        if cap:
            self.caps[cap] = None
        return self.decl(sid, text)

    def const(self, t: str, value) -> str:
        sid = self.elem(t)
        lit = repr(float(value)) if ELEM[t][4] in ("float", "tf32") else str(int(value))
        return self.decl(f"%k_{sid[1:]}_{lit.replace('-', 'm').replace('.', 'p')}", f"OpConstant {sid} {lit}")

    def ptr(self, t: str, storage: str = "CrossWorkgroup") -> str:
        sid = self.elem(t)
        return self.decl(f"%p{storage[:2]}_{sid[1:]}", f"OpTypePointer {storage} {sid}")

    def mat(self, use: str, rows: int, cols: int, t: str) -> str:
        sid = self.elem(t)
        parts = [self.const("u32", v) for v in (3, rows, cols, USE_IDS[use])]
        return self.decl(
            f"%M{use}{rows}x{cols}_{sid[1:]}", f"OpTypeCooperativeMatrixKHR {sid} " + " ".join(parts)
        )

    def op(self, text: str, stem: str = "t") -> str:
        r = self.fresh(stem)
        self.body.append((f"{r} = {text}", f"{r} = {text}"))
        return r

    def emit(self, text: str) -> None:
        self.body.append((text, text))

    def intel_op(self, opcode: int, words: list[str], twin: str) -> None:
        """A raw SPV_INTEL_joint_matrix instruction and its KHR twin line."""
        name, count, cap = INTEL_OPS[opcode]
        if len(words) + 1 != count:  # pragma: no cover - guards the table
            raise AssertionError(f"{name}: {len(words) + 1} words, expected {count}")
        self.intel[cap] = None

        def raw(ws: list[str]) -> str:
            # spirv-as would take a raw word after an instruction with optional operands as one
            # more operand: an OpNop ends that instruction (assemble_raw drops the OpNop again)
            return f"OpNop\n!0x{(count << 16) | opcode:08x} " + " ".join(ws) + f" ; {name}"

        self.body.append((raw(words), twin))

    def variable(self, type_id: str) -> str:
        pt = self.decl(f"%pFu_{type_id[1:]}", f"OpTypePointer Function {type_id}")
        v = self.fresh("var")
        self.vars.append(f"{v} = OpVariable {pt} Function")
        return v

    def loop(self, count: str, body) -> None:
        """for (i = 0; i < count; ++i) body(i), i 64-bit (unstructured: Kernel)."""
        self.decl("%bool", "OpTypeBool")
        zero, one = self.const("u64", 0), self.const("u64", 1)
        pre, hdr, blk, done = (self.fresh(s) for s in ("pre", "hdr", "blk", "done"))
        i, nxt, cond = self.fresh("i"), self.fresh("inext"), self.fresh("c")
        for line in (f"OpBranch {pre}", f"{pre} = OpLabel", f"OpBranch {hdr}", f"{hdr} = OpLabel"):
            self.emit(line)
        self.emit(f"{i} = OpPhi %u64 {zero} {pre} {nxt} {blk}")
        self.emit(f"{cond} = OpULessThan %bool {i} {count}")
        self.emit(f"OpBranchConditional {cond} {blk} {done}")
        self.emit(f"{blk} = OpLabel")
        body(i)
        self.emit(f"{nxt} = OpIAdd %u64 {i} {one}")
        self.emit(f"OpBranch {hdr}")
        self.emit(f"{done} = OpLabel")

    def text(self, params: list[tuple[str, str]], lowering: Lowering | None, comment: list[str]) -> str:
        """The device module (``lowering``) or its twin (None)."""
        ptypes = [self.ptr(t) for _, t in params]
        self.decl("%void", "OpTypeVoid")
        fn = self.decl("%fn_" + "_".join(p[4:] for p in ptypes), "OpTypeFunction %void " + " ".join(ptypes))
        head = [f"; {c}" for c in comment]
        head += [f"OpCapability {c}" for c in self.caps]
        if lowering is not None:
            for key in self.intel:
                token, name = INTEL_CAPS[key]
                if token not in lowering.omit_caps:
                    head.append(f"OpCapability !{token} ; {name}")
        head.append('OpExtension "SPV_KHR_cooperative_matrix"')
        if lowering is not None and self.intel and not lowering.omit_extension:
            head.append(f'OpExtension "{INTEL_EXTENSION}"')
        head += [
            "OpMemoryModel Physical64 OpenCL",
            f'OpEntryPoint Kernel %main "{ENTRY}" %WorkgroupId',
            f"OpExecutionMode %main SubgroupSize {SUBGROUP_SIZE}",
            "OpDecorate %WorkgroupId BuiltIn WorkgroupId",
            "OpDecorate %WorkgroupId Constant",
        ]
        fn_head = [f"%main = OpFunction %void None {fn}"]
        fn_head += [f"%arg_{n} = OpFunctionParameter {pt}" for (n, _), pt in zip(params, ptypes)]
        fn_head += ["%entry = OpLabel", *self.vars]
        lines = [twin if lowering is None else dev for dev, twin in self.body]
        return "\n".join(
            head + list(self.decls.values()) + fn_head + lines + ["OpReturn", "OpFunctionEnd", ""]
        )


def module_texts(case, lowering: str = "spec") -> tuple[str, str]:
    """(device module, twin module) of ``case`` as SPIR-V assembly."""
    why = unrealizable(case)
    if why:
        raise ValueError(f"{case.id}: {why}")
    low = LOWERINGS[lowering]
    md = _Asm()
    bufs = buffer_slots(case)
    params = [(n, t) for n, t in bufs] + [("meta", "u64")]
    slots = [n for n, _ in bufs] + stride_slots(case)
    md.decl("%v3u64", "OpTypeVector %u64 3")
    md.decl("%v2u32", "OpTypeVector %u32 2")
    md.decl("%pIn_v3u64", "OpTypePointer Input %v3u64")
    md.decl("%WorkgroupId", "OpVariable %pIn_v3u64 Input")
    wid = md.op("OpCompositeExtract %u64 " + md.op("OpLoad %v3u64 %WorkgroupId") + " 0", "w")

    def meta(name: str) -> str:
        p = md.op(
            f"OpInBoundsPtrAccessChain {md.ptr('u64')} %arg_meta {md.const('u64', slots.index(name))}", "p"
        )
        return md.op(f"OpLoad %u64 {p}", name.replace("_", ""))

    def tile(name: str, t: str) -> str:
        off = md.op(f"OpIMul %u64 {wid} {meta(name)}")
        return md.op(f"OpInBoundsPtrAccessChain {md.ptr(t)} %arg_{name} {off}", "p")

    from cts.kernels.joint_spv_ops import emit_case

    emit_case(md, case, meta, tile, wid)
    comment = [
        f"SYCL joint_matrix {case.id}",
        f"lowering {low.name}" + (f": {low.deviation}" if low.deviation else ": spec-valid"),
        f"kernel args: {', '.join(n for n, _ in params)}; meta = lengths of {', '.join(n for n, _ in bufs)}, "
        f"then strides {', '.join(stride_slots(case))} (elements, 64-bit)",
    ]
    dev = md.text(params, low, comment)
    twin = md.text(
        params, None, [*comment[:1], "twin for spirv-val: INTEL tokens replaced by KHR counterparts"]
    )
    return dev, twin
