"""Assembly and validation of the joint_matrix SPIR-V modules
(``cts.kernels.joint_spv``).

SPIRV-Tools 2025.5 knows no ``SPV_INTEL_joint_matrix`` token, so spirv-val
cannot take the device module itself.  Every module is checked in two
parts, and both must pass before a device sees it:

1. **spirv-val on the twin**: the same module with each INTEL-only token
   replaced by its nearest KHR counterpart (checked load / store -> the KHR
   load / store with the same pointer, layout and stride; checked construct
   -> OpCompositeConstruct of the value; GetElementCoord -> a 2 x 32-bit
   vector; MulAdd interpretation bits dropped; INTEL declarations dropped)
   is assembled and validated (``spirv-val --target-env opencl2.2``).
2. **a structural check of the device words** (:func:`check_words`): the
   device binary aligns instruction by instruction with the validated twin
   and every instruction outside the INTEL ones is word for word the twin's
   (so everything spirv-val checked is what the device gets); each INTEL
   instruction has the word count of SPV_INTEL_joint_matrix rev 16, the twin
   substitute's result type, result, pointer, object, layout and stride, and
   32-bit integer X / Y offsets, Height and Width (as DPC++ passes them), a
   Value of the matrix's component type, a 2 x 32-bit result for
   GetElementCoord; MulAdd interpretation bits sit on matching component
   types (bf16: 16-bit integers without Signed bits, tf32: 32-bit floats);
   and the module declares exactly the INTEL capabilities and extension its
   tokens need, less what the lowering omits.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
import subprocess
import tempfile
import threading

from cts.kernels.joint_spv import INTEL_CAPS, INTEL_EXTENSION, INTEL_OPS, LOWERINGS, module_texts
from cts.kernels.spirv_tools import SpirvToolError, assemble, tool_path

__all__ = ["assemble_raw", "check_words", "validated_module", "Instr", "parse_words"]

MAGIC = 0x07230203
OP_EXTENSION, OP_CAPABILITY, OP_CONSTANT = 10, 17, 43
OP_LOAD_KHR, OP_STORE_KHR, OP_MULADD_KHR = 4457, 4458, 4459
_CACHE: dict[str, bytes] = {}
_LOCK = threading.Lock()


class Instr(tuple):
    """One instruction's words (opcode word first)."""

    @property
    def opcode(self) -> int:
        return self[0] & 0xFFFF


def parse_words(blob: bytes) -> list[Instr]:
    """The instruction stream of a SPIR-V binary (header checked; a word
    count of 0 or past the end is an error)."""
    if len(blob) % 4 or len(blob) < 20:
        raise SpirvToolError(f"SPIR-V binary of {len(blob)} bytes is not a whole header plus words")
    words = struct.unpack(f"<{len(blob) // 4}I", blob)
    if words[0] != MAGIC or words[4] != 0:
        raise SpirvToolError(f"bad SPIR-V header: magic {words[0]:#x}, schema {words[4]}")
    out, i = [], 5
    while i < len(words):
        n = words[i] >> 16
        if n == 0 or i + n > len(words):
            raise SpirvToolError(
                f"instruction at word {i}: word count {n} runs past the module ({len(words)})"
            )
        out.append(Instr(words[i : i + n]))
        i += n
    return out


def assemble_raw(text: str) -> bytes:
    """spirv-as only (the device form holds tokens spirv-val cannot judge)."""
    key = hashlib.sha256(text.encode()).hexdigest()
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    with tempfile.TemporaryDirectory(prefix="cts-joint-") as tmp:
        src, spv = os.path.join(tmp, "m.spvasm"), os.path.join(tmp, "m.spv")
        with open(src, "w") as f:
            f.write(text)
        r = subprocess.run(
            [tool_path("spirv-as"), "--target-env", "spv1.2", src, "-o", spv], capture_output=True, text=True
        )
        if r.returncode:
            raise SpirvToolError(f"spirv-as refused the module: {(r.stderr or r.stdout).strip()}")
        with open(spv, "rb") as f:
            data = _drop_nops(f.read())
    with _LOCK:
        _CACHE[key] = data
    return data


def _drop_nops(blob: bytes) -> bytes:
    """The binary without its OpNop instructions (the separators before raw
    instructions, ``cts.kernels.joint_spv``)."""
    head = blob[:20]
    kept = [ins for ins in parse_words(blob) if ins.opcode != 0]
    return head + b"".join(struct.pack(f"<{len(i)}I", *i) for i in kept)


_DIS_LINE = re.compile(r"^%(\d+) = (Op\w+)(.*)$")


def _types(twin: bytes) -> tuple[dict[int, tuple], dict[int, int], dict[int, int]]:
    """From the validated twin (spirv-dis): type declarations
    (id -> (OpTypeX, operands...)), value types (id -> type id) and 32-bit
    integer constants (id -> value)."""
    with tempfile.TemporaryDirectory(prefix="cts-joint-") as tmp:
        spv = os.path.join(tmp, "t.spv")
        with open(spv, "wb") as f:
            f.write(twin)
        r = subprocess.run(
            [tool_path("spirv-dis"), "--raw-id", "--no-header", "--no-indent", "--no-color", spv],
            capture_output=True,
            text=True,
        )
    if r.returncode:
        raise SpirvToolError(f"spirv-dis failed on a validated twin: {(r.stderr or r.stdout).strip()}")
    types: dict[int, tuple] = {}
    vtype: dict[int, int] = {}
    consts: dict[int, int] = {}
    for line in r.stdout.splitlines():
        m = _DIS_LINE.match(line.strip())
        if not m:
            continue
        rid, op, rest = int(m.group(1)), m.group(2), m.group(3).split()
        if op.startswith("OpType"):
            types[rid] = (op, *rest)
        elif rest and rest[0].startswith("%"):
            vtype[rid] = int(rest[0][1:])
            if op == "OpConstant" and len(rest) == 2 and rest[1].lstrip("-").isdigit():
                consts[rid] = int(rest[1])
    return types, vtype, consts


def _int32(types, vtype, rid: int) -> bool:
    t = types.get(vtype.get(rid, -1), ())
    return t[:2] == ("OpTypeInt", "32")


def _component(types, tid: int) -> tuple:
    t = types.get(tid, ())
    return types.get(int(t[1][1:]), ()) if t and t[0] == "OpTypeCooperativeMatrixKHR" else ()


def _fail(what: str) -> None:
    raise SpirvToolError(f"joint_matrix module fails the structural check: {what}")


def _intel_instr(d: Instr, t: Instr, types, vtype) -> None:
    """One INTEL instruction against its twin substitute."""
    name, count, _ = INTEL_OPS[d.opcode]
    if len(d) != count:
        _fail(f"{name} has {len(d)} words, SPV_INTEL_joint_matrix rev 16 says {count}")
    same = {
        6193: [(1, 1), (2, 2), (3, 3), (6, 4), (9, 5)],  # type, result, pointer, layout, stride
        6194: [(1, 1), (4, 2), (5, 3), (8, 4)],  # pointer, object, layout, stride
        6195: [(1, 1), (2, 2), (7, 3)],  # type, result, value
        6440: [(1, 1), (2, 2), (4, 3)],  # type, result, index
    }[d.opcode]
    twin_op = {6193: OP_LOAD_KHR, 6194: OP_STORE_KHR, 6195: 80, 6440: 80}[d.opcode]  # 80 OpCompositeConstruct
    if t.opcode != twin_op:
        _fail(f"{name} aligns with opcode {t.opcode} in the twin, not {twin_op}")
    for di, ti in same:
        if d[di] != t[ti]:
            _fail(f"{name} word {di} is %{d[di]}, the validated twin has %{t[ti]}")
    int32_words = {6193: (4, 5, 7, 8), 6194: (2, 3, 6, 7), 6195: (3, 4, 5, 6), 6440: (4,)}[d.opcode]
    for i in int32_words:
        if not _int32(types, vtype, d[i]):
            _fail(f"{name} operand word {i} (%{d[i]}) is not a 32-bit integer")
    if d.opcode == 6195 and types.get(vtype.get(d[7], -1)) != _component(types, d[1]):
        _fail(f"{name}: Value %{d[7]} is not of the matrix's component type")
    if d.opcode == 6440:
        rt = types.get(d[1], ())
        if rt[:1] != ("OpTypeVector",) or rt[2:] != ("2",) or not _int32(types, {0: int(rt[1][1:])}, 0):
            _fail(f"{name}: result type %{d[1]} is not a vector of two 32-bit integers")
        if types.get(vtype.get(d[3], -1), ("",))[0] != "OpTypeCooperativeMatrixKHR":
            _fail(f"{name}: Matrix %{d[3]} is not a cooperative matrix")


def _muladd(d: Instr, t: Instr, types, vtype) -> set[str]:
    """MulAdd: the device mask = twin mask + INTEL interpretation bits on
    component types they may describe; returns the capability keys used."""
    dm = d[6] if len(d) > 6 else 0
    tm = t[6] if len(t) > 6 else 0
    if d[1:6] != t[1:6] or dm & 0x1F != tm:
        _fail("OpCooperativeMatrixMulAddKHR differs from the validated twin beyond the INTEL operand bits")
    extra = dm & ~0x1F
    if extra & ~0x1E0:
        _fail(f"unknown Cooperative Matrix Operands bits {extra & ~0x1E0:#x}")
    comp = [_component(types, vtype.get(d[i], -1)) for i in (3, 4, 5)] + [_component(types, d[1])]
    used: set[str] = set()
    if extra & 0x40:
        if dm & 0x3 or any(c[:2] != ("OpTypeInt", "16") for c in comp[:2]):
            _fail("MatrixAAndBBFloat16ComponentsINTEL needs 16-bit integer A and B without Signed bits")
        used.add("bf16")
    if extra & 0x20:
        if any(c[:2] != ("OpTypeFloat", "32") for c in comp[:2]):
            _fail("MatrixAAndBTF32ComponentsINTEL needs 32-bit float A and B")
        used.add("tf32")
    for bit, k, sign in ((0x80, 2, 0x4), (0x100, 3, 0x8)):
        if extra & bit:
            if dm & sign or comp[k][:2] != ("OpTypeInt", "16"):
                _fail(f"bit {bit:#x} (BFloat16 interpretation) needs a 16-bit integer without its Signed bit")
            used.add("bf16")
    return used


def check_words(device: bytes, twin: bytes, lowering: str) -> None:
    """The structural check of the module docstring (SpirvToolError if not)."""
    low = LOWERINGS[lowering]
    dev, tw = parse_words(device), parse_words(twin)
    types, vtype, consts = _types(twin)
    intel_tokens = {tok: key for key, (tok, _) in INTEL_CAPS.items()}
    declared: set[int] = set()
    ext = False
    body: list[Instr] = []
    for ins in dev:
        if ins.opcode == OP_CAPABILITY and ins[1] in intel_tokens:
            declared.add(ins[1])
        elif ins.opcode == OP_EXTENSION and _string(ins[1:]) == INTEL_EXTENSION:
            ext = True
        else:
            body.append(ins)
    if len(body) != len(tw):
        _fail(f"{len(body)} instructions do not align with the twin's {len(tw)}")
    used: set[str] = set()
    for d, t in zip(body, tw):
        if d.opcode in INTEL_OPS:
            _intel_instr(d, t, types, vtype)
            used.add(INTEL_OPS[d.opcode][2])
        elif d.opcode == OP_MULADD_KHR:
            used |= _muladd(d, t, types, vtype)
        elif d != t:
            _fail(f"opcode {d.opcode} differs from the validated twin")
        lay = {OP_LOAD_KHR: 4, OP_STORE_KHR: 3, 6193: 6, 6194: 5}.get(d.opcode)
        if lay is not None and consts.get(d[lay]) == 2:
            used.add("packed")
    want = {INTEL_CAPS[k][0] for k in used} - low.omit_caps
    if declared != want:
        names = sorted(INTEL_CAPS[intel_tokens[c]][1] for c in declared ^ want)
        _fail(
            f"INTEL capabilities declared {sorted(declared)}, the tokens used need {sorted(want)} ({', '.join(names)})"
        )
    if ext != bool(used and not low.omit_extension):
        _fail(
            f"OpExtension {INTEL_EXTENSION} {'present' if ext else 'missing'} (tokens used: {sorted(used)})"
        )


def _string(words) -> str:
    raw = b"".join(struct.pack("<I", w) for w in words)
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def validated_module(case, lowering: str = "spec") -> tuple[bytes, str]:
    """(device binary, device assembly text) of ``case``: its twin passed
    spirv-val and its words the structural check."""
    text, twin_text = module_texts(case, lowering)
    twin = assemble(_strip_comments(twin_text))
    device = assemble_raw(text)
    check_words(device, twin, lowering)
    return device, text


def _strip_comments(text: str) -> str:
    """The twin without its leading comment lines (cases differing only in
    their ids share one validated binary in the caches)."""
    return "\n".join(line for line in text.splitlines() if not line.startswith(";")) + "\n"
