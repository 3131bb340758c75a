"""SPIR-V kernels (Kernel capability) for the OpenCL form of cooperative
matrix: SPV_KHR_cooperative_matrix under the cl_khr_cooperative_matrix
draft (SPV_KHR_cooperative_matrix; cl_khr_cooperative_matrix, SPIR-V environment).

One module per case, one subgroup per work-group (local size = the case's
subgroup size, fixed by ``OpExecutionMode SubgroupSize``: the draft makes
Load/Store/MulAdd undefined in kernels without full subgroups), work-group
``w`` working on row ``w`` of every buffer of the coop room's buffer
contract (``cts.families.coop``, raw element bits, one row per subgroup;
``gemm``: one work-group per (problem, tile row, tile column)).

Environment rules followed (cl_khr_cooperative_matrix draft, SPIR-V environment): Scope Subgroup (3) only;
pointers in CrossWorkgroup or Workgroup storage; integer component types
are ``OpTypeInt w 0`` (Kernel modules have no signed integer types: the
signedness of MulAdd operands is carried by the Cooperative Matrix Operands
bits, SPV_KHR_cooperative_matrix "Cooperative Matrix Operands", set exactly when the entry's type is signed, and
SaturatingAccumulation exactly when the entry says so); Stride is a 64-bit
constant in elements (Intel's runtime refuses a 32-bit stride at link,
local-runtimes 2.4).  Element access (``length``, ``access``) goes through a
Function variable of the matrix type and OpAccessChain over
``OpCooperativeMatrixLengthKHR`` elements (SPV_KHR_cooperative_matrix, OpCooperativeMatrixLengthKHR: the matrix is a
composite with an implementation-dependent per-invocation count).

Every module is assembled and validated by ``cts.kernels.spirv_tools.assemble``
(spirv-as, then ``spirv-val --target-env opencl2.2``; SPIRV-Tools has no
OpenCL 3.0 environment, the OpenCL 2.2 one is the newest).
"""

from __future__ import annotations

from cts.families.coop import CHAIN, GEMM_TILES, SPLAT_CONST
from cts.kernels.coop_cl_buffers import SCALAR_ARGS, TYPES, WG_ALIGN, buffer_args
from cts.kernels.spirv_tools import TARGET_SPV16

__all__ = ["ENTRY", "module_text"]

ENTRY = "coop"

_USE = {"A": 0, "B": 1, "C": 2}
_LAYOUT = {"row": 0, "col": 1}
_SIGNED_NAMES = (
    (0x1, "MatrixASignedComponentsKHR"),
    (0x2, "MatrixBSignedComponentsKHR"),
    (0x4, "MatrixCSignedComponentsKHR"),
    (0x8, "MatrixResultSignedComponentsKHR"),
    (0x10, "SaturatingAccumulationKHR"),
)


def _const_literal(value, t: str) -> str:
    _, _, _, w, kind = TYPES[t]
    if kind == "float":
        return repr(float(value))
    return str(int(value) & ((1 << w) - 1))


class _Module:
    """Collects declarations (deduplicated) and the function body."""

    def __init__(self) -> None:
        self.caps: dict[str, None] = dict.fromkeys(("Addresses", "Kernel", "Int64", "CooperativeMatrixKHR"))
        self.caps["SubgroupDispatch"] = None
        self.exts: dict[str, None] = {"SPV_KHR_cooperative_matrix": None}
        self.decls: dict[str, str] = {}  # id -> declaration text (insertion order)
        self.body: list[str] = []
        self.n = 0
        self.scalar("u32")
        self.scalar("u64")

    def fresh(self, stem: str = "t") -> str:
        self.n += 1
        return f"%{stem}{self.n}"

    def decl(self, name: str, text: str) -> str:
        self.decls.setdefault(name, f"{name} = {text}")
        return name

    def scalar(self, t: str) -> str:
        sid, text, cap, _, _ = TYPES[t]
        if cap:
            self.caps[cap] = None
        return self.decl(sid, text)

    def const(self, t: str, value) -> str:
        sid = self.scalar(t)
        lit = _const_literal(value, t)
        name = f"%k_{sid[1:]}_{lit.replace('-', 'm').replace('.', 'p')}"
        return self.decl(name, f"OpConstant {sid} {lit}")

    def ptr(self, t: str, storage: str = "CrossWorkgroup") -> str:
        sid = self.scalar(t)
        return self.decl(f"%p{storage[:2]}_{sid[1:]}", f"OpTypePointer {storage} {sid}")

    def mat(self, use: str, rows: int, cols: int, t: str) -> str:
        sid = self.scalar(t)
        args = (
            self.const("u32", 3),
            self.const("u32", rows),
            self.const("u32", cols),
            self.const("u32", _USE[use]),
        )
        return self.decl(
            f"%M{use}{rows}x{cols}_{sid[1:]}", f"OpTypeCooperativeMatrixKHR {sid} " + " ".join(args)
        )

    def op(self, text: str, stem: str = "t") -> str:
        r = self.fresh(stem)
        self.body.append(f"{r} = {text}")
        return r

    def emit(self, text: str) -> None:
        self.body.append(text)

    # ---- helpers ------------------------------------------------------
    def at(self, base: str, t: str, offset: str, storage: str = "CrossWorkgroup") -> str:
        return self.op(f"OpInBoundsPtrAccessChain {self.ptr(t, storage)} {base} {offset}", "p")

    def u64(self, v: int) -> str:
        return self.const("u64", v)

    def mul64(self, a: str, b: str) -> str:
        return self.op(f"OpIMul %u64 {a} {b}")

    def add64(self, a: str, b: str) -> str:
        return self.op(f"OpIAdd %u64 {a} {b}")

    def load(self, mtype: str, ptr: str, layout: str, stride: int) -> str:
        return self.op(
            f"OpCooperativeMatrixLoadKHR {mtype} {ptr} {self.const('u32', _LAYOUT[layout])} {self.u64(stride)}",
            "m",
        )

    def store(self, ptr: str, value: str, layout: str, stride: int) -> None:
        self.emit(
            f"OpCooperativeMatrixStoreKHR {ptr} {value} {self.const('u32', _LAYOUT[layout])} {self.u64(stride)}"
        )

    def loop(self, start: str, end: str, step: str, itype: str, body) -> None:
        """for (i = start; i < end; i += step) body(i); unstructured (Kernel)."""
        self.decl("%bool", "OpTypeBool")
        pre, hdr, blk, done = (self.fresh(s) for s in ("pre", "hdr", "blk", "done"))
        i, nxt, cond = self.fresh("i"), self.fresh("inext"), self.fresh("c")
        self.emit(f"OpBranch {pre}")
        self.emit(f"{pre} = OpLabel")
        self.emit(f"OpBranch {hdr}")
        self.emit(f"{hdr} = OpLabel")
        self.emit(f"{i} = OpPhi {itype} {start} {pre} {nxt} {blk}")
        self.emit(f"{cond} = OpULessThan %bool {i} {end}")
        self.emit(f"OpBranchConditional {cond} {blk} {done}")
        self.emit(f"{blk} = OpLabel")
        body(i)
        self.emit(f"{nxt} = OpIAdd {itype} {i} {step}")
        self.emit(f"OpBranch {hdr}")
        self.emit(f"{done} = OpLabel")

    def barrier(self) -> None:
        wg = self.const("u32", 2)
        self.emit(f"OpControlBarrier {wg} {wg} {self.const('u32', 0x110)}")  # WorkgroupMemory|SeqCst

    def text(self, params: list[tuple[str, str]], interface: list[str], sg: int, pre: list[str]) -> str:
        ptypes = [self.scalar(t) if n in SCALAR_ARGS else self.ptr(t) for n, t in params]
        self.decl("%void", "OpTypeVoid")
        fn = self.decl(
            f"%fn{len(params)}_" + "_".join(p[4:] for p in ptypes), "OpTypeFunction %void " + " ".join(ptypes)
        )
        head = [TARGET_SPV16] if "SPV_ARM_cooperative_matrix_layouts" in self.exts else []
        head += [f"OpCapability {c}" for c in self.caps]
        head += [f'OpExtension "{x}"' for x in self.exts]
        head += [
            "OpMemoryModel Physical64 OpenCL",
            f'OpEntryPoint Kernel %main "{ENTRY}" ' + " ".join(interface),
            f"OpExecutionMode %main SubgroupSize {sg}",
            *pre,
        ]
        # declarations in insertion order: every helper declares what it
        # refers to first (type before constant, constant before matrix type)
        decls = list(self.decls.values())
        fn_head = [f"%main = OpFunction %void None {fn}"]
        fn_head += [f"%arg_{name} = OpFunctionParameter {pt}" for (name, _), pt in zip(params, ptypes)]
        fn_head.append("%entry = OpLabel")
        return "\n".join(head + decls + fn_head + self.body + ["OpReturn", "OpFunctionEnd", ""])


def module_text(case, rows: dict[str, int]) -> str:
    """SPIR-V assembly of ``case``; ``rows`` = elements per buffer row (per
    subgroup; gemm: per problem) of each buffer of :func:`buffer_args`."""
    md = _Module()
    params = buffer_args(case)
    sg = case.sg
    md.decl("%v3u64", "OpTypeVector %u64 3")
    md.decl("%pIn_v3u64", "OpTypePointer Input %v3u64")
    md.decl("%WorkgroupId", "OpVariable %pIn_v3u64 Input")
    md.decl("%LocalId", "OpVariable %pIn_v3u64 Input")
    pre = [
        "OpDecorate %WorkgroupId BuiltIn WorkgroupId",
        "OpDecorate %WorkgroupId Constant",
        "OpDecorate %LocalId BuiltIn LocalInvocationId",
        "OpDecorate %LocalId Constant",
    ]
    w = md.op("OpCompositeExtract %u64 " + md.op("OpLoad %v3u64 %WorkgroupId") + " 0", "w")
    lid = md.op("OpCompositeExtract %u64 " + md.op("OpLoad %v3u64 %LocalId") + " 0", "lid")

    def base(name: str, t: str, extra: str | None = None) -> str:
        off = md.mul64(w, md.u64(rows[name]))
        if extra is not None:
            off = md.add64(off, extra)
        return md.at(f"%arg_{name}", t, off)

    op = case.op
    if op in ("muladd", "chain", "gemm"):
        _muladd(md, case, rows, w, base)
    else:
        _matrix(md, case, rows, w, lid, base, pre)
    return md.text(params, ["%WorkgroupId", "%LocalId"], sg, pre)


def _operands(e) -> str:
    bits = e.signed_bits
    names = [n for b, n in _SIGNED_NAMES if bits & b]
    return " " + "|".join(names) if names else ""


def _muladd(md: _Module, case, rows, w, base) -> None:
    e = case.entry
    M, N, K = e.M, e.N, e.K
    TA, TB = md.mat("A", M, K, e.A), md.mat("B", K, N, e.B)
    TC, TR = md.mat("C", M, N, e.C), md.mat("C", M, N, e.R)
    opnd = _operands(e)
    if case.op == "muladd":
        lay = case.layout
        a = md.load(TA, base("a", e.A), lay, K if lay == "row" else M)
        b = md.load(TB, base("b", e.B), lay, N if lay == "row" else K)
        c = md.load(TC, base("c", e.C), "row", N)
        d = md.op(f"OpCooperativeMatrixMulAddKHR {TR} {a} {b} {c}{opnd}", "d")
        md.store(base("d", e.R), d, "row", N)
        return
    if case.op == "chain":
        pa, pb = base("a", e.A), base("b", e.B)
        d = md.load(TC, base("c", e.C), "row", N)
        for step in range(CHAIN):
            a = md.load(TA, md.at(pa, e.A, md.u64(step * M * K)), "row", K)
            b = md.load(TB, md.at(pb, e.B, md.u64(step * K * N)), "row", N)
            d = md.op(f"OpCooperativeMatrixMulAddKHR {TR} {a} {b} {d}{opnd}", "d")
        md.store(base("d", e.R), d, "row", N)
        return
    # gemm: work-group w -> problem p, tile (i, j); sizes of coop.GEMM_TILES
    tm, tn, tk = GEMM_TILES
    sa, sb, sc = tk * K, tn * N, tn * N
    tiles = md.u64(tm * tn)
    p = md.op(f"OpUDiv %u64 {w} {tiles}", "p")
    ij = md.op(f"OpUMod %u64 {w} {tiles}", "ij")
    i = md.op(f"OpUDiv %u64 {ij} {md.u64(tn)}", "ti")
    j = md.op(f"OpUMod %u64 {ij} {md.u64(tn)}", "tj")

    def problem(name, t, extra):
        return md.at(f"%arg_{name}", t, md.add64(md.mul64(p, md.u64(rows[name])), extra))

    row_i = md.mul64(i, md.u64(M))
    col_j = md.mul64(j, md.u64(N))
    pa = problem("a", e.A, md.mul64(row_i, md.u64(sa)))
    pb = problem("b", e.B, col_j)
    cd_off = md.add64(md.mul64(row_i, md.u64(sc)), col_j)
    d = md.load(TC, problem("c", e.C, cd_off), "row", sc)
    for k in range(tk):
        a = md.load(TA, md.at(pa, e.A, md.u64(k * K)), "row", sa)
        b = md.load(TB, md.at(pb, e.B, md.u64(k * K * sb)), "row", sb)
        d = md.op(f"OpCooperativeMatrixMulAddKHR {TR} {a} {b} {d}{opnd}", "d")
    md.store(problem("d", e.R, cd_off), d, "row", sc)


def _to_u32(md: _Module, v: str, t: str) -> str:
    _, _, _, width, kind = TYPES[t]
    if kind == "float":
        return md.op(f"OpConvertFToU %u32 {v}")
    if width == 32:
        return v
    return md.op(f"OpUConvert %u32 {v}")


def _convert_op(src: str, dst: str) -> str | None:
    """The SPIR-V conversion (SPV_KHR_cooperative_matrix, conversion instructions) for src -> dst (None: same
    SPIR-V type, e.g. i32 -> u32 in a Kernel module, a no-op on the bits)."""
    s, d = TYPES[src], TYPES[dst]
    if s[0] == d[0]:
        return None
    if s[4] == "float" and d[4] == "float":
        return "OpFConvert"
    if s[4] == "float":
        return "OpConvertFToS" if d[4] == "int" else "OpConvertFToU"
    if d[4] == "float":
        return "OpConvertSToF" if s[4] == "int" else "OpConvertUToF"
    return "OpSConvert" if s[4] == "int" else "OpUConvert"


def _matrix(md: _Module, case, rows, w, lid, base, pre: list[str]) -> None:
    from cts.families.coop import case_stride

    m = case.mat
    R, C, t = m.rows, m.cols, m.t
    sid, _, _, width, kind = TYPES[t]
    T = md.mat(m.use, R, C, t)
    op = case.op
    if op == "length":
        lo = md.load(T, base("lo", t), "row", C)
        hi = md.load(T, base("hi", t), "row", C)
        n = md.op(f"OpCooperativeMatrixLengthKHR %u32 {T}", "len")
        sg = case.sg
        inv = md.add64(md.mul64(w, md.u64(sg)), lid)
        md.emit(f"OpStore {md.at('%arg_len', 'u32', inv)} {n}")
        mp = md.at("%arg_map", "u32", md.mul64(inv, md.u64(rows["map"] // sg)))
        vlo, vhi = _spill(md, T, lo), _spill(md, T, hi)
        pf = md.ptr(t, "Function")

        def body(i):
            i2 = md.op(f"OpIMul %u32 {i} {md.const('u32', 2)}")
            for k, var in enumerate((vlo, vhi)):
                e = md.op(f"OpLoad {sid} " + md.op(f"OpInBoundsAccessChain {pf} {var} {i}", "p"))
                slot = md.op(f"OpIAdd %u32 {i2} {md.const('u32', k)}") if k else i2
                md.emit(f"OpStore {md.at(mp, 'u32', slot)} {_to_u32(md, e, t)}")

        md.loop(md.const("u32", 0), n, md.const("u32", 1), "%u32", body)
        return
    if op == "access":
        x = md.load(T, base("x", t), "row", C)
        var = _spill(md, T, x)
        n = md.op(f"OpCooperativeMatrixLengthKHR %u32 {T}", "len")
        pf = md.ptr(t, "Function")
        two, one = (md.const(t, v) for v in (2, 1))
        mul, add = ("OpFMul", "OpFAdd") if kind == "float" else ("OpIMul", "OpIAdd")

        def body(i):
            p = md.op(f"OpInBoundsAccessChain {pf} {var} {i}", "p")
            e = md.op(f"OpLoad {sid} {p}")
            md.emit(f"OpStore {p} " + md.op(f"{add} {sid} " + md.op(f"{mul} {sid} {e} {two}") + f" {one}"))

        md.loop(md.const("u32", 0), n, md.const("u32", 1), "%u32", body)
        md.store(base("out", t), md.op(f"OpLoad {T} {var}", "m"), "row", C)
        return
    if op == "splat":
        if case.mode == "const":
            value = md.decl(f"%splat_{T[1:]}", f"OpConstantComposite {T} {md.const(t, SPLAT_CONST[kind])}")
        else:
            v = md.op(f"OpLoad {sid} {base('v', t)}", "v")
            value = md.op(f"OpCompositeConstruct {T} {v}", "m")
        md.store(base("out", t), value, "row", C)
        return
    if getattr(case, "ocl_axis", "") not in ("", "sg"):  # the OpenCL-only axes
        from cts.kernels.coop_cl_axes import spirv_load_store

        return spirv_load_store(md, case, base)
    if op in ("load", "store"):
        stride = case_stride(case)
        region = "src" if op == "load" else "dst"
        L = rows[region]
        glob = base(region, t)
        if case.mem == "workgroup":
            arr = md.decl(f"%arr_{sid[1:]}_{L}", f"OpTypeArray {sid} {md.u64(L)}")
            parr = md.decl(f"%pWo_arr_{sid[1:]}_{L}", f"OpTypePointer Workgroup {arr}")
            wgv = md.decl("%wg", f"OpVariable {parr} Workgroup")
            pre.append(f"OpDecorate %wg Alignment {WG_ALIGN}")  # for the draft's POINTER_ALIGNMENT
            pw = md.ptr(t, "Workgroup")
            wg0 = md.op(f"OpInBoundsAccessChain {pw} {wgv} {md.u64(0)}", "p")

            def copy(src_ptr, src_st, dst_ptr, dst_st):
                def body(i):
                    s = md.op(f"OpInBoundsPtrAccessChain {md.ptr(t, src_st)} {src_ptr} {i}", "p")
                    d = md.op(f"OpInBoundsPtrAccessChain {md.ptr(t, dst_st)} {dst_ptr} {i}", "p")
                    md.emit(f"OpStore {d} " + md.op(f"OpLoad {sid} {s}"))

                md.loop(lid, md.u64(L), md.u64(case.sg), "%u64", body)
                md.barrier()

            copy(glob, "CrossWorkgroup", wg0, "Workgroup")  # load: the source; store: keep the padding
            if op == "load":
                md.store(base("out", t), md.load(T, wg0, case.layout, stride), "row", C)
            else:
                md.store(wg0, md.load(T, base("x", t), "row", C), case.layout, stride)
                md.barrier()
                copy(wg0, "Workgroup", glob, "CrossWorkgroup")
            return
        if op == "load":
            md.store(base("out", t), md.load(T, glob, case.layout, stride), "row", C)
        else:
            md.store(glob, md.load(T, base("x", t), "row", C), case.layout, stride)
        return
    if op == "convert":
        x = md.load(T, base("x", t), "row", C)
        conv = _convert_op(t, case.to)
        TD = md.mat(m.use, R, C, case.to)
        y = md.op(f"{conv} {TD} {x}", "m") if conv else x
        md.store(base("out", case.to), y, "row", C)
        return
    # element-wise (SPV_KHR_cooperative_matrix arithmetic instructions; no OpMatrixTimesScalar in OpenCL)
    x = md.load(T, base("x", t), "row", C)
    if op == "neg":
        y = md.op(f"{'OpFNegate' if kind == 'float' else 'OpSNegate'} {T} {x}", "m")
    else:
        other = md.load(T, base("y", t), "row", C)
        if kind == "float":
            name = {"add": "OpFAdd", "sub": "OpFSub", "mul": "OpFMul", "div": "OpFDiv"}[op]
        else:
            name = {"add": "OpIAdd", "sub": "OpISub", "mul": "OpIMul"}.get(op) or (
                "OpSDiv" if kind == "int" else "OpUDiv"
            )
        y = md.op(f"{name} {T} {x} {other}", "m")
    md.store(base("out", t), y, "row", C)


def _spill(md: _Module, T: str, value: str) -> str:
    """A Function variable of matrix type ``T`` holding ``value``."""
    pt = md.decl(f"%pFu_{T[1:]}", f"OpTypePointer Function {T}")
    var = md.fresh("var")
    # Function variables must open the first block: put it right after %entry
    md.body.insert(0, f"{var} = OpVariable {pt} Function")
    md.emit(f"OpStore {var} {value}")
    return var
