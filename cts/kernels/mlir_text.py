"""MLIR text of an MLIR case: its program (cts.families.mlir_program) as a
``gpu.func`` of the gpu dialect (MLIR GPUOps.td), what a real
compiler (upstream ``mlir-opt``) lowers and a device runs.

The function body is target-independent; a target only adds the memref
memory space and the attributes of the module and the function:

* :class:`VulkanTarget`: ``spirv.target_env`` (version, capabilities,
  extensions, subgroup size, the device's cooperative-matrix properties),
  memrefs in the ``StorageBuffer`` storage class, ``spirv.entry_point_abi``
  with one subgroup per work-group;
* :class:`CudaTarget`: ``#nvvm.target<chip = ...>``, plain memrefs.

Each buffer of the program is one 1-D memref argument (binding = argument
index) of ``SUBGROUPS x size`` elements; work-group p works on row p, at
base ``p * size`` (``gpu.block_id x``).  A matrix at (row, col) with
leadDimension L is loaded from index ``base + row * L + col``.  Lane
arithmetic uses ``gpu.lane_id`` (the subgroup lane).

8-bit matrices are loaded from ``i8`` memrefs (the op's verifier wants
signless memory); their scalars (extract / insert / constant) are ``si8`` /
``ui8``, the matrix element type, kept in memrefs of that type.  A signed
8-bit scalar cannot be an ``arith.constant`` (signless only), so a constant
of such a matrix is read from its one-element buffer ``K``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cts.families.mlir_program import SUBGROUPS, Program

__all__ = [
    "VulkanTarget",
    "CudaTarget",
    "CoopProp",
    "func_name",
    "func_text",
    "module_text",
    "case_module",
    "case_func",
    "mma_type",
    "memref_elem",
]

MEMREF_ELEM = {"f16": "f16", "f32": "f32", "f64": "f64", "si8": "i8", "ui8": "i8", "i32": "i32"}
SCALAR = {"f16": "f16", "f32": "f32", "f64": "f64", "si8": "si8", "ui8": "ui8", "i32": "i32"}
# the gpu.rotate values beyond the matrix element types: signless integers, bf16, and i1 (held in
# memory as i32 0 / 1: a memref of i1 has no storage layout a target agrees on; read with trunci)
for _t in ("i8", "i16", "i64", "bf16"):
    MEMREF_ELEM[_t] = SCALAR[_t] = _t
MEMREF_ELEM["i1"], SCALAR["i1"] = "i32", "i1"
FLOATS = ("f16", "f32", "f64", "bf16")


@dataclass(frozen=True)
class CoopProp:
    """One VkCooperativeMatrixPropertiesKHR entry in MLIR's spelling."""

    m: int
    n: int
    k: int
    a: str
    b: str
    c: str
    r: str
    sat: bool = False

    def text(self) -> str:
        return (
            f"#spirv.coop_matrix_props_khr<m_size = {self.m}, n_size = {self.n}, k_size = {self.k}, "
            f"a_type = {self.a}, b_type = {self.b}, c_type = {self.c}, result_type = {self.r}, "
            f"acc_sat = {str(self.sat).lower()}, scope = <Subgroup>>"
        )


@dataclass(frozen=True)
class VulkanTarget:
    subgroup_size: int
    caps: tuple[str, ...] = ("Shader", "CooperativeMatrixKHR", "Float16", "GroupNonUniform")
    exts: tuple[str, ...] = ("SPV_KHR_cooperative_matrix",)
    coop: tuple[CoopProp, ...] = ()
    version: str = "v1.6"

    space = ", #spirv.storage_class<StorageBuffer>"

    def module_attrs(self) -> str:
        props = ", ".join(p.text() for p in self.coop)
        limits = f"subgroup_size = {self.subgroup_size}"
        if props:
            limits += f", cooperative_matrix_properties_khr = [{props}]"
        return (
            f" attributes {{spirv.target_env = #spirv.target_env<#spirv.vce<{self.version}, "
            f"[{', '.join(self.caps)}], [{', '.join(self.exts)}]>, #spirv.resource_limits<{limits}>>}}"
        )

    def func_attrs(self, sg: int) -> str:
        return (
            f" attributes {{spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [{sg}, 1, 1]>}}"
        )


@dataclass(frozen=True)
class CudaTarget:
    chip: str = "sm_90"

    space = ""

    def module_attrs(self) -> str:
        return f' [#nvvm.target<chip = "{self.chip}">]'

    def func_attrs(self, sg: int) -> str:
        return f" attributes {{known_block_size = array<i32: {sg}, 1, 1>}}"


def mma_type(rows: int, cols: int, elem: str, tag: str) -> str:
    return f'!gpu.mma_matrix<{rows}x{cols}x{elem}, "{tag}">'


def memref_elem(prog: Program, name: str) -> str:
    """i8 for a buffer a matrix is loaded from / stored to, the scalar type
    (si8 / ui8) for one that holds extracted or inserted scalars."""
    elem = prog.buffers[name].elem
    matrix_io = any(op[0] in ("load", "store") and op[2] == name for op in prog.ops)
    return MEMREF_ELEM[elem] if matrix_io or elem == "i1" else SCALAR[elem]


def func_name(case) -> str:
    """A symbol for the case's gpu.func (also the SPIR-V entry point)."""
    return "k_" + re.sub(r"[^A-Za-z0-9_]", "_", case.id)


def _literal(value, elem: str) -> str:
    if elem in FLOATS:
        v = float(value)
        return repr(v) if v == v and abs(v) != float("inf") else f"0x{_bits(v, elem):X}"
    return str(int(value))


def _bits(v: float, elem: str) -> int:
    import struct

    fmt = {"f16": "<e", "f32": "<f", "f64": "<d"}[elem]
    return int.from_bytes(struct.pack(fmt, v), "little")


class _Emitter:
    """SSA naming and the constants of one function."""

    def __init__(self, prog: Program, space: str):
        self.p = prog
        self.space = space
        self.lines: list[str] = []
        self.n = 0
        self.env: dict[str, tuple[str, str]] = {}  # program name -> (ssa value, type)
        self.consts: dict[tuple, str] = {}
        self.bases: dict[str, str] = {}

    def fresh(self, hint: str = "v") -> str:
        self.n += 1
        return f"%{re.sub(r'[^A-Za-z0-9_]', '', hint) or 'v'}{self.n}"

    def emit(self, line: str) -> None:
        self.lines.append("      " + line)

    def const(self, value, typ: str) -> str:
        key = (repr(value), typ)
        if key not in self.consts:
            name = self.fresh("c")
            self.consts[key] = name
            self.emit(f"{name} = arith.constant {value} : {typ}")
        return self.consts[key]

    def memref(self, buf: str) -> str:
        return f"memref<{SUBGROUPS * self.p.buffers[buf].size}x{memref_elem(self.p, buf)}{self.space}>"

    def lane_times(self, k: int) -> str:
        """lane * k, computed once per k."""
        if ("lane", k) not in self.consts:
            if k == 1:
                self.consts[("lane", k)] = self.env["%lane"][0]
            else:
                v = self.fresh("lane_x")
                self.emit(f"{v} = arith.muli {self.env['%lane'][0]}, {self.const(k, 'index')} : index")
                self.consts[("lane", k)] = v
        return self.consts[("lane", k)]

    def index(self, buf: str, offset: int = 0, lane_scale: int = 0) -> str:
        """base(buf) + lane * lane_scale + offset, as an index value."""
        v = self.bases[buf]
        if lane_scale:
            scaled = self.lane_times(lane_scale)
            s = self.fresh("i")
            self.emit(f"{s} = arith.addi {v}, {scaled} : index")
            v = s
        if offset:
            s = self.fresh("i")
            self.emit(f"{s} = arith.addi {v}, {self.const(offset, 'index')} : index")
            v = s
        return v


def _thread_local_count(em: _Emitter, mat: str) -> tuple[int, str]:
    typ = em.env[mat][1]
    m = re.match(r"!gpu.mma_matrix<(\d+)x(\d+)x(\w+),", typ)
    rows, cols, elem = int(m.group(1)), int(m.group(2)), m.group(3)
    return rows * cols // em.p.sg, elem


def _op(em: _Emitter, op: tuple) -> None:
    kind = op[0]
    if kind == "load":
        _, dst, buf, row, col, lead, tr, rows, cols, elem, tag = op
        idx = em.index(buf, row * lead + col)
        t = mma_type(rows, cols, elem, tag)
        v = em.fresh(dst)
        attrs = f"leadDimension = {lead} : index" + (", transpose" if tr else "")
        em.emit(f"{v} = gpu.subgroup_mma_load_matrix %{buf}[{idx}] {{{attrs}}} : {em.memref(buf)} -> {t}")
        em.env[dst] = (v, t)
    elif kind == "store":
        _, src, buf, row, col, lead, tr = op
        idx = em.index(buf, row * lead + col)
        v, t = em.env[src]
        attrs = f"leadDimension = {lead} : index" + (", transpose" if tr else "")
        em.emit(f"gpu.subgroup_mma_store_matrix {v}, %{buf}[{idx}] {{{attrs}}} : {t}, {em.memref(buf)}")
    elif kind == "compute":
        _, dst, a, b, c, a_t, b_t = op
        (va, ta), (vb, tb), (vc, tc) = em.env[a], em.env[b], em.env[c]
        flags = [f for f, on in (("a_transpose", a_t), ("b_transpose", b_t)) if on]
        attrs = f" {{{', '.join(flags)}}}" if flags else ""
        v = em.fresh(dst)
        em.emit(f"{v} = gpu.subgroup_mma_compute {va}, {vb}, {vc}{attrs} : {ta}, {tb} -> {tc}")
        em.env[dst] = (v, tc)
    elif kind == "constant":
        _, dst, value, rows, cols, elem, tag = op
        if isinstance(value, str):  # a scalar arith cannot write (si8 / ui8): from its buffer
            s = em.fresh("k")
            em.emit(f"{s} = memref.load %{value}[{em.index(value)}] : {em.memref(value)}")
        else:
            s = em.const(_literal(value, elem), SCALAR[elem])
        t = mma_type(rows, cols, elem, tag)
        v = em.fresh(dst)
        em.emit(f"{v} = gpu.subgroup_mma_constant_matrix {s} : {t}")
        em.env[dst] = (v, t)
    elif kind == "elementwise":
        _, dst, opt, args, res_elem = op
        vals = [em.env[a] for a in args]
        m = re.match(r'!gpu.mma_matrix<(\d+)x(\d+)x\w+, "(\w+)">', vals[0][1])
        res_t = mma_type(int(m.group(1)), int(m.group(2)), res_elem, m.group(3))
        v = em.fresh(dst)
        ins = ", ".join(x for x, _ in vals)
        tys = ", ".join(t for _, t in vals)
        em.emit(f"{v} = gpu.subgroup_mma_elementwise {opt} {ins} : ({tys}) -> {res_t}")
        em.env[dst] = (v, res_t)
    elif kind == "extract_all":
        _, buf, m = op
        n, elem = _thread_local_count(em, m)
        mv, mt = em.env[m]
        for i in range(n):
            x = em.fresh("x")
            em.emit(
                f"{x} = gpu.subgroup_mma_extract_thread_local {mv}[{em.const(i, 'index')}] : {mt} -> {elem}"
            )
            em.emit(f"memref.store {x}, %{buf}[{em.index(buf, i, n)}] : {em.memref(buf)}")
    elif kind == "insert_all":
        _, dst, m, buf = op
        n, elem = _thread_local_count(em, m)
        cur, mt = em.env[m]
        for i in range(n):
            x = em.fresh("x")
            em.emit(f"{x} = memref.load %{buf}[{em.index(buf, i, n)}] : {em.memref(buf)}")
            nxt = em.fresh(dst)
            em.emit(
                f"{nxt} = gpu.subgroup_mma_insert_thread_local {x}, {cur}[{em.const(i, 'index')}] : "
                f"{elem}, {mt} -> {mt}"
            )
            cur = nxt
        em.env[dst] = (cur, mt)
    elif kind == "extract":
        _, reg, m, i = op
        _, elem = _thread_local_count(em, m)
        mv, mt = em.env[m]
        x = em.fresh(reg)
        em.emit(f"{x} = gpu.subgroup_mma_extract_thread_local {mv}[{em.const(i, 'index')}] : {mt} -> {elem}")
        em.env[reg] = (x, elem)
    elif kind == "insert":
        _, dst, m, reg, i = op
        mv, mt = em.env[m]
        rv, rt = em.env[reg]
        v = em.fresh(dst)
        em.emit(
            f"{v} = gpu.subgroup_mma_insert_thread_local {rv}, {mv}[{em.const(i, 'index')}] : {rt}, {mt} -> {mt}"
        )
        em.env[dst] = (v, mt)
    elif kind == "lane_ge":
        _, reg, k = op
        v = em.fresh(reg)
        em.emit(f"{v} = arith.cmpi uge, {em.env['%lane'][0]}, {em.const(k, 'index')} : index")
        em.env[reg] = (v, "i1")
    elif kind == "select":
        _, reg, cond, a, b = op
        (vc, _), (va, ta), (vb, _) = em.env[cond], em.env[a], em.env[b]
        v = em.fresh(reg)
        em.emit(f"{v} = arith.select {vc}, {va}, {vb} : {ta}")
        em.env[reg] = (v, ta)
    elif kind in ("sg_rotate", "gpu_rotate"):
        if kind == "sg_rotate":
            _, reg, src, off = op
            width, valid = em.p.sg, None
        else:
            _, reg, valid, src, off, width = op
        sv, st = em.env[src]
        v, ok = em.fresh(reg), em.fresh(valid or "ok")
        em.emit(f"{v}, {ok} = gpu.rotate {sv}, {off}, {width} : {st}")
        em.env[reg] = (v, st)
        if valid:
            em.env[valid] = (ok, "i1")
    elif kind == "read_lane":
        reg, buf, elem = op[1:4]
        V = op[4] if len(op) > 4 else 1
        t = SCALAR[elem]
        comps = []
        for j in range(V):
            x = em.fresh(reg)
            em.emit(f"{x} = memref.load %{buf}[{em.index(buf, j, V)}] : {em.memref(buf)}")
            if t == "i1":  # held as i32 0 / 1
                b = em.fresh(reg)
                em.emit(f"{b} = arith.trunci {x} : {MEMREF_ELEM['i1']} to i1")
                x = b
            comps.append(x)
        if V == 1:
            em.env[reg] = (comps[0], t)
        else:
            vt = f"vector<{V}x{t}>"
            v = em.fresh(reg)
            em.emit(f"{v} = vector.from_elements {', '.join(comps)} : {vt}")
            em.env[reg] = (v, vt)
    elif kind == "write_lane":
        buf, reg = op[1:3]
        V = op[3] if len(op) > 3 else 1
        v, t = em.env[reg]
        if t == "i1":
            w = em.fresh("w")
            em.emit(f"{w} = arith.extui {v} : i1 to {memref_elem(em.p, buf)}")
            v, t = w, memref_elem(em.p, buf)
        if V == 1:
            em.emit(f"memref.store {v}, %{buf}[{em.index(buf, 0, 1)}] : {em.memref(buf)}")
        else:
            et = t[t.index("x") + 1 : -1]
            for j in range(V):
                x = em.fresh("e")
                em.emit(f"{x} = vector.extract {v}[{j}] : {et} from {t}")
                if et == "i1":
                    w = em.fresh("w")
                    em.emit(f"{w} = arith.extui {x} : i1 to {memref_elem(em.p, buf)}")
                    x = w
                em.emit(f"memref.store {x}, %{buf}[{em.index(buf, j, V)}] : {em.memref(buf)}")
    else:
        raise ValueError(f"unknown MLIR program op {kind!r}")


def func_text(prog: Program, name: str, target, note: str = "") -> str:
    """One ``gpu.func`` (a kernel) running ``prog`` on ``target``; ``note``
    becomes a comment line above it."""
    em = _Emitter(prog, target.space)
    args = ", ".join(f"%{b}: {em.memref(b)}" for b in prog.buffers)
    em.emit("%wg = gpu.block_id x")
    lane = em.fresh("lane")
    em.emit(f"{lane} = gpu.lane_id")
    em.env["%lane"] = (lane, "index")
    for b, spec in prog.buffers.items():  # row p of every buffer is work-group p's
        if ("base", spec.size) not in em.consts:
            base = em.fresh("base")
            em.emit(f"{base} = arith.muli %wg, {em.const(spec.size, 'index')} : index")
            em.consts[("base", spec.size)] = base
        em.bases[b] = em.consts[("base", spec.size)]
    for op in prog.ops:
        _op(em, op)
    em.emit("gpu.return")
    head = f"    gpu.func @{name}({args}) kernel{target.func_attrs(prog.sg)} {{"
    comment = [f"    // {note}"] if note else []
    return "\n".join([*comment, head, *em.lines, "    }"])


def module_text(funcs: list[str], target, name: str = "kernels") -> str:
    """A ``gpu.module`` holding ``funcs`` inside a container module."""
    body = "\n".join(funcs)
    return (
        "module attributes {gpu.container_module} {\n"
        f"  gpu.module @{name}{target.module_attrs()} {{\n{body}\n  }}\n}}\n"
    )


def case_func(case, prog: Program, target) -> str:
    """The case's gpu.func, with its id and spec row as a comment."""
    return func_text(prog, func_name(case), target, f"{case.family}[{case.id}]: {case.spec_row}")


def case_module(case, prog: Program, target) -> str:
    return module_text([case_func(case, prog, target)], target)
