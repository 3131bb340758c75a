"""GLSL (and SPIR-V text patches) of the KHR axes of the cooperative-matrix
family (``CoopCase.var`` / ``mem == "bda"``, ``cts.families.coop.VARIANTS``).

What GLSL expresses directly (glslang 13): push-constant, specialization-
constant and buffer-read strides; PhysicalStorageBuffer pointers
(GL_EXT_buffer_reference; glslang adds ``Aligned 16``); vector element
pointers; the Vulkan memory model (``coherent`` buffers get
MakePointerAvailable / MakePointerVisible); matrices as function parameters
and return values, in arrays and structs; OpCompositeExtract (an element of
an r-value: a function's return value, constant index).

What is patched into the disassembly (``patch``; the result is validated by
spirv-val like every module): ``Nontemporal`` and ``Aligned 16`` on the
source Load, OpConstantNull for a zero matrix constant, and OpCompositeInsert
for stores of constant-index elements into a matrix variable (glslang writes
them through OpAccessChain).
"""

from __future__ import annotations

import re
import struct

from cts.errors import HarnessError
from cts.families.coop import CoopCase, case_comp, case_stride, region_len
from cts.kernels import coop_glsl_text as g

__all__ = [
    "khr_source",
    "needs_patch",
    "patch",
    "push_data",
    "required_subgroup",
    "workgroups",
    "WG_SUBGROUPS",
]

WG_SUBGROUPS = 4  # subgroups per workgroup of the ``wg4`` form
VEC = {
    "f16": "f16vec", "bf16": "f16vec", "f32": "vec", "f64": "dvec", "i8": "i8vec", "u8": "u8vec",
    "i16": "i16vec", "u16": "u16vec", "i32": "ivec", "u32": "uvec", "i64": "i64vec", "u64": "u64vec",
}  # fmt: skip


def required_subgroup(case: CoopCase) -> str | None:
    """``min`` / ``max``: the pipeline's requiredSubgroupSize (sgmin / sgmax)."""
    return {"sgmin": "min", "sgmax": "max"}.get(case.var)


def workgroups(case: CoopCase, rows: int) -> int:
    return rows // WG_SUBGROUPS if case.var == "wg4" else rows


def push_data(case: CoopCase, address: int = 0) -> bytes:
    """Push-constant block: the PhysicalStorageBuffer address of the matrix
    buffer (``mem == "bda"``, offset 0), then the stride (``spush``)."""
    out = b""
    if case.mem == "bda" and case.op in ("load", "store"):
        out += struct.pack("<Q", address)
    if case.var == "spush":
        out += struct.pack("<I", case_stride(case) // case_comp(case))
    return out + b"\0" * (-len(out) % 16 if case.mem == "bda" else 0)


def khr_source(case: CoopCase, sg: int) -> str:
    if case.op in ("load", "store"):
        return _load_store(case, sg, g)
    if case.op == "muladd":
        return _muladd(case, sg, g)
    if case.op == "access":
        return _composite(case, sg, g)
    if case.op == "convert":  # f16 <-> bf16: the bf16 side written as int16_t, patched (``_bf16_convert``)
        m = case.mat
        ty = {"bf16": "int16_t", "f16": "float16_t"}
        mt = f"coopmat<{ty[m.t]}, gl_ScopeSubgroup, {m.rows}, {m.cols}, {g.USE[m.use]}>"
        mt2 = mt.replace(ty[m.t], ty[case.to], 1)
        rc, row = m.rows * m.cols, g.LAYOUT["row"]
        body = [
            f"  {mt} x;",
            f"  coopMatLoad(x, buf_x, s * {rc}u, {m.cols}u, {row});",
            f"  {mt2} o = {mt2}(x);",
            f"  coopMatStore(o, buf_out, s * {rc}u, {m.cols}u, {row});",
        ]
        src = _assemble(case, sg, g, body)
        buf = "x" if m.t == "bf16" else "out"
        src = src.replace(f"{{ float16_t buf_{buf}[]; }}", f"{{ int16_t buf_{buf}[]; }}")
        return src.replace(
            "#extension GL_KHR_cooperative_matrix",
            "#extension GL_EXT_shader_16bit_storage : require\n#extension GL_KHR_cooperative_matrix",
            1,
        )
    if case.op == "splat" and case.mode == "null":
        m = case.mat
        mt = g.mtype(m.t, m.use, m.rows, m.cols)
        body = [
            f"  {mt} x = {mt}({g.lit(m.t, 0)});",
            f"  coopMatStore(x, buf_out, s * {m.rows * m.cols}u, {m.cols}u, {g.LAYOUT['row']});",
        ]
        return _assemble(case, sg, g, body)
    raise ValueError(f"no KHR form {case.var!r} of {case.op}")


def _assemble(case, sg, g, body, shared="", decls=(), local=0, pre=(), sid="gl_WorkGroupID.x") -> str:
    head = g.header(case, sg, shared)
    if local:
        head = [
            f"layout(local_size_x = {local}) in;" if ln.startswith("layout(local_size_x") else ln
            for ln in head
        ]
    lines = (
        head + list(decls) + ["void main() {", f"  uint s = {sid};", "  uint inv = gl_SubgroupInvocationID;"]
    )
    return "\n".join(list(pre) + lines + body + ["}", ""])


def _load_store(case: CoopCase, sg: int, g) -> str:
    from reference.coop import image_len

    m, v = case.mat, case.var
    t, R, C = m.t, m.rows, m.cols
    RC, row, lay = R * C, g.LAYOUT["row"], g.LAYOUT[case.layout]
    comp = case_comp(case)
    stride = case_stride(case)
    L = region_len(image_len(R, C, case.layout, stride), t)
    tight = C if case.layout == "row" else R
    mt = g.mtype(t, m.use, R, C)
    buf = "src" if case.op == "load" else "dst"
    sexpr = {"spush": "pc.stride", "sspec": "SSTRIDE", "sbuf": "buf_st[0]"}.get(v, f"{stride // comp}u")
    decls, push = [], []
    if case.mem == "bda":
        decls.append(
            f"layout(buffer_reference, std430, buffer_reference_align = 16) buffer PB {{ {g.GLSL_TYPE[t]} d[]; }};"
        )
        push.append("PB p;")
    if v == "spush":
        push.append("uint stride;")
    if push:
        decls.append(f"layout(push_constant) uniform P {{ {' '.join(push)} }} pc;")
    if v == "sspec":
        decls.append(f"layout(constant_id = 0) const uint SSTRIDE = {tight}u;")
    ptr, base = ("pc.p.d", f"s * {L}u") if case.mem == "bda" else (f"buf_{buf}", f"s * {L // comp}u")
    shared, body = "", [f"  {mt} x;"]
    wg = case.mem == "workgroup"
    if v == "varptr":  # a run-time true condition for the OpSelect patched in (``_varptr``)
        body.append("  bool keep = gl_WorkGroupID.x != 0xFFFFFFFFu;")
    if wg:
        o = L if v == "varptr" else 0  # varptr: the matrix at L, the OpSelect's other pointer at 0
        shared = f"shared {g.GLSL_TYPE[t]} sh[{L + o}];"
        ptr, base = "sh", f"{o}u"
        copy_in = f"  for (uint i = inv; i < {L}u; i += {sg}u) {{ sh[{o}u + i] = buf_{buf}[s * {L}u + i]; }}"
        body += [copy_in, "  memoryBarrierShared(); barrier();"]
    if case.op == "load":
        body += [
            f"  coopMatLoad(x, {ptr}, {base}, {sexpr}, {lay});",
            f"  coopMatStore(x, buf_out, s * {RC}u, {C}u, {row});",
        ]
    else:
        body += [
            f"  coopMatLoad(x, buf_x, s * {RC}u, {C}u, {row});",
            f"  coopMatStore(x, {ptr}, {base}, {sexpr}, {lay});",
        ]
        if wg:
            body += [
                "  memoryBarrierShared(); barrier();",
                f"  for (uint i = inv; i < {L}u; i += {sg}u) {{ buf_dst[s * {L}u + i] = sh[{o}u + i]; }}",
            ]
    src = _assemble(case, sg, g, body, shared, decls)
    if comp > 1:
        src = src.replace(f"{{ {g.GLSL_TYPE[t]} buf_{buf}[]; }}", f"{{ {VEC[t]}{comp} buf_{buf}[]; }}")
    if v == "avail":
        src = src.replace("#version 450\n", "#version 450\n#pragma use_vulkan_memory_model\n", 1)
        src = src.replace("std430) buffer", "std430) coherent buffer")
    if case.mem == "bda":
        src = src.replace(
            "#extension GL_KHR_cooperative_matrix",
            "#extension GL_EXT_buffer_reference : require\n#extension GL_KHR_cooperative_matrix",
            1,
        )
    return src


def _muladd(case: CoopCase, sg: int, g) -> str:
    e, v = case.entry, case.var
    if e.C != e.R or e.scope != "subgroup":
        g.muladd_body(case)  # raises the Unsupported that names the gap
    M, N, K = e.M, e.N, e.K
    MA, MB, MC = g.mtype(e.A, "A", M, K), g.mtype(e.B, "B", K, N), g.mtype(e.C, "C", M, N)
    ops = "gl_MatrixOperandsSaturatingAccumulation" if e.sat else "0"
    row, col = g.LAYOUT["row"], g.LAYOUT["col"]
    decls: list[str] = []
    a, b, c = "a", "b", "c"
    body = [f"  {MA} a; {MB} b; {MC} c;"]
    if v == "array":
        body = [f"  {MA} arr[2]; {MB} b; {MC} c;"] + [
            f"  coopMatLoad(arr[{i}], buf_a, s * {2 * M * K}u + {i * M * K}u, {K}u, {row});" for i in (0, 1)
        ]
        a = "arr[1]"
    elif v == "struct":
        decls.append(f"struct S {{ {MA} a; {MB} b; {MC} c; }};")
        body = ["  S st;"]
        a, b, c = "st.a", "st.b", "st.c"
    if v == "stride0":
        ra, rb = region_len(K, e.A), region_len(N, e.B)
        body += [
            f"  coopMatLoad(a, buf_a, s * {ra}u, 0u, {row});",
            f"  coopMatLoad(b, buf_b, s * {rb}u, 0u, {row});",
        ]
    elif v != "array":
        body.append(f"  coopMatLoad({a}, buf_a, s * {M * K}u, {K}u, {row});")
    if v != "stride0":
        body.append(f"  coopMatLoad({b}, buf_b, s * {K * N}u, {N}u, {row});")
    c_lay, c_st = (col, M) if v == "colacc" else (row, N)
    body.append(f"  coopMatLoad({c}, buf_c, s * {M * N}u, {c_st}u, {c_lay});")
    if v in ("func", "funcconst"):
        q = "const in " if v == "funcconst" else ""
        decls.append(f"{MC} mad({q}{MA} x, {q}{MB} y, {q}{MC} z) {{ return coopMatMulAdd(x, y, z, {ops}); }}")
        body.append(f"  {c} = mad({a}, {b}, {c});")
    else:
        body.append(f"  {c} = coopMatMulAdd({a}, {b}, {c}, {ops});")
    body.append(f"  coopMatStore({c}, buf_d, s * {M * N}u, {c_st}u, {c_lay});")
    if v == "struct":  # spirv-val: a matrix inside a struct needs the Vulkan memory model
        pre = ["#version 450", "#pragma use_vulkan_memory_model"]
        return "\n".join(pre) + _assemble(case, sg, g, body, decls=decls)[len("#version 450") :]
    if v == "wg4":
        return _assemble(
            case,
            sg,
            g,
            body,
            decls=decls,
            local=WG_SUBGROUPS * sg,
            sid=f"gl_WorkGroupID.x * {WG_SUBGROUPS}u + gl_SubgroupID",
        )
    return _assemble(case, sg, g, body, decls=decls)


def _composite(case: CoopCase, sg: int, g) -> str:
    """x -> 2x + 1 element by element: elements 0 .. RC/sg - 1 read from an
    r-value (OpCompositeExtract) and written by constant index (patched to
    OpCompositeInsert); any further elements through OpAccessChain."""
    m = case.mat
    t, R, C = m.t, m.rows, m.cols
    mt = g.mtype(t, m.use, R, C)
    kind = "float" if t in ("f16", "bf16", "f32", "f64") else ("int" if t.startswith("i") else "uint")
    one = {"float": "float({}) * 2.0 + 1.0", "int": "int({}) * 2 + 1", "uint": "uint({}) * 2u + 1u"}[kind]
    n = max(1, (R * C) // sg)
    row = g.LAYOUT["row"]
    body = [f"  {mt} x;", f"  coopMatLoad(x, buf_x, s * {R * C}u, {C}u, {row});", f"  {mt} y = x;"]
    for k in range(n):
        body.append(
            f"  if ({k} < x.length()) {{ y[{k}] = {g.GLSL_TYPE[t]}({one.format(f'ident(x)[{k}]')}); }}"
        )
    body += [
        f"  for (int i = {n}; i < x.length(); ++i) {{ y[i] = {g.GLSL_TYPE[t]}({one.format('x[i]')}); }}",
        f"  coopMatStore(y, buf_out, s * {R * C}u, {C}u, {row});",
    ]
    return _assemble(case, sg, g, body, decls=[f"{mt} ident({mt} a) {{ return a; }}"])


# ---------------------------------------------------------------- patches
def needs_patch(case: CoopCase) -> bool:
    if case.op == "convert":
        return case.tier == "special" or {case.mat.t, case.to} == {"f16", "bf16"}
    return case.var in ("nontemporal", "aligned", "composite", "varptr") or case.mode == "null"


def patch(case: CoopCase, dis: str) -> str:
    """Disassembly (``spirv-dis --raw-id``) rewritten for the forms GLSL cannot write."""
    if case.var in ("nontemporal", "aligned"):
        operand = "Nontemporal" if case.var == "nontemporal" else "Aligned 16"
        new, n = re.subn(
            r"(OpCooperativeMatrixLoadKHR %\d+ %\d+ %\d+ %\d+) None", rf"\1 {operand}", dis, count=1
        )
        if n != 1:
            raise HarnessError(
                f"suite defect: the module patch failed: no Load to carry {operand} in the generated module"
            )
        return new
    if case.op == "splat" and case.mode == "null":
        coop = set(re.findall(r"%(\d+) = OpTypeCooperativeMatrixKHR", dis))
        new, n = re.subn(
            r"(%\d+) = OpConstantComposite %(\d+) %\d+\n",
            lambda mt: f"{mt[1]} = OpConstantNull %{mt[2]}\n" if mt[2] in coop else mt[0],
            dis,
        )
        if "OpConstantNull" not in new:
            raise HarnessError(
                "suite defect: the module patch failed: glslang wrote no matrix constant to make OpConstantNull"
            )
        return new
    if case.var == "composite":
        return _insert(dis)
    if case.var == "varptr":
        return _varptr(case, dis)
    if case.op == "convert" and case.tier == "special":
        return _preserve_inf_nan(case, dis)
    if case.op == "convert":
        return _bf16_convert(dis)
    return dis


def _preserve_inf_nan(case: CoopCase, dis: str) -> str:
    """SignedZeroInfNanPreserve for the source and destination widths (SPIR-V 1.4 float
    controls): with it inf and NaN are values the conversion must carry."""
    from reference.dtypes import etype

    main = re.search(r"OpEntryPoint GLCompute %(\d+)", dis)
    local = re.search(r"^\s*OpExecutionMode %\d+ LocalSize[^\n]*$", dis, re.M)
    if not (main and local):
        raise HarnessError(
            "suite defect: the module patch failed: no entry point to carry SignedZeroInfNanPreserve"
        )
    widths = sorted({etype(case.mat.t).bits, etype(case.to).bits})
    modes = "".join(f"\nOpExecutionMode %{main[1]} SignedZeroInfNanPreserve {w}" for w in widths)
    dis = dis.replace(local[0], local[0] + modes, 1)
    return dis.replace(
        "OpCapability Shader\n", "OpCapability Shader\nOpCapability SignedZeroInfNanPreserve\n", 1
    )


def _bf16_convert(dis: str) -> str:
    """The int16_t side of an f16 <-> bf16 conversion kernel becomes BFloat16KHR and the
    conversion OpFConvert (SPV_KHR_bfloat16)."""
    new, n = re.subn(r"= OpTypeInt 16 1\n", "= OpTypeFloat 16 BFloat16KHR\n", dis)
    new, k = re.subn(r"= OpConvert(FToS|SToF) ", "= OpFConvert ", new)
    if n != 1 or k != 1:
        raise HarnessError(
            "suite defect: the module patch failed: the f16 <-> bf16 kernel did not compile to one conversion"
        )
    caps = "OpCapability BFloat16TypeKHR\nOpCapability BFloat16CooperativeMatrixKHR\n"
    new = new.replace("OpCapability Int16\n", "").replace(
        "OpCapability Shader\n", "OpCapability Shader\n" + caps, 1
    )
    return re.sub(r"(OpExtension [^\n]*\n)", r'\1OpExtension "SPV_KHR_bfloat16"\n', new, count=1)


def _varptr(case: CoopCase, dis: str) -> str:
    """The pointer of the case's own Load (load) or Store (store) becomes
    ``OpSelect(keep, pointer, same access chain with last index 0)``: the
    region of subgroup 0 (storage) or the unused lower half of ``sh``
    (workgroup) is the other choice.  Capability VariablePointersStorageBuffer
    (StorageBuffer pointers) or VariablePointers (Workgroup)."""
    op = "OpCooperativeMatrixLoadKHR %\\d+ " if case.op == "load" else "OpCooperativeMatrixStoreKHR "
    target = re.search(rf"^(\s*)(%\d+ = )?{op}%(\d+)", dis, re.M)
    keep = re.search(r'OpName %(\d+) "keep"', dis)
    uint = re.search(r"^\s*%(\d+) = OpTypeInt 32 0$", dis, re.M)
    boolt = re.search(r"^\s*%(\d+) = OpTypeBool$", dis, re.M)
    if not (target and keep and uint and boolt):
        raise HarnessError(
            "suite defect: the module patch failed: the module has no pointer to make variable"
        )
    p = target[3]
    chain = re.search(rf"^\s*%{p} = OpAccessChain (%\d+) (%\d+)((?: %\d+)*) (%\d+)$", dis, re.M)
    if not chain:
        raise HarnessError(
            "suite defect: the module patch failed: the Load/Store pointer is not an access chain"
        )
    ptr_t, base, mid = chain[1], chain[2], chain[3]
    ind = target[1]
    pre = (
        f"{ind}%vp_other = OpAccessChain {ptr_t} {base}{mid} %vp_zero\n"
        f"{ind}%vp_keep = OpLoad %{boolt[1]} %{keep[1]}\n"
        f"{ind}%vp_ptr = OpSelect {ptr_t} %vp_keep %{p} %vp_other\n"
    )
    line = target[0]
    new_line = line[: target.start(3) - target.start(0)] + "vp_ptr"
    dis = dis[: target.start(0)] + pre + new_line + dis[target.end(0) :]
    dis = dis.replace(uint[0], f"{uint[0]}\n%vp_zero = OpConstant %{uint[1]} 0", 1)
    cap = "VariablePointersStorageBuffer" if case.mem == "storage" else "VariablePointers"
    return dis.replace("OpCapability Shader\n", f"OpCapability Shader\nOpCapability {cap}\n", 1)


def _insert(dis: str) -> str:
    """``%p = OpAccessChain %ptr %y %k`` + ``OpStore %p %v`` with %k a constant
    and %y a Function variable of a matrix type -> OpLoad / OpCompositeInsert / OpStore."""
    coop = set(re.findall(r"%(\d+) = OpTypeCooperativeMatrixKHR", dis))
    ptr_to = {p: t for p, t in re.findall(r"%(\d+) = OpTypePointer Function %(\d+)", dis) if t in coop}
    var_t = {v: ptr_to[p] for v, p in re.findall(r"%(\d+) = OpVariable %(\d+) Function", dis) if p in ptr_to}
    consts = dict(re.findall(r"%(\d+) = OpConstant %\d+ (\d+)\n", dis))
    stored = set(re.findall(r"OpStore %(\d+) %\d+\n", dis))
    chains = {}
    for p, y, k in re.findall(r"%(\d+) = OpAccessChain %\d+ %(\d+) %(\d+)\n", dis):
        if y in var_t and k in consts and p in stored:
            chains[p] = (y, consts[k])
    lines, n = [], 0
    for ln in dis.splitlines():
        mt = re.match(r"\s*%(\d+) = OpAccessChain ", ln)
        if mt and mt[1] in chains:
            continue
        st = re.match(r"(\s*)OpStore %(\d+) %(\d+)$", ln)
        if st and st[2] in chains:
            y, k = chains[st[2]]
            ind, t, tag = st[1], var_t[y], f"ins{st[2]}"
            lines += [
                f"{ind}%ld_{tag} = OpLoad %{t} %{y}",
                f"{ind}%{tag} = OpCompositeInsert %{t} %{st[3]} %ld_{tag} {k}",
                f"{ind}OpStore %{y} %{tag}",
            ]
            n += 1
            continue
        lines.append(ln)
    if not n:
        raise HarnessError(
            "suite defect: the module patch failed: no constant-index element store to make OpCompositeInsert"
        )
    return "\n".join(lines) + "\n"
