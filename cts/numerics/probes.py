"""Numerics fingerprint: hand-designed inputs that decide how a device computes
a float multiply-accumulate.

The method follows Fasi, Higham, Mikaitis and Pranesh, "Numerical behavior
of NVIDIA tensor cores" (PeerJ Comput. Sci. 7:e330, 2021): each property is
decided by inputs whose result differs between the hypotheses, and the
deciding input and the result it gave are kept as evidence.  The specs leave
all of it implementation-defined (SPV_KHR_cooperative_matrix, Vulkan, SPV_INTEL), so nothing here is a
pass/fail verdict; the ``model`` tier (cases/test_numerics_model.py) turns
the inferred fingerprint into a bit-exact check.

An experiment sees only ``mma(A, B, C) -> D`` for one tile shape (M, N, K)
and types: A (S, M, K), B (S, K, N), C (S, M, N) float64 values exactly
representable in the input / accumulator types, D (S, M, N) float64.  Probes
are packed on the diagonal of tiles: probe i uses row r of A, column r of B
and C[r, r] of tile s, so min(M, N) probes share one tile and one call runs
all probes of one question.

Order of inference (each step uses what the earlier ones found):
products -> subnormals -> block structure (block size, order over K, where C
enters) -> rounding of the accumulation -> alignment window (extra bits,
truncation direction) -> precision of the accumulator between blocks ->
conversion of 16-bit results -> special values -> monotonicity.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from reference.dtypes import etype

__all__ = ["Target", "Probe", "Prober", "Evidence", "Finding", "fmt_value", "StepLayout", "same_value"]

MmaFn = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass
class Target:
    """One multiply-accumulate to characterize: tile shape, types, callable."""

    device: str
    M: int
    N: int
    K: int
    a_type: str
    c_type: str
    mma: MmaFn

    @property
    def key(self) -> str:
        return f"{self.a_type}*{self.a_type}+{self.c_type}->{self.c_type} {self.M}x{self.N}x{self.K}"


def _pow2(mi: int, ei: int) -> str:
    if mi == 1:
        return "1" if ei == 0 else f"2^{ei}"
    return f"{mi}*2^{ei}"


def _odd(a: float) -> tuple[int, int]:
    """a = mi * 2^ei with mi odd (a > 0, finite)."""
    m, e = math.frexp(a)
    mi, ei = int(m * 2**53), e - 53
    while mi % 2 == 0:
        mi //= 2
        ei += 1
    return mi, ei


def fmt_value(v: float) -> str:
    """Readable exact form of a float: 0, -2^30, 3*2^-25, 1+2^-23,
    -(2^10-2^-10), else the hex form."""
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "-0" if math.copysign(1, v) < 0 else "0"
    sign = "-" if v < 0 else ""
    a = abs(v)
    mi, ei = _odd(a)
    if mi < 16:
        return sign + _pow2(mi, ei)
    lead = math.floor(math.log2(a))
    for base, op in ((2.0**lead, "+"), (2.0 ** (lead + 1), "-")):
        rest = abs(a - base)
        if rest == 0:
            continue
        rm, re_ = _odd(rest)
        if rm < 16:
            body = f"{_pow2(1, int(math.log2(base)))}{op}{_pow2(rm, re_)}"
            return f"-({body})" if sign else body
    return sign + a.hex()


@dataclass
class Probe:
    """One dot product: C plus products at positions k (value or (a, b))."""

    c: float
    terms: dict[int, tuple[float, float]]
    label: str = ""

    def describe(self) -> str:
        parts = [f"C={fmt_value(self.c)}"] if self.c != 0 or not self.terms else []
        parts += [
            f"p{k}={fmt_value(a * b)}" if math.isfinite(a * b) else f"p{k}={fmt_value(a)}*{fmt_value(b)}"
            for k, (a, b) in sorted(self.terms.items())
        ]
        return ", ".join(parts)


@dataclass
class Evidence:
    label: str
    input: str
    result: float
    expect: dict[str, float] = field(default_factory=dict)  # hypothesis -> value

    def as_dict(self) -> dict:
        return {
            "label": self.label,
            "input": self.input,
            "result": fmt_value(self.result),
            "result_hex": float(self.result).hex(),
            "expect": {k: fmt_value(v) for k, v in self.expect.items()},
        }


@dataclass
class Finding:
    prop: str
    value: object
    detail: str
    evidence: list[Evidence] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "property": self.prop,
            "value": self.value,
            "detail": self.detail,
            "evidence": [e.as_dict() for e in self.evidence],
        }


class Prober:
    """Packs probes on tile diagonals, runs them, keeps every probe run."""

    def __init__(self, t: Target):
        self.t = t
        self.at, self.ct = etype(t.a_type), etype(t.c_type)
        self.history: list[tuple[Probe, float]] = []
        self.calls = 0

    def split(self, v: float) -> tuple[float, float]:
        """a, b representable in the input type with a * b == v exactly."""
        if v == 0:
            return 0.0, 0.0
        m, e = math.frexp(abs(v))  # v = m 2^e, m in [0.5, 1)
        for xa in sorted(range(e - 40, e + 40), key=lambda x: abs(2 * x - e)):
            a = math.copysign(m * 2.0**xa, v)
            b = 2.0 ** (e - xa)
            if self._repr(a) and self._repr(b):
                return a, b
        raise ValueError(f"{v!r} is not a product of two {self.t.a_type} values")

    def _repr(self, x: float) -> bool:
        t = self.at
        return abs(x) >= t.tiny and abs(x) <= t.max_finite and float(t.round(np.array([x]))[0]) == x

    def probe(self, c: float, label: str = "", **terms) -> Probe:
        """terms: k<i>=value (split into a product) or k<i>=(a, b)."""
        out = {}
        for key, v in terms.items():
            k = int(key[1:])
            k = k if k >= 0 else self.t.K + k
            out[k] = tuple(v) if isinstance(v, tuple) else self.split(float(v))
        return Probe(float(c), out, label)

    def run(self, probes: list[Probe]) -> np.ndarray:
        t = self.t
        d = min(t.M, t.N)
        S = max(1, -(-len(probes) // d))
        A = np.zeros((S, t.M, t.K))
        B = np.zeros((S, t.K, t.N))
        C = np.zeros((S, t.M, t.N))
        for i, p in enumerate(probes):
            s, r = divmod(i, d)
            C[s, r, r] = p.c
            for k, (a, b) in p.terms.items():
                A[s, r, k], B[s, k, r] = a, b
        with np.errstate(all="ignore"):
            D = np.asarray(t.mma(A, B, C), dtype=np.float64)
        self.calls += 1
        res = np.array([D[i // d, i % d, i % d] for i in range(len(probes))])
        self.history += list(zip(probes, res))
        return res

    def ev(self, p: Probe, r: float, **expect: float) -> Evidence:
        return Evidence(p.label, p.describe(), float(r), {k: float(v) for k, v in expect.items()})


def same_value(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


# ------------------------------------------------------------ experiments
def products(pr: Prober) -> Finding:
    """(1+u)(1-u) = 1 - u^2 (u = 2^-mantissa bits): exact products keep u^2."""
    t = pr.at
    u = 2.0**-t.man_bits
    s = 2.0**t.man_bits
    h = 2.0 ** (t.man_bits // 2)
    p = pr.probe(-s, "product needs 2p bits", k0=((1 + u) * h, (1 - u) * s / h))
    (r,) = pr.run([p])
    exact = -u * u * s
    val = "exact" if r == exact else ("rounded to input precision" if r == 0 else f"other ({fmt_value(r)})")
    return Finding(
        "products", val, "a*b of two inputs kept without rounding", [pr.ev(p, r, exact=exact, rounded=0)]
    )


def subnormals(pr: Prober) -> list[Finding]:
    t, ct = pr.at, pr.ct
    dm = t.denorm_min
    big = 2.0 ** min(t.emax - 1, 14 if t.name == "f16" else 100)
    pa = pr.probe(0, "subnormal a", k0=(dm, big))
    pb = pr.probe(0, "subnormal b", k0=(big, dm))
    cden = 3 * ct.denorm_min
    pc = pr.probe(cden, "subnormal C")
    probes = [pa, pb, pc]
    # a result that is subnormal in the result type from normal inputs (when reachable)
    target = ct.tiny / 2
    try:
        pr.split(target)
        pres = pr.probe(0, "subnormal result", k0=target)
        probes.append(pres)
    except ValueError:
        pres = None
    res = pr.run(probes)
    kin = res[0] == dm * big and res[1] == dm * big
    fin = Finding(
        "subnormal_inputs",
        "keep" if kin else ("flush" if res[0] == 0 and res[1] == 0 else "mixed"),
        f"smallest subnormal {t.name} times {fmt_value(big)}",
        [pr.ev(pa, res[0], keep=dm * big, flush=0), pr.ev(pb, res[1], keep=dm * big, flush=0)],
    )
    fc = Finding(
        "subnormal_c",
        "keep" if res[2] == cden else ("flush" if res[2] == 0 else f"other ({fmt_value(res[2])})"),
        f"C = 3 x smallest subnormal {ct.name}, no products",
        [pr.ev(pc, res[2], keep=cden, flush=0)],
    )
    out = [fin, fc]
    if pres is not None:
        r = res[3]
        out.append(
            Finding(
                "subnormal_results",
                "keep" if r == target else ("flush" if r == 0 else f"other ({fmt_value(r)})"),
                f"one product = half the smallest normal {ct.name}",
                [pr.ev(pres, r, keep=target, flush=0)],
            )
        )
    else:
        out.append(
            Finding("subnormal_results", "n/a", f"no product of two {t.name} is subnormal in {ct.name}")
        )
    return out


def _scales(pr: Prober) -> tuple[float, float]:
    """(big, tiny): big is a product and a C value; tiny a normal product far below."""
    if pr.ct.name == "f16" or pr.at.name == "f16" and pr.ct.name == "f16":
        return 2.0**15, 2.0**-14
    if pr.at.name == "f16":
        return 2.0**30, 2.0**-28
    return 2.0**60, 2.0**-60


def block_structure(pr: Prober) -> Finding:
    """Cancellation puts the accumulator at 0; a tiny term survives only when
    its block is processed strictly after the blocks of both big terms
    (inside a block with a big term, or before it, it is cut off)."""
    K = pr.t.K
    big, tiny = _scales(pr)
    ev = []
    # where C enters: +big at k0, -big at k(K-1), tiny as C
    pc = pr.probe(tiny, "C after the products?", k0=big, **{f"k{K - 1}": -big})
    fwd = [pr.probe(big, f"fwd l={m}", k0=-big, **{f"k{m}": tiny}) for m in range(1, K)]
    rev = [pr.probe(big, f"rev l={m}", **{f"k{K - 1}": -big, f"k{m}": tiny}) for m in range(0, K - 1)]
    pf = [pr.probe(0, f"fwd products l={m}", k0=big, k1=-big, **{f"k{m}": tiny}) for m in range(2, K)]
    res = pr.run([pc, *fwd, *rev, *pf])
    rc, rf, rr, rp = res[0], res[1:K], res[K : 2 * K - 1], res[2 * K - 1 :]
    exact = rc == tiny and all(r == tiny for r in rf)
    c_last = rc == tiny and not exact
    order, block = "forward", K
    if exact:
        ev += [pr.ev(pc, rc, cut=0, exact=tiny), pr.ev(fwd[0], rf[0], cut=0, exact=tiny)]
        v = {"block": K, "order": "forward", "c_position": "first", "exact": True}
        return Finding("block_structure", v, "nothing is ever cut: the sum is exact (one rounding)", ev)
    ev.append(pr.ev(pc, rc, c_first=0, c_last=tiny))
    if not c_last:
        hit_f = [m for m, r in zip(range(1, K), rf) if r == tiny]
        hit_r = [m for m, r in zip(range(0, K - 1), rr) if r == tiny]
        if hit_f:
            block = hit_f[0]
            ev += [pr.ev(fwd[block - 2], rf[block - 2], same_block=0)] if block > 1 else []
            ev.append(pr.ev(fwd[block - 1], rf[block - 1], next_block=tiny))
        elif hit_r:
            order, block = "reverse", K - 1 - hit_r[-1]
            ev.append(pr.ev(rev[hit_r[-1]], rr[hit_r[-1]], next_block=tiny))
        else:
            ev.append(pr.ev(fwd[-1], rf[-1], same_block=0))
    else:
        hit = [m for m, r in zip(range(2, K), rp) if r == tiny]
        if hit:
            block = hit[0]
            ev.append(pr.ev(pf[block - 2], rp[block - 2], next_block=tiny))
    block = K if block >= K else block
    v = {"block": block, "order": order, "c_position": "last" if c_last else "first", "exact": False}
    detail = (
        f"{block} products fused per step"
        + (" (all of K)" if block == K else f", blocks over K {order}")
        + f"; C enters {'after the products' if c_last else 'with the first block'}"
    )
    return Finding("block_structure", v, detail, ev)


class StepLayout:
    """Positions in the first processed step and in a later one."""

    def __init__(self, K: int, bs: dict):
        self.K, self.b = K, bs["block"]
        self.order, self.c_first = bs["order"], bs["c_position"] == "first"
        ks = list(range(K))
        blocks = [ks[i : i + self.b] for i in range(0, K, self.b)]
        if self.order == "reverse":
            blocks = blocks[::-1]
        self.first = blocks[0]
        self.second = blocks[1] if len(blocks) > 1 else None
        self.slots = len(self.first) + (1 if self.c_first else 0)  # operands of step 1

    def place(self, pr: Prober, values: list[float], later: float | None = None, label="") -> Probe:
        """values go into the first step (C first if C joins it); ``later`` into step 2."""
        vals = list(values)
        c = vals.pop(0) if self.c_first else 0.0
        terms = {f"k{k}": v for k, v in zip(self.first, vals) if v != 0}
        if later is not None:
            terms[f"k{self.second[0]}"] = later
        return pr.probe(c, label, **terms)


def _classify(table: dict[str, tuple[float, ...]], got: tuple[float, ...]) -> str:
    hits = [m for m, exp in table.items() if all(same_value(a, b) for a, b in zip(exp, got))]
    return (
        hits[0]
        if len(hits) == 1
        else ("ambiguous: " + "/".join(hits) if hits else "none of rne/rna/rz/ru/rd")
    )


def accumulation_rounding(pr: Prober, lay: StepLayout, p: int) -> Finding:
    """Carry-out ties, exact in any alignment window: big + big + d with
    d = 0.5 and 1.5 ulp of 2*big, both signs (needs 3 operands in step 1)."""
    big = 2.0**14 if pr.ct.name == "f16" else 1.0
    ulp = 2.0 ** (2 - p) * big
    if lay.slots < 3 and not (lay.c_first and pr.ct.precision >= p):
        return Finding("acc_rounding", "n/a", "fewer than 3 operands per step")
    expose = pr.ct.precision < p  # a 16-bit result hides the step result: cancel it in step 2
    if expose and lay.second is None:
        return Finding("acc_rounding", "n/a", "single step and a 16-bit result: see internal_rounding")
    probes, keys = [], []
    for sgn in (1, -1):
        for h in (0.5, 1.5):
            vals = (
                [sgn * big, sgn * big, sgn * h * ulp]
                if lay.slots >= 3
                else [sgn * (big + h * ulp), sgn * big]
            )
            later = -sgn * 2 * big if expose else None
            probes.append(lay.place(pr, vals, later, f"{'+' if sgn > 0 else '-'}(2+{h}ulp)"))
            keys.append((sgn, h))
    res = pr.run(probes)
    table = {}
    for mode in ("rne", "rna", "rz", "ru", "rd"):
        exp = []
        for sgn, h in keys:
            lo = int(h)  # candidates 2 big + lo ulp and 2 big + (lo + 1) ulp (magnitudes)
            if mode == "rne":
                up_ = lo % 2 == 1  # the tie goes to the even multiple
            elif mode == "rna":
                up_ = True
            else:
                up_ = mode == "ru" and sgn > 0 or mode == "rd" and sgn < 0
            mag = 2 * big + (lo + up_) * ulp
            exp.append(sgn * mag - (sgn * 2 * big if expose else 0.0))
        table[mode] = tuple(exp)
    got = tuple(float(r) for r in res)
    val = _classify(table, got)
    ev = [
        pr.ev(pp, r, **{m: table[m][i] for m in ("rne", "rz")}) for i, (pp, r) in enumerate(zip(probes, res))
    ]
    return Finding("acc_rounding", val, "rounding of each step's normalized sum (carry-out ties)", ev)


def window(pr: Prober, lay: StepLayout, p: int) -> Finding:
    """+big, -big and s = 2^-w big in one step: s survives iff the alignment
    window keeps w bits below big's leading bit; a negative s just outside
    tells truncation (0) from floor (-lsb)."""
    big = 2.0**15 if pr.ct.name == "f16" else 2.0**30 if pr.at.name == "f16" else 2.0**60
    wmax = 39 if pr.ct.name == "f16" else (58 if pr.at.name == "f16" else 100)
    if lay.slots < 3:
        return Finding(
            "window", {"bits": None, "align": "rz"}, "fewer than 3 operands per step: not measurable"
        )
    ws = list(range(1, wmax + 1))
    probes = []
    for w in ws:
        s = big * 2.0**-w
        try:
            probes.append(lay.place(pr, [s, big, -big] if lay.c_first else [big, -big, s], label=f"w={w}"))
        except ValueError:
            break
    res = pr.run(probes)
    kept = [w for w, r, pp in zip(ws, res, probes) if r == big * 2.0**-w]
    wk = max(kept) if kept else 0
    ev = []
    if kept:
        i = kept.index(wk)
        ev.append(pr.ev(probes[i], res[i], kept=big * 2.0**-wk))
    if wk < len(probes):
        ev.append(pr.ev(probes[wk], res[wk], kept=big * 2.0 ** -(wk + 1), cut=0))
    align, ref = "rz", "value"
    if wk < len(probes):
        s = -big * 2.0 ** -(wk + 1)
        pn = lay.place(pr, [s, big, -big] if lay.c_first else [big, -big, s], label="negative just outside")
        # the same cut with products of significand 2.25 (1.5 x 1.5): aligned by the
        # sum of the input exponents, they sit one bit higher and keep one more bit
        e = int(math.log2(big))
        h = (e - 1) // 2
        pp = (1.5 * 2.0**h, 1.5 * 2.0 ** (e - 1 - h))
        pm = (-pp[0], pp[1])
        s2 = big * 2.0 ** -(wk + 1)
        pi = lay.place(
            pr, [s2, pp, pm] if lay.c_first else [pp, pm, s2], label="products 1.5*1.5, just outside"
        )
        rn, ri = pr.run([pn, pi])
        align = "rd" if rn == -big * 2.0**-wk else "rz"
        ref = "inputs" if ri == s2 else "value"
        ev.append(pr.ev(pn, rn, rz=0, rd=-big * 2.0**-wk))
        ev.append(pr.ev(pi, ri, value=0, inputs=s2))
    bits = wk + 1 if wk < len(probes) else None
    detail = (
        f"operands aligned to the largest exponent keep {bits} bits (p{bits - p:+d}), cut by "
        + ("truncation toward zero" if align == "rz" else "two's-complement floor")
        + (
            "; products are aligned by the sum of their input exponents (before normalization)"
            if ref == "inputs"
            else "; products are aligned by their value's exponent"
        )
        if bits
        else "no cut seen (exact alignment)"
    )
    value = {"bits": bits, "extra_bits": None if bits is None else bits - p, "align": align, "align_ref": ref}
    return Finding("window", value, detail, ev)


def acc_precision(pr: Prober, lay: StepLayout) -> Finding:
    """big + 2^-j big in step 1, -big in step 2: the residue survives iff the
    accumulator between steps holds j + 1 bits."""
    if lay.second is None or lay.slots < 2:
        return Finding("acc_precision", None, "single step: no accumulator between steps")
    big = 2.0**14 if pr.ct.name == "f16" else 1.0
    js, probes = [], []
    for j in range(1, 61):
        try:
            probes.append(lay.place(pr, [big, big * 2.0**-j], later=-big, label=f"j={j}"))
        except ValueError:
            break
        js.append(j)
    res = pr.run(probes)
    kept = [j for j, r in zip(js, res) if r == big * 2.0**-j]
    p = max(kept) + 1 if kept else None
    ev = [pr.ev(probes[p - 2], res[p - 2], kept=big * 2.0 ** -(p - 1))] if p else []
    if p and p - 1 < len(probes):
        ev.append(pr.ev(probes[p - 1], res[p - 1], kept=big * 2.0**-p, lost=0))
    return Finding("acc_precision", p, f"the accumulator between steps holds {p} significant bits", ev)


def out_rounding(pr: Prober, lay: StepLayout) -> Finding:
    """16-bit results: sums exact in fp32 that need one rounding to the
    result type (0.5, 0.75 and 1.5 ulp above 1, both signs)."""
    ct = pr.ct
    if ct.precision >= 24:
        return Finding("out_rounding", "n/a", f"the result type {ct.name} is the accumulator format")
    if lay.slots < 2:
        return Finding("out_rounding", "n/a", "fewer than 2 operands per step")
    u = 2.0**-ct.man_bits
    cases = [(1.0, 0.5 * u), (1.0, 0.75 * u), (1.0 + u, 0.5 * u)]
    probes, exact = [], []
    for sgn in (1, -1):
        for a, d in cases:
            probes.append(lay.place(pr, [sgn * a, sgn * d], label=f"{fmt_value(sgn * (a + d))}"))
            exact.append(sgn * (a + d))
    res = pr.run(probes)
    from reference.devmodel import round_to_format

    table = {
        m: tuple(float(v) for v in round_to_format(np.array(exact), ct, m))
        for m in ("rne", "rna", "rz", "ru", "rd")
    }
    val = _classify(table, tuple(float(r) for r in res))
    ev = [pr.ev(p, r, rne=table["rne"][i], rz=table["rz"][i]) for i, (p, r) in enumerate(zip(probes, res))]
    return Finding("out_rounding", val, f"conversion of the accumulator to {ct.name}", ev)


def internal_rounding(pr: Prober, lay: StepLayout, out_mode: str) -> Finding:
    """16-bit result of a single step: is the step sum rounded to fp32 (and
    how) before the conversion?  1 + u/2 (a tie of the result type) plus
    2^-25 or 3*2^-25: above the tie only if those bits reach the conversion
    (a fp32 RNE step moves 1 + u/2 + 2^-25 onto the tie, which goes to even)."""
    ct = pr.ct
    if ct.precision >= 24 or lay.slots < 3 or out_mode not in ("rne", "rna"):
        return Finding(
            "internal_rounding", "n/a", "needs a 16-bit result, 3 operands per step, nearest conversion"
        )
    u = 2.0**-ct.man_bits
    xs = [2.0**-25, 3 * 2.0**-25]
    probes = [lay.place(pr, [1.0, 0.5 * u, x], label=f"1+u/2+{fmt_value(x)}") for x in xs]
    res = pr.run(probes)
    up = [r == 1 + u for r in res]
    if up[0]:
        val = "none"
    elif up[1]:
        val = "rne"
    else:
        val = "rz"
    ev = [pr.ev(p, r, above_tie=1 + u, tie=1.0) for p, r in zip(probes, res)]
    detail = {
        "none": "no rounding to fp32 before the conversion (2^-25 reaches it)",
        "rne": "the step sum is rounded to nearest fp32 first (3*2^-25 rounds up)",
        "rz": "the step sum is truncated (fp32, or a window < 26 bits) before the conversion",
    }[val]
    return Finding("internal_rounding", val, detail, ev)


def specials(pr: Prober) -> list[Finding]:
    inf, nan = math.inf, math.nan
    ps = [
        pr.probe(0, "inf*1", k0=(inf, 1.0)),
        pr.probe(0, "inf*0", k0=(inf, 0.0)),
        pr.probe(0, "inf-inf", k0=(inf, 1.0), k1=(-inf, 1.0)),
        pr.probe(1.0, "NaN*1", k0=(nan, 1.0)),
        pr.probe(inf, "C=inf"),
    ]
    over = 2.0 ** (pr.ct.emax + 2)
    try:
        ps.append(pr.probe(0, "overflow", k0=over))
    except ValueError:
        pass
    res = pr.run(ps)
    ieee = [inf, nan, nan, nan, inf]
    ok = [same_value(float(r), e) for r, e in zip(res, ieee)]
    out = [
        Finding(
            "nan_inf",
            "ieee" if all(ok) else "non-ieee: " + ", ".join(p.label for p, o in zip(ps, ok) if not o),
            "inf*0, inf-inf and NaN inputs give NaN; infinities propagate",
            [pr.ev(p, r, ieee=e) for p, r, e in zip(ps, res, ieee)],
        )
    ]
    if len(ps) > 5:
        r = float(res[5])
        val = "inf" if r == inf else ("saturate" if r == pr.ct.max_finite else f"other ({fmt_value(r)})")
        out.append(Finding("overflow", val, f"one product of {fmt_value(over)}", [pr.ev(ps[5], r, inf=inf)]))
    else:
        out.append(Finding("overflow", "n/a", f"no product of two {pr.at.name} overflows {pr.ct.name}"))
    return out
