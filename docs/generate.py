#!/usr/bin/python3
"""Weave each lesson's spec, this build's audit and the C++ listings into Doxygen pages.

    /usr/bin/python3 docs/generate.py --source DIR --specs specs.json --audit audit.json --out PAGES_DIR

Reads the lessons' specs as the engine parsed them (``lessons spec --json``, written by
src/cli/cmd_spec.cpp; format in specs/README.md: this script never parses spec syntax itself),
the audit's JSON (``lessons audit --json``, written by src/engine/report_json.cpp) and the C++
under ``DIR/src``, and writes, into PAGES_DIR:

* ``index.md``            the main page: every lesson with its status;
* ``lesson_<id>.md``      one page per lesson: the audit's summary and the claims as a short list,
                          then the spec's prose, rendered by Doxygen's Markdown, with its
                          claim/listing/output/rules blocks turned into cards and tables that
                          carry this build's verdicts, each listing's code beside the lesson's
                          own (docs/code_panels.py), plots and "try it" panels of this build's
                          numbers (plots.py, tryit.py), and the build's provenance;
* ``img/*.svg``           the plots (docs/plots.py), found by Doxygen through IMAGE_PATH.

Python only presents: every verdict shown comes from the audit's JSON; nothing is re-checked
here. A lesson that fails verification, or that the audit could not read, says so at the top
of its page, in red; so does a missing spec export (a spec the engine refused). Standard
library only, apart from matplotlib/numpy in plots.py.
"""
from __future__ import annotations

import argparse
import difflib
import html
import json
import math
import re
import sys
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import code_panels  # noqa: E402  (docs/code_panels.py: seed code, C++ twin, kernel)
import plots  # noqa: E402  (docs/plots.py)
import tryit  # noqa: E402  (docs/tryit.py: the interactive panels)
from page_anchors import claim_anchor, listing_anchor, page_name  # noqa: E402  (shared with the conformance matrix)

HERE = Path(__file__).resolve().parent
GLOSS = json.loads((HERE / "gloss.json").read_text(encoding="utf-8"))["phrases"]

ENGINE_BLOCKS = ("claim", "listing", "output", "rules")


# ---------------------------------------------------------------------------------------------
def machine_rows(p: dict) -> list:
    """The provenance rows about the machine (issue 23): the CPU and its vector width, the vector
    path our kernels took, the BLAS core in use, and — only when that core is narrower than the
    CPU — the audit's one plain line saying so."""
    rows = []
    if p.get("cpu"):
        rows.append(("Machine", f'{p["cpu"]} ({p.get("cpu_vector", "?")}); our kernels\' vector path: '
                                f'{p.get("kernel_path", "?")}; BLAS core: {p.get("blas_core", "?")}'))
    if p.get("blas_narrower"):
        rows.append(("BLAS fallback", p["blas_narrower"]))
    return rows


# The spec, as the engine parsed it (`lessons spec --json`): Python never reads spec syntax, so a
# page shows only what the audit read.

@dataclass
class Block:
    kind: str                      # "prose" or one of ENGINE_BLOCKS
    text: str = ""                 # prose: its Markdown; output: the documented lines
    ref: str = ""                  # output/rules: the listing id
    fields: list = field(default_factory=list)   # claim/listing: [(key, value)] as the engine read them
    line: int = 0                  # first line in the spec file
    rules: list = field(default_factory=list)    # rules: [(first, last, number, rule, why)]

    def get(self, key, default=""):
        for k, v in self.fields:
            if k == key:
                return v
        return default


@dataclass
class Spec:
    path: Path
    lesson: str
    title: str
    sources: list
    blocks: list


def block_from_json(b: dict) -> Block:
    """One block of the engine's export: {"kind", "first_line", "text", and "<kind>": {...}}."""
    kind, data = b["kind"], b.get(b["kind"], {})
    if kind == "prose":
        return Block("prose", "\n".join(b["text"].splitlines()), line=b["first_line"])
    if kind in ("claim", "listing"):
        return Block(kind, fields=list(data.items()), line=b["first_line"])
    if kind == "output":
        return Block(kind, "\n".join(data["lines"]), ref=data["listing"], line=b["first_line"])
    return Block(kind, ref=data["listing"], line=b["first_line"], rules=[
        (r["first_line"], r["last_line"], None if r["number"] is None else str(r["number"]), r["rule"], r["reason"])
        for r in data["rules"]])


def spec_from_json(s: dict) -> Spec:
    return Spec(Path(s["file"]), s["lesson"], s["title"], s["sources"], [block_from_json(b) for b in s["blocks"]])


# ---------------------------------------------------------------------------------------------
# Prose: the spec's Markdown, made safe for Doxygen's Markdown, formulas for MathJax.

# A code or formula fence inside prose (the engine has refused every fence it would not read).
FENCE = re.compile(r"^(\s{0,3})(`{3,}|~{3,})\s*([^\s`]*)\s*(.*)$")

INLINE = re.compile(
    r"(?P<code>(?P<ticks>`+).+?(?P=ticks))"
    r"|(?P<display>\$\$(?P<dbody>.+?)\$\$)"
    r"|(?P<inline>(?<![\\$\w])\$(?P<ibody>[^\s$](?:[^$\n]*?[^\s$\\])?)\$(?![\w$]))",
    re.S)


def escape_doxygen_text(s: str) -> str:
    """Plain Markdown text: keep Markdown, neutralise Doxygen commands and stray HTML."""
    s = s.replace("\\", "\\\\").replace("@", "\\@").replace("%", "\\%")
    s = re.sub(r"<(?=[A-Za-z/!?])", "&lt;", s)
    s = re.sub(r"#(?=\w)", r"\\#", s)
    return s


def prose_to_doxygen(text: str, drop_title: str = "") -> str:
    out, segment = [], []
    lines = text.splitlines()
    if drop_title:
        for k, raw in enumerate(lines):
            if raw.strip():
                if raw.strip().lstrip("#").strip() == drop_title.strip() and raw.lstrip().startswith("# "):
                    lines = lines[k + 1:]
                break

    def flush_text():
        if not segment:
            return
        chunk = "\n".join(segment)
        segment.clear()
        pos, res = 0, []
        for m in INLINE.finditer(chunk):
            res.append(escape_doxygen_text(chunk[pos:m.start()]))
            if m.group("code"):
                res.append(m.group("code"))
            elif m.group("display"):
                res.append("\n\\f[" + m.group("dbody").strip() + "\\f]\n")
            else:
                res.append("\\f$" + m.group("ibody") + "\\f$")
            pos = m.end()
        res.append(escape_doxygen_text(chunk[pos:]))
        out.append("".join(res))

    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m:
            flush_text()
            fence, info = m.group(2), m.group(3)
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(fence):
                j += 1
            body = lines[i + 1:j]
            if info in ("math", "latex", "tex"):
                out.append("\\f[\n" + "\n".join(body) + "\n\\f]")
            else:
                lang = {"cpp": "{.cpp}", "c++": "{.cpp}", "python": "{.py}", "py": "{.py}", "sh": "{.sh}"}.get(info, "")
                out.append("```" + lang + "\n" + "\n".join(body) + "\n```")
            i = j + 1
            continue
        # The spec's "##" sections are the page's sections (its "#" is the page title).
        h = re.match(r"^(#{1,6})\s+(.*)$", lines[i])
        if h:
            flush_text()
            out.append("#" * max(len(h.group(1)) - 1, 1) + " " + escape_doxygen_text(h.group(2)))
            i += 1
            continue
        segment.append(lines[i])
        i += 1
    flush_text()
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# HTML helpers (inside \htmlonly, where Doxygen leaves everything as written).

def esc(s) -> str:
    return html.escape(str(s), quote=True)


def htmlonly(s: str) -> str:
    return "\n\\htmlonly[block]\n" + s.strip() + "\n\\endhtmlonly\n"


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def fmt_number(x) -> str:
    """A measured value for a reader: 0, 1.5, 6.66·10⁻¹⁶ (HTML)."""
    if isinstance(x, str):
        return esc(x)
    if x is None:
        return "—"
    if x == 0:
        return "0"
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e7:
        return f"{int(x)}"
    a = abs(x)
    if 1e-3 <= a < 1e5:
        return f"{x:.4g}"
    mant, exp = f"{x:.2e}".split("e")
    mant = mant.rstrip("0").rstrip(".")
    return f"{mant}·10<sup>{int(exp)}</sup>".replace("-", "−")


STATUS_WORD = {"passed": "verified", "failed": "fails", "vacuous": "vacuous check",
               "untested": "untested", "error": "error", "missing": "not in the audit"}


def verdict(status: str, short: bool = False, refutes: str = "") -> str:
    """A claim's verdict; a passed claim that refutes the lesson's sentence says so."""
    if status == "passed" and refutes:
        return f'<span class="vl-verdict vl-refuted">✓ {"refuted" if short else "the lesson refuted"}</span>'
    ok = status == "passed"
    word = ("pass" if short else "verified") if ok else (status if short else STATUS_WORD.get(status, status))
    return f'<span class="vl-verdict vl-{"pass" if ok else "fail"}">{"✓" if ok else "✗"} {esc(word)}</span>'


def _tolerance_number(tol):
    try:
        return float(tol)
    except (TypeError, ValueError):
        return None


def _measured_number(x):
    if isinstance(x, str):
        return {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}.get(x.strip().lower())
    return x


# The spec's `compare:` (the engine's comparison, src/engine/verdict.hpp), as a reader writes it.
COMPARE_SIGN = {"<=": "≤", "<": "<", ">=": "≥", ">": ">", "==": "="}
NEGATED_SIGN = {"≤": ">", "<": "≥", "≥": "<", ">": "≤", "=": "≠"}


def holds(measured, tol, compare):
    """measured <compare> tol, as the engine judges it (a NaN never holds); None when it cannot say."""
    m = _measured_number(measured)
    t = _tolerance_number(tol)
    if m is None or t is None or compare not in COMPARE_SIGN:
        return None
    if isinstance(m, float) and math.isnan(m):
        return False
    return {"<=": m <= t, "<": m < t, ">=": m >= t, ">": m > t, "==": m == t}[compare]


def reading(measure: tuple, measured, tol, compare, failed: bool = False) -> str:
    """'largest |ours − torch| 2.2·10⁻¹⁶ ≤ 10⁻¹²', 'workspace at n = 65536 0.21 MiB < 64 MiB' (HTML).
    measure: (quantity, unit), the spec's `measure:` and `unit:` lines (bytes shown in MiB); the
    direction is the spec's compare."""
    quantity, unit = measure
    op = COMPARE_SIGN.get(compare, "?")
    if failed:
        op = NEGATED_SIGN.get(op, "?")
    t = _tolerance_number(tol)
    m = _measured_number(measured)
    scale = 1
    if unit == "bytes":
        unit, scale = "MiB", 1 << 20
    u = f" {esc(unit)}" if unit else ""
    if t is None:  # "tolerance: none": a yes/no check, its measured value is what it found
        return f'{typeset_text(quantity or "measured")} {fmt_number(measured)}{u} (no tolerance: a yes/no check)'
    bound = t
    if isinstance(m, (int, float)) and not (isinstance(m, float) and math.isinf(m)) and scale != 1:
        shown_m, shown_b = f"{m / scale:.2f}", f"{bound / scale:g}"
    else:
        shown_m, shown_b = fmt_number(measured), fmt_number(bound)
    return f'{typeset_text(quantity or "measured")} {shown_m}{u} {op} {shown_b}{u}'


SUBSCRIPT = re.compile(r"(?<![\w&])(max|min|[A-Za-zα-ωΣ√])_(\{[^}]*\}|[A-Za-z0-9]+)")
SUPERSCRIPT_GROUP = re.compile(r"\^(\([^)]*\)|\{[^}]*\}|[−\-]?[A-Za-z0-9∞.]+)")


def typeset_text(s: str) -> str:
    """A claim's statement as the engine read it, escaped, with its ASCII math set as a reader
    expects: d_k -> d<sub>k</sub>, 10000^(2/d) -> 10000<sup>2/d</sup>. The words are the spec's."""
    t = esc(s)
    t = SUBSCRIPT.sub(lambda m: f"{m.group(1)}<sub>{m.group(2).strip('{}')}</sub>", t)
    return SUPERSCRIPT_GROUP.sub(lambda m: f"<sup>{m.group(1).strip('(){}')}</sup>", t)


def control_verdict(rejected: bool) -> str:
    """A negative control is good news when the check rejects it."""
    if rejected:
        return '<span class="vl-verdict vl-pass">✓ rejected</span>'
    return '<span class="vl-verdict vl-fail">✗ NOT rejected</span>'


def mark_differences(a: str, b: str):
    """Both strings as HTML, with the characters that differ marked, spaces made visible there."""
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    out_a, out_b = [], []

    def marked(s):
        return '<mark>' + esc(s).replace(" ", "␣") + '</mark>' if s else ""

    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            out_a.append(esc(a[i1:i2]))
            out_b.append(esc(b[j1:j2]))
        else:
            out_a.append(marked(a[i1:i2]))
            out_b.append(marked(b[j1:j2]))
    return "".join(out_a), "".join(out_b)


# ---------------------------------------------------------------------------------------------
# Rules: their reasons are the spec's (the audit's JSON gives each line's rule, not its reason).

def rule_label(rule: str) -> str:
    """A line's comparison rule in words: "machine (number 4)" -> "timing, form only (number 4)"."""
    words = {"exact": "exact", "ws": "spaces ignored", "machine": "timing, form only"}
    m = re.match(r"^(\w+)(.*)$", rule or "exact")
    head, rest = m.group(1), m.group(2).strip()
    if head in ("abs", "rel", "bound"):
        return {"abs": "within ±", "rel": "within relative ", "bound": "below "}[head] + re.sub(r"^\S+\s*", lambda t: t.group(0).strip() + " ", rest).strip()
    return words.get(head, head) + (" " + rest if rest else "")


def is_timing(rule: str) -> bool:
    return (rule or "").startswith("machine")


def typeset_code(s: str) -> str:
    """Like inline_code, with the text outside the code spans typeset (typeset_text)."""
    parts = re.split(r"(`[^`]+`)", s)
    return "".join(f"<code>{esc(p[1:-1])}</code>" if p.startswith("`") and p.endswith("`") and len(p) > 1 else typeset_text(p)
                   for p in parts)


def inline_code(s: str) -> str:
    """A rule's reason: `code` spans as <code>, the rest escaped."""
    parts = re.split(r"(`[^`]+`)", s)
    return "".join(f"<code>{esc(p[1:-1])}</code>" if p.startswith("`") and p.endswith("`") and len(p) > 1 else esc(p)
                   for p in parts)


# ---------------------------------------------------------------------------------------------
# The page of one lesson.

class LessonPage:
    def __init__(self, spec: Spec | None, result: dict | None, source: Path, img_dir: Path, audit: dict | None,
                 spec_error: str = "", arrays: dict | None = None, seeds: Path | None = None):
        self.spec, self.result, self.source, self.img_dir, self.audit = spec, result, source, img_dir, audit
        self.arrays, self.seeds = arrays or {}, seeds
        self.prev = self.next = None  # (lesson id, title) of the neighbours, set by main()
        self.spec_error = spec_error  # why the engine exported no spec at all, if it did not
        self.lesson_id = (result or {}).get("id") or (spec.lesson if spec else "")
        self.title = (spec.title if spec and spec.title else (result or {}).get("title", "")) or self.lesson_id
        # A claim's card reads its float64 verdict; the other precisions the audit judged it in
        # (`lessons audit` judges every precision the backend computes in) are listed under it.
        judged = (result or {}).get("claims", [])
        self.claims = {c["id"]: c for c in judged if c.get("precision", "float64") == "float64"}
        self.in_precisions = {}
        for c in judged:
            if c.get("precision", "float64") != "float64":
                self.in_precisions.setdefault(c["id"], []).append(c)
        self.listings = {li["id"]: li for li in (result or {}).get("listings", [])}
        self.rules = {}
        self.measures = {}  # claim id -> (quantity, unit): the spec's measure: and unit: lines
        if spec:
            for b in spec.blocks:
                if b.kind == "rules":
                    self.rules.setdefault(b.ref, []).extend(b.rules)
                if b.kind == "claim":
                    self.measures[b.get("id")] = (b.get("measure"), b.get("unit"))
        self.figures = []
        self.warnings = []

    def measure(self, cid) -> tuple:
        """(quantity, unit) of a claim's measured value: the spec's, or the audit's copy of it."""
        c = self.claims.get(cid) or {}
        return self.measures.get(cid) or (c.get("measure", ""), c.get("unit", ""))

    # -- status ---------------------------------------------------------------------------
    def status(self) -> str:
        if self.result is None:
            return "missing"
        if self.result.get("problems"):
            return "error"
        items = list(self.claims.values()) + list(self.listings.values())
        if not items:
            return "error"
        bad = [x["status"] for x in items if x["status"] != "passed"]
        # In another precision a claim may be N/A with the spec's reason; any other verdict counts.
        bad += [x["status"] for xs in self.in_precisions.values() for x in xs if x["status"] not in ("passed", "not applicable")]
        return bad[0] if bad else "passed"

    def counts(self):
        claims = list(self.claims.values())
        listings = list(self.listings.values())
        controls = [ctl for c in claims for ch in c.get("checks", []) for ctl in ch.get("controls", [])]
        return {
            "claims": (sum(c["status"] == "passed" for c in claims), len(claims)),
            # of those that hold, the ones that show a sentence of the lesson wrong
            "refuted": sum(c["status"] == "passed" and bool(c.get("refutes")) for c in claims),
            # judged in float32, bfloat16, float16: (passed, judged, not applicable)
            "precisions": (sum(c["status"] == "passed" for xs in self.in_precisions.values() for c in xs),
                           sum(c["status"] != "not applicable" for xs in self.in_precisions.values() for c in xs),
                           sum(c["status"] == "not applicable" for xs in self.in_precisions.values() for c in xs)),
            "controls": (sum(bool(ctl.get("rejected")) for ctl in controls), len(controls)),
            "lines": (sum(bool(v.get("passed")) for li in listings for v in li.get("lines", []) if not is_timing(v.get("rule"))),
                      sum(1 for li in listings for v in li.get("lines", []) if not is_timing(v.get("rule")))),
            "timings": (sum(bool(v.get("passed")) for li in listings for v in li.get("lines", []) if is_timing(v.get("rule"))),
                        sum(1 for li in listings for v in li.get("lines", []) if is_timing(v.get("rule")))),
        }

    def first_refuted_anchor(self) -> str:
        return next((claim_anchor(c["id"]) for c in self.claims.values() if c.get("refutes") and c["status"] == "passed"), "")

    def failures(self):
        """Human-readable list of what fails, for the red banner."""
        out = []
        if self.result is None:
            out.append("the audit produced no result for this lesson (see the main page)")
            return out
        out += [f"problem: {p}" for p in self.result.get("problems", [])]
        others = [c for xs in self.in_precisions.values() for c in xs if c["status"] not in ("passed", "not applicable")]
        for c in list(self.claims.values()) + others:
            if c["status"] != "passed":
                where = f' in {esc(c["precision"])}' if c.get("precision", "float64") != "float64" else ""
                out.append(f'claim <a href="#{claim_anchor(c["id"])}"><code>{esc(c["id"])}</code></a>{where} is '
                           f'<b>{esc(c["status"])}</b>' + (f': {esc(c["why"])}' if c.get("why") else ""))
        for li in self.listings.values():
            if li["status"] != "passed":
                bad = [str(v["line"]) for v in li.get("lines", []) if not v.get("passed")]
                what = f' (line{"s" if len(bad) > 1 else ""} {", ".join(bad)} differ)' if bad else ""
                out.append(f'listing <code>{esc(li["id"])}</code> is <b>{esc(li["status"])}</b>{what}'
                           + (f': {esc(li["why"])}' if li.get("why") else ""))
        return out

    # -- blocks ---------------------------------------------------------------------------
    def banner(self) -> str:
        st = self.status()
        c = self.counts()
        if st == "passed":  # one compact line after the lesson's opening; the claims are listed at the end
            claims_at = f"{page_name(self.lesson_id)}_claims"
            return htmlonly(
                f'<div class="vl-banner vl-banner-pass vl-banner-compact"><span class="vl-banner-mark">✓</span> '
                f'<b>Verified by this build:</b> <a href="#{claims_at}">{c["claims"][0]}/{c["claims"][1]} claims</a> hold'
                + (f' ({c["refuted"]} of them <a href="#{self.first_refuted_anchor()}">refute a sentence of the lesson</a>)'
                   if c["refuted"] else "")
                + f', {c["controls"][0]}/{c["controls"][1]} negative controls rejected, '
                f'{c["lines"][0]}/{c["lines"][1]} documented lines reproduced'
                + (f' (and {c["timings"][0]}/{c["timings"][1]} timing lines, in their form only: their values are this '
                   f'machine\'s)' if c["timings"][1] else "")
                + (f'; other precisions: {c["precisions"][0]}/{c["precisions"][1]} hold, {c["precisions"][2]} N/A with reasons'
                   if c["precisions"][1] + c["precisions"][2] else "")
                + f'. <a href="#{page_name(self.lesson_id)}_provenance">Provenance</a>.</div>')
        items = "".join(f"<li>{f}</li>" for f in self.failures())
        return htmlonly(
            f'<div class="vl-banner vl-banner-fail"><span class="vl-banner-mark">✗</span> '
            f'<b>This lesson fails verification in this build.</b> What this page says is not backed by '
            f'the code as built: {c["claims"][0]}/{c["claims"][1]} claims hold, '
            f'{c["lines"][0]}/{c["lines"][1]} documented lines reproduced.<ul>{items}</ul>'
            f'{self.provenance_inline()}</div>')

    def provenance_inline(self) -> str:
        p = (self.audit or {}).get("provenance", {})
        if not p:
            return ""
        fallback = f' <strong>{esc(p["blas_narrower"])}</strong>' if p.get("blas_narrower") else ""
        return (f'<span class="vl-prov-inline">Commit <code>{esc(p.get("commit", "?"))}</code>, '
                f'{esc(p.get("date", ""))}.{fallback}</span>')

    def sources(self) -> str:
        src = self.spec.sources if self.spec else []
        if not src:
            return ""
        items = "".join(f"<li>{typeset_code(s)}</li>" for s in src)
        return htmlonly(f'<div class="vl-sources"><span class="vl-label">Sources</span><ul>{items}</ul></div>')

    def claim_card(self, block: Block) -> str:
        cid = block.get("id")
        c = self.claims.get(cid)
        status = c["status"] if c else "missing"
        statement = c["statement"] if c else block.get("statement")
        kind = c["kind"] if c else block.get("kind")
        tol = c["tolerance"] if c else block.get("tolerance")
        # The direction is the spec's, as the engine parsed it (lessons spec --json); the audit's
        # copy of the claim only where the export lacks it.
        compare = block.get("compare") or (c or {}).get("compare")
        src = c["source"] if c else block.get("source")
        rows = []
        if c is None:
            rows.append('<div class="vl-why">The audit has no result for this claim.</div>')
        elif c.get("why"):
            rows.append(f'<div class="vl-why">{esc(c["why"])}</div>')
        for ch in (c or {}).get("checks", []):
            ok = ch.get("passed")
            rows.append(
                f'<div class="vl-check"><span class="vl-label">Check</span> <span class="vl-check-name">{esc(ch["name"])}</span>'
                f'<div class="vl-measure"><span class="vl-measured {"vl-ok" if ok else "vl-bad"}">'
                f'{reading(self.measure(cid), ch.get("measured"), tol, compare, failed=not ok)}</span> {verdict("passed" if ok else "failed", True)}</div>'
                f'<div class="vl-detail">{esc(ch.get("detail", ""))}</div>'
                + (f'<div class="vl-why">error: {esc(ch["error"])}</div>' if ch.get("error") else "") + '</div>')
            ctls = ch.get("controls", [])
            if ctls:
                items = "".join(self.control_item(cid, ctl, tol, compare) for ctl in ctls)
                rows.append(
                    '<details class="vl-controls"><summary>Negative controls: '
                    f'{sum(bool(x.get("rejected")) for x in ctls)}/{len(ctls)} rejected by this check</summary>'
                    f'<ul class="vl-control-list">{items}</ul></details>')
        rows += self.precision_rows(cid, compare)
        ok = status == "passed" and all(x["status"] in ("passed", "not applicable") for x in self.in_precisions.get(cid, []))
        # A claim that refutes a sentence of the lesson, when its check demonstrated what is true:
        # the sentence first, then what is true (a failed demonstration is a failed claim, shown so).
        refutes = ((c or {}).get("refutes") or block.get("refutes") or "") if status == "passed" else ""
        said = (f'<div class="vl-lesson-says"><span class="vl-label">The lesson says</span> {esc(refutes)}</div>'
                f'<div class="vl-label vl-instead">What is true, measured</div>') if refutes else ""
        return htmlonly(
            f'<div class="vl-card vl-claim {"" if ok else "vl-card-fail"}{" vl-card-refutes" if refutes else ""}" id="{claim_anchor(cid)}">'
            f'<div class="vl-card-head"><span class="vl-card-kind">{"Refutes the lesson" if refutes else "Claim"}</span> '
            f'<code class="vl-id">{esc(cid)}</code>'
            f' <span class="vl-badge">{esc(kind)}</span> {verdict(status, refutes=refutes)}</div>'
            + said +
            f'<div class="vl-statement">{typeset_text(statement)}</div>'
            + "".join(rows)
            + f'<div class="vl-source"><span class="vl-label">Source</span> {esc(src)}</div></div>')

    def precision_rows(self, cid, compare) -> list:
        """The claim in float32, bfloat16, float16: each verdict, its tolerance there and what was
        measured, or why it is not applicable; folded, since the float64 card comes first."""
        judged = self.in_precisions.get(cid, [])
        if not judged:
            return []
        items = []
        for x in judged:
            checks = [ch for ch in x.get("checks", []) if not ch.get("not_applicable") and not ch.get("error")]
            controls = [ctl for ch in x.get("checks", []) for ctl in ch.get("controls", [])]
            if x["status"] == "not applicable":
                what = esc(x.get("why", ""))
            else:
                # The measure in that precision, as the audit judged it there (measure-float32: where the spec
                # states one: an error over the precision's bound).
                quantity, unit = self.measure(cid)
                measure = (x.get("measure") or quantity, unit)
                what = "; ".join(reading(measure, ch.get("measured"), x["tolerance"], compare, failed=not ch.get("passed"))
                                 for ch in checks)
                if controls:
                    what += f'; {sum(bool(c.get("rejected")) for c in controls)}/{len(controls)} negative controls rejected'
                if x.get("why"):
                    what += f' — {esc(x["why"])}'
            mark = '<span class="vl-verdict vl-na">– N/A</span>' if x["status"] == "not applicable" else verdict(x["status"])
            items.append(f'<li>{mark} <b>{esc(x["precision"])}</b> {what}</li>')
        word = {"not applicable": "N/A", "passed": "pass"}
        summary = ", ".join(f'{esc(x["precision"])} {esc(word.get(x["status"], STATUS_WORD.get(x["status"], x["status"])))}' for x in judged)
        return [f'<details class="vl-controls vl-precisions"><summary>In other precisions: {summary}</summary>'
                f'<ul class="vl-control-list">{"".join(items)}</ul></details>']

    def control_item(self, cid, ctl, tol, compare) -> str:
        """A broken variant and the metric that rejected it: the check's own words (its detail)."""
        within = holds(ctl.get("measured"), tol, compare)
        unmet = ctl.get("unmet") or []
        if ctl.get("error"):
            how = "could not run (an error of the audit, never a rejection)"
        elif not ctl.get("rejected"):
            how = "the check passed it"
        elif within is False:
            how = f'rejected: {reading(self.measure(cid), ctl.get("measured"), tol, compare, failed=True)}'
        elif unmet:  # the number is within the tolerance; a condition of the claim failed
            how = "rejected: " + typeset_text("; ".join(unmet))
        else:
            how = "rejected"
        return (f'<li>{control_verdict(ctl.get("rejected"))} <b>{typeset_text(ctl["name"])}</b> — {how}'
                f'<div class="vl-control-why">{esc(ctl.get("detail") or ctl.get("error") or "")}</div></li>')

    def listing_card(self, block: Block) -> str:
        lid = block.get("id")
        li = self.listings.get(lid)
        status = li["status"] if li else "missing"
        params = block.get("parameters")
        meta = [("Function", f'<code>{esc(block.get("function"))}</code>')]
        if params:
            meta.append(("Parameters", esc(params)))
        if block.get("source"):
            meta.append(("Source", esc(block.get("source"))))
        dl = "".join(f'<div class="vl-meta-row"><span class="vl-label">{k}</span> <span>{v}</span></div>' for k, v in meta)
        head = htmlonly(
            f'<div class="vl-card vl-listing {"" if status == "passed" else "vl-card-fail"}" id="{esc(listing_anchor(lid))}">'
            f'<div class="vl-card-head"><span class="vl-card-kind">Listing</span> <code class="vl-id">{esc(lid)}</code> '
            f'{verdict(status)}</div>{dl}</div>')
        return head + htmlonly(code_panels.panels(lid, self.source, self.seeds, self.warnings))

    def arrays_table(self, lid: str) -> str:
        li = self.listings.get(lid)
        arr = ""
        if li and li.get("arrays"):
            trs = "".join(
                f'<tr><td><code>{esc(a["name"])}</code></td><td><code>{esc(a["golden"])}</code></td>'
                f'<td class="vl-num">{fmt_number(a.get("max_abs_error"))}</td><td class="vl-num">abs {fmt_number(a.get("tolerance"))}</td>'
                f'<td>{verdict("passed" if a.get("passed") else "failed", True)}</td></tr>' for a in li["arrays"])
            arr = htmlonly(
                '<div class="vl-scroll"><table class="vl-table vl-arrays"><caption>Arrays the listing computes, against numeric goldens '
                'from an independent reference</caption><thead><tr><th>array</th><th>golden</th>'
                f'<th>max |produced − golden|</th><th>tolerance</th><th>verdict</th></tr></thead><tbody>{trs}</tbody></table></div>')
        return arr

    def output_table(self, block: Block) -> str:
        lid = block.ref
        li = self.listings.get(lid)
        documented = block.text.splitlines()
        reasons = {}
        for first, last, number, rule, why in self.rules.get(lid, []):
            for k in range(first, last + 1):
                reasons.setdefault(k, []).append((number, rule, why))
        rows = []
        lines = (li or {}).get("lines") or [
            {"line": k + 1, "documented": d, "produced": None, "rule": "", "passed": False, "detail": ""}
            for k, d in enumerate(documented)]
        # Wide lines (tables) would wrap side by side and lose their columns: stack them instead.
        wide = max((len(v.get("documented") or "") for v in lines), default=0) > 52 or \
            max((len(v.get("produced") or "") for v in lines), default=0) > 52
        for v in lines:
            doc, prod = v.get("documented", ""), v.get("produced")
            if prod is None:
                d_html, p_html = esc(doc), '<span class="vl-absent">(not produced)</span>'
            elif doc != prod:
                d_html, p_html = mark_differences(doc, prod)
            else:
                d_html = p_html = esc(doc)
            rule = v.get("rule") or "exact"
            why = "; ".join(("number " + n + ": " if n else "") + w for n, _, w in reasons.get(v["line"], []))
            label = rule_label(rule)
            if rule.startswith("bound derived") and v.get("bound") is not None:  # the bound the listing derived, as judged
                label = f'below the derived bound {fmt_number(v["bound"])}' + rule[len("bound derived"):]
            rule_html = f'<span class="vl-rule-label" title="{esc(rule)}">{esc(label)}</span>'
            if why:  # the reason is in the rules list under the table; the cell links to it
                rule_html += (f' <a class="vl-rule-ref" href="#rules-{esc(lid)}" title="{esc(why)}">why</a>')
            detail = f'<div class="vl-rule-why vl-bad">{esc(v["detail"])}</div>' if v.get("detail") and not v.get("passed") else ""
            err = ""
            if v.get("abs_error") is not None:
                err = f'<div class="vl-rule-why">|error| {fmt_number(v["abs_error"])}</div>'
            ok_html = verdict("passed" if v.get("passed") else "failed", True)
            if wide:  # the whole width for the line; its rule and verdict on a line of their own above it
                rows.append(
                    f'<tr class="{"" if v.get("passed") else "vl-row-fail"}"><td class="vl-num">{v["line"]}</td>'
                    f'<td><div class="vl-line-meta">{ok_html} <span class="vl-rule">{rule_html}{err}{detail}</span></div>'
                    f'<pre class="vl-line vl-doc" title="documented">{d_html}</pre>'
                    f'<pre class="vl-line vl-prod" title="this build">{p_html}</pre></td></tr>')
                continue
            cells = f'<td><pre class="vl-line">{d_html}</pre></td><td><pre class="vl-line">{p_html}</pre></td>'
            rows.append(
                f'<tr class="{"" if v.get("passed") else "vl-row-fail"}"><td class="vl-num">{v["line"]}</td>{cells}'
                f'<td class="vl-rule">{rule_html}{err}{detail}</td><td>{ok_html}</td></tr>')
        extra = ""
        if li:
            produced = li.get("produced", [])
            if len(produced) > len(lines):
                more = "".join(f"<div><code>{esc(p)}</code></div>" for p in produced[len(lines):])
                extra = f'<div class="vl-why">The build printed {len(produced) - len(lines)} more line(s) than documented:{more}</div>'
            if li.get("why") and li["status"] != "passed":
                extra += f'<div class="vl-why">{esc(li["why"])}</div>'
        else:
            extra = f'<div class="vl-why">The audit has no result for listing <code>{esc(lid)}</code>.</div>'
        gloss = self.gloss(lines)
        return htmlonly(
            f'<div class="vl-output"><div class="vl-scroll"><table class="vl-table vl-compare{" vl-stacked" if wide else ""}"><caption>Output of '
            f'<code>{esc(lid)}</code>: as the lesson documented it, and as this build printed it</caption>'
            + ('<thead><tr><th>#</th><th>verdict, rule; documented <span class="vl-prod-key">this build</span></th></tr></thead>'
               if wide else '<thead><tr><th>#</th><th>documented</th><th>this build</th><th>rule</th><th>verdict</th></tr></thead>')
            + f'<tbody>{"".join(rows)}</tbody></table></div>{gloss}{extra}</div>')

    def gloss(self, lines) -> str:
        """The English of the non-English words these lines print (docs/gloss.json)."""
        text = "\n".join((v.get("documented") or "") + "\n" + (v.get("produced") or "") for v in lines)
        found = [(k, v) for k, v in GLOSS.items() if k in text]
        found = [(k, v) for k, v in found if not any(k != o and k in o for o, _ in found)]  # longest phrases only
        if not found:
            return ""
        items = "; ".join(f'<i lang="it">{esc(k)}</i> = {esc(v)}' for k, v in sorted(found, key=lambda kv: text.index(kv[0])))
        return f'<div class="vl-gloss"><span class="vl-label">In English</span> {items}</div>'

    def rules_note(self, block: Block) -> str:
        rules = block.rules
        if not rules:
            return ""
        items = "".join(
            f'<li><span class="vl-rule-where">line{"s " + str(f) + "–" + str(l) if l != f else " " + str(f)}'
            f'{" number " + n if n else ""}</span>: <code>{esc(r)}</code> — {inline_code(w)}</li>'
            for f, l, n, r, w in rules)
        return htmlonly(f'<div class="vl-rules" id="rules-{esc(block.ref)}"><span class="vl-label">Comparison rules</span>'
                        f'<ul>{items}</ul><span class="vl-rules-default">Every other line must match character for character.</span></div>')

    def figure(self, fig) -> str:
        # Doxygen copies the SVG and draws it inside an <object> a reader cannot tap; the link
        # under it opens the figure on its own, full size (on a phone, to zoom).
        return (f'\n\\image html {fig.file} "{escape_caption(plain_title(fig.caption))}"\n'
                + htmlonly(f'<div class="vl-figure-open"><a href="{esc(fig.file)}">Open the figure full size</a></div>'))

    def figures_after(self, kind, ident):
        return "".join(self.figure(f) for f in self.figures if f.anchor == (kind, ident))

    def provenance(self) -> str:
        p = (self.audit or {}).get("provenance", {})
        rows = [("Commit", p.get("commit")), ("Compiler", p.get("compiler")), ("Build", p.get("build")),
                ("BLAS", p.get("blas")), *machine_rows(p), ("Date", p.get("date")),
                ("Spec", f"specs/{self.spec.path.name}" if self.spec else None)]
        trs = "".join(f'<tr><th>{k}</th><td><code>{esc(v)}</code></td></tr>' for k, v in rows if v)
        return htmlonly(f'<table class="vl-table vl-provenance"><tbody>{trs}</tbody></table>')

    # -- the page -------------------------------------------------------------------------
    def claims_list(self) -> str:
        """What the lesson claims, one line each, linked to its card (the page's summary links here)."""
        if not self.claims:
            return ""
        items = "".join(
            f'<li>{verdict(c["status"], True, c.get("refutes", ""))} <a href="#{claim_anchor(c["id"])}"><code>{esc(c["id"])}</code></a> '
            f'{typeset_text(first_sentence(c["statement"]))}</li>' for c in self.claims.values())
        return htmlonly(f'<div class="vl-claims-list"><span class="vl-label">What this lesson claims, and this build '
                        f'checked</span><ul>{items}</ul></div>')

    def neighbours(self) -> str:
        links = []
        if self.prev:
            links.append(f'<a class="vl-prev" href="{page_name(self.prev[0])}.html" title="{esc(self.prev[1])}">← {esc(self.prev[0])}</a>')
        links.append('<a class="vl-up" href="index.html">all lessons</a>')
        if self.next:
            links.append(f'<a class="vl-next" href="{page_name(self.next[0])}.html" title="{esc(self.next[1])}">{esc(self.next[0])} →</a>')
        return htmlonly(f'<nav class="vl-neighbours">{"".join(links)}</nav>')

    def files(self) -> str:
        """The spec, the C++ files of the listings and the seeds, linked."""
        out = []
        if self.spec:
            out.append(f'<li>spec <a href="{spec_href(self.spec.path.name)}"><code>specs/{esc(self.spec.path.name)}</code></a></li>')
        seen = set()
        for lid in self.listings:
            marked = code_panels.find_marked(self.source, lid)
            if marked and marked[0] not in seen:
                seen.add(marked[0])
                out.append(f'<li>C++ <a href="{code_panels.doxygen_source_page(marked[0])}"><code>src/{esc(marked[0])}</code></a></li>')
            seed = code_panels.load_map().get(lid, {}).get("seed")
            if seed and seed not in seen and self.seeds and (self.seeds / seed).is_file():
                seen.add(seed)
                # The seeds are the lessons' own files, not ours: named, not published with the site.
                out.append(f'<li>seed <code>../shared/seeds/{esc(seed)}</code></li>')
        return htmlonly(f'<div class="vl-files"><span class="vl-label">Files</span><ul>{"".join(out)}</ul></div>') if out else ""

    def after_listing(self, lid: str) -> str:
        """What follows a listing's output: the arrays against their goldens, the plots, the panel."""
        panel = tryit.panel(lid, self.arrays.get(lid, {}))
        return self.arrays_table(lid) + self.figures_after("listing", lid) + (htmlonly(panel) if panel else "")

    def render(self) -> str:
        self.figures = plots.figures_for(self.result, self.spec, self.img_dir, self.warnings, self.arrays,
                                         (self.audit or {}).get("provenance", {}))
        name = page_name(self.lesson_id)
        title = escape_doxygen_text(plain_title(self.title))
        # The opening is the lesson's: its first prose (what it teaches), then the audit's summary as
        # one line linking the claims, which are listed with the sources and files at the end. A
        # lesson that fails says so first: its page is not backed by the code as built.
        passed = self.status() == "passed"
        parts = [f"{title} {{#{name}}}\n{'=' * max(len(self.title), 3)}\n", self.neighbours()]
        if not passed or self.spec is None:
            parts += [self.banner(), "[TOC]\n"]
        if self.spec is None:
            missing = (f'The engine exported no spec: <pre>{esc(self.spec_error)}</pre>' if self.spec_error
                       else 'No spec file was found for this lesson.')
            parts.append(htmlonly(f'<div class="vl-missing">{missing}</div>'))
        else:
            opened = not passed
            for b in self.spec.blocks:
                if not opened and b.kind != "prose":  # the lesson's opening prose has been read: the summary line
                    parts += [self.banner(), "[TOC]\n"]
                    opened = True
                if b.kind == "prose":
                    parts.append("\n" + prose_to_doxygen(b.text, drop_title=self.title) + "\n")
                elif b.kind == "claim":
                    parts.append(self.claim_card(b))
                    parts.append(self.figures_after("claim", b.get("id")))
                    panel = tryit.claim_panel(b.get("id"), self.claims.get(b.get("id")))
                    if panel:
                        parts.append(htmlonly(panel))
                elif b.kind == "listing":
                    parts.append(self.listing_card(b))
                    if not any(x.kind == "output" and x.ref == b.get("id") for x in self.spec.blocks):
                        parts.append(self.after_listing(b.get("id")))
                elif b.kind == "output":
                    parts.append(self.output_table(b))
                    if not any(x.kind == "rules" and x.ref == b.ref for x in self.spec.blocks):
                        parts.append(self.after_listing(b.ref))
                elif b.kind == "rules":  # the rules read with the table: arrays, plots, panel after them
                    parts.append(self.rules_note(b))
                    if any(x.kind == "output" and x.ref == b.ref for x in self.spec.blocks):
                        parts.append(self.after_listing(b.ref))
            if not opened:  # a spec of prose alone: the summary after it, never left out
                parts += [self.banner(), "[TOC]\n"]
        # What the audit reports but the spec's blocks did not place: shown at the end, not lost.
        blocks = self.spec.blocks if self.spec else []
        placed_claims = {b.get("id") for b in blocks if b.kind == "claim"}
        placed_listings = {b.get("id") for b in blocks if b.kind == "listing"} | {b.ref for b in blocks if b.kind == "output"}
        for lid, li in self.listings.items():
            if lid in placed_listings:
                continue
            parts.append(self.listing_card(Block("listing", fields=[("id", lid), ("function", li.get("function", ""))])))
            documented = "\n".join(v.get("documented", "") for v in li.get("lines", []))
            parts.append(self.output_table(Block("output", documented, ref=lid)))
            parts.append(self.after_listing(lid))
        for cid in self.claims:
            if cid not in placed_claims:
                parts.append(self.claim_card(Block("claim", fields=[("id", cid)])))
                parts.append(self.figures_after("claim", cid))
        parts.append(self.figures_after("end", None))
        parts.append("\n# Claims, sources and files {#" + name + "_claims}\n")
        parts += [self.claims_list(), self.sources(), self.files()]
        parts.append("\n# Provenance {#" + name + "_provenance}\n")
        parts.append("The numbers on this page were produced by this build:\n")
        parts.append(self.provenance())
        parts.append(self.neighbours())
        return "\n".join(p for p in parts if p)


def first_sentence(s: str) -> str:
    """Up to the first full stop or semicolon (a colon announces a list: the sentence goes on),
    never one inside brackets: "(post-norm ReLU; pre-norm GELU)" is not cut after "ReLU"."""
    depth = 0
    for k, ch in enumerate(s):
        depth += (ch in "([{") - (ch in ")]}")
        if ch in ".;" and depth <= 0 and k >= 40 and k + 1 < len(s) and s[k + 1].isspace():
            return s[:k] + "."
    return s


UNICODE_SUB = str.maketrans("aeijklmnoprstuvx0123456789", "ₐₑᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ₀₁₂₃₄₅₆₇₈₉")


def plain_title(s: str) -> str:
    """A title in plain text (page title, navigation tree): d_k -> dₖ where Unicode has the letter."""
    return re.sub(r"(?<=\w)_([aeijklmnoprstuvx0-9])\b", lambda m: m.group(1).translate(UNICODE_SUB), s)


def escape_caption(s: str) -> str:
    return s.replace('"', "'").replace("\\", "\\\\").replace("@", "\\@")


# ---------------------------------------------------------------------------------------------
# The main page.

def spec_href(name: str) -> str:
    """A spec as the site carries it: build_docs.py copies specs/NAME.md to html/specs/NAME.md.txt
    (a browser shows .txt as text; .md it would offer to download)."""
    return "specs/" + urllib.parse.quote(name) + ".txt"


def spec_link(name: str) -> str:
    return f'<a href="{spec_href(name)}"><code>specs/{esc(name)}</code></a>'


def mutation_label() -> str:
    """': a committed run of DATE, not this build's' — the mutation page is not woven from this build
    (a full run takes hours): the index says so beside this build's evidence."""
    try:
        meta = json.loads((HERE / "pages" / "mutation.json").read_text(encoding="utf-8"))["meta"]
    except (OSError, ValueError, KeyError):
        return " (no run recorded)"
    return f" (a committed run of {meta.get('date', '?')}, from earlier commits, not this build's)"


def render_index(pages, audit, audit_error: str, spec_error: str = "") -> str:
    parts = ["Verified Lessons {#mainpage}\n================\n"]
    parts.append(
        "Lessons on attention, written down once as a spec, computed by C++ and checked by this build. "
        "Each page below weaves the lesson's prose with its **claims** (each checked, and each check "
        "shown to reject a deliberately broken implementation), its **listings** (the C++ twin of the "
        "lesson's code, pulled from the sources) and the **documented output** side by side with what "
        "this build printed, line by line, with the rule each line is compared by.\n")
    if spec_error:
        parts.append(htmlonly(f'<div class="vl-banner vl-banner-fail"><span class="vl-banner-mark">✗</span> '
                              f'<b>The engine did not export the specs; the pages show the audit only.</b>'
                              f'<pre>{esc(spec_error)}</pre></div>'))
    if audit_error:
        parts.append(htmlonly(f'<div class="vl-banner vl-banner-fail"><span class="vl-banner-mark">✗</span> '
                              f'<b>The audit did not produce a report.</b><pre>{esc(audit_error)}</pre></div>'))
    elif audit and audit.get("problems"):
        items = "".join(f"<li>{esc(p)}</li>" for p in audit["problems"])
        parts.append(htmlonly(f'<div class="vl-banner vl-banner-fail"><span class="vl-banner-mark">✗</span> '
                              f'<b>The audit reports problems outside any lesson.</b><ul>{items}</ul></div>'))
    trs = []
    for pg in pages:
        c = pg.counts()
        st = pg.status()
        trs.append(
            f'<tr class="{"" if st == "passed" else "vl-row-fail"}">'
            f'<td><a class="vl-lesson-link" href="{page_name(pg.lesson_id)}.html">{esc(plain_title(pg.title))}</a>'
            f'<div class="vl-small"><code>{esc(pg.lesson_id)}</code></div></td>'
            f'<td>{verdict(st if st == "passed" else "failed")}'
            f'{"" if st in ("passed", "failed") else f"<div class=vl-small>{esc(STATUS_WORD.get(st, st))}</div>"}</td>'
            f'<td class="vl-num">{c["claims"][0]}/{c["claims"][1]}</td>'
            f'<td class="vl-num">{c["controls"][0]}/{c["controls"][1]}</td>'
            f'<td class="vl-num">{c["lines"][0]}/{c["lines"][1]}</td>'
            f'<td class="vl-small">{spec_link(pg.spec.path.name) if pg.spec else "—"}</td></tr>')
    parts.append("# Lessons {#lessons_index}\n")
    parts.append(htmlonly(
        '<table class="vl-table vl-index"><thead><tr><th>lesson</th><th>status</th><th>claims hold</th>'
        '<th>controls rejected</th><th>documented lines reproduced</th><th>spec</th></tr></thead>'
        f'<tbody>{"".join(trs)}</tbody></table>'))
    # The page hierarchy (the navigation tree); the table above is what a reader sees.
    parts.append('\n<div class="vl-subpages">\n\n' + "\n".join(f"- \\subpage {page_name(pg.lesson_id)}" for pg in pages)
                 + "\n\n</div>\n")
    parts.append("# The suite {#suite_pages}\n")
    parts.append("- @ref architecture — the code, layer by layer, and why it is built so\n"
                 "- @ref candidates — how the audit judges an implementation it did not write: a program speaking the protocol\n"
                 "- @ref conformance — every computation claim against every implementation this build audited\n"
                 f"- @ref mutation — how many deliberately broken copies of our code the tests catch{mutation_label()}\n")
    parts.append("# How to read a lesson {#reading}\n")
    parts.append(htmlonly(
        '<table class="vl-table vl-legend"><thead><tr><th>rule</th><th>a produced line passes when</th></tr></thead><tbody>'
        '<tr><td>exact (<code>exact</code>)</td><td>it equals the documented line, character for character (the default)</td></tr>'
        '<tr><td>spaces ignored (<code>ws</code>)</td><td>it equals it with runs of spaces counted as one</td></tr>'
        '<tr><td>within ± A, within relative R (<code>abs A</code>, <code>rel R</code>)</td><td>the text around the numbers is exact and each number is within A absolute or R relative</td></tr>'
        '<tr><td>below X (<code>bound X</code>)</td><td>the text is exact and the number is below X</td></tr>'
        '<tr><td>below the derived bound (<code>bound derived</code>)</td><td>the text is exact and the number, a round-off residue, is below the worst-case bound the listing derives from its own inputs (the derivation is in the spec, above the rule)</td></tr>'
        '<tr><td>timing, form only (<code>machine</code>)</td><td>the text is exact and the number has the documented form (a timing: counted apart from the reproduced lines)</td></tr>'
        '</tbody></table>'))
    parts.append("Where a produced line differs from the documented one, the differing characters are "
                 "<span class=\"vl-mark\">marked</span> (a space shows as ␣). The C++ reference of the sources is under "
                 "*Namespaces* and *Files*.\n")
    parts.append("A card headed *Refutes the lesson* is a finding about the lesson, not a failure of the suite: it quotes "
                 "a sentence of the lesson that is not so (glossed in English), states what is true instead, and shows "
                 "the check that demonstrated it and the controls in which the lesson's sentence would have held. The "
                 "audit reports such a claim as REFUTED; if its demonstration failed, it would be a failed claim like any "
                 "other.\n")
    p = (audit or {}).get("provenance", {})
    if p:
        parts.append("# Provenance {#provenance}\n")
        rows = [(k, p.get(key, "")) for k, key in (("Commit", "commit"), ("Compiler", "compiler"), ("Build", "build"),
                                                    ("BLAS", "blas"))] + machine_rows(p) + [("Date", p.get("date", ""))]
        trs = "".join(f'<tr><th>{k}</th><td><code>{esc(v)}</code></td></tr>' for k, v in rows if v)
        parts.append(htmlonly(f'<table class="vl-table vl-provenance"><tbody>{trs}</tbody></table>'))
        parts.append(f"Audit totals: {audit.get('passed', 0)} passed, {audit.get('failed', 0)} failed.\n")
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------

def read_report(path: Path, what: str, command: str):
    """(its JSON, "") or (None, why not): a report the engine wrote, with its stderr if it failed."""
    try:
        return json.loads(path.read_text(encoding="utf-8")), ""
    except FileNotFoundError:
        error = f"{path}: no {what} (did `{command}` fail?)"
    except (OSError, json.JSONDecodeError) as e:
        error = f"{path}: unreadable {what}: {e}"
    err_file = path.with_suffix(path.suffix + ".stderr")
    if err_file.exists():
        error += "\n" + err_file.read_text(encoding="utf-8", errors="replace")[-4000:]
    return None, error


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", required=True, type=Path, help="the repository (src/, for the listings' C++)")
    ap.add_argument("--specs", required=True, type=Path, help="the specs as the engine parsed them (lessons spec --json)")
    ap.add_argument("--audit", required=True, type=Path, help="the audit's JSON (lessons audit --json)")
    ap.add_argument("--out", required=True, type=Path, help="where to write the pages")
    ap.add_argument("--arrays", type=Path, help="the listings' arrays (lessons export --json); the plots and panels need them")
    ap.add_argument("--seeds", type=Path, help="the seeds folder, for the lessons' own code (default: SOURCE/../shared/seeds)")
    ap.add_argument("--strict", action="store_true", help="fail on a generator warning (e.g. a listing without markers)")
    args = ap.parse_args(argv)
    args.source = args.source.resolve()

    audit, audit_error = read_report(args.audit, "audit report", "lessons audit --json")
    arrays = {}
    if args.arrays:
        exported_arrays, arrays_error = read_report(args.arrays, "array export", "lessons export --json")
        if exported_arrays is None:
            print(f"generate.py: {arrays_error}", file=sys.stderr)
            return 1
        import numpy as np
        arrays = {li["id"]: {k: np.array([math.nan if x is None else x for x in a["data"]], dtype=float).reshape(a["shape"])
                             for k, a in li["arrays"].items()} for li in exported_arrays["listings"]}
    seeds = args.seeds or (args.source.resolve().parent / "shared" / "seeds")
    exported, spec_error = read_report(args.specs, "spec export", "lessons spec --json")

    args.out.mkdir(parents=True, exist_ok=True)
    img_dir = args.out / "img"
    img_dir.mkdir(exist_ok=True)
    for old in list(args.out.glob("*.md")) + list(img_dir.glob("*")):
        old.unlink()

    specs = {}
    for s in (exported or {}).get("specs", []):
        spec = spec_from_json(s)
        specs[spec.lesson] = spec
    results = {l["id"]: l for l in (audit or {}).get("lessons", [])}
    ids = list(results) + [k for k in specs if k not in results]

    pages, warnings = [], []
    for lid in ids:
        spec = specs.get(lid)
        if spec is None and lid in results:
            p = results[lid].get("spec")
            spec = next((s for s in specs.values() if p and s.path.resolve() == Path(p).resolve()), None)
        pages.append(LessonPage(spec, results.get(lid), args.source, img_dir, audit, spec_error, arrays,
                                seeds if seeds.is_dir() else None))
    for k, page in enumerate(pages):
        page.prev = (pages[k - 1].lesson_id, pages[k - 1].title) if k > 0 else None
        page.next = (pages[k + 1].lesson_id, pages[k + 1].title) if k + 1 < len(pages) else None
        try:
            text = page.render()
        except plots.PlotMissing as e:
            print(f"generate.py: error: {e}", file=sys.stderr)
            return 1
        (args.out / f"{page_name(page.lesson_id)}.md").write_text(text + "\n", encoding="utf-8")
        warnings += page.warnings
    (args.out / "index.md").write_text(render_index(pages, audit, audit_error, spec_error) + "\n", encoding="utf-8")
    for w in warnings:
        print(f"generate.py: warning: {w}", file=sys.stderr)
    print(f"generate.py: {len(pages)} lesson page(s), {len(list(img_dir.glob('*.svg')))} plot(s) in {args.out}")
    return 1 if (args.strict and warnings) else 0


if __name__ == "__main__":
    sys.exit(main())
