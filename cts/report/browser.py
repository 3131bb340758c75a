"""Headless-browser check of a report page: ``python -m cts.report.html
DIR/report.html [--screenshot PNG]`` (or ``python -m cts.report.browser``)
opens it in headless Chromium with name resolution switched off and fails on
any console message, any network request of the page, or a missing matrix /
error plot."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["find_chromium", "open_in_chromium", "check_main", "BrowserView"]

# ------------------------------------------------- headless browser check
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

# Chromium's own background traffic (updates, sign-in, time) is switched off
# as far as flags allow; what remains is told apart from the page's requests
# by its network isolation key (the page's is file://).
_QUIET = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--disable-extensions",
    "--disable-sync",
    "--disable-background-networking",
    "--disable-component-update",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # nothing outside the machine can answer
)
_CONSOLE = re.compile(r":CONSOLE(?:\(\d+\)|:\d+)?\]\s*(.*)")


@dataclass
class BrowserView:
    """What headless Chromium saw of a page."""

    console: list[str]  # console messages and uncaught exceptions (the page writes none)
    requests: list[str]  # URLs the page asked the network for (none: it is self-contained)
    dom: str  # the DOM after the page's scripts ran


def find_chromium() -> str | None:
    """The Chromium executable: ``$CTS_CHROMIUM`` or the first of
    ``CHROMIUM_NAMES`` on PATH (Debian's ``chromium`` package)."""
    for name in (os.environ.get("CTS_CHROMIUM"), *CHROMIUM_NAMES):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def _page_requests(netlog: Path) -> list[str]:
    try:
        events = json.loads(netlog.read_text(encoding="utf-8", errors="replace")).get("events", [])
    except (OSError, ValueError):  # Chromium may leave the log without its closing bracket
        text = netlog.read_text(encoding="utf-8", errors="replace") if netlog.exists() else ""
        events = [{"params": {"url": u, "network_isolation_key": "file://"}} for u in re.findall(
            r'"network_isolation_key":"file://[^"]*"[^{}]*?"url":"([^"]+)"', text)]  # fmt: skip
    urls = []
    for ev in events:
        p = ev.get("params") or {}
        url = str(p.get("url") or "")
        if (
            url
            and not url.startswith(("file:", "data:"))
            and str(p.get("network_isolation_key", "")).startswith("file://")
        ):
            urls.append(url)
    return sorted(set(urls))


def open_in_chromium(
    page: str | os.PathLike,
    screenshot: str | os.PathLike | None = None,
    size: tuple[int, int] = (1200, 2300),
    timeout: float = 120,
    chromium: str | None = None,
) -> BrowserView:
    """Open ``page`` (a local file) in headless Chromium with name
    resolution switched off: the console messages, the network requests of
    the page and the DOM after its scripts ran; with ``screenshot`` also a
    PNG of the first ``size`` pixels.  RuntimeError (one line) when no
    Chromium is found or it fails."""
    exe = chromium or find_chromium()
    if not exe:
        raise RuntimeError("no Chromium found (install Debian's chromium or set CTS_CHROMIUM)")
    if not Path(page).is_file():
        raise RuntimeError(f"no such page: {page}")
    url = Path(page).resolve().as_uri()
    with tempfile.TemporaryDirectory(prefix="cts-chromium-") as tmp:
        netlog = Path(tmp) / "net.json"
        base = [exe, *_QUIET, f"--user-data-dir={tmp}/profile", f"--window-size={size[0]},{size[1]}"]
        cmd = [*base, "--enable-logging=stderr", "--v=0", f"--log-net-log={netlog}", "--dump-dom", url]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            if screenshot is not None:
                shot = Path(screenshot).resolve()
                q = subprocess.run(
                    [*base, f"--screenshot={shot}", url], capture_output=True, text=True, timeout=timeout
                )
                if q.returncode != 0 or not shot.exists():
                    raise RuntimeError(f"chromium made no screenshot (exit {q.returncode})")
        except (OSError, subprocess.TimeoutExpired) as e:
            raise RuntimeError(f"chromium failed on {page}: {e}") from None
        if p.returncode != 0:
            raise RuntimeError(f"chromium exited with {p.returncode} on {page}")
        console = [m.group(1) for m in map(_CONSOLE.search, p.stderr.splitlines()) if m]
        return BrowserView(console, _page_requests(netlog), p.stdout)


def check_main(argv: list[str]) -> int:
    """``python -m cts.report.html PAGE.html [--screenshot PNG]``: open a report in
    headless Chromium; exit 1 when the page logs to the console or asks the
    network for anything, or lacks its matrices and error plot."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m cts.report.html", description=check_main.__doc__)
    ap.add_argument("page")
    ap.add_argument("--screenshot", metavar="PNG")
    a = ap.parse_args(argv)
    try:
        v = open_in_chromium(a.page, a.screenshot)
    except RuntimeError as e:
        print(f"cts.report.html: {e}", file=sys.stderr)
        return 2
    problems = [f"console: {m}" for m in v.console] + [f"network request: {u}" for u in v.requests]
    if "<h3>" not in v.dom or "Conformance matrix per family" not in v.dom:
        problems.append("no conformance matrix in the rendered page")
    if "<svg" not in v.dom and "No float cases" not in v.dom:
        problems.append("no error plot in the rendered page")
    for line in problems:
        print(f"{a.page}: {line}")
    print(
        f"{a.page}: {'FAIL' if problems else 'ok'}: {len(v.dom)} bytes of DOM, {v.dom.count('<h3>')} matrices, "
        f"{v.dom.count('<circle')} plot points, {len(v.console)} console messages, {len(v.requests)} requests"
        + (f"; screenshot {a.screenshot}" if a.screenshot else "")
    )
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(check_main(sys.argv[1:]))
