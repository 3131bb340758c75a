"""The fingerprint of one target: run the experiments of ``cts.numerics.probes`` in
order, infer the device model (reference/devmodel.py), replay the model on
every probe the device answered, and check it bit for bit on random tiles
(the ``model`` tier)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from cts.numerics.probes import (
    Finding,
    Prober,
    StepLayout,
    Target,
    acc_precision,
    accumulation_rounding,
    block_structure,
    fmt_value,
    internal_rounding,
    out_rounding,
    products,
    same_value,
    specials,
    subnormals,
    window,
)
from reference.devmodel import DevModel, model_mma
from reference.dtypes import etype

__all__ = [
    "Fingerprint",
    "fingerprint",
    "infer_model",
    "random_operands",
    "model_check",
    "DISTS",
    "replay_model",
    "equal_bits",
]


# ----------------------------------------------------------- the model
_P_FORMAT = {24: "f32", 11: "f16", 8: "bf16"}


def infer_model(f: dict[str, Finding], t: Target) -> DevModel:
    bs = f["block_structure"].value
    ap = f["acc_precision"].value
    acc = _P_FORMAT.get(ap, "f32") if ap else ("f32" if etype(t.c_type).precision <= 24 else t.c_type)
    p = etype(acc).precision
    win = f["window"].value
    extra = None if win["bits"] is None else win["bits"] - p
    ir = f.get("internal_rounding")
    single = bs["block"] >= t.K or bs.get("exact")
    if ir is not None and ir.value == "none" and single and win["bits"] is not None:
        acc = "f64"  # the window's sum reaches the conversion unrounded
        extra = win["bits"] - etype(acc).precision
    ar = f["acc_rounding"].value
    if ar not in ("rne", "rna", "rz", "ru", "rd"):
        ar = ir.value if ir is not None and ir.value in ("rne", "rz") else "rne"
    orr = f["out_rounding"].value
    orr = orr if orr in ("rne", "rna", "rz", "ru", "rd") else "rne"
    sub_in = "flush" if f["subnormal_inputs"].value == "flush" else "keep"
    sub_c = "flush" if f["subnormal_c"].value == "flush" else "keep"
    sres = f["subnormal_results"].value
    sub_out = "flush" if sres == "flush" else ("keep" if sres == "keep" else sub_c)
    ov = f["overflow"].value
    directed = (orr if etype(t.c_type).precision < p else ar) in ("rz", "rd", "ru")
    overflow = "inf" if ov == "inf" and directed else "ieee"
    return DevModel(
        name=f"inferred:{t.device}:{t.key}",
        block=0 if bs["block"] >= t.K else bs["block"],
        order=bs["order"],
        c_position=bs["c_position"],
        extra_bits=extra,
        align=win["align"],
        align_ref=win.get("align_ref", "value"),
        acc_format=acc,
        acc_rounding=ar,
        out_rounding=orr,
        product_format=(
            ("tf32" if t.a_type == "f16" else t.a_type)
            if str(f["products"].value).startswith("rounded")
            else None
        ),
        subnormal_inputs=sub_in,
        subnormal_acc=sub_c,
        subnormal_out=sub_out,
        overflow=overflow,
    )


def _replay(pr: Prober, model: DevModel) -> dict:
    """Run the inferred model on every probe the device answered."""
    t = pr.t
    n = len(pr.history)
    A, B, C = np.zeros((n, t.M, t.K)), np.zeros((n, t.K, t.N)), np.zeros((n, t.M, t.N))
    for i, (p, _) in enumerate(pr.history):
        C[i, 0, 0] = p.c
        for k, (a, b) in p.terms.items():
            A[i, 0, k], B[i, k, 0] = a, b
    D = model_mma(model, A, B, C, t.a_type, t.c_type)[:, 0, 0]
    bad = [
        {"input": p.describe(), "label": p.label, "device": fmt_value(r), "model": fmt_value(d)}
        for (p, r), d in zip(pr.history, D)
        if not same_value(float(r), float(d))
    ]
    return {"probes": n, "consistent": n - len(bad), "mismatches": bad[:10]}


@dataclass
class Fingerprint:
    device: str
    key: str
    findings: dict[str, Finding]
    model: DevModel
    replay: dict
    calls: int
    assumed: list[str] = field(default_factory=list)
    prober: Prober | None = field(default=None, repr=False, compare=False)  # the probes, for a replay

    def as_dict(self) -> dict:
        return {
            "device": self.device,
            "target": self.key,
            "findings": {k: v.as_dict() for k, v in self.findings.items()},
            "model": self.model.as_dict(),
            "model_summary": self.model.summary(),
            "replay": self.replay,
            "mma_calls": self.calls,
            "assumed": self.assumed,
        }


def fingerprint(t: Target) -> Fingerprint:
    """All experiments on one target, the inferred model, and its replay on
    every probe input."""
    pr = Prober(t)
    f: dict[str, Finding] = {}
    f["products"] = products(pr)
    for x in subnormals(pr):
        f[x.prop] = x
    f["block_structure"] = block_structure(pr)
    lay = StepLayout(t.K, f["block_structure"].value)
    f["acc_precision"] = acc_precision(pr, lay)
    p = f["acc_precision"].value or 24
    if p < 2 * pr.at.precision and f["products"].value != "exact":
        f["products"].value = "n/a"
        f["products"].detail += f" (undecidable: the accumulator holds {p} bits)"
    f["acc_rounding"] = accumulation_rounding(pr, lay, p)
    f["window"] = window(pr, lay, p)
    f["out_rounding"] = out_rounding(pr, lay)
    f["internal_rounding"] = internal_rounding(pr, lay, f["out_rounding"].value)
    for x in specials(pr):
        f[x.prop] = x
    model = infer_model(f, t)
    f["monotonicity"] = monotonicity(pr, lay, model)
    return Fingerprint(t.device, t.key, f, model, _replay(pr, model), pr.calls, assumed(f, t), pr)


def replay_model(fp: Fingerprint, model: DevModel) -> dict:
    """Another model's replay on the probes this fingerprint ran."""
    return _replay(fp.prober, model)


def assumed(f: dict[str, Finding], t: Target) -> list[str]:
    """Model parameters no experiment could decide for this target (they
    are set to a default that cannot change any result the target gives)."""
    out = []
    if etype(t.c_type).precision >= 24:
        out.append("out_rounding")
    elif f["out_rounding"].value not in ("rne", "rna", "rz", "ru", "rd"):
        out.append("out_rounding")
    if f["overflow"].value == "n/a":
        out.append("overflow")
    if f["subnormal_results"].value == "n/a":
        out.append("subnormal_out")
    if f["products"].value == "n/a":
        out.append("product_format")
    bs = f["block_structure"].value
    if bs.get("exact"):
        out += ["block", "order", "c_position", "extra_bits", "align", "acc_rounding"]
    if bs["block"] >= t.K:
        out.append("order")
    if f["window"].value["bits"] is None:
        out += ["align", "align_ref"]
    if f["acc_precision"].value is None:
        out.append("acc_format")
    if f["acc_rounding"].value not in ("rne", "rna", "rz", "ru", "rd") and f["internal_rounding"].value in (
        "n/a",
        "none",
    ):
        out.append("acc_rounding")
    return sorted(set(out))


def monotonicity(pr: Prober, lay: StepLayout, model: DevModel) -> Finding:
    """Fasi et al.'s non-monotonicity of multi-operand adders without
    intermediate normalization: raising the largest operand past a power of
    two moves the window and cuts the small ones.  Candidate pairs are
    chosen with the inferred model, then run on the device."""
    if lay.slots < 3 or model.extra_bits is None:
        return Finding("monotonicity", "n/a", "needs 3 operands per step and a finite window")
    t = pr.t
    p = etype(model.acc_format).precision
    e = model.extra_bits
    big = 2.0**14 if pr.ct.name == "f16" else 1.0
    lows = [big * (1 - 2.0**-p), big * (1 - 2.0**-11), big * (1 - 2.0**-8)]
    cands = []
    for lo in lows:
        for m in range(1, lay.slots):
            for s in (2.0 ** -(p + e), 3 * 2.0 ** -(p + e + 1), 2.0 ** -(p + e - 1) * 3 / 2):
                try:
                    x = lay.place(pr, [lo] + [s * big] * m, label=f"largest {fmt_value(lo)}")
                    y = lay.place(pr, [big] + [s * big] * m, label=f"largest {fmt_value(big)}")
                except (ValueError, TypeError):
                    continue
                cands.append((x, y))
    if not cands:
        return Finding("monotonicity", "n/a", "no candidate inputs representable")
    n = len(cands)
    A, B, C = np.zeros((2 * n, t.M, t.K)), np.zeros((2 * n, t.K, t.N)), np.zeros((2 * n, t.M, t.N))
    for i, pp in enumerate([c for pair in cands for c in pair]):
        C[i, 0, 0] = pp.c
        for k, (a, b) in pp.terms.items():
            A[i, 0, k], B[i, k, 0] = a, b
    D = model_mma(model, A, B, C, t.a_type, t.c_type)[:, 0, 0].reshape(n, 2)
    viol = [i for i in range(n) if D[i, 0] > D[i, 1]]
    if not viol:
        return Finding(
            "monotonicity", "no violation predicted", "the inferred model predicts none for these inputs"
        )
    x, y = cands[viol[0]]
    rx, ry = pr.run([x, y])
    val = "non-monotone" if rx > ry else "monotone on the predicted pair"
    return Finding(
        "monotonicity",
        val,
        "a larger operand gave a smaller sum" if rx > ry else "the predicted violation did not happen",
        [pr.ev(x, rx, model=D[viol[0], 0]), pr.ev(y, ry, model=D[viol[0], 1])],
    )


# ------------------------------------------------------ the model tier
DISTS = ("mixed", "wide", "cancel")


def random_operands(a: str, c: str, S: int, M: int, N: int, K: int, seed: int, dist: str = "mixed") -> tuple:
    """Random tiles, rounded to the input / accumulator types, random signs.

    * ``mixed``: half the elements uniform in [0, 1), half log-uniform in [2^-12, 2^4).
    * ``wide``: log-uniform over most of each type's range, subnormals
      included (products and sums may underflow, and 16-bit results overflow).
    * ``cancel``: ``mixed`` A and B, and C = -(A B) rounded to the accumulator
      type plus a small random term: massive cancellation, the alignment
      window decides the low bits.
    """
    if dist not in DISTS:
        raise ValueError(f"unknown distribution {dist!r}; known: {', '.join(DISTS)}")
    rng = np.random.default_rng(seed)
    at, ct = etype(a), etype(c)

    def draw(shape, t):
        if dist == "wide":
            hi = 5 if t.exp_bits == 5 else 40
            e = rng.uniform(t.emin - t.man_bits, hi, shape)
            mag = 2.0**e
        else:
            mag = np.where(rng.random(shape) < 0.5, rng.random(shape), 2.0 ** rng.uniform(-12, 4, shape))
        return t.round(np.where(rng.random(shape) < 0.5, -mag, mag))

    A, B, C = draw((S, M, K), at), draw((S, K, N), at), draw((S, M, N), ct)
    if dist == "cancel":
        with np.errstate(over="ignore"):
            C = ct.round(-(A @ B) + C * 2.0**-12)
    return A, B, C


def equal_bits(d: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Bit-exact up to the sign of zero (which no spec fixes, Rule E)."""
    return (d == m) | (np.isnan(d) & np.isnan(m))


_VARIANTS = {
    "extra_bits": [0, 1, 2, 3, 4, 5, 6, 8, 10, 13, None],
    "acc_rounding": ["rne", "rna", "rz", "ru", "rd"],
    "out_rounding": ["rne", "rna", "rz", "ru", "rd"],
    "align": ["rz", "rd"],
    "block": [0, 1, 2, 4, 8],
    "order": ["forward", "reverse"],
    "c_position": ["first", "last"],
    "acc_format": ["f32", "f16", "bf16"],
}


def explain(model: DevModel, t: Target, bad: tuple, good: tuple) -> list[dict]:
    """One-parameter variants of the model, scored on the mismatching tiles
    (``bad``) and on matching ones (``good``): a variant that fixes the
    mismatches without breaking the rest says what the device does instead."""
    out = []
    db = model_mma(model, *bad[:3], t.a_type, t.c_type)
    n_bad = int((~equal_bits(bad[3], db)).sum())
    for p, values in _VARIANTS.items():
        for v in values:
            if getattr(model, p) == v:
                continue
            mv = model.with_(**{p: v})
            fb = int((~equal_bits(bad[3], model_mma(mv, *bad[:3], t.a_type, t.c_type))).sum())
            fg = int((~equal_bits(good[3], model_mma(mv, *good[:3], t.a_type, t.c_type))).sum())
            out.append({"change": f"{p}={v}", "mismatches_left": fb, "of": n_bad, "breaks_matching": fg})
    out.sort(key=lambda r: (r["mismatches_left"] + r["breaks_matching"], r["change"]))
    return out[:8]


def _chunk_eval(args: tuple) -> np.ndarray:
    model, a, c, A, B, C = args
    return model_mma(model, A, B, C, a, c)


def model_check(
    t: Target,
    model: DevModel,
    tiles: int,
    seed: int = 1,
    chunk: int = 2000,
    keep: int = 12,
    jobs: int = 1,
    dist: str = "mixed",
) -> dict:
    """The ``model`` tier: ``tiles`` random tiles through the device and the
    model; counts tiles and elements reproduced bit for bit.  The device runs
    first (chunk by chunk, in this process); the model is evaluated in
    ``jobs`` worker processes."""
    n_el = n_bad = n_tiles_ok = zero_sign = 0
    examples: list[dict] = []
    bad_rows: list[tuple] = []
    good_rows: list[tuple] = []
    digest = hashlib.sha256()
    ct = etype(t.c_type)
    runs = []
    for i, start in enumerate(range(0, tiles, chunk)):
        S = min(chunk, tiles - start)
        A, B, C = random_operands(t.a_type, t.c_type, S, t.M, t.N, t.K, seed * 100003 + i, dist)
        D = np.asarray(t.mma(A, B, C), dtype=np.float64)
        digest.update(ct.encode(D).astype(np.uint64).tobytes())
        runs.append((start, A, B, C, D))
    work = [(model, t.a_type, t.c_type, A, B, C) for _, A, B, C, _ in runs]
    if jobs > 1 and len(work) > 1:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(jobs) as pool:
            models = pool.map(_chunk_eval, work)
    else:
        models = [_chunk_eval(w) for w in work]
    for (start, A, B, C, D), Mo in zip(runs, models):
        S = A.shape[0]
        eq = equal_bits(D, Mo)
        zero_sign += int(((D == 0) & (Mo == 0) & (np.signbit(D) != np.signbit(Mo))).sum())
        n_el += eq.size
        n_bad += int((~eq).sum())
        tile_ok = eq.reshape(S, -1).all(axis=1)
        n_tiles_ok += int(tile_ok.sum())
        for s in np.nonzero(~tile_ok)[0]:
            if len(bad_rows) < 256:
                bad_rows.append((A[s], B[s], C[s], D[s]))
            for r, c in np.argwhere(~eq[s])[: max(0, keep - len(examples))]:
                exact = float(A[s, r] @ B[s, :, c] + C[s, r, c])
                examples.append(
                    {
                        "tile": int(start + s),
                        "row": int(r),
                        "col": int(c),
                        "device": fmt_value(D[s, r, c]),
                        "device_bits": hex(int(ct.encode(np.array([D[s, r, c]]))[0])),
                        "model": fmt_value(Mo[s, r, c]),
                        "model_bits": hex(int(ct.encode(np.array([Mo[s, r, c]]))[0])),
                        "exact": repr(exact),
                        "ulps": float((D[s, r, c] - Mo[s, r, c]) / ct.ulp(np.array([Mo[s, r, c]]))[0]),
                    }
                )
        for s in np.nonzero(tile_ok)[0][:4]:
            if len(good_rows) < 64:
                good_rows.append((A[s], B[s], C[s], D[s]))
    res = {
        "tiles": tiles,
        "tiles_bit_exact": n_tiles_ok,
        "elements": n_el,
        "elements_mismatching": n_bad,
        "zero_sign_differences": zero_sign,
        "seed": seed,
        "dist": dist,
        "chunk": chunk,
        "results_sha256": digest.hexdigest(),
        "examples": examples,
    }
    if bad_rows and good_rows:
        stack = lambda rows: tuple(np.stack([r[j] for r in rows]) for j in range(4))  # noqa: E731
        res["variants"] = explain(model, t, stack(bad_rows), stack(good_rows))
    return res
