"""One JUnit file from the shards' own (``python -m cts sweep --junitxml``:
N writers of one file would clobber it, so each shard writes its own)."""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["merge_junit"]


def merge_junit(parts: list[Path], out: Path) -> None:
    """One JUnit file: every shard's ``<testsuite>`` under one ``<testsuites>``."""
    import xml.etree.ElementTree as ET

    root = ET.Element("testsuites")
    for p in parts:
        try:
            tree = ET.parse(p)
        except (OSError, ET.ParseError) as e:  # a shard that died before writing it
            print(f"cts sweep: no JUnit from {p.name}: {e}", file=sys.stderr)
            continue
        top = tree.getroot()
        root.extend(top.findall("testsuite") if top.tag == "testsuites" else [top])
    out.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(out, encoding="utf-8", xml_declaration=True)
    print(f"cts sweep: {out} (JUnit, {len(parts)} shards)")
