"""Case space of the OpenCL forms of cooperative matrix.

The cases are the cooperative-matrix room's own (``cts.families.coop``:
same dataclass fields, same buffers, same runner ``cts.runs.coop.run_coop``, same
reference), enumerated for its two OpenCL apis and relabelled so the id
names the form first:

* ``cl-spirv-...``: SPIR-V with the Kernel capability and
  ``CooperativeMatrixKHR`` for devices that advertise
  ``cl_khr_cooperative_matrix`` (draft, OpenCL-Docs pull request 1533): Subgroup scope
  only, no bf16, no OpMatrixTimesScalar (SPV_KHR_cooperative_matrix: not supported in
  OpenCL environments).
* ``cl-c-...``: OpenCL C in the ``coop_mat`` syntax of the Clang proposal
  (its RFC) for compilers that define ``__opencl_c_ext_cooperative_matrix``:
  load, store, mulAdd, the operators ``+ - * /``, unary ``-`` and
  matrix * scalar.

The entries (M, N, K, A/B/C/Result types, saturating) come from the device's
``clGetDeviceCooperativeMatrixInfoKHR`` variants when the OpenCL backend can
query them, else from ``--coop-profile`` (``cts.plugin.coop.coop_state``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from cts.families.coop import CHAIN, GEMM_TILES, CoopCase, CoopEntry, case_stride, coop_cases, region_len
from cts.families.coop_ocl_axes import OCL_AXES, OclTable, axis_cases, axis_rows
from reference.coop import image_len

__all__ = [
    "OclCoopCase",
    "FORMS",
    "API_OF_FORM",
    "OCL_AXES",
    "OclTable",
    "ocl_coop_cases",
    "as_ocl",
    "buffer_rows",
]

FORMS = {"clspv": "cl-spirv", "clc": "cl-c"}
API_OF_FORM = {v: k for k, v in FORMS.items()}


@dataclass(frozen=True)
class OclCoopCase(CoopCase):
    """A :class:`CoopCase` of an OpenCL api whose id starts with its form.

    The OpenCL axes (``cts.families.coop_ocl_axes``), each an
    id token before the tier: ``ptr`` (pointee type of the Load/Store pointer,
    ``ptr-u32``), ``rtstride`` (Stride a kernel argument), ARM blocked layouts
    (``layout`` ``rowblk`` / ``colblk``, ``stride`` ``il1`` / ``il2`` / ``il4``),
    ``qalign`` / ``qstride`` (pointer offset / Stride in bytes at the draft
    queries' minimum, ``qalign4``) and ``sg_first`` (a reported subgroup size
    other than the first: ``sg16``)."""

    ptr: str = ""
    rtstride: bool = False
    qalign: int = 0
    qstride: int = 0
    sg_first: int = 0

    @property
    def form(self) -> str:
        return FORMS[self.api]

    @property
    def ocl_axis(self) -> str:
        """The OpenCL axis this case belongs to ("" for the plain space)."""
        if self.layout in ("rowblk", "colblk"):
            return "arm"
        for name, on in (("ptr", self.ptr), ("rtstride", self.rtstride), ("qalign", self.qalign)):
            if on:
                return name
        return "qstride" if self.qstride else ("sg" if self.sg_first else "")

    @property
    def id(self) -> str:
        base = super().id
        base = self.form + base[len(self.api) :]
        tokens = [f"ptr-{self.ptr}"] if self.ptr else []
        tokens += ["rtstride"] if self.rtstride else []
        tokens += [f"qalign{self.qalign}"] if self.qalign else []
        tokens += [f"qstride{self.qstride}"] if self.qstride else []
        tokens += [f"sg{self.sg}"] if self.sg_first else []
        if not tokens:
            return base
        head, tier = base.rsplit("-", 1)
        return "-".join([head, *tokens, tier])

    @property
    def extension(self) -> str:
        return "cl_khr_cooperative_matrix" if self.api == "clspv" else "__opencl_c_ext_cooperative_matrix"

    @property
    def spec_row(self) -> str:
        return self.form + super().spec_row[len(self.api) :]

    @property
    def axes(self) -> dict:
        d = {**super().axes, "form": self.form}
        if self.ocl_axis:
            d["ocl_axis"] = self.ocl_axis
            d.update(
                {k: getattr(self, k) for k in ("ptr", "rtstride", "qalign", "qstride") if getattr(self, k)}
            )
            if self.sg_first:
                d.update(sg=self.sg, sg_first=self.sg_first)
        return d


def as_ocl(case: CoopCase) -> OclCoopCase:
    """The OpenCL-form view of a coop case of api ``clspv`` / ``clc``."""
    if case.api not in FORMS:
        raise ValueError(f"{case.id}: api {case.api!r} is not an OpenCL form")
    return OclCoopCase(**{f.name: getattr(case, f.name) for f in fields(CoopCase)})


def ocl_coop_cases(
    entries: list[CoopEntry],
    tiers: tuple[str, ...],
    sg: int,
    forms: tuple[str, ...] = ("cl-spirv", "cl-c"),
    table: OclTable | None = None,
) -> list[OclCoopCase]:
    """Every OpenCL-form case of ``entries`` (ids unique, form first): the
    plain space at subgroup size ``sg``, then the OpenCL axes of ``table``
    (the device's variants per subgroup size and draft query values; default:
    ``entries`` at ``sg`` only, queries unknown)."""
    apis = tuple(API_OF_FORM[f] for f in forms)
    # the draft has no bf16 component type (cl_khr_cooperative_matrix draft): also not as a
    # conversion target
    out = [as_ocl(c) for c in coop_cases(entries, tiers, sg, apis) if c.to != "bf16"]
    table = table or OclTable({sg: tuple(entries)})
    out += [replace(as_ocl(c), **kw) for c, kw in axis_cases(entries, tiers, sg, apis, table)]
    ids = [c.id for c in out]
    if len(set(ids)) != len(ids):  # pragma: no cover - guards the relabelling
        raise AssertionError("duplicate OpenCL coop case ids")
    return out


def buffer_rows(case: CoopCase) -> dict[str, int]:
    """Elements per row (per subgroup; gemm: per problem) of each buffer the
    runner ``cts.runs.coop.run_coop`` hands to the backend for ``case``."""
    if getattr(case, "ocl_axis", "") not in ("", "sg"):
        return axis_rows(case)
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
