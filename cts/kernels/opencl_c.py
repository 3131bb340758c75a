"""OpenCL C kernels for the Intel subgroup-MMA families, and prelude loading.

Kernels are tiny and generic (DESIGN "Backends"): each work-item loads its
own register image of ``a``, ``b`` and ``acc`` from buffers, calls one
built-in overload, and stores the result.  All layout knowledge stays on the
host (``reference/layout.py``).  Rules followed:

* ``intel_reqd_sub_group_size(N)`` with N the case's subgroup size, and 1-D
  work-groups whose size is a multiple of N (OpenCL C 3.0 §6.15.1: sub-groups are
  formed in the linear work-item order; Intel's CPU runtime forms them along dimension 0 only).
* Many subgroups per launch, each with its own operands; the slot of a
  work-item is ``(get_group_id(0) * get_num_sub_groups() + get_sub_group_id())
  * N + get_sub_group_local_id()``, so the kernel never assumes how the
  device forms subgroups.  Each work-item also stores ``get_sub_group_size()``
  so the host can prove the required size was honoured.
* Split form (cl_intel_subgroup_split_matrix_multiply_accumulate): work-groups of ``case.wg`` (2, 4 or 8)
  subgroups of 8; sub-group 2p of a group passes rows 0..M/2-1 and 2p+1
  rows M/2..M-1 of the A the host made for the pair it proposes (the device
  may pair otherwise: cts/runs/split.py).
  If the prelude defines ``CTS_SPLIT_SCRATCH_WORDS``, the kernel declares
  ``__local uint cts_split_scratch[CTS_SPLIT_SCRATCH_WORDS]`` at kernel scope
  (OpenCL C allows ``__local`` variables only there) for a layered split
  implementation to exchange ``a`` through local memory.
* All buffers carry raw bits (``uint`` for 32-bit, ``ushort`` for 16-bit
  containers) and are reinterpreted with ``as_<type>n`` (cl_intel_subgroup_matrix_multiply_accumulate,
  Modifications to the OpenCL C Specification:
  fp16/bf16 data travels in integer types).

A prelude file (``--opencl-prelude FILE|builtin``) is prepended to every
kernel; lines ``//! cts-provides: EXT [EXT...]`` in it declare the extensions
it implements, which the backend then treats as present.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from cts.kernels import KERNEL_DIR, KernelSource

__all__ = [
    "BUILTIN_PRELUDE",
    "Prelude",
    "load_prelude",
    "intel_mma_kernel",
    "intel_split_kernel",
    "tf32_convert_kernel",
    "container_dtype",
]

BUILTIN_PRELUDE = KERNEL_DIR / "intel_mma_prelude.cl"
_PROVIDES = re.compile(r"^\s*//!\s*cts-provides:\s*(.+)$", re.M)


@dataclass(frozen=True)
class Prelude:
    label: str  # "builtin" or the path as given
    path: Path
    text: str
    provides: frozenset[str]


def load_prelude(spec: str | None) -> Prelude | None:
    """``None`` -> no prelude; ``"builtin"`` -> the shipped Intel prelude;
    else a file path.  A missing or unreadable file is a one-line BackendError."""
    from cts.errors import BackendError

    if not spec:
        return None
    path = BUILTIN_PRELUDE if spec == "builtin" else Path(spec)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else type(e).__name__
        raise BackendError(f"--opencl-prelude {spec}: cannot read {path}: {reason}") from None
    provides = frozenset(x for m in _PROVIDES.findall(text) for x in m.split())
    return Prelude(spec, path, text, provides)


# Host dtype of the raw-bits buffers, by container width.
def container_dtype(bits: int) -> str:
    return {32: "uint32", 16: "uint16"}[bits]


def _buf_scalar(bits: int) -> str:
    return {32: "uint", 16: "ushort"}[bits]


def _vec(scalar: str, n: int) -> str:
    return scalar if n == 1 else f"{scalar}{n}"


def _load(ptr: str, n: int, idx: str) -> str:
    return f"{ptr}[{idx}]" if n == 1 else f"vload{n}({idx}, {ptr})"


def _store(val: str, ptr: str, n: int, idx: str) -> str:
    return f"{ptr}[{idx}] = {val};" if n == 1 else f"vstore{n}({val}, {idx}, {ptr});"


_ACC_BITS = {"int": 32, "float": 32, "half": 16, "short": 16}


def _a_bits(case) -> int:
    return 32 if case.a_scalar in ("int", "uint", "float") else 16


def _header(case) -> str:
    lines = []
    if case.acc_scalar == "half":
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp16 : enable")
    return "\n".join(lines)


def _body(case, builtin_call_args: str = "av, bv, cv") -> list[str]:
    ac, M = case.a_comps, case.M
    ab, cb = _a_bits(case), _ACC_BITS[case.acc_scalar]
    abuf, cbuf = _buf_scalar(ab), _buf_scalar(cb)
    return [
        f"    const {case.a_ctype} av = as_{case.a_ctype}({_load('a', ac, 'i')});",
        f"    const {case.b_ctype} bv = as_{case.b_ctype}({_load('b', 8, 'i')});",
        f"    const {case.acc_ctype} cv = as_{case.acc_ctype}({_load('c', M, 'i')});",
        f"    const {case.acc_ctype} dv = {case.builtin}({builtin_call_args});",
        "    " + _store(f"as_{_vec(cbuf, M)}(dv)", "d", M, "i"),
        "    sgsize[i] = get_sub_group_size();",
    ], (abuf, cbuf)


def _params(abuf: str, cbuf: str) -> str:
    return (
        f"__global const {abuf} *a, __global const uint *b, __global const {cbuf} *c, "
        f"__global {cbuf} *d, __global uint *sgsize"
    )


def intel_mma_kernel(case, subgroups: int, prelude: str = "") -> KernelSource:
    """cl_intel_subgroup_matrix_multiply_accumulate (+ _tf32): one kernel per
    built-in overload; ``subgroups`` subgroups, 4 per work-group when possible."""
    N = case.sg
    per_wg = next(g for g in (4, 2, 1) if subgroups % g == 0)
    body, (abuf, cbuf) = _body(case)
    entry = "cts_intel_mma"
    src = "\n".join(
        [
            _header(case),
            prelude,
            f"/* {case.spec_row} */",
            f"__attribute__((intel_reqd_sub_group_size({N})))",
            f"__kernel void {entry}({_params(abuf, cbuf)})",
            "{",
            f"    const uint i = (get_group_id(0) * get_num_sub_groups() + get_sub_group_id()) * {N}"
            " + get_sub_group_local_id();",
            *body,
            "}",
            "",
        ]
    )
    return KernelSource(
        entry=entry,
        source=src,
        global_size=(subgroups * N,),
        local_size=(per_wg * N,),
        args=("a", "b", "c", "d", "sgsize"),
        arg_types=(container_dtype(_a_bits(case)), "uint32", container_dtype(_ACC_BITS[case.acc_scalar]),
                   container_dtype(_ACC_BITS[case.acc_scalar]), "uint32"),
        notes=(
            f"slot of a work-item = subgroup * {N} + invocation; a/b/c/d hold the register images "
            f"(a: {case.a_comps} x {abuf}, b: 8 x uint, c/d: {case.M} x {cbuf} per work-item)",
        ),
    )  # fmt: skip


def intel_split_kernel(case, subgroups: int, prelude: str = "") -> KernelSource:
    """cl_intel_subgroup_split_matrix_multiply_accumulate: work-groups of
    ``case.wg`` subgroups of 8 (pairing and its oracle: cts/runs/split.py)."""
    N, W = case.sg, case.wg
    if W == 2:
        group = "/* one work-group = one pair; sub-group 0 passes the first M/2 rows of A */"
        note = f"work-group p = pair p; slot = (2p + sub_group_id) * {N} + invocation; "
    else:
        group = f"/* one work-group = {W} subgroups; the device pairs them (the host proposes 2p, 2p+1) */"
        note = f"work-group g; slot = ({W}g + sub_group_id) * {N} + invocation; "
    body, (abuf, cbuf) = _body(case)
    entry = "cts_intel_split_mma"
    src = "\n".join(
        [
            _header(case),
            prelude,
            f"/* {case.spec_row} */",
            f"__attribute__((intel_reqd_sub_group_size({N})))",
            f"__kernel void {entry}({_params(abuf, cbuf)})",
            "{",
            "#ifdef CTS_SPLIT_SCRATCH_WORDS",
            "    __local uint cts_split_scratch[CTS_SPLIT_SCRATCH_WORDS];",
            "#endif",
            "    " + group,
            f"    const uint i = (get_group_id(0) * {W} + get_sub_group_id()) * {N} + get_sub_group_local_id();",
            *body,
            "}",
            "",
        ]
    )
    return KernelSource(
        entry=entry,
        source=src,
        global_size=(subgroups * N,),
        local_size=(W * N,),
        args=("a", "b", "c", "d", "sgsize"),
        arg_types=(container_dtype(_a_bits(case)), "uint32", container_dtype(_ACC_BITS[case.acc_scalar]),
                   container_dtype(_ACC_BITS[case.acc_scalar]), "uint32"),
        notes=(note + f"a holds M/2 = {case.M // 2} rows per subgroup",),
    )  # fmt: skip


def tf32_convert_kernel(case, items: int, prelude: str = "") -> KernelSource:
    """intel_convert_tfloat32{n}_as_float{n} (cl_intel_subgroup_matrix_multiply_accumulate_tf32): one
    vector per
    work-item, any work-group size."""
    w = case.width
    ft, ut = _vec("float", w), _vec("uint", w)
    entry = "cts_intel_tf32_convert"
    src = "\n".join(
        [
            prelude,
            f"/* {case.spec_row} */",
            f"__kernel void {entry}(__global const uint *x, __global uint *y)",
            "{",
            "    const uint i = get_global_id(0);",
            f"    const {ft} v = as_{ft}({_load('x', w, 'i')});",
            "    " + _store(f"as_{ut}({case.builtin}(v))", "y", w, "i"),
            "}",
            "",
        ]
    )
    return KernelSource(
        entry=entry,
        source=src,
        global_size=(items,),
        local_size=None,
        args=("x", "y"),
        arg_types=("uint32", "uint32"),
        notes=(f"x, y: {w} floats (as raw bits) per work-item",),
    )
