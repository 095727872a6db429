#!/usr/bin/python3
"""Doxygen INPUT_FILTER for src/: angle-bracket placeholders in doc comments are text.

The sources write placeholders the way the specs do, `<root>/reference_outputs`,
`<lesson>.<name>`; Doxygen would read them as unknown HTML tags and warn (and the docs build
fails on warnings). This filter escapes them (`\\<root\\>`, shown as written) in `///`, `//!`
and `/** */` comments, leaving real HTML tags (<b>, <code>, <sup>, ...), code spans and the
code itself alone. Line numbers are kept, so Doxygen's file:line references stay right.
"""
import re
import sys

HTML_TAGS = {
    "a", "b", "blockquote", "br", "caption", "center", "code", "dd", "del", "dfn", "div", "dl", "dt",
    "em", "details", "summary", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li",
    "ol", "p", "pre", "s", "small", "span", "strike", "strong", "sub", "sup", "table", "td", "th", "tr",
    "tt", "u", "ul", "var", "cite", "figure", "figcaption", "thead", "tbody", "tfoot", "section",
}
PLACEHOLDER = re.compile(r"<(/?)([A-Za-z_][\w\- .]*)>")


def escape_text(text: str) -> str:
    parts = re.split(r"(`[^`]*`)", text)  # code spans stay verbatim
    return "".join(p if p.startswith("`") else PLACEHOLDER.sub(
        lambda m: m.group(0) if m.group(2).lower() in HTML_TAGS else f"\\<{m.group(1)}{m.group(2)}\\>", p)
        for p in parts)


def filter_source(src: str) -> str:
    out, in_block = [], False
    for line in src.split("\n"):
        if in_block:
            end = line.find("*/")
            if end < 0:
                out.append(escape_text(line))
                continue
            line = escape_text(line[:end]) + line[end:]
            in_block = False
            out.append(line)
            continue
        m = re.search(r"///|//!", line)
        b = line.find("/**")
        if m and (b < 0 or m.start() < b) and line[:m.start()].count('"') % 2 == 0:
            out.append(line[:m.end()] + escape_text(line[m.end():]))
        elif b >= 0 and line[:b].count('"') % 2 == 0:
            end = line.find("*/", b + 3)
            if end < 0:
                out.append(line[:b + 3] + escape_text(line[b + 3:]))
                in_block = True
            else:
                out.append(line[:b + 3] + escape_text(line[b + 3:end]) + line[end:])
        else:
            out.append(line)
    return "\n".join(out)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8", errors="surrogateescape") as f:
        sys.stdout.write(filter_source(f.read()))
