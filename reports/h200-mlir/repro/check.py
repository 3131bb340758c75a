#!/usr/bin/env python3
"""Standalone reproducer of one mlir-opt 22 defect (no part of the suite
needed): lower ``input.mlir`` with the pipeline in ``case.json`` exactly as
the suite did, then show the defect in the tool's own output.

    CTS_MLIR_TOOLS=/usr/lib/llvm-22/bin python check.py DIR   # DIR: one of the folders here

Needs mlir-opt (and for SPIR-V mlir-translate, spirv-dis, spirv-val) on PATH
or in $CTS_MLIR_TOOLS.  Exit 1 when the defect shows (the tool is wrong), 0 when it
does not (fixed), 2 on a usage problem.  ``observed.txt`` holds what the
device did with the module (from the suite's journal); ``case.json`` says
what the MLIR op's definition requires instead."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def tool(name: str) -> str:
    folder = os.environ.get("CTS_MLIR_TOOLS")
    for cand in ([Path(folder) / name] if folder else []) + [Path(shutil.which(name) or "/nonexistent")]:
        if cand.is_file():
            return str(cand)
    sys.exit(f"{name} not found (set CTS_MLIR_TOOLS or PATH)")


def run(args: list[str], stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(args, input=stdin, capture_output=True, text=True)


def lowered(d: Path, case: dict) -> tuple[int, str]:
    """(exit status, the text the defect is looked for in)."""
    text = (d / "input.mlir").read_text()
    r = run([tool("mlir-opt"), f"--pass-pipeline={case['pipeline']}", "-"], text)
    if r.returncode or case["target"] == "tool":
        return r.returncode, r.stdout + r.stderr
    if case["target"] == "ptx":  # the assembly string of the gpu.binary, MLIR's \\XX escapes undone
        m = re.search(r'assembly = "((?:[^"\\]|\\.)*)"', r.stdout)
        asm = m.group(1) if m else r.stdout
        return 0, re.sub(r"\\([0-9A-Fa-f]{2})", lambda x: chr(int(x.group(1), 16)), asm)
    lines = r.stdout.splitlines()  # spirv: cut the spirv.module out, serialize, disassemble
    start = next(i for i, ln in enumerate(lines) if ln.startswith("  spirv.module "))
    end = next(i for i in range(start + 1, len(lines)) if lines[i] == "  }")
    module = "\n".join(ln[2:] for ln in lines[start : end + 1]) + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        spv = os.path.join(tmp, "m.spv")
        r = run([tool("mlir-translate"), "--serialize-spirv", "--no-implicit-module", "-o", spv, "-"], module)
        if r.returncode:
            return r.returncode, r.stderr
        dis = run([tool("spirv-dis"), "--raw-id", spv]).stdout
        val = run([tool("spirv-val"), "--target-env", case.get("val_env", "vulkan1.3"), spv])
        return 0, dis + "\nspirv-val: " + (val.stderr or val.stdout or "valid")


def main() -> int:
    if len(sys.argv) != 2 or not (Path(sys.argv[1]) / "case.json").is_file():
        print(__doc__)
        return 2
    d = Path(sys.argv[1])
    case = json.loads((d / "case.json").read_text())
    print(f"{d.name}: {case['title']}\nrequired: {case['required']}")
    status, out = lowered(d, case)
    hits = [ln.strip() for ln in out.splitlines() if re.search(case["evidence"], ln)]
    shows = bool(hits) if case.get("present", True) else not hits
    if case["target"] == "tool":
        shows = shows and status != 0
    print(f"mlir-opt exit status {status}; lines matching {case['evidence']!r}:")
    for ln in hits[:8]:
        print("   ", ln[:200])
    if (d / "observed.txt").is_file():
        print("device observed (suite journal):\n   " + (d / "observed.txt").read_text().strip()[:1200])
    print("DEFECT SHOWN" if shows else "defect not shown (fixed in this mlir-opt?)")
    return 1 if shows else 0


if __name__ == "__main__":
    sys.exit(main())
