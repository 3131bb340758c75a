"""A small grammar of the PTX the joint_matrix generator writes
(cts.kernels.ptx_joint), and its parser.

Not a PTX assembler: it accepts exactly the statement forms the generator
uses, spelled as the PTX ISA spells them (sections 9.7.14.4.3-5 for
``wmma.load`` / ``wmma.store`` / ``wmma.mma``; 9.7.9 data movement; 9.7.3
half-precision and 9.7.1 integer / 9.7.4 float arithmetic), and checks what
the driver's assembler would otherwise be the first to see: every register
declared once with the class its use needs, every WMMA vector of the length
the ISA's fragment table gives (the table is passed in, so a test can hold
the generator to an independent copy of it), the multiply's layouts equal to
those of the loads that made its operands.  :func:`parse` returns the
statements for the emulator's PTX interpreter (cts.backends.cuda_emu).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["PtxSyntaxError", "Instr", "Module", "parse"]


class PtxSyntaxError(ValueError):
    pass


@dataclass(frozen=True)
class Instr:
    """One instruction: the opcode split at its dots, and its operands
    (a vector operand is a tuple of register names; an address is
    ("addr", base, offset))."""

    op: tuple[str, ...]
    args: tuple
    line: int


@dataclass
class Module:
    version: str
    target: str
    entry: str
    params: list[str]
    regs: dict[str, str]  # register -> class (".b32", ".f32", ...)
    shared: dict[str, int]  # shared variable -> bytes
    body: list[Instr] = field(default_factory=list)


_SHAPES = "m16n16k16|m8n32k16|m32n8k16|m16n16k8|m8n8k4"
_FORMS: list[tuple[str, str]] = [
    # (opcode regex, operand signature: r reg, v vector, a address, i immediate, s symbol, t %tid.x, p pack)
    (r"ld\.param\.u64", "r a"),
    (r"cvta\.to\.global\.u64", "r r"),
    (
        rf"wmma\.load\.[abc]\.sync\.aligned\.(row|col)\.({_SHAPES})\.(global|shared)\.(f16|bf16|tf32|f32|s8|u8|s32|f64)",
        "v a i",
    ),
    (rf"wmma\.store\.d\.sync\.aligned\.(row|col)\.({_SHAPES})\.(global|shared)\.(f16|f32|s32|f64)", "a v i"),
    (
        rf"wmma\.mma\.sync\.aligned\.(row|col)\.(row|col)\.({_SHAPES})\."
        r"(f16\.f16|f16\.f32|f32\.f16|f32\.f32|s32\.s8\.s8\.s32|s32\.u8\.u8\.s32|f32\.bf16\.bf16\.f32|"
        r"f32\.tf32\.tf32\.f32|f64\.f64\.f64\.f64)(\.satfinite)?",
        "v v v v",
    ),
    (r"mov\.u64", "r s"),
    (r"mov\.u32", "r t"),
    (r"cvt\.u64\.u32", "r r"),
    (r"mad\.lo\.u64", "r r i r"),
    (r"ld\.shared\.(f32|b16)", "r a"),
    (r"st\.shared\.(f32|b16)", "a r"),
    (r"ld\.global\.(b16|f32|s32|f64)", "r a"),
    (r"cvt\.rn\.f16\.f32", "r r"),
    (r"cvt\.f32\.f16", "r r"),
    (r"mov\.b32", "r p"),
    (r"mov\.(f32|s32|f64)", "r r"),
    (r"add\.rn\.f16x2|add\.rn\.f32|add\.s32|add\.rn\.f64", "r r r"),
    (r"bar\.warp\.sync", "i"),
    (r"ret", ""),
]
_FORM_RE = [(re.compile(rf"^(?:{o})$"), sig.split()) for o, sig in _FORMS]

# register class each opcode's register operands need (None: any 64-bit for addresses)
_REG_CLASS = {
    "ld.param.u64": ".b64",
    "cvta.to.global.u64": ".b64",
    "mov.u64": ".b64",
    "cvt.u64.u32": None,
    "mad.lo.u64": ".b64",
    "cvt.rn.f16.f32": None,
    "cvt.f32.f16": None,
}

_REG = re.compile(r"^%[A-Za-z_][A-Za-z0-9_]*$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _split_operands(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _operand(kind: str, text: str, line: int):
    def bad(what):
        raise PtxSyntaxError(f"line {line}: {what}: {text!r}")

    if kind == "r":
        if not _REG.match(text):
            bad("expected a register")
        return text
    if kind == "v":
        if not (text.startswith("{") and text.endswith("}")):
            bad("expected a vector {%r0, ...}")
        regs = tuple(x.strip() for x in text[1:-1].split(","))
        if not all(_REG.match(r) for r in regs):
            bad("expected registers in the vector")
        return regs
    if kind == "p":
        if not (text.startswith("{") and text.endswith("}")):
            bad("expected a pack {%h, %h}")
        regs = tuple(x.strip() for x in text[1:-1].split(","))
        if len(regs) != 2 or not all(_REG.match(r) for r in regs):
            bad("expected two registers in the pack")
        return ("pack", *regs)
    if kind == "a":
        m = re.match(r"^\[\s*(%?[A-Za-z_][A-Za-z0-9_]*)\s*(?:\+\s*(\d+))?\s*\]$", text)
        if not m:
            bad("expected an address [base] or [base+offset]")
        return ("addr", m.group(1), int(m.group(2) or 0))
    if kind == "i":
        try:
            return int(text, 0)
        except ValueError:
            bad("expected an integer")
    if kind == "s":
        if not _NAME.match(text):
            bad("expected a symbol")
        return text
    if kind == "t":
        if text != "%tid.x":
            bad("expected %tid.x")
        return text
    raise AssertionError(kind)


def _declare(regs: dict, text: str, line: int) -> None:
    m = re.match(r"^\.reg\s+(\.\w+)\s+(.+)$", text)
    if not m:
        raise PtxSyntaxError(f"line {line}: bad register declaration {text!r}")
    cls, rest = m.group(1), m.group(2)
    if cls not in (".b16", ".b32", ".b64", ".f32", ".s32", ".f64"):
        raise PtxSyntaxError(f"line {line}: register class {cls} not in the grammar")
    names = []
    r = re.match(r"^(%[A-Za-z_][A-Za-z0-9_]*)<(\d+)>$", rest.strip())
    if r:
        names = [f"{r.group(1)}{i}" for i in range(int(r.group(2)))]
    else:
        names = [x.strip() for x in rest.split(",")]
    for n in names:
        if not _REG.match(n):
            raise PtxSyntaxError(f"line {line}: bad register name {n!r}")
        if n in regs:
            raise PtxSyntaxError(f"line {line}: register {n} declared twice")
        regs[n] = cls


def _statements(text: str):
    """(line number, statement) pairs, ';' ends a statement, '{' / '}' /
    the entry's parameter list stand alone."""
    for i, raw in enumerate(text.split("\n"), 1):
        s = raw.strip()
        if not s:
            continue
        yield i, s


def parse(text: str, fragment_regs: dict | None = None) -> Module:
    """Parse (and check) a module; ``fragment_regs``: (shape, use, PTX type)
    -> registers, the ISA's fragment table the vectors must match."""
    lines = list(_statements(text))
    head = {}
    i = 0
    while i < len(lines) and not lines[i][1].startswith(".visible .entry"):
        ln, s = lines[i]
        m = re.match(r"^\.(version|target|address_size)\s+(\S+)$", s)
        sh = re.match(r"^\.shared\s+\.align\s+(\d+)\s+\.b8\s+([A-Za-z_]\w*)\[(\d+)\];$", s)
        if m:
            head[m.group(1)] = m.group(2)
        elif sh:
            head.setdefault("shared", {})[sh.group(2)] = int(sh.group(3))
        else:
            raise PtxSyntaxError(f"line {ln}: not a module directive of the grammar: {s!r}")
        i += 1
    for key in ("version", "target", "address_size"):
        if key not in head:
            raise PtxSyntaxError(f"missing .{key}")
    if head["address_size"] != "64" or not re.match(r"^sm_\d+[af]?$", head["target"]):
        raise PtxSyntaxError(f"bad target / address size: {head['target']} {head['address_size']}")
    if i == len(lines):
        raise PtxSyntaxError("no .visible .entry")
    m = re.match(r"^\.visible \.entry ([A-Za-z_]\w*)\($", lines[i][1])
    if not m:
        raise PtxSyntaxError(f"line {lines[i][0]}: bad entry line {lines[i][1]!r}")
    entry, params = m.group(1), []
    i += 1
    while lines[i][1] != ")":
        p = re.match(r"^\.param \.u64 ([A-Za-z_]\w*),?$", lines[i][1])
        if not p:
            raise PtxSyntaxError(f"line {lines[i][0]}: bad parameter {lines[i][1]!r}")
        params.append(p.group(1))
        i += 1
    if lines[i + 1][1] != "{" or lines[-1][1] != "}":
        raise PtxSyntaxError("the entry body must be one { ... } block")
    mod = Module(head["version"], head["target"], entry, params, {}, head.get("shared", {}))
    for ln, s in lines[i + 2 : -1]:
        if not s.endswith(";"):
            raise PtxSyntaxError(f"line {ln}: statement without ';': {s!r}")
        s = s[:-1].strip()
        if s.startswith(".reg"):
            _declare(mod.regs, s, ln)
            continue
        opcode, _, rest = s.partition(" ")
        sig = next((sg for rx, sg in _FORM_RE if rx.match(opcode)), None)
        if sig is None:
            raise PtxSyntaxError(f"line {ln}: instruction {opcode!r} is not in the grammar")
        ops = _split_operands(rest)
        if len(ops) != len(sig):
            raise PtxSyntaxError(f"line {ln}: {opcode} takes {len(sig)} operands, got {len(ops)}")
        args = tuple(_operand(k, o, ln) for k, o in zip(sig, ops))
        mod.body.append(Instr(tuple(opcode.split(".")), args, ln))
    _check(mod, fragment_regs)
    return mod


def _regs_of(arg) -> list[str]:
    if isinstance(arg, str) and arg.startswith("%") and arg != "%tid.x":
        return [arg]
    if isinstance(arg, tuple) and arg and arg[0] == "addr":
        return [arg[1]] if arg[1].startswith("%") else []
    if isinstance(arg, tuple) and arg and arg[0] == "pack":
        return list(arg[1:])
    if isinstance(arg, tuple):
        return list(arg)
    return []


def _wmma_class(use: str, t: str) -> str:
    if t == "f64":
        return ".f64"
    if use in ("c", "d") and t in ("f32", "s32"):
        return "." + t
    return ".b32"


def _check(mod: Module, fragment_regs: dict | None) -> None:
    """Declared registers of the right class, parameters and shared symbols
    that exist, vectors of the ISA's lengths, consistent WMMA layouts."""
    made: dict[str, tuple] = {}  # register -> (use, layout, shape, type) of the wmma.load that wrote it
    for ins in mod.body:
        name = ".".join(ins.op)
        for a in ins.args:
            for r in _regs_of(a):
                if r not in mod.regs:
                    raise PtxSyntaxError(f"line {ins.line}: register {r} is not declared")
            if isinstance(a, tuple) and a and a[0] == "addr" and not a[1].startswith("%"):
                if a[1] not in mod.params:
                    raise PtxSyntaxError(f"line {ins.line}: no parameter {a[1]}")
        want = _REG_CLASS.get(name)
        if want:
            for a in ins.args:
                for r in _regs_of(a):
                    if mod.regs[r] != want:
                        raise PtxSyntaxError(f"line {ins.line}: {r} is {mod.regs[r]}, {name} needs {want}")
        if name == "mov.u64" and ins.args[1] not in mod.shared:
            raise PtxSyntaxError(f"line {ins.line}: no shared variable {ins.args[1]}")
        if ins.op[0] != "wmma":
            continue
        if ins.op[1] in ("load", "store"):
            use = ins.op[2]
            layout, shape, t = ins.op[5], ins.op[6], ins.op[8]
            vec = ins.args[0] if ins.op[1] == "load" else ins.args[1]
            _vector(mod, ins, vec, shape, "c" if use == "d" else use, t, fragment_regs)
            if ins.op[1] == "load":
                for r in vec:
                    made[r] = (use, layout, shape, t)
        else:  # mma
            la, lb, shape = ins.op[4], ins.op[5], ins.op[6]
            kinds = ins.op[7:]
            sat = kinds[-1] == "satfinite"
            kinds = kinds[:-1] if sat else kinds
            if sat and kinds[0] != "s32":
                raise PtxSyntaxError(f"line {ins.line}: .satfinite on a floating-point wmma.mma")
            if len(kinds) == 2:  # f16 multiplicands: .dtype.ctype
                td, ta, tb, tc = kinds[0], "f16", "f16", kinds[1]
            else:
                td, ta, tb, tc = kinds
            d, a, b, c = ins.args
            for vec, use, t, lay in (
                (a, "a", ta, la),
                (b, "b", tb, lb),
                (c, "c", tc, None),
                (d, "c", td, None),
            ):
                _vector(mod, ins, vec, shape, use, t, fragment_regs)
                if use in ("a", "b"):
                    src = {made.get(r) for r in vec}
                    if src != {(use, lay, shape, t)}:
                        raise PtxSyntaxError(
                            f"line {ins.line}: the {use.upper()} operand was not loaded as one "
                            f"wmma.load.{use} .{lay} .{shape} .{t} fragment (loaded: {sorted(map(str, src))})"
                        )


def _vector(mod, ins, vec, shape, use, t, fragment_regs) -> None:
    cls = _wmma_class(use, t)
    for r in vec:
        if mod.regs[r] != cls:
            raise PtxSyntaxError(f"line {ins.line}: {r} is {mod.regs[r]}; a {t} {use} fragment needs {cls}")
    if len(set(vec)) != len(vec):
        raise PtxSyntaxError(f"line {ins.line}: a register appears twice in a fragment")
    if fragment_regs is not None:
        n = fragment_regs.get((shape, use, t))
        if n is None:
            raise PtxSyntaxError(
                f"line {ins.line}: no {shape} {use.upper()} fragment of type .{t} in the ISA"
            )
        if len(vec) != n:
            raise PtxSyntaxError(
                f"line {ins.line}: {shape} {use.upper()} .{t} fragment is {n} registers, the vector has {len(vec)}"
            )
