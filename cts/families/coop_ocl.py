"""Case space of the OpenCL forms of cooperative matrix (issue 6 item 6).

The cases are the cooperative-matrix room's own (``cts.families.coop``:
same dataclass fields, same buffers, same runner ``cts.runs.coop.run_coop``, same
reference), enumerated for its two OpenCL apis and relabelled so the id
names the form first:

* ``cl-spirv-...``: SPIR-V with the Kernel capability and
  ``CooperativeMatrixKHR`` for devices that advertise
  ``cl_khr_cooperative_matrix`` (draft, spec-digest 4.4): Subgroup scope
  only, no bf16, no OpMatrixTimesScalar (spec-digest 4.1: not supported in
  OpenCL environments).
* ``cl-c-...``: OpenCL C in the ``coop_mat`` syntax of the Clang proposal
  (seed 002) for compilers that define ``__opencl_c_ext_cooperative_matrix``:
  load, store, mulAdd, the operators ``+ - * /``, unary ``-`` and
  matrix * scalar.

The entries (M, N, K, A/B/C/Result types, saturating) come from the device's
``clGetDeviceCooperativeMatrixInfoKHR`` variants when the OpenCL backend can
query them, else from ``--coop-profile`` (``cts.plugin.coop.coop_state``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from cts.families.coop import CHAIN, GEMM_TILES, CoopCase, CoopEntry, case_stride, coop_cases, region_len
from reference.coop import image_len

__all__ = ["OclCoopCase", "FORMS", "API_OF_FORM", "ocl_coop_cases", "as_ocl", "buffer_rows"]

FORMS = {"clspv": "cl-spirv", "clc": "cl-c"}
API_OF_FORM = {v: k for k, v in FORMS.items()}


@dataclass(frozen=True)
class OclCoopCase(CoopCase):
    """A :class:`CoopCase` of an OpenCL api whose id starts with its form."""

    @property
    def form(self) -> str:
        return FORMS[self.api]

    @property
    def id(self) -> str:
        base = super().id
        return self.form + base[len(self.api) :]

    @property
    def extension(self) -> str:
        return "cl_khr_cooperative_matrix" if self.api == "clspv" else "__opencl_c_ext_cooperative_matrix"

    @property
    def spec_row(self) -> str:
        return self.form + super().spec_row[len(self.api) :]

    @property
    def axes(self) -> dict:
        return {**super().axes, "form": self.form}


def as_ocl(case: CoopCase) -> OclCoopCase:
    """The OpenCL-form view of a coop case of api ``clspv`` / ``clc``."""
    if case.api not in FORMS:
        raise ValueError(f"{case.id}: api {case.api!r} is not an OpenCL form")
    return OclCoopCase(**{f.name: getattr(case, f.name) for f in fields(CoopCase)})


def ocl_coop_cases(
    entries: list[CoopEntry], tiers: tuple[str, ...], sg: int, forms: tuple[str, ...] = ("cl-spirv", "cl-c")
) -> list[OclCoopCase]:
    """Every OpenCL-form case of ``entries`` (ids unique, form first)."""
    apis = tuple(API_OF_FORM[f] for f in forms)
    # the draft has no bf16 component type (spec-digest 4.4): also not as a
    # conversion target
    out = [as_ocl(c) for c in coop_cases(entries, tiers, sg, apis) if c.to != "bf16"]
    ids = [c.id for c in out]
    if len(set(ids)) != len(ids):  # pragma: no cover - guards the relabelling
        raise AssertionError("duplicate OpenCL coop case ids")
    return out


def buffer_rows(case: CoopCase) -> dict[str, int]:
    """Elements per row (per subgroup; gemm: per problem) of each buffer the
    runner ``cts.runs.coop.run_coop`` hands to the backend for ``case``."""
    if case.entry is not None:
        e = case.entry
        if case.op == "gemm":
            tm, tn, tk = GEMM_TILES
            return {
                "a": tm * e.M * tk * e.K,
                "b": tk * e.K * tn * e.N,
                "c": tm * e.M * tn * e.N,
                "d": tm * e.M * tn * e.N,
            }
        steps = CHAIN if case.op == "chain" else 1
        return {"a": steps * e.M * e.K, "b": steps * e.K * e.N, "c": e.M * e.N, "d": e.M * e.N}
    m = case.mat
    n = m.rows * m.cols
    if case.op == "length":
        return {"lo": n, "hi": n, "len": case.sg, "map": case.sg * 2 * n}
    if case.op in ("load", "store"):
        L = region_len(image_len(m.rows, m.cols, case.layout, case_stride(case)), m.t)
        return {"src": L, "out": n} if case.op == "load" else {"x": n, "dst": L}
    if case.op == "splat":
        return {"v": 1, "out": n}
    return {"x": n, "y": n, "out": n}
