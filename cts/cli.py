"""`python -m cts <command>`: one entry per room, each implemented in its own
module as ``main(argv) -> int`` so rooms stay independent."""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "faults": ("cts.cli:faults_main", "list the emulator's named faults"),
    "devices": ("cts.backends.devices:devices_main", "list OpenCL platforms/devices and what they support"),
    "sweep": ("cts.launch:main", "run a sweep as N concurrent shard processes, merged into one report"),
    "report": ("cts.report.markdown:main", "merge journals into report.md / report.html / results.csv"),
    "repro": ("cts.report.repro:main", "write a standalone repro bundle for one case"),
    "numerics": (
        "cts.numerics.cli:main",
        "numerics fingerprint of a device: how it rounds, fuses and aligns",
    ),
}


def faults_main(argv: list[str]) -> int:
    """``python -m cts faults [--family PREFIX]``: the emulator's named faults."""
    import argparse

    from cts.backends.emulator import all_faults

    ap = argparse.ArgumentParser(prog="python -m cts faults", description="list the emulator's named faults")
    ap.add_argument("--family", default="", help="only faults whose name starts with this prefix")
    opts = ap.parse_args(argv)
    for name, text in all_faults().items():
        if name.startswith(opts.family):
            print(f"{name:28s} {text}")
    return 0


def _one_line_usage_error(self, message: str) -> None:
    """argparse's error() prints the whole usage block; a CTS command says
    what is wrong in one line (``<prog>: error: <message>; see --help``)."""
    self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m cts <command> [options]\n\ncommands:")
        for name, (_, text) in COMMANDS.items():
            print(f"  {name:10s} {text}")
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"cts: unknown command {name!r}; known: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    mod, fn = COMMANDS[name][0].split(":")
    import argparse

    argparse.ArgumentParser.error = _one_line_usage_error  # every sub-command's parser, this process only
    try:
        return int(getattr(importlib.import_module(mod), fn)(rest) or 0)
    except (OSError, ValueError) as e:  # one-line errors for bad input
        print(f"cts {name}: {e}", file=sys.stderr)
        return 2
