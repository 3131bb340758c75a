"""Load / Store cases of the OpenCL cooperative-matrix axes (
``cts.families.coop_ocl_axes``): pointee types other than the component type,
run-time strides, ARM blocked layouts and the draft queries' minimum pointer
alignment / Stride; :func:`run_coop_opencl` is the OpenCL forms' runner (the
``sg`` axis runs the plain ops at another subgroup size through ``cts.runs.coop``).

Buffers (one row per subgroup, the component's storage dtype): ``src`` /
``dst`` the subgroup's memory region, ``out`` / ``x`` the matrix row-major,
``st`` (``rtstride``) the Stride the host passes as a kernel argument.
Expected: the region read / written at the byte addresses of
``reference.coop_ocl`` (pointee Stride, ARM blocks), judged bit for bit; a
Store must leave every byte it does not address untouched.
"""

from __future__ import annotations

import numpy as np

from cts.families.coop import storage_dtype
from cts.families.coop_ocl_axes import POINTEES, axis_memory
from cts.judge import CaseResult
from reference import coop_ocl as rco
from reference.dtypes import etype

__all__ = ["run_coop_opencl", "run_ocl_axis", "reference_addresses"]


def run_coop_opencl(case, backend, seed: int, profile=None, subgroups: int | None = None) -> CaseResult:
    """The runner of ``cases/test_coop_opencl.py``: the Load/Store cases of the
    OpenCL axes here (:func:`run_ocl_axis`), every other case (the ``sg`` axis
    included) through ``cts.runs.coop.run_coop``."""
    from cts.runs.coop.data import SUBGROUPS_PER_CASE
    from cts.runs.coop.run import run_coop
    from reference.data import case_rng
    from reference.tolerance import PROFILES

    subgroups = subgroups or SUBGROUPS_PER_CASE
    if getattr(case, "ocl_axis", "") in ("", "sg"):
        return run_coop(case, backend, seed, profile or PROFILES["default"], subgroups)
    return run_ocl_axis(case, backend, case_rng(seed, f"{case.family}[{case.id}]"), subgroups)


def reference_addresses(case) -> np.ndarray:
    """(rows, cols, z) byte addresses from the Load/Store pointer's region
    start (the reference rule of the case's layout, pointee and Stride)."""
    m = case.mat
    z = etype(m.t).bits // 8
    if case.layout in rco.ARM_LAYOUTS:
        return rco.arm_blocked_addresses(m.rows, m.cols, z, case.layout, int(case.stride[2:]))
    mem = axis_memory(case)  # offset and Stride are parameters of the case
    psize = POINTEES[case.ptr][0] if case.ptr else z
    return rco.pointee_addresses(m.rows, m.cols, case.layout, mem.stride, z, psize) + mem.offset


def run_ocl_axis(case, backend, rng, S: int) -> CaseResult:
    from cts.judge import sentinel
    from cts.runs.coop.data import launch, random_finite_bits, wrap
    from cts.runs.coop.judge import exact_out

    m, t = case.mat, etype(case.mat.t)
    st = storage_dtype(m.t)
    mem = axis_memory(case)
    L = mem.region // (t.bits // 8)
    addr = reference_addresses(case)
    extra = {"st": np.full((S, 4), mem.stride, np.uint32)} if case.rtstride else {}
    shape = (S, m.rows, m.cols)
    if case.op == "load":
        src = random_finite_bits(rng, t, (S, L))
        exp = rco.read_elements(src.view(np.uint8).reshape(S, -1), addr, st)
        out = sentinel.fill(t, (S, m.rows * m.cols), st, expected=exp.reshape(S, -1))
        bufs = {"src": src, "out": out} | extra
        got = launch(backend, case, bufs)
        act = got["out"].reshape(shape)
        v = exact_out(exp, act, t, sentinel.unwritten(act, out.reshape(shape), t))
        return wrap(v, bufs, exp, got["out"])
    x = random_finite_bits(rng, t, shape)
    dst = random_finite_bits(rng, t, (S, L))
    exp = rco.write_elements(dst.view(np.uint8).reshape(S, -1), addr, x).view(st)
    # the elements the store writes start as the sentinel (unlike the stored value)
    cells = (
        rco.write_elements(np.zeros_like(dst).view(np.uint8).reshape(S, -1), addr, np.ones_like(x)).view(st)
        != 0
    )
    dst = np.where(cells, sentinel.fill(t, dst.shape, st, expected=exp), dst)
    bufs = {"x": x.reshape(S, -1), "dst": dst} | extra
    got = launch(backend, case, bufs)
    never = (cells & sentinel.unwritten(got["dst"], dst, t))[:, None, :]
    v = exact_out(exp[:, None, :], got["dst"][:, None, :], t, never)
    v.notes.append("store: columns of the verdict are offsets in the destination region")
    return wrap(v, bufs, exp, got["dst"])
