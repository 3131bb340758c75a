"""The buffers and the verdict of the MLIR family's run flow (cts.runs.mlir):
element types, launching a program on copies of its buffers, the sentinel
fills of output buffers (cts.judge.sentinel) and the bit-exact verdict over
them."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from cts.families.mlir_program import SUBGROUPS, Program
from cts.judge import Rule, Verdict, compare, sentinel
from reference.dtypes import etype

__all__ = ["NP", "ETYPE", "opaque", "verdict", "launch", "zeros", "raw_bits", "fill_buffer", "never_written"]

NP = {
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "si8": np.int8,
    "ui8": np.uint8,
    "i32": np.int32,
    # gpu.rotate values only (cts.families.mlir.GPU_ROTATE_TYPES); i1 is held as i32 0 / 1
    "i8": np.int8,
    "i16": np.int16,
    "i64": np.int64,
    "bf16": ml_dtypes.bfloat16,
    "i1": np.int32,
}
ETYPE = {"f16": "f16", "f32": "f32", "f64": "f64", "si8": "i8", "ui8": "u8", "i32": "i32"}
ETYPE.update({"i8": "i8", "i16": "i16", "i64": "i64", "bf16": "bf16", "i1": "i32"})


def opaque(s: int, r: int, c: int) -> tuple[int, int]:
    """Logical matrix elements: the lane holding them is the device's secret
    (invocation -1); hints name the element instead."""
    return -1, -1


def verdict(
    case,
    exp: np.ndarray,
    act: np.ndarray,
    elem: str,
    ok=None,
    hint=None,
    notes=(),
    where=opaque,
    rule=None,
    unwritten=None,
    undefined=None,
) -> Verdict:
    t = etype(ETYPE[elem])
    e3 = np.asarray(exp).reshape(exp.shape[0], -1, exp.shape[-1]) if exp.ndim > 1 else exp[None, None]
    a3 = np.asarray(act).reshape(e3.shape)
    if unwritten is not None:
        unwritten = np.asarray(unwritten).reshape(e3.shape)
    if undefined:
        undefined = {k: np.asarray(m).reshape(e3.shape) for k, m in undefined.items()}
    wide = np.float64 if t.is_float else np.int64  # int64 keeps every bit of an i64
    with np.errstate(invalid="ignore"):  # a signalling NaN widens quietly (any NaN matches a NaN)
        eb, ab = t.encode(e3.astype(wide)), t.encode(a3.astype(wide))
    if ok is None:
        ok = eb == ab
    else:
        ok = np.asarray(ok).reshape(e3.shape)
    v = compare(
        eb,
        ab,
        t,
        ok,
        Rule.B if rule is None else rule,
        where,
        hint=hint,
        unwritten=unwritten,
        undefined=undefined,
    )
    v.notes.extend(notes)
    return v


def launch(backend, case, prog: Program, buffers: dict) -> dict:
    missing = set(prog.buffers) ^ set(buffers)
    if missing:  # a suite defect: the data and the program disagree
        raise ValueError(f"buffers {sorted(missing)} of the program and the data differ")
    # binding order; copies, so ``buffers`` keep the sentinel fills the verdict compares with
    bufs = {k: np.array(buffers[k], copy=True) for k in prog.buffers}
    out = backend.run(case, program=prog.ops, buffers=bufs)
    return {k: np.asarray(v) for k, v in out.items()}


def zeros(prog: Program, name: str) -> np.ndarray:
    b = prog.buffers[name]
    return np.zeros((SUBGROUPS, b.size), NP[b.elem])


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def raw_bits(x: np.ndarray) -> np.ndarray:
    """The bits of an array as unsigned integers of its width (a signalling
    NaN stays itself: no float conversion)."""
    x = np.ascontiguousarray(x)
    return x.view(_UINT[x.dtype.itemsize])


def fill_buffer(prog: Program, name: str, expected=None, avoid=None) -> np.ndarray:
    """An output buffer holding the sentinel of its element type
    (cts.judge.sentinel): floats a signalling NaN; integers unlike the
    ``expected`` values, or unlike every value of its row in ``avoid``
    (the inputs a moving operation may deliver)."""
    b = prog.buffers[name]
    dt = np.dtype(NP[b.elem])
    t = etype(ETYPE[b.elem])
    shape = (SUBGROUPS, b.size)
    if t.is_float or (expected is None and avoid is None):
        bits = sentinel.fill(t, shape, _UINT[dt.itemsize])
    elif expected is not None:
        e = t.encode(np.asarray(expected).reshape(SUBGROUPS, -1).astype(np.int64))
        pad = np.zeros(shape, np.uint64)
        pad[:, : e.shape[1]] = e
        bits = sentinel.fill(t, shape, _UINT[dt.itemsize], expected=pad)
    else:
        a = t.encode(np.asarray(avoid).reshape(SUBGROUPS, -1).astype(np.int64))
        bits = sentinel.fill_avoiding(t, shape, _UINT[dt.itemsize], a)
    if b.elem == "i1":  # held as i32 0 / 1: any other value is "not written"
        bits = np.full(shape, 7, np.uint32)
    return np.ascontiguousarray(bits).view(dt)


def never_written(got: np.ndarray, filled: np.ndarray) -> np.ndarray:
    """Elements of an output buffer that still hold their fill (same shape)."""
    return raw_bits(got) == raw_bits(np.asarray(filled).reshape(np.shape(got)))
