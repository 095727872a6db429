#!/usr/bin/python3
"""Build the docs site: spec export, audit -> generate.py -> Doxygen -> local MathJax.

    /usr/bin/python3 docs/build_docs.py --lessons build/bin/lessons --out build/docs

Runs `lessons spec --json OUT/specs.json` (the specs as the engine parsed them: the pages show
nothing the engine did not read) and `lessons audit --json OUT/audit.json` (their exit status
is ignored: a failing lesson, or a spec the engine refused, is shown, in red), writes the pages
into OUT/pages, runs Doxygen (docs/Doxyfile; a Doxygen warning fails the build) into OUT/html,
and copies Debian's MathJax (libjs-mathjax) into OUT/html/mathjax so that the site loads
nothing from the network. Used by the `docs` target (docs/CMakeLists.txt) and by
verify/cli/test_docs.py. With --audit (or the environment variable VL_AUDIT_JSON, which
scripts/main.sh sets to the audit it has just run) it uses that audit's JSON instead of running
the audit again; likewise --specs (or VL_SPEC_JSON) for the spec export and --arrays (or
VL_ARRAYS_JSON) for `lessons export --json`, the listings' arrays the plots and "try it" panels
show. A plot whose data is there but cannot be drawn fails the build (generate.py).

The conformance matrix (issue 19) is written into OUT/pages from this build's audits
(docs/conformance_page.py). Extra pages: every *.md in docs/pages/ is handed to Doxygen with the
lesson pages, and every *.html, *.json, *.svg and *.js there is copied into the site beside them, so a page's \\htmlonly block can load them.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MATHJAX = Path("/usr/share/javascript/mathjax")
MATHJAX_PARTS = ["MathJax.js", "config", "extensions", "jax", "fonts/HTML-CSS/TeX/woff", "localization/en"]


def fail(message):
    print(f"build_docs.py: {message}", file=sys.stderr)
    sys.exit(1)


def copy_mathjax(html: Path):
    if not (MATHJAX / "MathJax.js").exists():
        fail(f"{MATHJAX}/MathJax.js not found: install Debian's libjs-mathjax (scripts/install-deps.sh)")
    dest = html / "mathjax"
    stamp = dest / ".copied-from"
    if stamp.exists() and stamp.read_text() == str(MATHJAX):
        return
    shutil.rmtree(dest, ignore_errors=True)
    for part in MATHJAX_PARTS:
        src = MATHJAX / part
        if src.is_dir():
            shutil.copytree(src, dest / part, symlinks=False)
        elif src.exists():
            (dest / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / part)
    stamp.write_text(str(MATHJAX))


def take_or_run(given, out: Path, lessons, verb: str, source: Path, option: str):
    """The JSON report OUT: a copy of the one given with --OPTION, or what `lessons VERB --json OUT`
    writes (its stderr beside it, for generate.py to show when the report is missing)."""
    if given:
        if not given.is_file():
            fail(f"--{option} {given}: no such file (a JSON report: lessons {verb} --json FILE)")
        print(f"build_docs.py: using the {verb} JSON in {given}")
        if given.resolve() != out:
            shutil.copyfile(given, out)
        return
    if not lessons:
        fail(f"give --lessons (the lessons binary) or --{option} (a JSON report: lessons {verb} --json FILE)")
    out.unlink(missing_ok=True)
    run = subprocess.run([str(lessons), verb, "--root", str(source), "--json", str(out)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    out.with_suffix(out.suffix + ".stderr").write_text(run.stderr)
    print(f"build_docs.py: lessons {verb} exited {run.returncode}"
          + (" (the pages show what fails, in red)" if run.returncode else ""))


def write_conformance_matrix(lessons, source: Path, out: Path, pages: Path, audit: Path):
    """Issue 19: the conformance page from this build's audits (docs/conformance_page.py)."""
    from conformance_page import ConformanceError, write_conformance_page
    try:
        print(f"build_docs.py: conformance matrix {write_conformance_page(lessons, source, out, pages, audit)}")
    except ConformanceError as e:
        fail(f"conformance matrix: {e}")


def git(source: Path, *args) -> str:
    run = subprocess.run(["git", "-C", str(source), *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return run.stdout.strip() if run.returncode == 0 else ""


def audit_of_this_build(path: Path, lessons, source: Path, backend="plain"):
    """Why the audit JSON at PATH (--audit-json: ctest's audit_all writes one) may not stand for
    this build's audit, or None when it may: it must be an audit of SOURCE on BACKEND (the default, plain),
    at SOURCE's commit as the engine names it (git HEAD, "+modified" for a dirty tree), written
    after the lessons binary was linked and after every spec and golden last changed (a newer
    binary, spec or golden would give another audit)."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
        prov, root = report["provenance"], Path(report["root"])
        report["lessons"]
    except FileNotFoundError:
        return "no such file"
    except (OSError, ValueError, KeyError, TypeError) as e:
        return f"not an audit JSON ({type(e).__name__}: {e})"
    commit = git(source, "rev-parse", "--short=12", "HEAD") or "unknown (not a git checkout)"
    if git(source, "status", "--porcelain", "--untracked-files=no"):
        commit += "+modified"
    written = path.stat().st_mtime
    inputs = [Path(lessons)] if lessons else []
    inputs += [f for d in ("specs", "reference_outputs") for f in (source / d).rglob("*") if f.is_file()]
    newer = [f for f in inputs if f.stat().st_mtime > written]
    if root.resolve() != source:
        return f"it audits {root}, not {source}"
    if str(prov.get("backend", "")).split(" (")[0] != backend:  # "plain (our reference kernels: ...)"
        return f"it audits backend {prov.get('backend')!r}, not {backend}"
    if prov.get("commit") != commit:
        return f"it was made at commit {prov.get('commit')}, the source is at {commit}"
    if newer:
        return f"{newer[0]} changed after it was written"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lessons", type=Path, help="the lessons binary (not needed with --audit and --specs)")
    ap.add_argument("--source", type=Path, default=HERE.parent, help="the repository (default: this one)")
    ap.add_argument("--out", required=True, type=Path, help="output folder (html/ goes under it)")
    ap.add_argument("--doxygen", default=shutil.which("doxygen") or "doxygen")
    ap.add_argument("--strict", action="store_true",
                    help="fail on a generator warning too (a kernel panel or a plot not found), as Doxygen's do (ctest docs_site)")
    ap.add_argument("--audit", type=Path, default=os.environ.get("VL_AUDIT_JSON") or None,
                    help="use this audit JSON instead of running the audit (default: $VL_AUDIT_JSON)")
    ap.add_argument("--audit-json", type=Path,
                    help="reuse this audit JSON (ctest's audit_all writes one) when it is this build's audit "
                         "(same source, commit and default backend, newer than the binary, specs and goldens); "
                         "else run the audit")
    ap.add_argument("--arrays", type=Path, default=os.environ.get("VL_ARRAYS_JSON") or None,
                    help="use this array export instead of running `lessons export` (default: $VL_ARRAYS_JSON)")
    ap.add_argument("--seeds", type=Path, default=os.environ.get("VL_SEEDS_DIR") or None,
                    help="the lessons' seeds, for their own code on the pages (default: SOURCE/../shared/seeds)")
    ap.add_argument("--specs", type=Path, default=os.environ.get("VL_SPEC_JSON") or None,
                    help="use this spec export instead of running `lessons spec` (default: $VL_SPEC_JSON)")
    args = ap.parse_args()
    source, out = args.source.resolve(), args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    specs, audit, arrays = out / "specs.json", out / "audit.json", out / "arrays.json"
    take_or_run(args.specs, specs, args.lessons, "spec", source, "specs")
    if args.audit_json and not args.audit:
        stale = audit_of_this_build(args.audit_json, args.lessons, source)
        if stale:
            print(f"build_docs.py: --audit-json {args.audit_json} not reused ({stale}): running the audit")
        else:
            args.audit = args.audit_json
    take_or_run(args.audit, audit, args.lessons, "audit", source, "audit")
    take_or_run(args.arrays, arrays, args.lessons, "export", source, "arrays")

    pages = out / "pages"
    gen = subprocess.run([sys.executable, str(HERE / "generate.py"), "--source", str(source), "--specs", str(specs),
                          "--audit", str(audit), "--arrays", str(arrays), "--out", str(pages)]
                         + (["--seeds", str(args.seeds)] if args.seeds else []) + (["--strict"] if args.strict else []))
    if gen.returncode:
        fail("generate.py failed" + (" (--strict: a warning above fails it)" if args.strict else ""))

    write_conformance_matrix(args.lessons, source, out, pages, audit)

    # Extra pages (docs/pages/): Markdown goes through Doxygen with the lessons, assets are copied.
    extra = HERE / "pages"
    extra_assets = []
    # The protocol page stays at docs/candidates.md, the path the code and the adapters cite.
    shutil.copyfile(HERE / "candidates.md", pages / "candidates.md")
    if extra.is_dir():
        for f in sorted(extra.iterdir()):
            if f.suffix == ".md":
                shutil.copyfile(f, pages / f.name)
            elif f.suffix in (".html", ".json", ".svg", ".js", ".png"):
                extra_assets.append(f)

    html = out / "html"
    shutil.rmtree(html, ignore_errors=True)  # Doxygen writes the whole site: no page of an earlier build may linger
    env = dict(os.environ, VL_SOURCE_DIR=str(source), VL_DOCS_PAGES=str(pages), VL_DOCS_OUT=str(out), VL_DOCS_DIR=str(HERE))
    dox = subprocess.run([args.doxygen, str(HERE / "Doxyfile")], env=env, cwd=out, stderr=subprocess.PIPE, text=True)
    if dox.stderr.strip():
        sys.stderr.write(dox.stderr)
    if dox.returncode or dox.stderr.strip():
        fail("Doxygen reported warnings or errors (WARN_AS_ERROR): fix them (see above)")
    # Doxygen also writes a "file" page for each generated lesson Markdown file (lesson__NAME_8md.html);
    # nothing links to them and the lesson pages themselves are lesson_NAME.html.
    for md in pages.glob("*.md"):
        (html / (md.stem.replace("_", "__") + "_8md.html")).unlink(missing_ok=True)
    copy_mathjax(html)
    for f in extra_assets:
        shutil.copyfile(f, html / f.name)
    # The specs, as the lesson pages' "spec" links read them: plain text (generate.py's spec_href).
    (html / "specs").mkdir(exist_ok=True)
    for f in sorted((source / "specs").glob("*.md")):
        shutil.copyfile(f, html / "specs" / (f.name + ".txt"))
    print(f"build_docs.py: site {html / 'index.html'}")


if __name__ == "__main__":
    main()
