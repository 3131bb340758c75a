"""Case space of NV cooperative matrix 2 (``VK_NV_cooperative_matrix2``,
SPV_NV_cooperative_matrix2 + SPV_NV_tensor_addressing).

Sources of the space: the KHR property entries of the session (the
cooperative-matrix family's: the device's or ``--coop-profile``) give the
matrix types; ``Coop2Props`` gives the seven features of
``VkPhysicalDeviceCooperativeMatrix2FeaturesNV``, the limits of
``VkPhysicalDeviceCooperativeMatrix2PropertiesNV`` and the
``VkCooperativeMatrixFlexibleDimensionsPropertiesNV`` entries (the device's,
or ``ASSUMED`` on the emulator: an H100-like table the suite assumes, not a
measurement).

Operations (id token = op, then the variant):

* ``reduce-<row|col|rowcol|2x2>-<sum|min|max>-<same|outRxC>``:
  OpCooperativeMatrixReduceNV on accumulators (feature reductions), with the
  Result shape equal to the source (``same``) or changed (``outRxC``: Row and
  Column halve or double the free dimension, Row|Column halve or double both,
  2x2 halves both, from a (2R, 2C) source where flexible dimensions allow).
* ``perelem-<rc|scalar|mat>``: OpCooperativeMatrixPerElementOpNV with Func(row,
  col, x) = x + row*C + col; ``scalar`` adds an extra scalar operand s
  (x*s + row*C + col), ``mat`` an extra matrix operand y (x - 2y + row*C + col)
  (feature perElementOperations).
* ``convert-<acc_a|acc_b|transpose>``: Accumulator -> A / B
  (OpCooperativeMatrixConvertNV for the same component type,
  Op{F,S,U}Convert where it changes too) and OpCooperativeMatrixTransposeNV
  (feature conversions).
* ``tensor-<ld-d1..d5|ld-const|ld-edge|ld-repeat|ld-mirror|ld-perm|ld-clip|
  ld-vstride|st-d2|st-d3|st-const|st-clip>``: OpCooperativeMatrixLoad/
  StoreTensorNV through tensor layouts of 1 to 5 dimensions, the four clamp
  modes, tensor views (permutation, own dimensions and strides, clip)
  (feature tensorAddressing).
* ``decode-<1x4|2x2>``: block loads with a DecodeFunc (packed bytes ->
  fp16) over blocks of 1x4 and 2x2 (feature blockLoads).
* ``flex-m..n..k..``: MulAdd at flexible dimensions (twice each granularity)
  per flexible-dimension entry; a ``wg`` scope entry runs at workgroup scope
  with its workgroupInvocations (features flexibleDimensions,
  workgroupScope).

Every case's id ends with the matrix type and scope (``-C16x16-f16-sg``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from reference.dtypes import etype

__all__ = [
    "COOP2_EXTENSION",
    "FEATURES",
    "FlexEntry",
    "Coop2Props",
    "ASSUMED",
    "Coop2Case",
    "coop2_cases",
    "type_supported",
    "tensor_plan",
    "TENSOR_VARIANTS",
    "DECODE_VARIANTS",
    "PERELEM_SCALAR",
    "CLIP_FILL",
    "CLAMP_FILL",
    "fill_value",
    "clamp_bits",
]

COOP2_EXTENSION = "VK_NV_cooperative_matrix2"
# VkPhysicalDeviceCooperativeMatrix2FeaturesNV members, in order
FEATURES = (
    "cooperativeMatrixWorkgroupScope",
    "cooperativeMatrixFlexibleDimensions",
    "cooperativeMatrixReductions",
    "cooperativeMatrixConversions",
    "cooperativeMatrixPerElementOperations",
    "cooperativeMatrixTensorAddressing",
    "cooperativeMatrixBlockLoads",
)
OP_FEATURE = {
    "reduce": "cooperativeMatrixReductions",
    "perelem": "cooperativeMatrixPerElementOperations",
    "convert": "cooperativeMatrixConversions",
    "tensor": "cooperativeMatrixTensorAddressing",
    "decode": "cooperativeMatrixBlockLoads",
    "flex": "cooperativeMatrixFlexibleDimensions",
}
PERELEM_SCALAR = 3  # the extra scalar operand of perelem-scalar
CLIP_FILL = 0.25  # elements of the Object operand (kept where a load is clipped); integers: 7
CLAMP_FILL = 0.5  # the clamp value of Constant loads (as the element's bits); integers: 5


@dataclass(frozen=True)
class FlexEntry:
    """One VkCooperativeMatrixFlexibleDimensionsPropertiesNV."""

    Mg: int
    Ng: int
    Kg: int
    A: str
    B: str
    C: str
    R: str
    sat: bool = False
    scope: str = "subgroup"
    wg: int = 0  # workgroupInvocations (workgroup scope)


@dataclass(frozen=True)
class Coop2Props:
    features: frozenset = frozenset()
    max_dim: int = 0  # cooperativeMatrixFlexibleDimensionsMaxDimension
    wg_max: int = 0  # cooperativeMatrixWorkgroupScopeMaxWorkgroupSize
    flex: tuple[FlexEntry, ...] = ()
    source: str = ""


ASSUMED = Coop2Props(
    frozenset(FEATURES),
    256,
    256,
    (
        FlexEntry(16, 16, 16, "f16", "f16", "f32", "f32"),
        FlexEntry(16, 16, 16, "f16", "f16", "f16", "f16"),
        FlexEntry(16, 16, 16, "f16", "f16", "f32", "f32", scope="workgroup", wg=128),
    ),
    "assumed (H100-like; the emulator's default, not a measurement)",
)

TENSOR_VARIANTS = (
    "ld-d1",
    "ld-d2",
    "ld-d3",
    "ld-d4",
    "ld-d5",
    "ld-const",
    "ld-edge",
    "ld-repeat",
    "ld-mirror",
    "ld-perm",
    "ld-clip",
    "ld-vstride",
    "st-d2",
    "st-d3",
    "st-const",
    "st-clip",
)
DECODE_VARIANTS = ("1x4", "2x2")
SCOPE_ID = {"subgroup": "sg", "workgroup": "wg"}


@dataclass(frozen=True)
class Coop2Case:
    op: str
    variant: str
    use: str  # use of the source matrix: A, B, C
    rows: int
    cols: int
    t: str
    scope: str = "subgroup"
    to: str = ""  # convert: destination type
    out: tuple[int, int] = (0, 0)  # reduce / convert: result shape
    flex: FlexEntry | None = None
    K: int = 0
    sg: int = 32
    wg: int = 0  # invocations per workgroup (0: one subgroup)
    tier: str = "exact"
    family: str = "coop_matrix2"

    @property
    def id(self) -> str:
        if self.op == "flex":
            f = self.flex
            return (
                f"vk2-flex-m{self.rows}n{self.cols}k{self.K}-{f.A}_{f.B}_{f.C}_{f.R}-{SCOPE_ID[self.scope]}"
                + (f"{self.wg}" if self.scope == "workgroup" else "")
            )
        to = f"_to_{self.to}" if self.to else ""
        wg = f"{self.wg}" if self.scope == "workgroup" else ""
        return f"vk2-{self.op}-{self.variant}-{self.use}{self.rows}x{self.cols}-{self.t}{to}-{SCOPE_ID[self.scope]}{wg}"

    @property
    def feature(self) -> str:
        return OP_FEATURE[self.op]

    @property
    def invocations(self) -> int:
        return self.wg or self.sg

    @property
    def spec_row(self) -> str:
        return {
            "reduce": "OpCooperativeMatrixReduceNV",
            "perelem": "OpCooperativeMatrixPerElementOpNV",
            "convert": {
                "acc_a": "OpCooperativeMatrixConvertNV / Op*Convert (Accumulator -> A)",
                "acc_b": "OpCooperativeMatrixConvertNV / Op*Convert (Accumulator -> B)",
                "transpose": "OpCooperativeMatrixTransposeNV",
            }.get(self.variant, "conversions"),
            "tensor": "OpCooperativeMatrixLoadTensorNV / StoreTensorNV (tensor layout, view, clamp)",
            "decode": "OpCooperativeMatrixLoadTensorNV with DecodeFunc (block loads)",
            "flex": "OpCooperativeMatrixMulAddKHR at flexible dimensions / workgroup scope",
        }[self.op] + f" {self.variant}"

    @property
    def axes(self) -> dict:
        d = {
            "op": self.op,
            "variant": self.variant,
            "use": self.use,
            "rows": self.rows,
            "cols": self.cols,
            "type": self.t,
            "scope": self.scope,
            "feature": self.feature,
        }
        if self.to:
            d["to"] = self.to
        if self.out != (0, 0):
            d["out"] = f"{self.out[0]}x{self.out[1]}"
        if self.K:
            d["K"] = self.K
        return d


# ------------------------------------------------------------ matrix types
@dataclass(frozen=True)
class _Type:
    use: str
    rows: int
    cols: int
    t: str
    scope: str = "subgroup"


def _khr_types(entries) -> set:
    out = set()
    for e in entries:
        out.add(_Type("A", e.M, e.K, e.A, e.scope))
        out.add(_Type("B", e.K, e.N, e.B, e.scope))
        out.add(_Type("C", e.M, e.N, e.C, e.scope))
        out.add(_Type("C", e.M, e.N, e.R, e.scope))
    return out


def type_supported(use, rows, cols, t, scope, entries, props: Coop2Props, wg: int = 0) -> str | None:
    """None if the matrix type is one a KHR entry allows, or one a flexible
    dimension entry allows (dimensions multiples of its granularity, at most
    cooperativeMatrixFlexibleDimensionsMaxDimension; at workgroup scope an
    entry for ``wg`` invocations); else the skip reason."""
    if _Type(use, rows, cols, t, scope) in _khr_types(entries):
        return None
    tag = f"{use}{rows}x{cols}-{t} at {scope} scope" + (f" with {wg} invocations" if wg else "")
    if "cooperativeMatrixFlexibleDimensions" not in props.features:
        return f"no reported entry has the matrix type {tag} (and cooperativeMatrixFlexibleDimensions is not supported)"
    for f in props.flex:
        if f.scope != scope or (wg and f.wg != wg):
            continue
        gr, gc, ts = {"A": (f.Mg, f.Kg, (f.A,)), "B": (f.Kg, f.Ng, (f.B,)), "C": (f.Mg, f.Ng, (f.C, f.R))}[
            use
        ]
        if t in ts and rows % gr == 0 and cols % gc == 0:
            if max(rows, cols) > props.max_dim:
                return (
                    f"matrix type {tag}: a dimension exceeds cooperativeMatrixFlexibleDimensionsMaxDimension "
                    f"= {props.max_dim}"
                )
            return None
    return f"no KHR entry or flexible-dimension entry has the matrix type {tag}"


def _acc_types(entries) -> list[_Type]:
    """One accumulator type per component type: the first (largest) shape."""
    seen: dict[str, _Type] = {}
    for e in sorted(entries, key=lambda e: -(e.M * e.N)):
        if e.scope != "subgroup":
            continue
        for t in (e.C, e.R):
            seen.setdefault(t, _Type("C", e.M, e.N, t))
    return list(seen.values())


def _first_ok(cands, t, entries, props):
    for r, c in cands:
        if r >= 1 and c >= 1 and type_supported("C", r, c, t, "subgroup", entries, props) is None:
            return r, c
    return cands[0]


def _reduce_cases(entries, props, sg):
    out = []
    for m in _acc_types(entries):
        R, C, t = m.rows, m.cols, m.t
        shapes = [("row", (R, C)), ("col", (R, C)), ("rowcol", (R, C))]
        # changed dimensions: a smaller and a larger Result (VK-GL-CTS's changedim cases are 3x larger)
        shapes += [("row", (R, C // 2)), ("row", (R, 2 * C)), ("col", (R // 2, C)), ("col", (2 * R, C))]
        shapes.append(("rowcol", _first_ok([(R // 2, C // 2), (R, C // 2)], t, entries, props)))
        shapes.append(("rowcol", (2 * R, 2 * C)))
        # 2x2 halves both dimensions: from a (2R, 2C) source where one is allowed (flexible
        # dimensions), else from (R, C) to (R/2, C/2)
        big = type_supported("C", 2 * R, 2 * C, t, "subgroup", entries, props) is None
        for mode, shp in shapes + [("2x2", (R, C) if big else (R // 2, C // 2))]:
            sr, sc = (2 * R, 2 * C) if mode == "2x2" and big else (R, C)
            for comb in ("sum", "min", "max"):
                tag = "same" if shp == (sr, sc) else f"out{shp[0]}x{shp[1]}"
                out.append(Coop2Case("reduce", f"{mode}-{comb}-{tag}", "C", sr, sc, t, out=shp, sg=sg))
    return out


def _perelem_exact(m: _Type) -> bool:
    """Func's results (|x * 3| + row*C + col, below R*C + 16) and its converted
    index (row*C + col) are exact in the type: a float type holds every integer
    up to 2**precision, and above that a device that rounds the converted index
    and then the sum (two roundings, both correct) differs from the reference's
    one rounding of the exact value (bf16 16x32: bf16(bf16(511) + 3) = 516,
    bf16(514) = 512)."""
    et = etype(m.t)
    return not et.is_float or m.rows * m.cols + 16 <= 2**et.precision


def _perelem_cases(entries, sg):
    """Per-element ops on each accumulator type and the first float A type
    whose Func results are exact (:func:`_perelem_exact`)."""
    mats = [m for m in _acc_types(entries) if _perelem_exact(m)]
    a_types = (_Type("A", e.M, e.K, e.A) for e in entries if e.scope == "subgroup" and etype(e.A).is_float)
    a = next((m for m in a_types if _perelem_exact(m)), None)
    if a is not None:
        mats.append(a)
    return [
        Coop2Case("perelem", v, m.use, m.rows, m.cols, m.t, sg=sg)
        for m in mats
        for v in ("rc", "scalar", "mat")
    ]


def _convert_cases(entries, sg):
    seen = {}
    for e in entries:
        if e.scope != "subgroup":
            continue
        for v, (r, c, src, dst, use) in (
            ("acc_a", (e.M, e.K, e.C, e.A, "C")),
            ("acc_b", (e.K, e.N, e.R, e.B, "C")),
            ("transpose", (e.N, e.K, e.B, e.B, "C")),
        ):
            if etype(src).is_float != etype(dst).is_float:
                continue  # float <-> integer conversions with a Use change: not enumerated
            k = (v, r, c, src, dst)
            if k not in seen:
                out = (c, r) if v == "transpose" else (r, c)
                seen[k] = Coop2Case(
                    "convert", v, use, r, c, src, to=dst if dst != src else "", out=out, sg=sg
                )
    return list(seen.values())


def _tensor_cases(entries, sg):
    out = []
    floats = [m for m in _acc_types(entries) if etype(m.t).is_float]
    by_bits: dict[int, _Type] = {}
    for m in floats:
        by_bits.setdefault(etype(m.t).bits, m)
    for m in by_bits.values():
        out += [Coop2Case("tensor", v, "C", m.rows, m.cols, m.t, sg=sg) for v in TENSOR_VARIANTS]
    a = next((e for e in entries if e.scope == "subgroup" and e.A == "f16"), None)
    if a is not None:
        out += [Coop2Case("decode", v, "A", a.M, a.K, "f16", sg=sg) for v in DECODE_VARIANTS]
    return out


def _flex_cases(entries, props, sg):
    out = []
    for f in props.flex:
        if f.sat or f.C != f.R:
            continue  # saturating / C != Result flexible entries: not generated
        M, N, K = 2 * f.Mg, 2 * f.Ng, 2 * f.Kg
        wg = f.wg if f.scope == "workgroup" else 0
        out.append(Coop2Case("flex", "muladd", "C", M, N, f.R, f.scope, flex=f, K=K, sg=sg, wg=wg))
    return out


def _wg_cases(entries, props, sg):
    """Workgroup scope beyond MulAdd: one reduction of each kind, a per-element
    op, an Accumulator -> A conversion and a tensor load and store, on the
    accumulator types of the workgroup-scope flexible entry with the fewest
    invocations and a float A type (one granule: Mg x Ng)."""
    wgs = [f for f in props.flex if f.scope == "workgroup" and etype(f.A).is_float]
    if not wgs:
        return []
    f0 = min(wgs, key=lambda f: (f.wg, f.C != "f32"))
    out = []
    for f in [f for f in wgs if f.wg == f0.wg and f.A == f0.A]:
        R, C, t, k = f.Mg, f.Ng, f.C, dict(scope="workgroup", sg=sg, wg=f.wg)
        out += [
            Coop2Case("reduce", "row-sum-same", "C", R, C, t, out=(R, C), **k),
            Coop2Case("reduce", "rowcol-max-same", "C", R, C, t, out=(R, C), **k),
            Coop2Case("perelem", "rc", "C", R, C, t, **k),
            Coop2Case("tensor", "ld-d2", "C", R, C, t, **k),
            Coop2Case("tensor", "st-d2", "C", R, C, t, **k),
        ]
        if f.Kg == f.Ng and etype(f.C).is_float:
            out.append(
                Coop2Case("convert", "acc_a", "C", R, f.Kg, t, to="" if f.A == t else f.A, out=(R, f.Kg), **k)
            )
    return out


def coop2_cases(entries, props: Coop2Props, sg: int) -> list[Coop2Case]:
    """Every case of the family for these KHR entries and coop2 properties."""
    entries = list(entries)
    return (
        _reduce_cases(entries, props, sg)
        + _perelem_cases(entries, sg)
        + _convert_cases(entries, sg)
        + _tensor_cases(entries, sg)
        + _flex_cases(entries, props, sg)
        + _wg_cases(entries, props, sg)
    )


# ------------------------------------------------------------ tensor plans
@dataclass(frozen=True)
class TensorPlan:
    """The tensor layout / view instructions of a case, in order, and the
    memory it addresses (elements of the tensor buffer per workgroup)."""

    dim: int
    clamp: str
    layout: tuple  # (("block", ...), ("dim", ...), ("stride", ...), ("slice", o0, s0, ...), ("clampval", v))
    view: tuple | None = (
        None  # ("create", has_dims, perm), ("dim", ...), ("stride", ...), ("clip", ro, rs, co, cs)
    )
    store: bool = False
    size: int = 0  # elements of the tensor region (per workgroup)
    extra: dict = field(default_factory=dict)


def _split(n: int, parts: int) -> list[int]:
    """n as a product of ``parts`` factors, the inner ones 2 where they can."""
    f = []
    for _ in range(parts - 1):
        f.append(2 if n % 2 == 0 and n > 2 else 1)
        n //= f[-1]
    return [n] + f[::-1] if parts > 1 else [n]


def tensor_plan(case: Coop2Case, clamp_bits: int = 0) -> TensorPlan:
    """The tensor layout/view program of a tensor or decode case (the case's
    kernel executes it; the reference and the emulator each interpret it)."""
    R, C = case.rows, case.cols
    v = case.variant
    if case.op == "decode":
        b = (1, 4) if v == "1x4" else (2, 2)
        dims = (R + 2, C + 8)
        words = dims[0] // b[0] * -(-dims[1] // b[1])
        lay = (("block", *b), ("dim", *dims), ("slice", 1 if b[0] == 1 else 2, R, 4, C))
        return TensorPlan(2, "undef", lay, size=words, extra={"block": b})
    kind, what = v.split("-", 1)
    store = kind == "st"
    if what.startswith("d") and what[1:].isdigit():
        D = int(what[1:])
        if D == 1:
            span = [R * C]
        else:
            span = _split(R, D - 1) + [C]
        pad = ([3, 1, 2] if D <= 3 else [1, 1, 1, 1, 2])[:D]  # at most ~1500 elements
        dims = [s + p for s, p in zip(span, pad)]
        offs = [p - 1 if p > 1 else p for p in pad]
        sl = []
        for o, s in zip(offs, span):
            sl += [o, s]
        lay = [("dim", *dims)]
        size = 1
        for d in dims:
            size *= d
        if D == 3:  # strides of its own (padded rows and planes): OpTensorLayoutSetStrideNV
            st = ((dims[1] * (dims[2] + 1)) + 7, dims[2] + 1, 1)
            lay.append(("stride", *st))
            size = (dims[0] - 1) * st[0] + (dims[1] - 1) * st[1] + dims[2]
        lay.append(("slice", *sl))
        return TensorPlan(D, "undef", tuple(lay), store=store, size=size)
    if what in ("const", "edge", "repeat", "mirror"):
        # a 2D tensor smaller than the matrix on both sides: the span starts 3 rows
        # above it and ends past its last column
        dims = (R - 2, C - 3)
        sl = (-3, R, 2, C)
        lay = [("dim", *dims), ("slice", *sl)]
        if what == "const":
            lay.append(("clampval", clamp_bits))
        size = dims[0] * dims[1]
        return TensorPlan(2, what if not store else "const", tuple(lay), store=store, size=size)
    if what == "perm":
        # a 3D tensor (2, R/2, C) seen through a view that permutes the outer two
        span = [2, R // 2, C]
        dims = [2, R // 2 + 1, C + 2]
        lay = (("dim", *dims), ("slice", 0, span[0], 1, span[1], 2, span[2]))
        view = (("create", False, (1, 0, 2)),)
        return TensorPlan(3, "undef", lay, view, store, dims[0] * dims[1] * dims[2])
    if what == "clip":
        dims = (R + 1, C + 2)
        lay = (("dim", *dims), ("slice", 1, R, 1, C))
        view = (("create", False, (0, 1)), ("clip", 2, R - 5, 1, C - 3))
        return TensorPlan(2, "undef", lay, view, store, dims[0] * dims[1])
    if what == "vstride":
        # a view of its own dimensions (C, R) and strides (1, C), not the (R, 1) that
        # OpTensorViewSetDimensionNV sets: the matrix is read transposed
        dims = (R, C)
        lay = (("dim", *dims),)
        view = (("create", True, (0, 1)), ("dim", C, R), ("stride", 1, C))
        return TensorPlan(2, "undef", lay, view, store, R * C)
    raise ValueError(f"unknown tensor variant {v!r}")


def fill_value(t: str, what: str) -> float:
    """The Object fill (``clip``: kept where a load is clipped) or the clamp
    value (``clamp``) of a component type, as a number."""
    if etype(t).is_float:
        return CLIP_FILL if what == "clip" else CLAMP_FILL
    return 7 if what == "clip" else 5


def clamp_bits(t: str) -> int:
    """The OpTensorLayoutSetClampValueNV operand: the clamp value's bit
    pattern in the component type (reference/coop2.py says why bits)."""
    et = etype(t)
    v = fill_value(t, "clamp")
    if et.is_float:
        f = {16: np.float16, 32: np.float32, 64: np.float64}[et.bits]
        u = {16: np.uint16, 32: np.uint32, 64: np.uint64}[et.bits]
        return int(np.asarray(v, f).view(u)) if t != "bf16" else int(np.float32(v).view(np.uint32)) >> 16
    return int(v) & et.mask
