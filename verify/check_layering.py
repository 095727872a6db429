#!/usr/bin/python3
"""Layering: every #include "X/..." of a folder X of src/ must follow a declared link.

    /usr/bin/python3 verify/check_layering.py --graph build/components.json --root .

The graph is the one CMake was given (CMakeLists.txt writes it to <build>/components.json):
each component (vl_component(NAME DEPS...), folder src/NAME) with the vl_* it links, the other
vl libraries (vl -> vl_lessons) and every target built in that configuration (the lessons CLI,
verify/, bench/, fuzz/) with its sources and the vl_* it links.

The rule. A file's reach is
  - for a file under src/C/ of a component C: C and every component vl_C links, transitively;
  - for a source of a target (src/cli/*.cpp of `lessons`, verify/test_*.cpp, bench/, fuzz/):
    the components it links, transitively, and those whose src/ sources it compiles itself
    (the fuzz targets), with what they link; and the folder of src/ its sources are in;
  - for a header that is not one of those (verify/lesson_tests.hpp, src/cli/eval_inputs.hpp):
    the reach of every target that includes it (through "..." includes beside it), each.
Every #include "X/..." (or <X/...> naming a file of src/X) where X is a folder of src/ must have
X in that reach. Also: the declared graph has no cycle, and every folder of src/ is a declared
component or holds sources of a target in the graph (src/cli: `lessons`). Files of bench/ and
fuzz/ whose targets this configuration does not build are not checked (a note says so).

Exit status 0 with `layering: N files, M includes, 0 violations`; 1 with one line per violation
(`path:line: src/C includes "X/..." but vl_C does not link vl_X (declared: ...)`); 2 on bad input.
"""
import argparse
import json
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
SOURCE_SUFFIXES = {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inl", ".ipp", ".tpp"}
RAW_STRING = re.compile(r'R"([^()\\\s"]{0,16})\(')
OUTSIDE_SRC = ("verify", "bench", "fuzz")


def code_of(text):
    """The text with comments and raw-string contents blanked, newlines kept (so that line
    numbers stay); ordinary string literals are kept, and skipped over when looking for a
    comment ("specs/*.md" does not open one)."""
    out, i, n = [], 0, len(text)
    while i < n:
        raw = RAW_STRING.match(text, i) if text[i] == "R" else None
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i) or raw:
            if raw:
                j = text.find(f'){raw.group(1)}"', raw.end())
                j = n if j < 0 else j + len(raw.group(1)) + 2
            else:
                j = text.find("*/", i + 2)
                j = n if j < 0 else j + 2
            out.append(" " + "\n" * text.count("\n", i, j))
            i = j
        elif text[i] in "\"'":
            j = i + 1
            while j < n and text[j] not in (text[i], "\n"):
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def includes(path):
    """(line number, bracket, included path) of each #include outside comments."""
    found = []
    for number, line in enumerate(code_of(path.read_text(errors="replace")).splitlines(), 1):
        m = INCLUDE.match(line)
        if m:
            found.append((number, m.group(1), m.group(2)))
    return found


class Graph:
    def __init__(self, data):
        self.components = {name: list(c.get("links", [])) for name, c in data.get("components", {}).items()}
        self.libraries = {name: list(lib.get("links", [])) for name, lib in data.get("libraries", {}).items()}
        self.targets = {name: t for name, t in data.get("targets", {}).items()}

    def links_of(self, node):
        """Direct vl_* links of a library node (vl_C of a component, or another vl library)."""
        if node.startswith("vl_") and node[3:] in self.components:
            return self.components[node[3:]]
        return self.libraries.get(node, [])

    def reach(self, links):
        """Components reachable through the given library links."""
        seen, todo, out = set(), list(links), set()
        while todo:
            node = todo.pop()
            if node in seen:
                continue
            seen.add(node)
            if node.startswith("vl_") and node[3:] in self.components:
                out.add(node[3:])
            todo.extend(self.links_of(node))
        return out

    def cycles(self):
        """Each cycle among the declared vl libraries once, as a list of nodes (first repeated)."""
        nodes = [f"vl_{c}" for c in self.components] + list(self.libraries)
        state, stack, found, keys = {}, [], [], set()

        def visit(node):
            state[node] = "open"
            stack.append(node)
            for nxt in self.links_of(node):
                if nxt not in self.libraries and not (nxt.startswith("vl_") and nxt[3:] in self.components):
                    continue
                if state.get(nxt) == "open":
                    cycle = stack[stack.index(nxt):]
                    start = cycle.index(min(cycle))
                    cycle = cycle[start:] + cycle[:start]
                    if tuple(cycle) not in keys:
                        keys.add(tuple(cycle))
                        found.append(cycle + [cycle[0]])
                elif nxt not in state:
                    visit(nxt)
            stack.pop()
            state[node] = "done"

        for node in nodes:
            if node not in state:
                visit(node)
        return found


class Owner:
    """Who a file is compiled for: a component (src/C) or a target, and what it may include."""

    def __init__(self, label, subject, declared, reach, home):
        self.label, self.subject, self.declared, self.reach, self.home = label, subject, declared, reach, home

    def allows(self, folder):
        return folder in self.reach or folder in self.home


def check(graph_path, root):
    root = Path(root).resolve()
    try:
        graph = Graph(json.loads(Path(graph_path).read_text()))
    except (OSError, ValueError, AttributeError) as e:
        print(f"{graph_path}: cannot read the component graph: {e}", file=sys.stderr)
        return 2
    src = root / "src"
    if not src.is_dir():
        print(f"{root}: no src/ folder", file=sys.stderr)
        return 2
    folders = sorted(p.name for p in src.iterdir() if p.is_dir())
    problems = []

    for cycle in graph.cycles():
        problems.append(f"{graph_path}: cycle in the declared component graph: {' -> '.join(cycle)}")

    # Targets: their sources, and what they may include.
    target_owner, source_owners = {}, {}
    for name, t in graph.targets.items():
        links = [l for l in t.get("links", []) if l.startswith("vl")]
        sources = t.get("sources", [])
        compiled = sorted({s.split("/")[1] for s in sources if s.startswith("src/") and s.count("/") >= 2})
        reach = graph.reach(links) | graph.reach([f"vl_{c}" for c in compiled if c in graph.components])
        declared = links + [f"compiles src/{c}" for c in compiled if c in graph.components]
        home = {c for c in compiled if c not in graph.components}
        target_owner[name] = Owner(name, name, declared, reach, home)
        for s in sources:
            source_owners.setdefault(s, []).append(target_owner[name])

    for folder in folders:
        if folder not in graph.components and not any(
                s.startswith(f"src/{folder}/") for s in source_owners):
            problems.append(f"src/{folder}: folder of src/ is not a declared component "
                            f"(no vl_component({folder} ...) in CMakeLists.txt) and no target builds from it")

    files = []
    for top in ["src"] + list(OUTSIDE_SRC):
        base = root / top
        if base.is_dir():
            files += sorted(p for p in base.rglob("*") if p.is_file() and p.suffix in SOURCE_SUFFIXES)
    rel = {p: p.relative_to(root).as_posix() for p in files}
    parsed = {p: includes(p) for p in files}

    def component_of(r):
        parts = r.split("/")
        return parts[1] if parts[0] == "src" and len(parts) > 2 and parts[1] in graph.components else None

    owners = {}
    for p in files:
        c = component_of(rel[p])
        if c:
            links = graph.components[c]
            owners[p] = [Owner(f"src/{c}", f"vl_{c}", links, graph.reach(links), {c})]
        elif rel[p] in source_owners:
            owners[p] = list(source_owners[rel[p]])
    # Headers beside their includers ("lesson_tests.hpp"): compiled for whoever includes them.
    changed = True
    while changed:
        changed = False
        for p in [p for p in files if p in owners]:
            for _, bracket, inc in parsed[p]:
                q = (p.parent / inc).resolve()
                if bracket != '"' or q not in rel or component_of(rel[q]) or rel[q] in source_owners:
                    continue
                have = owners.setdefault(q, [])
                for o in owners[p]:
                    if o not in have:
                        have.append(o)
                        changed = True
    # Headers of a target's own folder of src/ that no source includes: that target's.
    for p in files:
        parts = rel[p].split("/")
        if p not in owners and parts[0] == "src" and len(parts) > 2:
            found = [target_owner[n] for n, t in graph.targets.items()
                     if any(s.startswith(f"src/{parts[1]}/") for s in t.get("sources", []))]
            if found:
                owners[p] = found

    checked = count = 0
    not_checked = []
    for p in files:
        if p not in owners:
            if not rel[p].startswith("src/"):  # (a folder of src/ without a component is reported)
                not_checked.append(rel[p])
            continue
        checked += 1
        for number, bracket, inc in parsed[p]:
            folder = inc.split("/")[0]
            if "/" not in inc or folder not in folders:
                continue
            if bracket == "<" and not (src / inc).is_file():
                continue  # a system header that happens to share a folder name
            count += 1
            for o in owners[p]:
                if o.allows(folder):
                    continue
                declared = ", ".join(o.declared) or "none"
                if folder in graph.components:
                    problems.append(f'{rel[p]}:{number}: {o.label} includes "{inc}" but {o.subject} '
                                    f"does not link vl_{folder} (declared: {declared})")
                else:
                    problems.append(f'{rel[p]}:{number}: {o.label} includes "{inc}" but src/{folder} '
                                    f"is not a component: nothing links it (declared: {declared})")

    for line in problems:
        print(line)
    if not_checked:
        shown = ", ".join(not_checked[:4]) + (", ..." if len(not_checked) > 4 else "")
        print(f"layering: {len(not_checked)} files not built in this configuration, not checked: {shown}")
    print(f"layering: {checked} files, {count} includes, {len(problems)} violations")
    return 1 if problems else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", required=True, help="components.json written by CMake into the build folder")
    ap.add_argument("--root", default=Path(__file__).resolve().parents[1], help="the checkout (default: this one)")
    args = ap.parse_args()
    sys.exit(check(args.graph, args.root))


if __name__ == "__main__":
    main()
