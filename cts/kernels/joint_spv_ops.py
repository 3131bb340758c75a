"""The body of a joint_matrix SPIR-V module, per operation (sycl_ext_oneapi_matrix,
``sycl_ext_intel_matrix``); the module frame, lowerings and tokens are in
``cts.kernels.joint_spv``.

* ``mad``: Load A, B, C (their layouts and strides), MulAdd with the
  Signed / INTEL interpretation operands, Store D.
* ``ldst``: Load, Store (of A and B too: an Intel extension).
* ``fill``: OpCompositeConstruct of the tile's value (joint_matrix_fill).
* ``fill_checked`` / ``load_checked`` / ``store_checked``: the INTEL checked
  instructions with per-tile coordX, coordY, Height, Width (32-bit).
* ``apply`` / ``apply_plain``: a loop over OpCooperativeMatrixLengthKHR
  elements of a Function variable (OpAccessChain), x -> 2x + w(row,
  col) with (row, col) from OpCooperativeMatrixGetElementCoordINTEL, or
  x -> 2x; bf16 elements go through float (bits << 16) and back (round to
  nearest even on the bits).
* ``copy``: a conversion instruction where the use stays; a use change goes
  element by element over the source's length, as DPC++'s
  ``joint_matrix_copy`` does (it assumes both uses map elements to
  work-items alike).
"""

from __future__ import annotations

from cts.kernels.joint_spv_types import ELEM, LAYOUT_IDS, muladd_operands

__all__ = ["emit_case"]


def _layout(md, name: str) -> str:
    if name == "packed":
        md.intel["packed"] = None
    return md.const("u32", LAYOUT_IDS[name])


def _load(md, T: str, ptr: str, layout: str, stride: str) -> str:
    return md.op(f"OpCooperativeMatrixLoadKHR {T} {ptr} {_layout(md, layout)} {stride}", "m")


def _store(md, ptr: str, value: str, layout: str, stride: str) -> None:
    md.emit(f"OpCooperativeMatrixStoreKHR {ptr} {value} {_layout(md, layout)} {stride}")


def _geo(md, wid: str) -> tuple[str, str, str, str]:
    """Height, Width, coordX, coordY of this tile (u32) from ``geo``."""
    base = md.op(f"OpIMul %u64 {wid} {md.const('u64', 4)}")
    out = []
    for k, stem in enumerate(("h", "wd", "cx", "cy")):
        off = md.op(f"OpIAdd %u64 {base} {md.const('u64', k)}") if k else base
        p = md.op(f"OpInBoundsPtrAccessChain {md.ptr('u32')} %arg_geo {off}", "p")
        out.append(md.op(f"OpLoad %u32 {p}", stem))
    return out[0], out[1], out[2], out[3]


def emit_case(md, case, meta, tile, wid) -> None:
    op = case.op
    if op == "mad":
        _mad(md, case, meta, tile)
        return
    li, lo = case.layouts[:2]
    if op == "copy":
        ts, td = case.types
        us, ud = case.use.split(">")
    else:
        ts = td = case.types[0]
        us = ud = case.use
    R, C = case.dims(us)
    T = md.mat(us, R, C, ts)
    sid = ELEM[ts][0]
    if op in ("fill", "fill_checked"):
        v = md.op(
            f"OpLoad {sid} " + md.op(f"OpInBoundsPtrAccessChain {md.ptr(ts)} %arg_value {wid}", "p"), "v"
        )
        if op == "fill":
            m = md.op(f"OpCompositeConstruct {T} {v}", "m")
        else:
            h, w, cx, cy = _geo(md, wid)
            m = md.fresh("m")
            md.intel_op(6195, [T, m, cx, cy, h, w, v], f"{m} = OpCompositeConstruct {T} {v}")
        _store(md, tile("dst", td), m, lo, meta("s_dst"))
        return
    if op == "load_checked":
        h, w, cx, cy = _geo(md, wid)
        src, stride, lay = tile("src", ts), meta("s_src"), _layout(md, li)
        m = md.fresh("m")
        md.intel_op(
            6193,
            [T, m, src, cx, cy, lay, h, w, stride],
            f"{m} = OpCooperativeMatrixLoadKHR {T} {src} {lay} {stride}",
        )
        _store(md, tile("dst", td), m, lo, meta("s_dst"))
        return
    m = _load(md, T, tile("src", ts), li, meta("s_src"))
    if op == "store_checked":
        h, w, cx, cy = _geo(md, wid)
        dst, stride, lay = tile("dst", td), meta("s_dst"), _layout(md, lo)
        md.intel_op(
            6194,
            [dst, cx, cy, m, lay, h, w, stride],
            f"OpCooperativeMatrixStoreKHR {dst} {m} {lay} {stride}",
        )
        return
    if op in ("apply", "apply_plain"):
        m = _apply(md, T, m, ts, coords=op == "apply")
    elif op == "copy":
        m = _copy(md, m, T, ts, td, us, ud, R, C)
    elif op != "ldst":
        raise ValueError(f"unknown joint_matrix op {op!r}")
    _store(md, tile("dst", td), m, lo, meta("s_dst"))


def _mad(md, case, meta, tile) -> None:
    a, b, c, d = case.types
    la, lb, lc, ld = case.layouts
    M, N, K = case.M, case.N, case.K
    TA, TB = md.mat("a", M, K, a), md.mat("b", K, N, b)
    TC, TD = md.mat("acc", M, N, c), md.mat("acc", M, N, d)
    A = _load(md, TA, tile("a", a), la, meta("sa"))
    B = _load(md, TB, tile("b", b), lb, meta("sb"))
    Cm = _load(md, TC, tile("c", c), lc, meta("sc"))
    dev, twin, cap = muladd_operands(case)
    if cap:
        md.intel[cap] = None
    r = md.fresh("d")
    head = f"{r} = OpCooperativeMatrixMulAddKHR {TD} {A} {B} {Cm}"
    md.body.append((head + dev, head + twin))
    _store(md, tile("d", d), r, ld, meta("sd"))


# ------------------------------------------------------------ element-wise
def _bf16_to_f32(md, x: str) -> str:
    wide = md.op(f"OpUConvert %u32 {x}")
    return md.op("OpBitcast %f32 " + md.op(f"OpShiftLeftLogical %u32 {wide} {md.const('u32', 16)}"))


def _f32_to_bf16(md, f: str) -> str:
    """Round to nearest even on the bits (finite values)."""
    u = md.op(f"OpBitcast %u32 {f}")
    lsb = md.op(
        "OpBitwiseAnd %u32 "
        + md.op(f"OpShiftRightLogical %u32 {u} {md.const('u32', 16)}")
        + f" {md.const('u32', 1)}"
    )
    half = md.const("u32", 0x7FFF)
    up = md.op(f"OpIAdd %u32 {md.op(f'OpIAdd %u32 {u} {half}')} {lsb}")
    return md.op("OpUConvert %u16 " + md.op(f"OpShiftRightLogical %u32 {up} {md.const('u32', 16)}"))


def _elementwise(md, T: str, m: str, t: str, fn, dst_T: str | None = None, dst_t: str | None = None) -> str:
    """Loop over the elements of ``m`` (type T): element i of the result
    (type dst_T, default T) = fn(element i, i)."""
    src = md.variable(T)
    md.emit(f"OpStore {src} {m}")
    dst = src
    if dst_T is not None:
        dst = md.variable(dst_T)
        zero = md.op(f"OpCompositeConstruct {dst_T} {md.const(dst_t, 0)}", "m")
        md.emit(f"OpStore {dst} {zero}")
    n32, n = md.fresh("len"), md.fresh("n")
    md.emit(f"{n32} = OpCooperativeMatrixLengthKHR %u32 {T}")
    md.emit(f"{n} = OpUConvert %u64 {n32}")  # the index of an element is a size_t in DPC++
    sid = ELEM[t][0]

    def body(i):
        p = md.op(f"OpAccessChain {md.ptr(t, 'Function')} {src} {i}", "p")
        y = fn(md.op(f"OpLoad {sid} {p}"), i)
        q = p if dst is src else md.op(f"OpAccessChain {md.ptr(dst_t, 'Function')} {dst} {i}", "p")
        md.emit(f"OpStore {q} {y}")

    md.loop(n, body)
    return md.op(f"OpLoad {dst_T or T} {dst}", "m")


def _apply(md, T: str, m: str, t: str, coords: bool) -> str:
    """x -> 2x + w(row, col), w = (row mod 8) * 8 + col mod 8 (reference.joint
    apply_coord_weight), or x -> 2x."""
    _, _, _, bits, kind = ELEM[t]

    def fn(x, i):
        w = None
        if coords:
            rc = md.fresh("rc")
            i32 = md.op(f"OpUConvert %u32 {i}", "i")
            md.intel_op(6440, ["%v2u32", rc, m, i32], f"{rc} = OpCompositeConstruct %v2u32 {i32} {i32}")
            seven = md.const("u32", 7)
            row = md.op(f"OpBitwiseAnd %u32 {md.op(f'OpCompositeExtract %u32 {rc} 0', 'row')} {seven}")
            col = md.op(f"OpBitwiseAnd %u32 {md.op(f'OpCompositeExtract %u32 {rc} 1', 'col')} {seven}")
            eight = md.const("u32", 8)
            w = md.op(f"OpIAdd %u32 {md.op(f'OpIMul %u32 {row} {eight}')} {col}", "wt")
        if kind in ("int", "uint"):
            ut = {8: "u8", 16: "u16", 32: "u32", 64: "u64"}[bits]
            y = md.op(f"OpIMul {ELEM[t][0]} {x} {md.const(ut, 2)}")
            if w is not None:
                wn = w if bits == 32 else md.op(f"OpUConvert {ELEM[t][0]} {w}")
                y = md.op(f"OpIAdd {ELEM[t][0]} {y} {wn}")
            return y
        ft = "f32" if kind == "bf16" else t
        fid = ELEM[ft][0]
        f = _bf16_to_f32(md, x) if kind == "bf16" else x
        y = md.op(f"OpFMul {fid} {f} {md.const(ft, 2.0)}")
        if w is not None:
            y = md.op(f"OpFAdd {fid} {y} {md.op(f'OpConvertUToF {fid} {w}')}")
        return _f32_to_bf16(md, y) if kind == "bf16" else y

    return _elementwise(md, T, m, t, fn)


def _convert(md, x: str, ts: str, td: str) -> str:
    """One element from joint type ts to td (value conversion)."""
    ks, kd = ELEM[ts][4], ELEM[td][4]
    if ks == "bf16":
        return x if kd == "bf16" else _convert(md, _bf16_to_f32(md, x), "f32", td)
    if kd == "bf16":
        return _f32_to_bf16(md, _convert(md, x, ts, "f32"))
    return _scalar_conv(md, x, ts, td)


def _conv_op(ts: str, td: str) -> str | None:
    """The SPIR-V conversion opcode for ts -> td (None: same SPIR-V type)."""
    s, d = ELEM[ts], ELEM[td]
    if s[0] == d[0]:
        return None
    fs, fd = s[4] in ("float", "tf32"), d[4] in ("float", "tf32")
    if fs and fd:
        return "OpFConvert"
    if fs:
        return "OpConvertFToS" if d[4] == "int" else "OpConvertFToU"
    if fd:
        return "OpConvertSToF" if s[4] == "int" else "OpConvertUToF"
    return "OpSConvert" if s[4] == "int" and d[3] > s[3] else "OpUConvert"


def _scalar_conv(md, x: str, ts: str, td: str) -> str:
    c = _conv_op(ts, td)
    return md.op(f"{c} {ELEM[td][0]} {x}") if c else x


def _copy(md, m: str, T: str, ts: str, td: str, us: str, ud: str, R: int, C: int) -> str:
    if us == ud and "bf16" not in (ts, td):
        c = _conv_op(ts, td)
        return md.op(f"{c} {md.mat(ud, R, C, td)} {m}", "m") if c else m
    if us == ud and ts == td:
        return m
    TD = md.mat(ud, R, C, td)
    return _elementwise(md, T, m, ts, lambda x, i: _convert(md, x, ts, td), dst_T=TD, dst_t=td)
