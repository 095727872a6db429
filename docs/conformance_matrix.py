#!/usr/bin/python3
"""The conformance matrix: audit JSONs (`lessons audit ... --json F`) → one Markdown page of
implementations × claims, each cell the verdict with the measured value, then each departure
in words (the claim, the implementation, the check's own account of the failing input).

    docs/conformance_matrix.py plain.json fused.json numpy.json torch.json --out docs/pages/conformance.md

An implementation is named by the audit's provenance (the backend's name). Only claims about the
computation are rows (claims about our own code run on our backends only; docs/candidates.md).
Exit status 2, naming the file, on a missing or malformed JSON.
"""
import argparse
import json
import math
import os
import sys

from page_anchors import card_href

VERDICT = {"passed": "PASS", "failed": "FAIL", "not applicable": "N/A", "error": "ERROR",
           "vacuous": "VACUOUS", "untested": "UNTESTED"}


def die(message):
    print(f"conformance_matrix: {message}", file=sys.stderr)
    sys.exit(2)


def load_all(path):
    """One implementation per precision the audit judged: (name, claims, provenance, listings),
    the name "NAME" in float64 and "NAME [float32]" (or [bfloat16], [float16]) in another precision (`lessons audit --dtype`)."""
    try:
        with open(path) as f:
            r = json.load(f)
        name = r["provenance"]["backend"].split(" (", 1)[0]
        by_precision = {}
        for lesson in r["lessons"]:
            for c in lesson["claims"]:
                by_precision.setdefault(c.get("precision", "float64"), {})[c["id"]] = c
        listings = {li["id"]: li for lesson in r["lessons"] for li in lesson["listings"]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        die(f"{path}: not an audit JSON ({type(e).__name__}: {e})")
    if not by_precision:
        by_precision["float64"] = {}
    return [(name if p == "float64" else f"{name} [{p}]", claims, r["provenance"], listings if p == "float64" else {})
            for p, claims in by_precision.items()]


def load(path):
    """The audit's float64 implementation (or its first precision)."""
    return load_all(path)[0]


def measured(claim):
    values = [c["measured"]["value"] if isinstance(c.get("measured"), dict) else c.get("measured")
              for c in claim.get("checks", []) if not c.get("not_applicable") and not c.get("error")]
    if any(v is None or v in ("inf", "nan", "-inf") for v in values):  # the audit writes ∞ and NaN as strings
        return "∞ or NaN"
    values = [v for v in values if isinstance(v, (int, float))]
    if not values:
        return ""
    v = max(values)
    return "∞ or NaN" if math.isinf(v) else f"{v:.2g}"


def cell(claim):
    if claim is None:
        return "—"
    verdict = VERDICT.get(claim["status"], claim["status"])
    m = measured(claim) if claim["status"] in ("passed", "failed") else ""
    return f"{verdict} {m}".strip()


def cell_against(claim, row_tolerance):
    """The cell, naming the tolerance it was judged by where it is not the row's (another precision's)."""
    text = cell(claim)
    if claim and claim["status"] in ("passed", "failed") and claim.get("tolerance") != row_tolerance:
        text += f" (≤ {claim['tolerance']})" if claim.get("compare") == "<=" else f" ({claim.get('compare')} {claim['tolerance']})"
    return text


def card_link(block_id, kind):
    """A claim's or a listing's id, linked to its card on its lesson's page."""
    return f"[`{block_id}`]({card_href(block_id, kind)})"


def escape(text):
    return text.replace("|", "\\|").replace("\n", " ")


PRECISION_ORDER = ["float64", "float32", "bfloat16", "float16"]


def by_precision(audits):
    """The columns grouped by precision (every implementation in float64 first, then float32, ...),
    each group in the implementations' order."""
    def precision(name):
        return name.rsplit(" [", 1)[1][:-1] if name.endswith("]") and " [" in name else "float64"
    return sorted(audits, key=lambda a: PRECISION_ORDER.index(precision(a[0])) if precision(a[0]) in PRECISION_ORDER else 99)


def page(audits):
    audits = by_precision(audits)
    order, statements, tolerances = [], {}, {}
    for _, claims, _, _ in audits:
        for cid, c in claims.items():
            if c.get("subject") == "our-code" or cid in statements:
                continue
            order.append(cid)
            statements[cid] = c["statement"]
            tolerances[cid] = c["tolerance"]
    names = [name for name, _, _, _ in audits]
    out = ["# Conformance matrix {#conformance}", "",
           "Every claim about the computation, run against each implementation with the spec's tolerance "
           "(`lessons audit --json`; [Auditing your own attention](@ref candidates) says how to add yours). A cell is the verdict and the "
           "check's measured value (compared with the tolerance); N/A: the implementation lacks the operation or "
           "an option of it, or vl-candidate/1 cannot carry it. A column NAME [float32] (or [bfloat16], [float16]) judges the "
           "implementation computing in that precision (`lessons audit --dtype float32`), with the spec's tolerance there, "
           "shown in the cell where it is not the column's float64 one; N/A there with the spec's reason where the claim "
           "cannot be judged in it (a worst-case bound as wide as the outputs, mostly, in bfloat16 and float16); UNTESTED: "
           "the spec states no tolerance for that precision yet.", "",
           "| claim | tolerance | " + " | ".join(names) + " |",
           "| --- | --- | " + " | ".join("---" for _ in names) + " |"]
    for cid in order:
        out.append(f"| {card_link(cid, 'claim')} | {tolerances[cid]} | " + " | ".join(
            cell_against(claims.get(cid), tolerances[cid]) for _, claims, _, _ in audits) + " |")
    listing_ids = []
    for *_, listings in audits:
        listing_ids += [i for i in listings if i not in listing_ids]
    out += ["", "## Listings", "",
            "Each listing's documented lines (with the spec's comparison rules) and numeric goldens, computed "
            "through the implementation when the listing's computation is operations it has; N/A: the listing is "
            "our own code throughout (a timing, our RNG's experiment), or the implementation lacks an operation.", "",
            "| listing | " + " | ".join(names) + " |", "| --- | " + " | ".join("---" for _ in names) + " |"]
    for lid in listing_ids:
        out.append(f"| {card_link(lid, 'listing')} | " + " | ".join(
            VERDICT.get(li[lid]["status"], li[lid]["status"]) if lid in li else "—" for *_, li in audits) + " |")
    out += ["", "## Where an implementation departs from the lesson", ""]
    any_departure = False
    for name, claims, _, _ in audits:
        unstated = [cid for cid in order if claims.get(cid, {}).get("status") == "untested" and " [" in name]
        if unstated:  # a precision whose tolerance the spec does not state yet: one line, not one per claim
            any_departure = True
            out.append(f"- **{name}**: not judged on {len(unstated)} claims whose spec states no tolerance in this "
                       f"precision yet (UNTESTED, which fails the audit): " + ", ".join(f"`{cid}`" for cid in unstated))
        for cid in order:
            c = claims.get(cid)
            if c and c["status"] not in ("passed", "not applicable") and cid not in unstated:
                any_departure = True
                out.append(f"- **{name}**, `{cid}` ({VERDICT.get(c['status'], c['status'])}): the claim says: "
                           f"{escape(statements[cid])} The audit found: {escape(c['why'])}")
    for name, _, _, listings in audits:
        for lid in listing_ids:
            li = listings.get(lid)
            if li and li["status"] not in ("passed", "not applicable"):
                any_departure = True
                out.append(f"- **{name}**, listing `{lid}` ({VERDICT.get(li['status'], li['status'])}): {escape(li['why'])}")
    if not any_departure:
        out.append("None: every applicable claim passed for every implementation.")
    out += ["", "## Provenance", ""]
    for name, _, p, _ in audits:
        out.append(f"- **{name}**: {escape(p.get('backend', ''))}; commit {p.get('commit', '?')}, {p.get('date', '?')}")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("audits", nargs="+", help="audit JSON files, one per implementation, in column order")
    ap.add_argument("--out", required=True, help="the Markdown page to write (its folder must exist)")
    a = ap.parse_args()
    text = page([impl for p in a.audits for impl in load_all(p)])
    folder = os.path.dirname(os.path.abspath(a.out))
    if not os.path.isdir(folder):
        die(f"--out {a.out}: its folder does not exist")
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, a.out)
    print(f"conformance matrix: {a.out} ({len(a.audits)} implementations)")


if __name__ == "__main__":
    main()
