"""Re-judge the committed AMX journals under the suite's one capability rule
(a device is held only to what it lists; ``--assume-extension`` runs are
forced; a module of the suite's own that omits a capability its extension
requires is never a device verdict), with the suite's own code, on Intel's
CPU OpenCL runtime installed here (the same PyPI intel-opencl-rt 2026.2.0 as
the run, so the same cl_khr_spirv_queries capability list), the AMX host's
CPU flags (cpu-flags.txt) standing in for this host's.

    python reports/intel-cpu-amx/retriage.py   # writes retriaged/*.jsonl.gz
    python -m cts report reports/intel-cpu-amx/retriaged --out reports/intel-cpu-amx

A case the rule now skips becomes ``skipped`` with the backend's reason; a
module the intel-cpu deviation makes invalid an ``error`` of layer suite;
every other row keeps the device's verdict, marked ``forced`` with what the
device does not list."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from cts.backends import opencl_joint as oj  # noqa: E402
from cts.backends.opencl import OpenCLBackend  # noqa: E402
from cts.errors import HarnessError  # noqa: E402
from cts.families.joint import joint_cases  # noqa: E402
from cts.report.journal import layer_of  # noqa: E402
from reference.data import TIERS  # noqa: E402

DROP = ("verdict", "max_ratio", "max_error", "rule", "error", "layer", "forced")


def _options(header: dict) -> list[str]:
    return list(header.get("ident", {}).get("options", []))


def _after(opts: list[str], name: str, default: str = "") -> str:
    return opts[opts.index(name) + 1] if name in opts else default


def retriage(path: Path, out: Path, backends: dict) -> None:
    lines = [json.loads(x) for x in gzip.open(path, "rt")]
    header = lines[0]
    opts = _options(header)
    assumed = tuple(o for i, o in enumerate(opts) if i and opts[i - 1] == "--assume-extension")
    lowering = _after(opts, "--joint-lowering", "spec")
    dev = header.get("defaults", {}).get("device", "")
    key = (assumed, lowering)
    if key not in backends:
        b = OpenCLBackend("Intel", assume_extensions=assumed)
        b.joint_lowering = lowering
        backends[key] = b
    b = backends[key]
    here = b.device.name.strip()
    cases = {c.id: c for c in joint_cases(TIERS)}
    coop_forced = f"--assume-extension {', '.join(assumed)}: without it, cl_khr_cooperative_matrix not supported by {dev}"
    rows = []
    for row in lines:
        if "outcome" not in row or row.get("kind"):
            rows.append(row)
            continue
        case = cases.get(row.get("case_id", "")) if row.get("family") == "joint_matrix" else None
        new = dict(row)
        if case is None:  # config A (cl-spirv cooperative matrix): the extension is only assumed
            if row["outcome"] != "skipped":
                new["forced"] = coop_forced
        else:
            why = b.unsupported(case)
            if why:
                for k in DROP:
                    new.pop(k, None)
                new.update(outcome="skipped", reason=why.replace(here, dev))
            else:
                try:
                    b.kernel_source_joint_matrix(case, 2)
                    forced = b.forced_reason(case)
                    new["forced"] = forced.replace(here, dev) if forced else ""
                except HarnessError as e:
                    for k in DROP:
                        new.pop(k, None)
                    new.update(outcome="error", reason=f"HARNESS ERROR [layer: suite]: {e}")
                    new["forced"] = (b.forced_reason(case) or "").replace(here, dev)
        if not new.get("forced"):
            new.pop("forced", None)
        layer = layer_of(new)
        if layer:
            new["layer"] = layer
        rows.append(new)
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wt") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def main() -> None:
    flags = frozenset((HERE / "cpu-flags.txt").read_text().split())
    oj.host_cpu_flags = lambda: flags  # the AMX host's features, not this host's
    backends: dict = {}
    for p in sorted(HERE.glob("journal-*.jsonl.gz")):
        retriage(p, HERE / "retriaged" / p.name, backends)
        print(p.name)


if __name__ == "__main__":
    main()
