"""An emulated CUDA device for the joint_matrix PTX: it runs the text of
cts.kernels.ptx_joint, parsed by cts.kernels.ptx_grammar, instruction by
instruction over one warp, so the suite's self-tests hold the generator
(and each of its named wrong variants) to the oracle without a GPU.

Written from the PTX ISA, not from the generator:

* ``wmma.load`` reads the R x C matrix the instruction names (A: M x K,
  B: K x N, C: M x N) at ``[p]`` with its layout and stride (9.7.14.4.2:
  row r of a row-major matrix starts at element r * stride, column c of a
  column-major one at c * stride) and spreads it over the fragment's
  registers.  Which lane and register hold which element is unspecified
  (9.7.14.4.1), so the emulator picks a seeded random distribution per
  (shape, use, type) that covers every element (A/B fragments of f16 hold
  more slots than elements: the extra slots repeat elements): a generator
  that relies on any particular distribution fails here.
* ``wmma.mma`` multiplies the logical matrices: integers exactly, wrapped
  to 32 bits (clamped with ``.satfinite``); floats in float64 (exact for
  the 16-bit and tf32 products and their sums here), rounded to the D type.
* ``wmma.store.d`` writes each element from the first slot that holds it.
* Scalar instructions act on all 32 lanes at once.
"""

from __future__ import annotations

import zlib

import ml_dtypes
import numpy as np

from cts.backends.base import DeviceInfo
from cts.backends.cuda_joint import CudaJoint
from cts.errors import CaseError
from cts.kernels.ptx_grammar import parse
from cts.kernels.ptx_joint import FRAGMENT_REGS

__all__ = ["EmulatedCudaJoint"]

LANES = 32
_ELEMS_PER_REG = {"f16": 2, "bf16": 2, "s8": 4, "u8": 4, "tf32": 1, "f32": 1, "s32": 1, "f64": 1}
_NP = {
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "tf32": np.float32,
    "f64": np.float64,
    "s8": np.int8,
    "u8": np.uint8,
    "s32": np.int32,
}
_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "tf32": 4, "f64": 8, "s8": 1, "u8": 1, "s32": 4}


def _dims(shape: str, use: str) -> tuple[int, int]:
    m, rest = shape[1:].split("n")
    n, k = rest.split("k")
    M, N, K = int(m), int(n), int(k)
    return {"a": (M, K), "b": (K, N), "c": (M, N), "d": (M, N)}[use]


def _elements(R: int, C: int, layout: str, stride: int) -> np.ndarray:
    """(R, C) element offsets of a matrix in memory (9.7.14.4.2): row r of a
    row-major matrix starts at r * stride, column c of a column-major one at
    c * stride."""
    r, c = np.arange(R)[:, None], np.arange(C)[None, :]
    return r * stride + c if layout == "row" else c * stride + r


class _Frag:
    """Elements held in (lane, slot) positions: ``index[lane, slot]`` is the
    logical element (row-major index) there."""

    def __init__(self, index: np.ndarray, values: np.ndarray):
        self.index = index
        self.values = values  # (LANES, slots) float64 / int64


def _distribution(shape: str, use: str, t: str, seed: int) -> np.ndarray:
    R, C = _dims(shape, use)
    slots = FRAGMENT_REGS[(shape, "c" if use == "d" else use, t)] * _ELEMS_PER_REG[t]
    n = R * C
    total = LANES * slots
    rng = np.random.default_rng(zlib.crc32(f"{shape}/{use}/{t}/{seed}".encode()))
    base = np.concatenate([np.arange(n), rng.integers(0, n, size=total - n)]) if total > n else np.arange(n)
    return rng.permutation(base).reshape(LANES, slots)


class _Warp:
    def __init__(self, mod, mem: dict, seed: int):
        self.mod = mod
        self.mem = mem  # buffer name -> its bytes (numpy uint8 view of the tile's row)
        self.shared = {n: np.zeros(size, dtype=np.uint8) for n, size in mod.shared.items()}
        self.seed = seed
        # register -> (LANES, k) values, an address (space, symbol, byte offset), or
        # ("frag", fragment, register number, slots per register, (use, shape, type))
        self.r: dict[str, object] = {}

    # ----------------------------------------------------------- memory
    def _buf(self, space: str, addr):
        base = self.r[addr[1]]
        kind, name, off = base
        return (self.mem[name] if kind == "global" else self.shared[name]), int(off) + addr[2]

    def _read(self, buf, off: int, t: str, count: int = 1):
        nb = _BYTES[t]
        raw = buf[off : off + nb * count]
        if len(raw) < nb * count:  # past the end: zeros (only wrong PTX gets here)
            raw = np.concatenate([raw, np.zeros(nb * count - len(raw), dtype=np.uint8)])
        return raw.view(_NP[t])

    def _gather(self, buf, off: int, t: str, e: np.ndarray) -> np.ndarray:
        """Elements at element offsets ``e`` from byte ``off`` (zero past the end)."""
        nb = _BYTES[t]
        n = len(buf) // nb
        view = buf[: n * nb].view(_NP[t]) if off % nb == 0 else None
        if view is None:
            return np.array([self._read(buf, off + int(x) * nb, t)[0] for x in e.reshape(-1)]).reshape(
                e.shape
            )
        k = e + off // nb
        inside = (k >= 0) & (k < n)
        out = np.zeros(e.shape, dtype=_NP[t])
        out[inside] = view[k[inside]]
        return out

    def _write(self, buf, off: int, t: str, value) -> None:
        nb = _BYTES[t]
        if off < 0 or off + nb > len(buf):
            return
        buf[off : off + nb] = np.array([value], dtype=_NP[t]).view(np.uint8)

    # ------------------------------------------------------------- wmma
    def wmma_load(self, ins) -> None:
        use, layout, shape, space, t = ins.op[2], ins.op[5], ins.op[6], ins.op[7], ins.op[8]
        vec, addr, stride = ins.args
        buf, off = self._buf(space, addr)
        R, C = _dims(shape, use)
        X = self._gather(buf, off, t, _elements(R, C, layout, stride)).astype(np.float64).reshape(-1)
        idx = _distribution(shape, use, t, self.seed)
        frag = _Frag(idx, X[idx])
        per = idx.shape[1] // len(vec)
        for i, reg in enumerate(vec):
            self.r[reg] = ("frag", frag, i, per, (use, shape, t))

    def _matrix(self, vec) -> tuple[np.ndarray, tuple]:
        """The logical matrix (row-major flat) a fragment vector holds."""
        first = self.r[vec[0]]
        _, frag, _, per, key = first
        use, shape, t = key
        R, C = _dims(shape, use)
        vals = np.concatenate([self._slots(reg) for reg in vec], axis=1)
        X = np.full(R * C, np.nan)
        got = np.zeros(R * C, dtype=bool)
        for lane in range(LANES):
            for s in range(vals.shape[1]):
                e = frag.index[lane, s]
                if not got[e]:
                    X[e] = vals[lane, s]
                    got[e] = True
        return X.reshape(R, C), key

    def _slots(self, reg) -> np.ndarray:
        kind, frag, i, per, _ = self.r[reg]
        return frag.values[:, i * per : (i + 1) * per]

    def wmma_mma(self, ins) -> None:
        shape = ins.op[6]  # the layouts are the loads' (the grammar holds them equal)
        kinds = ins.op[7:]
        sat = kinds[-1] == "satfinite"
        kinds = kinds[:-1] if sat else kinds
        td = kinds[0]
        d, a, b, c = ins.args
        A, _ = self._matrix(a)
        B, _ = self._matrix(b)
        Cm, _ = self._matrix(c)
        if td == "s32":  # |sum| < 2^53: exact in float64
            D = (A @ B + Cm).reshape(-1).astype(np.int64)
            if sat:
                D = np.clip(D, -(2**31), 2**31 - 1)
            D = ((D + 2**31) % 2**32) - 2**31
        else:
            with np.errstate(all="ignore"):
                D = (A.astype(np.float64) @ B.astype(np.float64) + Cm).reshape(-1)
            D = D.astype(_NP[td]).astype(np.float64)
        idx = _distribution(shape, "d", td, self.seed)
        frag = _Frag(idx, D[idx])
        per = idx.shape[1] // len(d)
        for i, reg in enumerate(d):
            self.r[reg] = ("frag", frag, i, per, ("d", shape, td))

    def wmma_store(self, ins) -> None:
        layout, space, t = ins.op[5], ins.op[7], ins.op[8]
        addr, vec, stride = ins.args
        X, _ = self._matrix(vec)
        buf, off = self._buf(space, addr)
        R, C = X.shape
        e = _elements(R, C, layout, stride)
        nb = _BYTES[t]
        for (r, c), v in np.ndenumerate(X):
            self._write(buf, off + int(e[r, c]) * nb, t, v)

    # ----------------------------------------------------------- scalar
    def step(self, ins) -> None:
        op = ins.op
        name = ".".join(op)
        a = ins.args
        if op[0] == "wmma":
            {"load": self.wmma_load, "mma": self.wmma_mma, "store": self.wmma_store}[op[1]](ins)
        elif name == "ld.param.u64":
            self.r[a[0]] = ("global", a[1][1].rsplit("_", 1)[0], 0)
        elif name == "cvta.to.global.u64":
            self.r[a[0]] = self.r[a[1]]
        elif name == "mov.u64":
            self.r[a[0]] = ("shared", a[1], 0)
        elif name == "mov.u32":
            self.r[a[0]] = np.arange(LANES, dtype=np.int64)
        elif name == "cvt.u64.u32":
            self.r[a[0]] = self.r[a[1]]
        elif name == "mad.lo.u64":
            kind, sym, off = self.r[a[3]]
            self.r[a[0]] = (kind, sym, off + self.r[a[1]] * a[2])
        elif op[0] in ("ld", "st") and op[1] in ("shared", "global"):
            t = {"b16": "f16", "f32": "f32", "s32": "s32", "f64": "f64"}[op[2]]
            addr = a[1] if op[0] == "ld" else a[0]
            kind, sym, off = self.r[addr[1]]
            buf = self.shared[sym] if kind == "shared" else self.mem[sym]
            offs = np.broadcast_to(np.asarray(off) + addr[2], (LANES,))
            if op[0] == "ld":
                got = np.array([self._read(buf, int(o), t)[0] for o in offs], dtype=np.float64)
                self.r[a[0]] = got.reshape(LANES, 1)
            else:
                for o, v in zip(offs, self._lanes(a[1])):
                    self._write(buf, int(o), t, v)
        elif name in ("cvt.rn.f16.f32", "cvt.f32.f16"):
            t = "f16" if op[2] == "f16" else "f32"
            self.r[a[0]] = self._lanes(a[1]).astype(_NP[t]).astype(np.float64).reshape(LANES, 1)
        elif name == "mov.b32" and a[1][0] == "pack":
            self._set_reg(a[0], [self._lanes(a[1][1]), self._lanes(a[1][2])])
        elif op[0] == "mov":
            self._set_reg(a[0], None, self._get_reg(a[1]))
        elif op[0] == "add":
            t = op[-1]
            x, y = self._get_reg(a[1]), self._get_reg(a[2])
            with np.errstate(all="ignore"):
                if t == "s32":
                    s = ((x.astype(np.int64) + y.astype(np.int64) + 2**31) % 2**32) - 2**31
                else:
                    nt = {"f16x2": np.float16, "f32": np.float32, "f64": np.float64}[t]
                    s = (x + y).astype(nt).astype(np.float64)
            self._set_reg(a[0], None, s)
        elif name in ("bar.warp.sync", "ret"):
            pass
        else:
            raise CaseError(f"emulated CUDA: no semantics for {name}")

    def _lanes(self, reg) -> np.ndarray:
        """A one-element register's value in every lane."""
        return self._get_reg(reg)[:, 0]

    def _get_reg(self, reg) -> np.ndarray:
        """A register's value: (LANES, elements per register)."""
        v = self.r[reg]
        if isinstance(v, tuple) and v[0] == "frag":
            return self._slots(reg).astype(np.float64).copy()
        return np.asarray(v, dtype=np.float64).reshape(LANES, -1)

    def _set_reg(self, reg, parts=None, value=None) -> None:
        if parts is not None:
            value = np.stack(parts, axis=1)
        v = self.r.get(reg)
        if isinstance(v, tuple) and v and v[0] == "frag":  # write into the fragment's slots
            _, frag, i, per, key = v
            frag.values = frag.values.astype(np.float64) if frag.values.dtype != np.float64 else frag.values
            frag.values[:, i * per : (i + 1) * per] = np.broadcast_to(value, (LANES, per))
            return
        # a register no wmma.load defined (a fill's moves): it joins the
        # fragment of the wmma.store that names it (see _adopt)
        self.r[reg] = np.asarray(value, dtype=np.float64).reshape(LANES, -1)

    def run(self) -> None:
        for ins in self.mod.body:
            if ins.op[0] == "wmma" and ins.op[1] == "store":
                self._adopt(ins)
            self.step(ins)

    def _adopt(self, ins) -> None:
        """Registers filled by moves (joint_matrix_fill) become a D fragment
        of the store's shape and type, register i holding its slots."""
        vec = ins.args[1]
        if not all(isinstance(self.r.get(x), np.ndarray) for x in vec):
            return
        shape, t = ins.op[6], ins.op[8]
        idx = _distribution(shape, "d", t, self.seed)
        per = idx.shape[1] // len(vec)
        vals = np.concatenate([np.broadcast_to(self.r[x], (LANES, per)) for x in vec], axis=1)
        frag = _Frag(idx, vals.astype(np.float64))
        for i, reg in enumerate(vec):
            self.r[reg] = ("frag", frag, i, per, ("d", shape, t))


class EmulatedCudaJoint(CudaJoint):
    """A CUDA device of compute capability ``chip`` that runs the joint_matrix
    PTX through the interpreter above (``variant``: a named wrong PTX)."""

    name = "cuda-emulated"

    def __init__(self, chip: str = "sm_90", variant: str | None = None, seed: int = 1):
        self.chip = chip
        self.ptx_variant = variant
        self.seed = seed
        self.texts: list[str] = []

    def describe(self) -> DeviceInfo:
        return DeviceInfo(backend="cuda-emulated", name="emulated CUDA device", version=self.chip)

    def unsupported(self, case) -> str | None:
        return self._joint_unsupported(case)

    def run(self, case, **kw):
        return self.run_joint_matrix(case, **kw)

    def _run_rows(self, ptx: str, entry: str, block: int, rows: dict) -> dict:
        mod = parse(ptx, FRAGMENT_REGS)
        if mod.entry != entry or block != LANES:
            raise CaseError(f"emulated CUDA: entry {mod.entry!r} / block {block}")
        self.texts.append(ptx)
        out = {n: np.array(x, copy=True) for n, x in rows.items()}
        S = next(iter(rows.values())).shape[0]
        for s in range(S):
            mem = {n: out[n][s].view(np.uint8) for n in rows}
            _Warp(mod, mem, self.seed + s).run()
        return out
