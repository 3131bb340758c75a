"""Markdown of numerics fingerprints (``fingerprint.json`` -> ``.md``): one
table per device (properties x type combinations), then per combination the
inferred model, its replay on every probe, the model tier on random tiles,
and the evidence (the deciding input and the result it gave)."""

from __future__ import annotations

from tabulate import tabulate

__all__ = ["markdown", "PROPERTY_ORDER", "report_section"]

PROPERTY_ORDER = (
    "products",
    "subnormal_inputs",
    "subnormal_c",
    "subnormal_results",
    "block_structure",
    "acc_precision",
    "acc_rounding",
    "window",
    "out_rounding",
    "internal_rounding",
    "nan_inf",
    "overflow",
    "monotonicity",
)


def _short(v) -> str:
    if isinstance(v, dict):
        if "block" in v:
            if v.get("exact"):
                return "exact sum (no cut seen)"
            return f"{v['block']} per step, {v['order']}, C {v['c_position']}"
        if "bits" in v:
            return "no cut" if v["bits"] is None else f"{v['bits']} bits (p+{v['extra_bits']}), {v['align']}"
    return "n/a" if v is None else str(v)


def markdown(results: list[dict]) -> str:
    lines = ["# Numerics fingerprint", ""]
    by_dev: dict[str, list[dict]] = {}
    for r in results:
        by_dev.setdefault(r.get("device", "?"), []).append(r)
    for dev, recs in by_dev.items():
        lines += [f"## {dev}", ""]
        ok = [r for r in recs if "findings" in r]
        for r in recs:
            if "error" in r:
                lines.append(f"* {r['target']}: could not run: {r['error']}")
        if ok:
            head = ["property"] + [r["target"] for r in ok]
            rows = []
            for p in PROPERTY_ORDER:
                rows.append([p] + [_short(r["findings"].get(p, {}).get("value")) for r in ok])
            rows.append(
                ["probes reproduced by the model"]
                + [f"{r['replay']['consistent']}/{r['replay']['probes']}" for r in ok]
            )
            rows.append(["random tiles bit-exact"] + [_tier(r) for r in ok])
            rows.append(["verdict"] + [_STATUS.get(r.get("status", "model"), "?") for r in ok])
            lines += [tabulate(rows, headers=head, tablefmt="github"), ""]
        for r in ok:
            lines += _detail(r)
    return "\n".join(lines) + "\n"


def _tier(r: dict) -> str:
    mt = r.get("model_tier")
    if not mt:
        return "not run"
    if mt.get("checked") is False:
        return f"{mt['tiles']} run, not checked"
    runs = [mt] + mt.get("more", [])
    return "; ".join(
        f"{m.get('dist', 'mixed')}: {m['tiles_bit_exact']}/{m['tiles']} ({m['elements_mismatching']} of {m['elements']} elements differ)"
        for m in runs
    )


_STATUS = {
    "model": "the probe-inferred model (random tiles agree)",
    "selected": "a model selected by random tiles",
    "unexplained": "no model explains this device",
}


def _verdict(r: dict) -> list[str]:
    st = r.get("status", "model")
    sel = r.get("selection", {})
    refuted = ", ".join(f"{d} {v}" for d, v in sel.get("refuted", {}).items())
    if st == "model":
        return [f"Inferred model: {r['model_summary']}", ""]
    if st == "selected":
        out = [
            f"Model (selected by random tiles): {r['model_summary']}",
            "",
            f"The probe-inferred model ({r.get('probe_model_summary', '?')}) was refuted by random tiles "
            f"({refuted} bit-exact); changes that the tiles decided: {', '.join(sel.get('changes', []))}.",
            "",
        ]
    else:
        out = [
            "**No model explains this device.** The probe-inferred model "
            f"({r['model_summary']}) is refuted by random tiles ({refuted} bit-exact), and no model of the "
            "space reproduces at least 99.9% of the tiles: it is not reported as the device's model.",
            "",
        ]
    if sel.get("candidates"):
        out += ["Best candidates on the evidence tiles:", ""]
        rows = [[", ".join(c["changes"]), c["evidence_tiles"], c["summary"]] for c in sel["candidates"]]
        out += [
            tabulate(rows, headers=["changes", "evidence tiles bit-exact", "model"], tablefmt="github"),
            "",
        ]
    return out


def _detail(r: dict) -> list[str]:
    out = [f"### {r['target']}", ""] + _verdict(r)
    if r.get("assumed"):
        out += [f"Not decidable with this target (defaults kept): {', '.join(r['assumed'])}", ""]
    rep = r["replay"]
    out.append(
        f"The model reproduces {rep['consistent']} of the {rep['probes']} probe results ({r['mma_calls']} device calls)."
    )
    for m in rep.get("mismatches", []):
        out.append(f"* probe `{m['input']}` ({m['label']}): device {m['device']}, model {m['model']}")
    tier = r.get("model_tier")
    for mt in ([tier] + tier.get("more", [])) if tier and "tiles_bit_exact" in tier else []:
        out += [
            "",
            f"Model tier ({mt.get('dist', 'mixed')} data): {mt['tiles_bit_exact']} of {mt['tiles']} random tiles reproduced bit for bit "
            f"({mt['elements_mismatching']} of {mt['elements']} elements differ; "
            f"{mt['zero_sign_differences']} differ only in the sign of zero, counted equal; seed {mt['seed']}).",
        ]
        for e in mt.get("examples", [])[:6]:
            out.append(
                f"* tile {e['tile']} D[{e['row']},{e['col']}]: device {e['device']} ({e['device_bits']}), "
                f"model {e['model']} ({e['model_bits']}), exact {e['exact']}, {e['ulps']:+g} ulp"
            )
        if mt.get("variants"):
            out += ["", "One-parameter changes of the model, scored on the mismatching tiles:", ""]
            out.append(
                tabulate(
                    [
                        [v["change"], f"{v['mismatches_left']}/{v['of']}", v["breaks_matching"]]
                        for v in mt["variants"]
                    ],
                    headers=["change", "mismatches left", "breaks matching tiles (elements)"],
                    tablefmt="github",
                )
            )
    out += ["", "| property | value | deciding input | result | hypotheses |", "|---|---|---|---|---|"]
    for p in PROPERTY_ORDER:
        f = r["findings"].get(p)
        if not f:
            continue
        if not f["evidence"]:
            out.append(f"| {p} | {_short(f['value'])} | ({f['detail']}) |  |  |")
        for i, e in enumerate(f["evidence"]):
            hyp = ", ".join(f"{k}: {v}" for k, v in e["expect"].items())
            name = f"{p}" if i == 0 else ""
            val = _short(f["value"]) if i == 0 else ""
            out.append(f"| {name} | {val} | `{e['input']}` | {e['result']} | {hyp} |")
    out.append("")
    return out


def report_section(out_dir) -> tuple[str, str]:
    """The numerics section of a sweep report : when
    ``python -m cts numerics`` wrote ``OUT/numerics/fingerprint.json`` (its
    default folder beside ``reports/latest/report.md``), the fingerprint table
    per device and type combination plus each target's inferred model and
    model-tier result, with a link to the full evidence.  Returns (markdown,
    html), both empty when there is no fingerprint."""
    import html
    import json
    from pathlib import Path

    path = Path(out_dir) / "numerics" / "fingerprint.json"
    if not path.is_file():
        return "", ""
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        note = f"numerics/fingerprint.json is unreadable: {e}"
        return (
            f"\n## Numerics fingerprint\n\n{note}\n",
            f"<h2>Numerics fingerprint</h2><p>{html.escape(note)}</p>",
        )
    body = markdown(results).split("\n")
    keep, skipping = [], False
    for ln in body[1:]:  # demote headings; keep the tables and the model lines, not the evidence rows
        if ln.startswith("### "):
            skipping = False
            keep.append("#" + ln)
        elif ln.startswith("## "):
            skipping = False
            keep.append("#" + ln)
        elif ln.startswith("| property | value | deciding input"):
            skipping = True
        elif not skipping:
            keep.append(ln)
    text = "\n".join(keep).strip()
    md = f"\n## Numerics fingerprint\n\nEvidence (deciding inputs and results): [numerics/fingerprint.md](numerics/fingerprint.md)\n\n{text}\n"
    page = (
        '<section id="numerics"><h2>Numerics fingerprint</h2>'
        '<p>Evidence: <a href="numerics/fingerprint.md">numerics/fingerprint.md</a></p>'
        f"<pre>{html.escape(text)}</pre></section>"
    )
    return md, page
