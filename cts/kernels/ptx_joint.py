"""PTX for SYCL ``joint_matrix`` on NVIDIA Tensor Cores, written the way
DPC++'s CUDA path lowers the API (NVVM's WMMA intrinsics, that is PTX
``wmma.*``; PTX ISA section 9.7.14.4 "Warp Level Matrix Multiply-Accumulate
Instructions"):

* ``joint_matrix_load``  -> one ``wmma.load.{a,b,c}`` with the case's layout
  (``.row`` / ``.col``) and stride (the ``stride`` operand, in elements);
* ``joint_matrix_mad``   -> ``wmma.mma.sync`` with the case's A/B/C/D types
  (``.satfinite`` only where the API asks for saturation: joint_matrix never
  does, its integer sum wraps);
* ``joint_matrix_store`` -> ``wmma.store.d`` with the layout and stride;
* ``joint_matrix_fill``  -> register moves of the value into every register
  of the accumulator fragment;
* ``joint_matrix_apply`` (coordinate-free) / ``get_wi_data`` -> the same
  operation on every register of the fragment, whatever element it holds;
* ``joint_matrix_copy`` between accumulator types -> the source stored to
  shared memory, converted element by element (``cvt``), loaded back as the
  destination type.

Every shape of the joint_matrix NVIDIA table (sycl_ext_oneapi_matrix, Supported Combinations Per
Hardware) is a WMMA shape, so no case needs ``mma.sync``.  The PTX ISA (9.7.14.4.1 "Matrix
Fragments for WMMA") leaves the distribution of a WMMA fragment's elements
over the warp unspecified: the generator assumes none; it only uses the
register counts that section lists (:data:`FRAGMENT_REGS`).

One launch runs one tile: one block of one warp.  Each buffer is five
``.u64`` kernel parameters (allocated pointer, aligned pointer, offset,
size, stride: the CUDA backend's launch convention); the kernel uses the
aligned pointer.

``variant`` selects deliberately wrong PTX (:data:`WRONG_VARIANTS`) so the
suite can prove its oracle catches each one.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "PTX_TYPE",
    "FRAGMENT_REGS",
    "WRONG_VARIANTS",
    "MEM_BYTES",
    "ptx_version",
    "fragment",
    "joint_ptx",
    "ENTRY",
    "buffer_names",
    "why_not",
    "stride_skip",
    "alignment_gap",
    "NV_ARCH_CC",
]

ENTRY = "joint_matrix_tile"

# suite element type -> PTX type of the fragment / instruction
PTX_TYPE = {
    "f16": "f16",
    "bf16": "bf16",
    "tf32": "tf32",
    "f32": "f32",
    "i8": "s8",
    "u8": "u8",
    "i32": "s32",
    "f64": "f64",
}
# bytes of one element in memory (tf32 lives in a 32-bit float container)
MEM_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "f32": 4, "i8": 1, "u8": 1, "i32": 4, "f64": 8}

# PTX ISA 9.7.14.4.1 "Matrix Fragments for WMMA": registers per fragment,
# keyed (shape, use, PTX type); use "a", "b" or "c" (C and D alike).
FRAGMENT_REGS: dict[tuple[str, str, str], int] = {}
for _s in ("m16n16k16", "m8n32k16", "m32n8k16"):
    FRAGMENT_REGS[(_s, "a", "f16")] = 8  # .f16x2 each
    FRAGMENT_REGS[(_s, "b", "f16")] = 8
    FRAGMENT_REGS[(_s, "c", "f16")] = 4  # .f16x2 each
    FRAGMENT_REGS[(_s, "c", "f32")] = 8
    FRAGMENT_REGS[(_s, "c", "s32")] = 8
for _s, _a, _b in (("m16n16k16", 2, 2), ("m8n32k16", 1, 4), ("m32n8k16", 4, 1)):
    for _t in ("s8", "u8"):  # .b32, four elements each
        FRAGMENT_REGS[(_s, "a", _t)] = _a
        FRAGMENT_REGS[(_s, "b", _t)] = _b
    FRAGMENT_REGS[(_s, "a", "bf16")] = 2 * _a  # .b32, two elements each
    FRAGMENT_REGS[(_s, "b", "bf16")] = 2 * _b
FRAGMENT_REGS[("m16n16k8", "a", "tf32")] = 4
FRAGMENT_REGS[("m16n16k8", "b", "tf32")] = 4
FRAGMENT_REGS[("m16n16k8", "c", "f32")] = 8
FRAGMENT_REGS[("m8n8k4", "a", "f64")] = 1
FRAGMENT_REGS[("m8n8k4", "b", "f64")] = 1
FRAGMENT_REGS[("m8n8k4", "c", "f64")] = 2

WRONG_VARIANTS: dict[str, str] = {
    "b_transposed": "B loaded with the other layout (.row <-> .col): the B fragment holds B transposed",
    "stride_off_by_one": "A loaded with its stride one element too large",
    "satfinite_flipped": ".satfinite toggled against the API: added where joint_matrix_mad wraps",
    "acc_half": "the f32 accumulator kept at half precision (wmma.mma with an .f16 D, widened afterwards)",
}


# (first compute capability, the PTX ISA version that introduced its target), newest first
_TARGET_PTX = ((120, "8.7"), (100, "8.6"), (89, "7.8"), (87, "7.4"), (86, "7.1"), (70, "7.0"))


def ptx_version(chip: str) -> str:
    """The PTX ISA version a module for ``chip`` (``sm_XY``) declares: the
    first version that knows the target (PTX ISA "Release Notes": sm_86 7.1,
    sm_87 7.4, sm_89 and sm_90 7.8, sm_100 8.6, sm_120 8.7) and the WMMA
    types used (bf16, tf32, f64 WMMA: 7.0)."""
    cc = int(chip.split("_")[1].rstrip("af"))
    return next(v for first, v in _TARGET_PTX if cc >= first)


@dataclass(frozen=True)
class Frag:
    """A fragment's registers: PTX register class, count, and the name prefix."""

    cls: str  # .b32 / .f32 / .s32 / .f64
    n: int
    prefix: str

    def regs(self) -> list[str]:
        return [f"%{self.prefix}{i}" for i in range(self.n)]

    def vec(self) -> str:
        return "{" + ", ".join(self.regs()) + "}"


def _reg_class(use: str, pt: str) -> str:
    if pt == "f64":
        return ".f64"
    if use == "c" and pt in ("f32", "s32"):
        return "." + pt
    return ".b32"  # packed f16x2 / bf16x2 / 4 x 8-bit / tf32 bits


def fragment(shape: str, use: str, t: str, prefix: str) -> Frag:
    pt = PTX_TYPE[t]
    return Frag(_reg_class(use, pt), FRAGMENT_REGS[(shape, use, pt)], prefix)


def shape_name(M: int, N: int, K: int) -> str:
    return f"m{M}n{N}k{K}"


def buffer_names(case) -> tuple[str, ...]:
    """The kernel's buffers, in parameter order."""
    if case.op == "mad":
        return ("a", "b", "c", "d")
    if case.op == "fill":
        return ("value", "dst")
    return ("src", "dst")


# ------------------------------------------------------------ text pieces
def _header(chip: str, names: tuple[str, ...]) -> list[str]:
    params = ",\n".join(f"\t.param .u64 {n}_{k}" for n in names for k in range(5))
    return [
        f".version {ptx_version(chip)}",
        f".target {chip}",
        ".address_size 64",
        "",
        f".visible .entry {ENTRY}(",
        params,
        ")",
        "{",
    ]


def _pointer(name: str) -> list[str]:
    """The aligned pointer (the second word of the buffer) as a global address."""
    return [f"\tld.param.u64 %p_{name}, [{name}_1];", f"\tcvta.to.global.u64 %p_{name}, %p_{name};"]


def _decl(frags: list[Frag]) -> list[str]:
    return [f"\t.reg {f.cls} %{f.prefix}<{f.n}>;" for f in frags]


def _load(
    use: str, layout: str, shape: str, t: str, f: Frag, ptr: str, stride: int, space: str = "global"
) -> str:
    return (
        f"\twmma.load.{use}.sync.aligned.{layout}.{shape}.{space}.{PTX_TYPE[t]} {f.vec()}, [{ptr}], {stride};"
    )


def _store(layout: str, shape: str, t: str, f: Frag, ptr: str, stride: int, space: str = "global") -> str:
    return f"\twmma.store.d.sync.aligned.{layout}.{shape}.{space}.{PTX_TYPE[t]} [{ptr}], {f.vec()}, {stride};"


def _mma(la: str, lb: str, shape: str, types, d: Frag, a: Frag, b: Frag, c: Frag, sat: bool) -> str:
    ta, tb, tc, td = (PTX_TYPE[x] for x in types)
    if ta in ("s8", "u8"):
        kinds = f"s32.{ta}.{tb}.s32"
    elif ta in ("bf16", "tf32"):
        kinds = f"f32.{ta}.{tb}.f32"
    elif ta == "f64":
        kinds = "f64.f64.f64.f64"
    else:  # f16 multiplicands: .dtype.ctype
        kinds = f"{td}.{tc}"
    s = ".satfinite" if sat else ""
    return f"\twmma.mma.sync.aligned.{la}.{lb}.{shape}.{kinds}{s} {d.vec()}, {a.vec()}, {b.vec()}, {c.vec()};"


def _convert_via_shared(
    shape: str, M: int, N: int, src: Frag, ts: str, dst: Frag, td: str, tag: str
) -> tuple[list[str], list[str]]:
    """(declarations, body): the accumulator ``src`` of type ts stored row
    major to shared memory, each element converted to td by the lane that
    owns its index modulo 32, and loaded back into ``dst`` (a joint_matrix
    copy between accumulator types; the fragments' distributions are
    unspecified, so the conversion goes through memory)."""
    bs, bd = MEM_BYTES[ts], MEM_BYTES[td]
    n = M * N
    decl = [
        f"\t.shared .align 32 .b8 sm_{tag}_s[{n * bs}];",
        f"\t.shared .align 32 .b8 sm_{tag}_d[{n * bd}];",
        "\t.reg .b32 %lane;",
        "\t.reg .b64 %lane64, %as, %ad, %bs, %bd;",
        "\t.reg .b16 %h;",
        "\t.reg .f32 %w;",
    ]
    body = [
        f"\tmov.u64 %bs, sm_{tag}_s;",
        f"\tmov.u64 %bd, sm_{tag}_d;",
        _store("row", shape, ts, src, "%bs", N, "shared"),
        "\tbar.warp.sync 0xffffffff;",
        "\tmov.u32 %lane, %tid.x;",
        "\tcvt.u64.u32 %lane64, %lane;",
        f"\tmad.lo.u64 %as, %lane64, {bs}, %bs;",
        f"\tmad.lo.u64 %ad, %lane64, {bd}, %bd;",
    ]
    for j in range(n // 32):
        if (ts, td) == ("f32", "f16"):
            body += [
                f"\tld.shared.f32 %w, [%as+{32 * bs * j}];",
                "\tcvt.rn.f16.f32 %h, %w;",
                f"\tst.shared.b16 [%ad+{32 * bd * j}], %h;",
            ]
        elif (ts, td) == ("f16", "f32"):
            body += [
                f"\tld.shared.b16 %h, [%as+{32 * bs * j}];",
                "\tcvt.f32.f16 %w, %h;",
                f"\tst.shared.f32 [%ad+{32 * bd * j}], %w;",
            ]
        else:
            raise ValueError(f"no accumulator conversion {ts} -> {td}")
    body += ["\tbar.warp.sync 0xffffffff;", _load("c", "row", shape, td, dst, "%bd", N, "shared")]
    return decl, body


# ------------------------------------------------------------- operations
def _mad(case, chip: str, strides: dict, variant: str | None) -> str:
    a, b, c, d = case.types
    la, lb, lc, ld = case.layouts
    shape = shape_name(case.M, case.N, case.K)
    fa, fb = fragment(shape, "a", a, "a"), fragment(shape, "b", b, "b")
    fc = fragment(shape, "c", c, "c")
    half = variant == "acc_half" and (c, d) == ("f32", "f32") and a == "f16"
    fd = fragment(shape, "c", "f16" if half else d, "d")
    frags = [fa, fb, fc, fd]
    sa = strides["sa"] + (1 if variant == "stride_off_by_one" else 0)
    lb_load = {"row": "col", "col": "row"}[lb] if variant == "b_transposed" else lb
    # the API asks for no saturation (the integer sum wraps): flipping adds it
    # (integer rows only: .satfinite on floating-point WMMA is not in the ISA's syntax)
    sat = variant == "satfinite_flipped" and a in ("i8", "u8")
    out = _header(chip, ("a", "b", "c", "d"))
    out += ["\t.reg .b64 %p_a, %p_b, %p_c, %p_d;", *_decl(frags)]
    conv_decl, conv = [], []
    store_from = fd
    if half:
        fw = fragment(shape, "c", "f32", "w")
        conv_decl, conv = _convert_via_shared(shape, case.M, case.N, fd, "f16", fw, "f32", "acc")
        conv_decl = [*_decl([fw]), *conv_decl]
        store_from = fw
    out += conv_decl
    for n in ("a", "b", "c", "d"):
        out += _pointer(n)
    out += [
        _load("a", la, shape, a, fa, "%p_a", sa),
        _load("b", lb_load, shape, b, fb, "%p_b", strides["sb"]),
        _load("c", lc, shape, c, fc, "%p_c", strides["sc"]),
        _mma(la, lb_load, shape, (a, b, c, "f16" if half else d), fd, fa, fb, fc, sat),
        *conv,
        _store(ld, shape, d, store_from, "%p_d", strides["sd"]),
        "\tret;",
        "}",
    ]
    return "\n".join(out) + "\n"


def _acc_shape(case) -> str:
    return shape_name(case.M, case.N, case.K)


def _ldst(case, chip: str, strides: dict) -> str:
    (t,) = case.types
    li, lo = case.layouts
    shape = _acc_shape(case)
    f = fragment(shape, "c", t, "c")
    out = _header(chip, ("src", "dst"))
    out += ["\t.reg .b64 %p_src, %p_dst;", *_decl([f]), *_pointer("src"), *_pointer("dst")]
    out += [
        _load("c", li, shape, t, f, "%p_src", strides["s_src"]),
        _store(lo, shape, t, f, "%p_dst", strides["s_dst"]),
        "\tret;",
        "}",
    ]
    return "\n".join(out) + "\n"


_SCALAR = {"f16": ("b16", ".b16"), "f32": ("f32", ".f32"), "i32": ("s32", ".s32"), "f64": ("f64", ".f64")}


def _fill(case, chip: str, strides: dict) -> str:
    (t,) = case.types
    (lo, _) = case.layouts
    shape = _acc_shape(case)
    f = fragment(shape, "c", t, "c")
    ty, cls = _SCALAR[t]
    out = _header(chip, ("value", "dst"))
    out += ["\t.reg .b64 %p_value, %p_dst;", f"\t.reg {cls} %v;", *_decl([f])]
    out += [*_pointer("value"), *_pointer("dst"), f"\tld.global.{ty} %v, [%p_value];"]
    for r in f.regs():
        out.append(f"\tmov.b32 {r}, {{%v, %v}};" if t == "f16" else f"\tmov.{ty} {r}, %v;")
    out += [_store(lo, shape, t, f, "%p_dst", strides["s_dst"]), "\tret;", "}"]
    return "\n".join(out) + "\n"


_DOUBLE = {"f16": "add.rn.f16x2", "f32": "add.rn.f32", "i32": "add.s32", "f64": "add.rn.f64"}


def _apply(case, chip: str, strides: dict) -> str:
    """Coordinate-free apply x -> 2x (x + x) on every register: each register
    holds elements of the matrix (which ones is unspecified) and every
    element is in some register, so the same operation on all of them
    transforms the whole matrix."""
    (t,) = case.types
    li, lo = case.layouts
    shape = _acc_shape(case)
    f = fragment(shape, "c", t, "c")
    out = _header(chip, ("src", "dst"))
    out += ["\t.reg .b64 %p_src, %p_dst;", *_decl([f]), *_pointer("src"), *_pointer("dst")]
    out.append(_load("c", li, shape, t, f, "%p_src", strides["s_src"]))
    out += [f"\t{_DOUBLE[t]} {r}, {r}, {r};" for r in f.regs()]
    out += [_store(lo, shape, t, f, "%p_dst", strides["s_dst"]), "\tret;", "}"]
    return "\n".join(out) + "\n"


def _copy(case, chip: str, strides: dict) -> str:
    ts, td = case.types
    li, lo = case.layouts
    shape = _acc_shape(case)
    fs, fd = fragment(shape, "c", ts, "s"), fragment(shape, "c", td, "d")
    decl, conv = _convert_via_shared(shape, case.M, case.N, fs, ts, fd, td, "copy")
    out = _header(chip, ("src", "dst"))
    out += ["\t.reg .b64 %p_src, %p_dst;", *_decl([fs, fd]), *decl, *_pointer("src"), *_pointer("dst")]
    out += [
        _load("c", li, shape, ts, fs, "%p_src", strides["s_src"]),
        *conv,
        _store(lo, shape, td, fd, "%p_dst", strides["s_dst"]),
        "\tret;",
        "}",
    ]
    return "\n".join(out) + "\n"


def joint_ptx(case, chip: str, strides: dict, variant: str | None = None) -> str:
    """The PTX module of one joint_matrix case for ``chip`` (``sm_XY``);
    ``strides``: the run's strides (mad: sa, sb, sc, sd; else s_src, s_dst)."""
    if variant is not None and variant not in WRONG_VARIANTS:
        raise ValueError(f"unknown PTX variant {variant!r}; known: {', '.join(WRONG_VARIANTS)}")
    if case.op == "mad":
        text = _mad(case, chip, strides, variant)
    elif case.op == "ldst":
        text = _ldst(case, chip, strides)
    elif case.op == "fill":
        text = _fill(case, chip, strides)
    elif case.op == "apply_plain":
        text = _apply(case, chip, strides)
    elif case.op == "copy" and case.use == "acc>acc":
        text = _copy(case, chip, strides)
    else:
        raise ValueError(f"no PTX lowering of joint_matrix {case.op} ({case.use})")
    return _hoist_shared(text)


def _hoist_shared(text: str) -> str:
    """Shared-memory variables at module scope, before the entry."""
    lines = text.split("\n")
    shared = [ln.strip() for ln in lines if ln.startswith("\t.shared ")]
    if not shared:
        return text
    rest = [ln for ln in lines if not ln.startswith("\t.shared ")]
    at = rest.index(next(ln for ln in rest if ln.startswith(".visible .entry")))
    return "\n".join(rest[:at] + shared + [""] + rest[at:])


# ------------------------------------------------------- what runs, and why not
NV_ARCH_CC = {"sm70": (7, 0), "sm72": (7, 2), "sm80": (8, 0)}

SYCL_STRIDE_RULE = (
    'sycl_ext_oneapi_matrix, NVIDIA Tensor Cores: "Stride for load/store must be a multiple of 8 for half, '
    '4 for float on CUDA"'
)
PTX_ALIGN_RULE = (
    'PTX ISA 9.7.14.4.2 "Matrix Storage for WMMA", Address Alignment: "The starting address of each instance '
    'of the leading dimension (row or column) must be aligned with the size of the corresponding fragment in bytes"'
)


def why_not(case) -> str | None:
    """Why a joint_matrix case has no PTX lowering (a skip reason), or None."""
    if case.arch not in NV_ARCH_CC:
        return (
            f"joint_matrix row {case.arch} is not an NVIDIA Tensor Core row (sm70 / sm72 / sm80): "
            "--backend cuda runs only the ext_oneapi_cuda combinations"
        )
    if case.op == "copy" and case.use != "acc>acc":
        return (
            f"joint_matrix_copy {case.use} has no PTX counterpart: wmma.store stores only an accumulator (D) "
            "fragment and the PTX ISA (9.7.14.4.1) leaves the element distribution of WMMA fragments "
            "unspecified, so an A or B fragment can be neither written to memory nor re-read as another use"
        )
    if case.op not in ("mad", "ldst", "fill", "apply_plain", "copy"):
        return f"joint_matrix {case.op} is not part of the CUDA API (ext_oneapi_cuda)"
    return None


def _operands(case, strides: dict) -> list[tuple[str, str, str, int]]:
    """(buffer, use, type, stride) of every load and store of a case."""
    if case.op == "mad":
        a, b, c, d = case.types
        return [
            ("a", "a", a, strides["sa"]),
            ("b", "b", b, strides["sb"]),
            ("c", "c", c, strides["sc"]),
            ("d", "c", d, strides["sd"]),
        ]
    ts, td = (case.types * 2)[:2]
    return [("src", "c", ts, strides["s_src"]), ("dst", "c", td, strides["s_dst"])]


def _fragment_bytes(shape: str, use: str, t: str) -> int:
    pt = PTX_TYPE[t]
    return FRAGMENT_REGS[(shape, use, pt)] * (8 if pt == "f64" else 4)


def stride_skip(case, strides: dict) -> str | None:
    """A skip reason when a stride of the run breaks the rule that governs
    it: the SYCL CUDA rule for 16-bit (half, bf16) and 32-bit float (float,
    tf32) elements; the PTX ISA's address alignment for the types that rule
    does not name (8-bit, int32, double: the row start aligned to the
    fragment's size in bytes)."""
    shape = shape_name(case.M, case.N, case.K)
    for buf, use, t, s in _operands(case, strides):
        if case.op == "fill" and buf == "src":
            continue
        if t in ("f16", "bf16", "f32", "tf32"):
            need = 8 if MEM_BYTES[t] == 2 else 4
            if s % need:
                return f"stride {s} of {buf} ({t}) is not a multiple of {need}: {SYCL_STRIDE_RULE}"
            continue
        frag_bytes = _fragment_bytes(shape, use, t)
        if (s * MEM_BYTES[t]) % frag_bytes:
            return (
                f"stride {s} of {buf} ({t}: {s * MEM_BYTES[t]} bytes) is not a multiple of the {shape} "
                f"{use.upper()} fragment's {frag_bytes} bytes: {PTX_ALIGN_RULE}"
            )
    return None


def alignment_gap(case, strides: dict) -> str | None:
    """A note when the strides meet the SYCL rule but not the PTX ISA's
    alignment (16-bit and float operands whose fragment is larger than the
    16 bytes the SYCL rule guarantees): the case runs, as DPC++ would run
    it, but its result is outside what the PTX ISA promises, so a wrong
    result would be the lowering's, not the driver's."""
    shape = shape_name(case.M, case.N, case.K)
    for buf, use, t, s in _operands(case, strides):
        if case.op == "fill" and buf == "src":
            continue
        frag_bytes = _fragment_bytes(shape, use, t)
        if (s * MEM_BYTES[t]) % frag_bytes:
            return (
                f"joint_matrix on CUDA, {shape} {use.upper()} ({t}) stride {s}: {s * MEM_BYTES[t]} bytes meets the "
                f"SYCL rule but not the {frag_bytes}-byte fragment alignment of PTX ISA 9.7.14.4.2; the PTX result "
                "is undefined there, so a wrong result would be the lowering's (DPC++'s rule), not the driver's"
            )
    return None
