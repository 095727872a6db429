"""The computation beside the evidence: a listing's code in three columns, as HTML.

1. the lesson's own code, quoted from its seed (docs/listing_code.json says where) as a
   citation, marked as the source's, never stored in this repository: read at docs-build time
   from the seeds folder (--seeds);
2. our C++ twin, between its `// [listing-id]` marker lines in src/;
3. the kernel(s) the twin calls: each function's definition, with the comment above it.

The code is escaped into <pre> here rather than pulled in by Doxygen's \\snippet: Doxygen links
every identifier it knows, and linked a local `out` to cmd_eval.cpp and `listing_main` to another
lesson. The file name above each column links to Doxygen's page of that source file instead.
"""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent


def esc(s) -> str:
    return html.escape(str(s), quote=True)


def load_map() -> dict:
    return json.loads((HERE / "listing_code.json").read_text(encoding="utf-8"))["listings"]


def doxygen_source_page(rel: str, src: Path = HERE.parent / "src") -> str:
    """Doxygen's HTML name of src/REL's source listing. A file name that is unique under src/ is
    named alone (kernels/fused/fused_attention.hpp -> fused__attention_8hpp_source.html); one
    that two folders share is named by its whole path (kernels/reference/attention.cpp ->
    kernels_2reference_2attention_8cpp_source.html, beside ops_2attention_8cpp_source.html)."""
    name = Path(rel).name
    shared = sum(1 for _ in src.rglob(name)) > 1
    key = rel if shared else name
    return key.replace("_", "__").replace("/", "_2").replace(".", "_8") + "_source.html"


def find_marked(source: Path, listing_id: str):
    """(path relative to src/, first line, [lines]) between the `// [id]` markers, or None."""
    marker = re.compile(r"^\s*//!?\s*\[" + re.escape(listing_id) + r"\]\s*$")
    for path in sorted((source / "src").rglob("*.cpp")) + sorted((source / "src").rglob("*.hpp")):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        hits = [k for k, raw in enumerate(lines) if marker.match(raw)]
        if len(hits) >= 2:
            return path.relative_to(source / "src").as_posix(), hits[0] + 2, lines[hits[0] + 1:hits[-1]]
    return None


def find_function(path: Path, name: str):
    """(first line, [lines]) of NAME's first definition in PATH (with its comment and template
    lines), ended at its matching brace; None when there is none."""
    lines = path.read_text(encoding="utf-8").splitlines()
    head = re.compile(r"^\S.*\b" + re.escape(name) + r"\s*\(")
    for k, raw in enumerate(lines):
        if not head.match(raw) or raw.lstrip().startswith(("//", "#", "extern", "template AttentionResult")):
            continue
        depth, end, opened = 0, None, False
        for j in range(k, len(lines)):
            code = re.sub(r"//.*", "", lines[j])
            if not opened and ";" in code and "{" not in code:
                break  # a declaration
            depth += code.count("{") - code.count("}")
            opened = opened or "{" in code
            if opened and depth <= 0:
                end = j
                break
        if end is None:
            continue
        start = k
        while start > 0 and re.match(r"^\s*(//|template\s*<)", lines[start - 1]):
            start -= 1
        return start + 1, lines[start:end + 1]
    return None


def column(kind: str, title_html: str, lines, lang: str, after: str = "") -> str:
    """One panel: its title, the code, and `after` (HTML) under the code."""
    body = esc("\n".join(lines))
    return (f'<figure class="vl-code vl-code-{kind}"><figcaption>{title_html}</figcaption>'
            f'<pre class="vl-code-body" data-lang="{lang}">{body}</pre>{after}</figure>')


def comment_glosses(where: dict, text: list) -> str:
    """The quoted code's comments in English (its "comments": {line: English}), folded under it."""
    comments = where.get("comments", {})
    if not comments:
        return ""
    def with_code(s: str) -> str:  # `…` in the English is code (a shape, a formula as the code writes it)
        return re.sub(r"`([^`]+)`", r"<code>\1</code>", esc(s))
    items = "".join(f'<li><span class="vl-small">line {int(n)}</span> <code>{esc(text[int(n) - 1].split("#", 1)[-1].strip())}</code>: '
                    f'{with_code(english)}</li>' for n, english in sorted(comments.items(), key=lambda x: int(x[0])))
    return f'<details class="vl-comment-gloss"><summary>Its comments in English</summary><ul>{items}</ul></details>'


def panels(listing_id: str, source: Path, seeds: Path | None, warnings: list) -> str:
    where = load_map().get(listing_id, {})
    cols = []
    if where.get("seed"):
        seed = (seeds / where["seed"]) if seeds else None
        if seed is None or not seed.is_file():
            cols.append(f'<div class="vl-missing">The lesson\'s code is quoted from seed <code>{esc(where["seed"])}</code>, '
                        f'which this checkout does not have (give build_docs.py <code>--seeds DIR</code>).</div>')
            warnings.append(f"{listing_id}: seed {where['seed']} not found ({seeds or 'no seeds folder: give --seeds DIR'})")
        else:
            text = seed.read_text(encoding="utf-8").splitlines()
            a, b = where["lines"]
            quoted = text[a - 1:b]
            if not quoted or quoted[0].strip() != where["first"]:
                warnings.append(f"{listing_id}: {seed.name} line {a} is not {where['first']!r}: not quoted")
                cols.append(f'<div class="vl-missing">{esc(seed.name)} changed: line {a} is no longer '
                            f'<code>{esc(where["first"])}</code> (docs/listing_code.json).</div>')
            else:
                # A notebook's text cells inside the range (Italian prose, raw TeX) are the page's
                # prose already: each is left out, said so in one comment line.
                for first_text, last_text in sorted(where.get("text_cells", []), reverse=True):
                    quoted[first_text - a:last_text - a + 1] = [
                        f"# … the notebook's text cell, lines {first_text}–{last_text}: this page's prose says it"]
                cols.append(column("seed", f'<span class="vl-code-who">The lesson\'s code</span> quoted from seed '
                                   f'<code>../shared/seeds/{esc(seed.name)}</code>, lines {a}–{b} '
                                   f'<span class="vl-code-note">(the source\'s words, not ours)</span>', quoted, "python",
                                   comment_glosses(where, text)))
    marked = find_marked(source, listing_id)
    if marked is None:
        warnings.append(f"{listing_id}: no `// [{listing_id}]` markers in src/: its C++ is not shown")
        cols.append(f'<div class="vl-missing">The C++ of <code>{esc(listing_id)}</code> is not marked for the docs: '
                    f'add a line <code>// [{esc(listing_id)}]</code> before and after it.</div>')
    else:
        rel, first, lines = marked
        cols.append(column("twin", f'<span class="vl-code-who">Our C++ twin</span> '
                           f'<a href="{doxygen_source_page(rel)}#l{first:05d}"><code>src/{esc(rel)}</code></a>, from line {first}',
                           lines, "cpp"))
    for spec in where.get("kernels", []):
        rel, _, name = spec.partition(":")
        path = source / "src" / rel
        found = find_function(path, name) if path.is_file() else None
        if found is None:
            warnings.append(f"{listing_id}: kernel {spec} not found")
            continue
        first, lines = found
        cols.append(column("kernel", f'<span class="vl-code-who">The kernel it calls</span> <code>{esc(name)}</code>, '
                           f'<a href="{doxygen_source_page(rel)}#l{first:05d}"><code>src/{esc(rel)}</code></a>, from line {first}',
                           lines, "cpp"))
    return f'<div class="vl-code-panels">{"".join(cols)}</div>'
