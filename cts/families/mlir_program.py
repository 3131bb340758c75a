"""The program of one MLIR case: what every backend runs, derived from the
case alone (MLIR GPUOps.td op descriptions; the
mma rotate RFC).

A program is a list of tuples over named matrices, scalars and buffers; the
emulator interprets it (:mod:`cts.backends.emu_mlir`), the MLIR text
generator writes it as a ``gpu.func`` (:mod:`cts.kernels.mlir_text`), so the
emulator and a real compiler run the same thing.  Ops:

* ``("load", dst, buf, row, col, lead, transpose, rows, cols, elem, tag)``
* ``("store", src, buf, row, col, lead, transpose)``
* ``("compute", dst, a, b, c, a_transpose, b_transpose)``
* ``("constant", dst, value, rows, cols, elem, tag)``: ``value`` a number, or
  the name of a one-element buffer holding it (8-bit integer matrices)
* ``("elementwise", dst, opType, [args], result_elem)``
* ``("extract_all", buf, m)``: buf[lane * n + i] = extract_thread_local(m, i)
  for every constant index i (the SPIR-V lowering needs constant indices)
* ``("insert_all", dst, m, buf)``: insert_thread_local of buf[lane * n + i]
* ``("extract", reg, m, i)`` / ``("insert", dst, m, reg, i)``
* ``("lane_ge", reg, k)``, ``("select", reg, cond, a, b)``
* ``("sg_rotate", reg, src, offset)``: rotate over the whole subgroup (SPIR-V
  rule; ``gpu.rotate`` with width = subgroup size)
* ``("gpu_rotate", reg, valid, src, offset, width)``
* ``("read_lane", reg, buf, elem[, V])`` / ``("write_lane", buf, reg[, V])``:
  one value per lane (a vector of V components at buf[lane * V + j] when V > 1)

Buffers (``Program.buffers``, in binding order) hold ``SUBGROUPS`` rows, one
per subgroup of the launch; row p of every buffer belongs to subgroup p
(work-group p on a device: one subgroup per work-group).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cts.families.mlir import OBSERVE_C
from reference.mlir import ELEMENTWISE

__all__ = [
    "Program",
    "Buf",
    "case_program",
    "program_from",
    "SUBGROUPS",
    "lead_of",
    "mem_for",
    "elementwise_result",
]

SUBGROUPS = 2


@dataclass(frozen=True)
class Buf:
    elem: str  # f16 f32 f64 si8 ui8 i32; for gpu.rotate also i1 (held as i32 0 / 1), i8 i16 i64 bf16
    size: int  # elements per subgroup row


@dataclass
class Program:
    ops: list = field(default_factory=list)
    buffers: dict[str, Buf] = field(default_factory=dict)  # binding order
    sg: int = 0  # the subgroup size the program's lane arithmetic assumes
    # where the run flow reads a logical matrix back, and other facts it needs
    facts: dict = field(default_factory=dict)


def mem_for(rows: int, cols: int, lead: int, row: int, col: int, transpose: bool) -> int:
    """Elements of a memref that holds the matrix at (row, col) with stride
    ``lead`` (and one spare row)."""
    span_r, span_c = (cols, rows) if transpose else (rows, cols)
    return (row + span_r) * lead + col + span_c + lead


def lead_of(case_lead: str, rows: int, cols: int, transpose: bool) -> int:
    """leadDimension: the stored row length, 3 more when ``padded``."""
    tight = rows if transpose else cols
    return tight + (3 if case_lead == "padded" else 0)


# ------------------------------------------------------------------ ops
def _load_store(case, p: Program) -> None:
    M, N = case.tag_shape("COp")
    e = case.elem
    l1 = lead_of(case.lead, M, N, case.t1)
    l2 = lead_of(case.lead, M, N, case.t2)
    r1, c1 = 1, 2 if case.lead == "padded" else 0
    r2, c2 = 2, 1 if case.lead == "padded" else 0
    p.buffers["src"] = Buf(e, mem_for(M, N, l1, r1, c1, case.t1))
    p.buffers["dst"] = Buf(e, mem_for(M, N, l2, r2, c2, case.t2))
    p.ops += [
        ("load", "m", "src", r1, c1, l1, case.t1, M, N, e, "COp"),
        ("store", "m", "dst", r2, c2, l2, case.t2),
    ]
    p.facts.update(src=(r1, c1, l1), dst=(r2, c2, l2))


def _compute(case, p: Program) -> None:
    M, N, K = case.mnk
    a_e, b_e, c_e = case.elem, case.b, case.c
    la, lb = lead_of(case.lead, M, K, case.t1), lead_of(case.lead, K, N, case.t2)
    lc = N + (3 if case.lead == "padded" else 0)
    p.buffers["A"] = Buf(a_e, mem_for(M, K, la, 0, 0, case.t1))
    p.buffers["B"] = Buf(b_e, mem_for(K, N, lb, 0, 0, case.t2))
    p.buffers["C"] = Buf(c_e, mem_for(M, N, lc, 0, 0, False))
    p.buffers["D"] = Buf(c_e, M * N)
    p.ops += [
        ("load", "a", "A", 0, 0, la, case.t1, M, K, a_e, "AOp"),
        ("load", "b", "B", 0, 0, lb, case.t2, K, N, b_e, "BOp"),
        ("load", "c", "C", 0, 0, lc, False, M, N, c_e, "COp"),
        ("compute", "d", "a", "b", "c", case.t1, case.t2),
        ("store", "d", "D", 0, 0, N, False),
    ]
    p.facts.update(leads=(la, lb, lc))


def observe(case, tag: str, p: Program, mat: str) -> None:
    """Program tail that makes matrix ``mat`` (of ``tag``) visible in buffer
    D: stored (COp), or multiplied by a selector matrix in buffer SEL (AOp:
    A x I, BOp: I x B) plus the zero matrix D holds at start, into the
    observation C type.  ``facts["observe"]``
    = (the element type of D, the logical slice: "all", "cols<K", "rows<K")."""
    M, N, K = case.mnk
    e = case.elem
    c_e = OBSERVE_C.get(e, e)
    if tag == "COp":
        p.ops.append(("store", mat, "D", 0, 0, N, False))
        p.buffers["D"] = Buf(e, M * N)
        p.facts["observe"] = (e, "all")
        return
    # the zero accumulator is loaded (buffer D starts zero), not a constant_matrix: the
    # observation uses only load, compute and store, whatever the op under test
    p.buffers["D"] = Buf(c_e, M * N)
    p.ops.append(("load", "_zero", "D", 0, 0, N, False, M, N, c_e, "COp"))
    if tag == "AOp":
        p.buffers["SEL"] = Buf(e, K * N)
        p.ops.append(("load", "_sel", "SEL", 0, 0, N, False, K, N, e, "BOp"))
        p.ops.append(("compute", "_obs", mat, "_sel", "_zero", False, False))
        p.facts["observe"] = (c_e, "cols<K")
    else:
        p.buffers["SEL"] = Buf(e, M * K)
        p.ops.append(("load", "_sel", "SEL", 0, 0, K, False, M, K, e, "AOp"))
        p.ops.append(("compute", "_obs", "_sel", mat, "_zero", False, False))
        p.facts["observe"] = (c_e, "rows<K")
    p.ops.append(("store", "_obs", "D", 0, 0, N, False))


def _constant(case, p: Program, value: float) -> None:
    r, c = case.tag_shape(case.tag)
    if case.elem in ("si8", "ui8"):  # no signed / unsigned scalar literal in MLIR: from buffer K
        p.buffers["K"] = Buf(case.elem, 1)
        p.facts["constant"] = value
        value = "K"
    p.ops.append(("constant", "m", value, r, c, case.elem, case.tag))
    observe(case, case.tag, p, "m")


def elementwise_result(optype: str, elem: str) -> str:
    return {"extf": "f32", "truncf": "f16"}.get(optype, elem)


def _elementwise(case, p: Program) -> None:
    """C matrices: load, elementwise, store D.  A / B matrices (store_matrix
    takes COp only): load, elementwise, then extract_thread_local of every
    index of the operands (EX0, EX1) and of the result (ER): the result's
    element i of a lane must be the op of the operands' element i of that
    lane, whatever the layout (reference.mlir)."""
    tag = case.tag or "COp"
    M, N = case.tag_shape(tag)
    op, e = case.optype, case.elem
    arity = ELEMENTWISE[op][0]
    res_e = elementwise_result(op, e)
    for i in range(arity):
        p.buffers[f"X{i}"] = Buf(e, M * N)
        p.ops.append(("load", f"x{i}", f"X{i}", 0, 0, N, False, M, N, e, tag))
    p.ops.append(("elementwise", "r", op, [f"x{i}" for i in range(arity)], res_e))
    if tag == "COp":
        p.ops.append(("store", "r", "D", 0, 0, N, False))
        p.buffers["D"] = Buf(res_e, M * N)
        return
    n = M * N // case.sg
    for i in range(arity):
        p.ops.append(("extract_all", f"EX{i}", f"x{i}"))
        p.buffers[f"EX{i}"] = Buf(e, case.sg * n)
    p.ops.append(("extract_all", "ER", "r"))
    p.buffers["ER"] = Buf(res_e, case.sg * n)


def _thread_local(case, p: Program) -> None:
    tag, e = case.tag, case.elem
    r, c = case.tag_shape(tag)
    n = r * c // case.sg
    p.ops += [
        ("load", "m", "X", 0, 0, c, False, r, c, e, tag),
        ("extract_all", "E", "m"),
        ("insert_all", "m2", "m", "V"),
    ]
    p.buffers.update(X=Buf(e, r * c), V=Buf(e, case.sg * n), E=Buf(e, case.sg * n))
    observe(case, tag, p, "m2")


def _gpu_rotate(case, p: Program) -> None:
    S, e, V = case.sg, case.elem, max(case.vec, 1)
    p.ops += [
        ("read_lane", "v", "IN", e, V),
        ("gpu_rotate", "r", "ok", "v", case.offset, case.width),
        ("write_lane", "OUT", "r", V),
        ("write_lane", "VALID", "ok"),
    ]
    p.buffers.update(IN=Buf(e, S * V), OUT=Buf(e, S * V), VALID=Buf("i32", S))


def _mma_rotate(case, p: Program) -> None:
    S, e, tag = case.sg, case.elem, case.tag
    r, c = case.tag_shape(tag)
    n = r * c // S
    p.ops += [
        ("load", "a", "A", 0, 0, c, False, r, c, e, tag),
        ("load", "b", "B", 0, 0, c, False, r, c, e, tag),
        ("extract_all", "EA", "a"),
        ("extract_all", "EB", "b"),
        ("constant", "res", 0, r, c, e, tag),
        ("lane_ge", "cond", case.offset),
    ]
    for i in range(n):  # the RFC lowering, one thread-local index at a time
        p.ops += [
            ("extract", "xa", "a", i),
            ("extract", "xb", "b", i),
            ("select", "sel", "cond", "xa", "xb"),
            ("sg_rotate", "rot", "sel", case.offset),
            ("insert", "res", "res", "rot", i),
        ]
    p.ops.append(("extract_all", "ER", "res"))
    p.buffers.update(A=Buf(e, r * c), B=Buf(e, r * c), EA=Buf(e, S * n), EB=Buf(e, S * n), ER=Buf(e, S * n))
    if tag == "COp":
        p.ops.append(("store", "res", "D", 0, 0, c, False))
        p.buffers["D"] = Buf(e, r * c)


_BUILD = {
    "load_store": _load_store,
    "compute": _compute,
    "elementwise": _elementwise,
    "thread_local": _thread_local,
    "gpu_rotate": _gpu_rotate,
    "mma_rotate": _mma_rotate,
}

# the value a constant case splats when no run chose one (the text verified on CI)
DEFAULT_CONSTANT = 1.0


def case_program(case, constant: float | None = None) -> Program:
    """The program of ``case``.  ``constant``: the scalar of a ``constant``
    case (the run flow draws it from the case's seed; the only datum the
    program carries)."""
    p = Program(sg=case.sg)
    if case.op == "constant":
        _constant(case, p, DEFAULT_CONSTANT if constant is None else constant)
    else:
        _BUILD[case.op](case, p)
    return p


_DTYPE_ELEM = {
    "float16": "f16",
    "float32": "f32",
    "float64": "f64",
    "int8": "si8",
    "uint8": "ui8",
    "int32": "i32",
    "int16": "i16",
    "int64": "i64",
    "bfloat16": "bf16",
}


def _lane_elems(ops: list) -> dict[str, str]:
    """The element type the lane ops name for their buffers (``read_lane``
    says it; ``write_lane`` writes the type its value was read as): what a
    dtype cannot tell apart (signless i8 from si8, i1 held as i32)."""
    reg: dict[str, str] = {}
    out: dict[str, str] = {}
    for op in ops:
        if op[0] == "read_lane":
            reg[op[1]] = out[op[2]] = op[3]
        elif op[0] == "gpu_rotate" and op[3] in reg:
            reg[op[1]] = reg[op[3]]
        elif op[0] == "write_lane" and op[2] in reg:
            out[op[1]] = reg[op[2]]
    return out


def program_from(ops: list, buffers: dict, sg: int) -> Program:
    """The Program a run flow built, from what it hands a backend (the ops
    and the (SUBGROUPS, size) arrays in binding order); ``sg`` the subgroup
    size the device runs it at."""
    named = _lane_elems(ops)
    bufs = {k: Buf(named.get(k) or _DTYPE_ELEM[str(v.dtype)], int(v.shape[1])) for k, v in buffers.items()}
    return Program(ops=list(ops), buffers=bufs, sg=sg)
