#!/usr/bin/python3
"""Build the docs site: audit -> generate.py -> Doxygen -> local MathJax.

    /usr/bin/python3 docs/build_docs.py --lessons build/bin/lessons --out build/docs

Runs `lessons audit --json OUT/audit.json` (its exit status is ignored: a failing lesson is
shown, in red), writes the pages into OUT/pages, runs Doxygen (docs/Doxyfile; a Doxygen
warning fails the build) into OUT/html, and copies Debian's MathJax (libjs-mathjax) into
OUT/html/mathjax so that the site loads nothing from the network. Used by the `docs` target
(docs/CMakeLists.txt) and by verify/cli/test_docs.py. With --audit (or the environment variable
VL_AUDIT_JSON, which scripts/main.sh sets to the audit it has just run) it uses that audit's
JSON instead of running the audit again.
"""
import argparse
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lessons", type=Path, help="the lessons binary (not needed with --audit)")
    ap.add_argument("--source", type=Path, default=HERE.parent, help="the repository (default: this one)")
    ap.add_argument("--out", required=True, type=Path, help="output folder (html/ goes under it)")
    ap.add_argument("--doxygen", default=shutil.which("doxygen") or "doxygen")
    ap.add_argument("--audit", type=Path, default=os.environ.get("VL_AUDIT_JSON") or None,
                    help="use this audit JSON instead of running the audit (default: $VL_AUDIT_JSON)")
    args = ap.parse_args()
    source, out = args.source.resolve(), args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    audit = out / "audit.json"
    if args.audit:
        if not args.audit.is_file():
            fail(f"--audit {args.audit}: no such file (an audit JSON: lessons audit --json FILE)")
        print(f"build_docs.py: using the audit in {args.audit}")
        if args.audit.resolve() != audit:
            shutil.copyfile(args.audit, audit)
    elif not args.lessons:
        fail("give --lessons (the lessons binary) or --audit (an audit JSON)")
    else:
        audit.unlink(missing_ok=True)
        run = subprocess.run([str(args.lessons), "audit", "--root", str(source), "--json", str(audit)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        (out / "audit.json.stderr").write_text(run.stderr)
        print(f"build_docs.py: lessons audit exited {run.returncode}"
              + (" (failing lessons are shown in red)" if run.returncode else ""))

    pages = out / "pages"
    gen = subprocess.run([sys.executable, str(HERE / "generate.py"), "--source", str(source), "--audit", str(audit),
                          "--out", str(pages)])
    if gen.returncode:
        fail("generate.py failed")

    html = out / "html"
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
    print(f"build_docs.py: site {html / 'index.html'}")


if __name__ == "__main__":
    main()
