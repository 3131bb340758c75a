"""The GLSL words of GL_KHR_cooperative_matrix shaders that the base cases
(``cts.kernels.coop_glsl``) and the KHR axes (``cts.kernels.coop_glsl_axes``)
both write: element type names, matrix uses and layouts, literals, the
buffers of a case and the shader header, and the MulAdd body
(GL_KHR_cooperative_matrix; SPV_KHR_cooperative_matrix for what they lower to)."""

from __future__ import annotations

from cts.errors import Unsupported
from cts.families.coop import CHAIN, GEMM_TILES, CoopCase
from reference.dtypes import etype

__all__ = [
    "GLSL_TYPE",
    "USE",
    "LAYOUT",
    "kernel_buffers",
    "mtype",
    "lit",
    "header",
    "convert_elem",
    "muladd_body",
]


GLSL_TYPE = {
    "f16": "float16_t",
    "bf16": "float16_t",  # rewritten to BFloat16KHR after compilation
    "f32": "float",
    "f64": "double",
    "i8": "int8_t",
    "u8": "uint8_t",
    "i16": "int16_t",
    "u16": "uint16_t",
    "i32": "int",
    "u32": "uint",
    "i64": "int64_t",
    "u64": "uint64_t",
}


USE = {"A": "gl_MatrixUseA", "B": "gl_MatrixUseB", "C": "gl_MatrixUseAccumulator"}


LAYOUT = {"row": "gl_CooperativeMatrixLayoutRowMajor", "col": "gl_CooperativeMatrixLayoutColumnMajor"}


def kernel_buffers(case: CoopCase) -> list[tuple[str, str]]:
    """(buffer name, element type) in binding order."""
    op = case.op
    t = case.mat.t if case.mat else ""
    if op == "length":
        return [("lo", t), ("hi", t), ("len", "u32"), ("map", "u32")]
    if op == "access":
        return [("x", t), ("out", t)]
    if op == "splat":
        return [("v", t), ("out", t)]
    st = [("st", "u32")] if case.var == "sbuf" else []  # a Stride read at run time
    if op == "load":
        return [("src", t), ("out", t)] + st
    if op == "store":
        return [("x", t), ("dst", t)] + st
    if op == "convert":
        return [("x", t), ("out", case.to)]
    if case.entry is not None:
        e = case.entry
        return [("a", e.A), ("b", e.B), ("c", e.C), ("d", e.R)]
    return [("x", t), ("y", t), ("out", t)]


def mtype(t: str, use: str, rows: int, cols: int) -> str:
    return f"coopmat<{GLSL_TYPE[t]}, gl_ScopeSubgroup, {rows}, {cols}, {USE[use]}>"


def lit(t: str, v) -> str:
    et = etype(t)
    if et.is_float:
        return f"{GLSL_TYPE[t]}({float(v)!r})"
    return f"{GLSL_TYPE[t]}({int(v)})"


def header(case: CoopCase, sg: int, shared: str = "") -> list[str]:
    lines = [
        "#version 450",
        "#extension GL_KHR_cooperative_matrix : require",
        "#extension GL_KHR_memory_scope_semantics : require",
        "#extension GL_EXT_shader_explicit_arithmetic_types : require",
        "#extension GL_KHR_shader_subgroup_basic : require",
        f"layout(local_size_x = {sg}) in;",
    ]
    for i, (name, t) in enumerate(kernel_buffers(case)):
        lines.append(
            f"layout(set = 0, binding = {i}, std430) buffer B_{name} {{ {GLSL_TYPE[t]} buf_{name}[]; }};"
        )
    if shared:
        lines.append(shared)
    return lines


def convert_elem(src: str, dst: str, expr: str) -> str:
    """Scalar conversion routed through 32 bits (bf16 allows only FConvert)."""
    if etype(src).is_float:
        return f"{GLSL_TYPE[dst]}(float({expr}))"
    return f"{GLSL_TYPE[dst]}({'int' if etype(src).kind == 'int' else 'uint'}({expr}))"


def muladd_body(case: CoopCase) -> list[str]:
    e = case.entry
    if e.C != e.R:
        raise Unsupported(
            f"not realized by the suite: GLSL coopMatMulAdd cannot express C type {e.C} != Result type {e.R}"
        )
    if e.scope != "subgroup":
        raise Unsupported(
            f"not realized by the suite: scope {e.scope} is not generated (GLSL gl_ScopeSubgroup only)"
        )
    M, N, K = e.M, e.N, e.K
    MA, MB, MC = mtype(e.A, "A", M, K), mtype(e.B, "B", K, N), mtype(e.C, "C", M, N)
    ops = "gl_MatrixOperandsSaturatingAccumulation" if e.sat else "0"
    row = LAYOUT["row"]
    lines = [f"  {MA} a; {MB} b; {MC} c;"]
    if case.op == "muladd":
        lay = LAYOUT[case.layout]
        sa, sb = (K, N) if case.layout == "row" else (M, K)
        lines += [
            f"  coopMatLoad(a, buf_a, s * {M * K}u, {sa}u, {lay});",
            f"  coopMatLoad(b, buf_b, s * {K * N}u, {sb}u, {lay});",
            f"  coopMatLoad(c, buf_c, s * {M * N}u, {N}u, {row});",
            f"  c = coopMatMulAdd(a, b, c, {ops});",
            f"  coopMatStore(c, buf_d, s * {M * N}u, {N}u, {row});",
        ]
    elif case.op == "chain":
        lines += [
            f"  coopMatLoad(c, buf_c, s * {M * N}u, {N}u, {row});",
            f"  for (uint l = 0u; l < {CHAIN}u; ++l) {{",
            f"    coopMatLoad(a, buf_a, s * {CHAIN * M * K}u + l * {M * K}u, {K}u, {row});",
            f"    coopMatLoad(b, buf_b, s * {CHAIN * K * N}u + l * {K * N}u, {N}u, {row});",
            f"    c = coopMatMulAdd(a, b, c, {ops});",
            "  }",
            f"  coopMatStore(c, buf_d, s * {M * N}u, {N}u, {row});",
        ]
    else:  # gemm
        tm, tn, tk = GEMM_TILES
        sa, sb, sc = tk * K, tn * N, tn * N
        lines += [
            f"  uint p = s / {tm * tn}u; uint t = s % {tm * tn}u; uint i = t / {tn}u; uint j = t % {tn}u;",
            f"  uint abase = p * {tm * M * sa}u; uint bbase = p * {tk * K * sb}u; uint cbase = p * {tm * M * sc}u;",
            f"  uint ct = cbase + i * {M * sc}u + j * {N}u;",
            f"  coopMatLoad(c, buf_c, ct, {sc}u, {row});",
            f"  for (uint k = 0u; k < {tk}u; ++k) {{",
            f"    coopMatLoad(a, buf_a, abase + i * {M * sa}u + k * {K}u, {sa}u, {row});",
            f"    coopMatLoad(b, buf_b, bbase + k * {K * sb}u + j * {N}u, {sb}u, {row});",
            f"    c = coopMatMulAdd(a, b, c, {ops});",
            "  }",
            f"  coopMatStore(c, buf_d, ct, {sc}u, {row});",
        ]
    return lines
