"""``python -m cts repro CASE_ID --out DIR``: a standalone bundle for one case
(a self-contained reproducer a driver team can run without the suite).

The bundle holds

* ``case.json``: the case (all axes, spec row, built-in), seed, subgroups,
  the acceptance rule, the kernel launch facts when a backend gives them;
* the inputs as ``.npy``: the logical operands (``A``, ``B``, ``C`` or ``x``)
  and the per-invocation register images the kernel receives (``a_regs``,
  ``b_regs``, ``c_regs``);
* the expected result: ``expected_bits.npy`` (logical layout) and, for float
  cases, ``expected_value.npy`` + ``bound.npy`` (Rule F, reference/tolerance.py;
  the special tier adds the flushed-subnormal alternative ``*_ftz.npy``);
* ``actual_bits.npy`` and ``verdict.txt`` from the backend that made it;
* ``kernel.cl`` or ``kernel.spv`` + launch facts (entry, build options,
  NDRange, argument order and dtypes) from ``OpenCLBackend.kernel_source``
  -- generated without a device when the bundle is made on the emulator;
* ``run_case.py``: needs only numpy (+ pyopencl to run on a device); reruns
  the kernel on a chosen device, or checks a result file (``--actual``), and
  prints the verdict with the first mismatches.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import shutil
from pathlib import Path

import numpy as np

__all__ = ["FAMILIES", "find_case", "write_bundle", "main"]


def _bundled() -> tuple[dict[str, tuple[str, str, str]], dict[str, str]]:
    """family -> (cases function, runner, pytest test name), and family -> its
    cases/ test module name, for every family the registry of families
    (cts.families.registry) declares with a repro bundle; the others carry
    the reason they have none."""
    from cts.families.registry import FAMILIES as DECLARED
    from cts.families.registry import Repro

    fams, modules = {}, {}
    for f in DECLARED.values():
        if isinstance(f.repro, Repro):
            test = next(t for t in f.tests if t.run == f.repro.run)
            fams[f.name] = (f.repro.cases, f.repro.run, test.test)
            modules[f.name] = test.module.removeprefix("cases/test_").removesuffix(".py")
    return fams, modules


FAMILIES, TEST_MODULE = _bundled()


def _load(ref: str):
    mod, name = ref.split(":")
    return getattr(importlib.import_module(mod), name)


def find_case(text: str):
    """A case from a node id, ``test_x[ID]``, ``family[ID]`` or a bare id
    (unique across families).  Returns (family, case, runner)."""
    name = text.split("::")[-1]
    head, _, rest = name.partition("[")
    cid = rest[:-1] if rest.endswith("]") else name
    fams = [f for f, (_, _, test) in FAMILIES.items() if rest and head in (f, test) or not rest]
    if rest and not fams:
        raise ValueError(
            f"no repro bundle support for {head!r}: bundles cover {', '.join(FAMILIES)} (OpenCL "
            "kernels); rerun other cases with the pytest command the report gives"
        )
    from reference.data import TIERS

    hits = []
    for fam in fams:
        cases_ref, runner_ref, _ = FAMILIES[fam]
        for c in _load(cases_ref)(TIERS):
            if c.id == cid and c.family == fam:
                hits.append((fam, c, _load(runner_ref)))
    if not hits:
        known = ", ".join(FAMILIES)
        raise ValueError(f"no case {text!r} (families with repro support: {known}; ids as in pytest)")
    if len(hits) > 1:
        raise ValueError(f"case id {cid!r} exists in {', '.join(h[0] for h in hits)}: write family[{cid}]")
    return hits[0]


def _acceptance(case, result, profile) -> dict[str, np.ndarray]:
    """Expected values and bounds the standalone script applies (the same
    rules as cts/runs/intel.py, precomputed from reference/)."""
    from reference.dtypes import etype
    from reference.mma import mma_float
    from reference.tolerance import flush_subnormals, mma_float_bound, rounding_bracket, rounding_mode

    out = {"expected_bits": np.asarray(result.expected)}
    rule = result.verdict.rule
    if rule not in ("E", "R", "F") or "A" not in result.inputs:
        return out
    A, B, C = result.inputs["A"], result.inputs["B"], result.inputs["C"]
    acc = etype(case.acc)
    ref = mma_float(A, B, C)
    mode = rounding_mode(profile, full_precision=case.family.startswith("intel"))
    if rule == "R" and mode == "faithful":
        # either value bracketing the exact sum: the closed interval between them holds no other
        near, other = rounding_bracket(acc, ref.value)
        out["expected_value"] = (near + other) / 2
        out["bound"] = np.abs(other - near) / 2
        return out
    if rule in ("E", "R"):
        out["expected_value"] = acc.round(ref.value)
        out["bound"] = np.zeros_like(ref.value)
        return out
    out["expected_value"] = ref.value
    out["bound"] = mma_float_bound(ref.abs_sum, ref.value, case.k, case.acc, case.acc, profile)
    if case.tier == "special":
        ftz = flush_subnormals
        rf = mma_float(ftz(A, etype(case.a)), ftz(B, etype(case.b)), ftz(C, acc))
        out["expected_value_ftz"] = rf.value
        out["bound_ftz"] = mma_float_bound(rf.abs_sum, rf.value, case.k, case.acc, case.acc, profile)
    return out


INPUT_FILES = {"a": "a_regs", "b": "b_regs", "c": "c_regs", "x": "x"}


def _output_counts(args, inputs: dict, case) -> dict[str, int]:
    """Element counts of the kernel's output buffers (cts/kernels/opencl_c.py:
    ``d`` = result registers, ``sgsize`` = one per invocation, ``y`` = tf32)."""
    out = {}
    for name in args:
        if name == "d" and "c_regs" in inputs:
            out[name] = int(np.asarray(inputs["c_regs"]).size)
        elif name == "sgsize" and "c_regs" in inputs:
            out[name] = int(np.asarray(inputs["c_regs"]).size // case.M)
        elif name == "y" and "x" in inputs:
            out[name] = int(np.asarray(inputs["x"]).size)
    return out


def _kernel(backend, case, subgroups: int, inputs: dict, out: Path, prelude: str | None = None) -> dict:
    """Kernel text/IL and launch facts (``OpenCLBackend.kernel_source``).
    A backend without kernels (the emulator) gets the OpenCL kernel the
    opencl backend would build, generated without a device."""
    fn = getattr(backend, "kernel_source", None)
    origin = backend.name
    try:
        if not callable(fn):
            from cts.backends.opencl import OpenCLBackend

            shim = OpenCLBackend.__new__(OpenCLBackend)  # kernel text needs no device
            shim.prelude = None
            if prelude:  # the layered implementation a device without the built-in is tested through
                from types import SimpleNamespace

                shim.prelude = SimpleNamespace(label=prelude, text=Path(prelude).read_text(encoding="utf-8"))
            fn = OpenCLBackend.kernel_source.__get__(shim)
            origin = "opencl kernel generator (no device)"
        ks = fn(case, subgroups)
    except Exception as e:  # no kernel for this family / runtime missing: the bundle says why
        return {"unavailable": f"{type(e).__name__}: {e}"}
    info: dict = {"origin": origin}
    if getattr(ks, "il", None) is not None:
        (out / "kernel.spv").write_bytes(bytes(ks.il))
        info["il_file"] = "kernel.spv"
    if getattr(ks, "source", None):
        (out / "kernel.cl").write_text(ks.source, encoding="utf-8")
        info["source_file"] = "kernel.cl"
    for key in (
        "entry",
        "options",
        "global_size",
        "local_size",
        "args",
        "arg_types",
        "notes",
        "spec_constants",
    ):
        v = getattr(ks, key, None)
        info[key] = list(v) if isinstance(v, tuple) else v
    info["inputs"] = {a: INPUT_FILES[a] + ".npy" for a in info.get("args") or () if a in INPUT_FILES}
    info["outputs"] = _output_counts(info.get("args") or (), inputs, case)
    return info


def write_bundle(
    case_text: str,
    out: str | Path,
    seed: int = 1,
    subgroups: int = 32,
    backend_name: str = "emulator",
    device: str | None = None,
    profile_name: str = "default",
    backend_options: dict | None = None,
) -> Path:
    """Write the bundle of one case into ``out``; returns the folder."""
    from cts.backends import make_backend
    from reference.tolerance import PROFILES

    fam, case, runner = find_case(case_text)
    if profile_name not in PROFILES:
        raise ValueError(f"unknown tolerance profile {profile_name!r}; known: {', '.join(PROFILES)}")
    profile = PROFILES[profile_name]
    opts = dict(backend_options or {})
    if backend_name == "emulator":  # the prelude only shapes the bundled kernel
        opts = {}
        if (backend_options or {}).get("opencl_prelude") and not Path(
            backend_options["opencl_prelude"]
        ).is_file():
            raise ValueError(f"cannot read --opencl-prelude {backend_options['opencl_prelude']}")
    backend = make_backend(backend_name, device=device, emulator_faults=(), **opts)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        kw = {}
        if "subgroups" in runner.__code__.co_varnames:
            kw["subgroups"] = subgroups
        if "profile" in runner.__code__.co_varnames:
            kw["profile"] = profile
        result = runner(case, backend, seed, **kw)
        prelude = (backend_options or {}).get("opencl_prelude") if backend_name == "emulator" else None
        kernel = _kernel(backend, case, subgroups, result.inputs, out, prelude)
        dev = backend.describe().as_dict()
    finally:
        backend.close()
    for k, v in result.inputs.items():
        np.save(out / f"{k}.npy", np.asarray(v))
    arrays = _acceptance(case, result, profile)
    for k, v in arrays.items():
        np.save(out / f"{k}.npy", v)
    np.save(out / "actual_bits.npy", np.asarray(result.actual))
    v = result.verdict
    meta = {
        "family": fam,
        "case_id": case.id,
        "case": {k: getattr(case, k) for k in (f.name for f in dataclasses.fields(case))},
        "spec_row": getattr(case, "spec_row", ""),
        "builtin": getattr(case, "builtin", ""),
        "seed": seed,
        "subgroups": subgroups,
        "profile": profile_name,
        "rule": v.rule,
        "acc": getattr(case, "acc", "f32"),
        "M": getattr(case, "M", None),
        "result_bits": {"i32": 32, "f32": 32, "f16": 16, "bf16": 16}.get(getattr(case, "acc", "f32"), 32),
        "made_on": dev,
        "verdict_on_made_on": v.summary(),
        "kernel": kernel,
        "inputs": sorted(f"{k}.npy" for k in result.inputs),
        "rerun": f"pytest 'cases/test_{TEST_MODULE.get(fam, fam)}.py::{FAMILIES[fam][2]}[{case.id}]' --seed {seed}",
    }
    (out / "case.json").write_text(json.dumps(meta, indent=2, default=str), encoding="utf-8")
    lines = [f"{fam}[{case.id}] on {dev.get('name')}: {v.summary()}"] + [
        "  " + m.line() for m in v.mismatches
    ]
    (out / "verdict.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copyfile(Path(__file__).with_name("repro_runner.py"), out / "run_case.py")
    return out


def main(argv: list[str]) -> int:
    from cts.report.cli import OneLineParser

    ap = OneLineParser(
        prog="python -m cts repro",
        description="write a standalone bundle (inputs .npy, expected result, kernel, run_case.py) for one case",
    )
    ap.add_argument("case", metavar="CASE_ID", help="node id, test_x[ID], family[ID] or a bare case id")
    ap.add_argument("--out", required=True, metavar="DIR")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--subgroups", type=int, default=32)
    ap.add_argument(
        "--backend", default="emulator", help="backend that makes the bundle (kernel, actual result)"
    )
    ap.add_argument("--device", default=None)
    ap.add_argument("--tolerance-profile", default="default")
    ap.add_argument(
        "--opencl-prelude",
        metavar="FILE",
        help="OpenCL C prepended to the kernel (e.g. cts/kernels/intel_mma_prelude.cl)",
    )
    ap.add_argument("--assume-extension", action="append", default=[], metavar="NAME", help="(opencl)")
    a = ap.parse_args(argv)
    opts = {}
    if a.opencl_prelude or a.assume_extension:
        if a.assume_extension and a.backend != "opencl":
            raise ValueError("--assume-extension needs --backend opencl")
        opts = {"opencl_prelude": a.opencl_prelude, "opencl_assume_extensions": tuple(a.assume_extension)}
    from cts.errors import BackendError

    try:
        d = write_bundle(a.case, a.out, a.seed, a.subgroups, a.backend, a.device, a.tolerance_profile, opts)
    except BackendError as e:
        raise ValueError(str(e)) from None
    print(f"bundle: {d}")
    print((d / "verdict.txt").read_text(encoding="utf-8").rstrip())
    print(f"rerun alone: python {d / 'run_case.py'} --help")
    return 0
