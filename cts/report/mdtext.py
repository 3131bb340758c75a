"""Markdown text that journal contents cannot break: escaping of device
names, driver strings and failure reasons (a table cell, a heading, raw HTML
or a link cannot be made from them), code spans and blocks of any text, and
the GitHub tables of a report (``github_table``: tabulate's own output, fast)."""

from __future__ import annotations

import re

from tabulate import tabulate

__all__ = ["plain", "md_text", "md_code", "md_block", "md_table", "github_table"]


def plain(x) -> str:
    """A table key from a journal field that may be missing (a row written
    by an older run or by the xdist controller lacks some fields)."""
    return "" if x is None else str(x)


# ------------------------------------------------------------- escaping
# Device names, driver strings, case ids and failure reasons come from
# drivers and from other machines' journals: nothing of them may change the
# page's structure (a table cell, a heading, raw HTML).
_MD_SPECIAL = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "`": "\\`", "\n": " ", "\r": " "}
)


def md_text(x) -> str:
    """Plain text in markdown: no HTML, no table split, no code span, no
    link or image (``](`` and ``![`` are broken, so a journal cannot make the
    page fetch anything); one line."""
    return plain(x).replace("\\", "\\\\").translate(_MD_SPECIAL).replace("](", "]\\(").replace("![", "!\\[")


def md_code(x) -> str:
    """An inline code span of any text (one line): a fence longer than any
    run of backticks in it; pipes escaped (GFM splits table cells on them
    even inside code)."""
    t = plain(x).replace("\r", " ").replace("\n", " ").replace("|", "\\|")
    t = t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")  # never raw HTML, even for a
    # renderer that does not keep code spans literal
    run = max((len(m) for m in re.findall(r"`+", t)), default=0)
    fence = "`" * (run + 1)
    pad = " " if t.startswith("`") or t.endswith("`") or run else ""
    return f"{fence}{pad}{t}{pad}{fence}"


def md_block(x, lang: str = "") -> list[str]:
    """A fenced code block of any text: the fence is longer than any run of
    backticks inside, so the text cannot close it."""
    t = plain(x)
    run = max((len(m) for m in re.findall(r"`{3,}", t)), default=2)
    fence = "`" * (run + 1)
    return [fence + lang, t, fence]


def md_table(rows: list[list], headers: list[str]) -> str:
    rows = [[md_text(c) if isinstance(c, str) else c for c in r] for r in rows]
    headers = [md_text(h) for h in headers]
    fast = github_table(rows, headers)
    if fast is not None:
        return fast
    return tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)


def github_table(rows: list[list], headers: list[str]) -> str | None:
    """What ``tabulate(rows, headers, tablefmt="github", disable_numparse=True)``
    prints, for the tables of a report: cells that are printable ASCII
    strings (stripped, as tabulate does), ints, bools or None (empty), every
    row as long as the headers.  Ten times faster than tabulate on the
    coverage table of a full sweep (two thousand rows), which is on the
    merge's critical path.  None for anything else (floats, other text):
    the caller then asks tabulate itself."""
    n = len(headers)
    cols: list[list[str]] = [[] for _ in range(n)]
    for r in rows:
        if len(r) != n:
            return None
        for col, c in zip(cols, r):
            t = type(c)
            if t is str:
                col.append(c.strip())
            elif c is None:
                col.append("")
            elif t is int or t is bool:
                col.append(str(c))
            else:
                return None
    text = "".join(headers) + "".join("".join(col) for col in cols)
    if not (text.isascii() and text.isprintable()):  # tabulate measures other text its own way
        return None
    widths = [max(len(h) + 2, max(map(len, col), default=0)) for h, col in zip(headers, cols)]
    out = ["| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |"]
    out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for cells in zip(*cols):
        out.append("| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |")
    return "\n".join(out)
