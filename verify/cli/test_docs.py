#!/usr/bin/python3
"""The docs site, as a reader's browser shows it.

Builds the site (docs/build_docs.py: audit -> generate.py -> Doxygen, which fails on any
warning) into a temporary folder, or takes an already built one from VL_DOCS_BUILD (a build
dir holding docs/html), then opens every lesson page in headless Chromium after MathJax ran and
checks that the formulas were typeset (MathJax output present, no raw $$ left), that the
verdicts are there and agree with the audit, that the listing's C++ came in by \\snippet, and
that nothing is loaded from the network. Keeps a screenshot of each lesson page under
<build>/docs-test/ and prints its path.

    LESSONS=build/bin/lessons /usr/bin/python3 verify/cli/test_docs.py
    VL_DOCS_BUILD=build LESSONS=build/bin/lessons /usr/bin/python3 verify/cli/test_docs.py

Needs Debian's chromium (scripts/install-deps.sh installs it).
"""
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SOURCE = Path(os.environ.get("VL_SOURCE_DIR", Path(__file__).resolve().parents[2]))
DOCS = SOURCE / "docs"
LESSONS = os.environ.get("LESSONS")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars"]


def find_chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None)
        if path:
            return path
    return None


def build_dir():
    """Where to keep screenshots: the build dir of the lessons binary (…/bin/lessons)."""
    if os.environ.get("VL_DOCS_BUILD"):
        return Path(os.environ["VL_DOCS_BUILD"]).resolve()
    if LESSONS and Path(LESSONS).resolve().parent.name == "bin":
        return Path(LESSONS).resolve().parent.parent
    return Path(tempfile.gettempdir())


class NetworkLoads(html.parser.HTMLParser):
    """Every resource a page would fetch from the network (script/link/img/object/iframe)."""

    def __init__(self):
        super().__init__()
        self.remote = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        url = {"script": a.get("src"), "img": a.get("src"), "iframe": a.get("src"), "object": a.get("data"),
               "link": a.get("href") if tag == "link" else None}.get(tag)
        if url and re.match(r"^(https?:)?//", url.strip()):
            self.remote.append(f"<{tag}> {url}")


class DocsSite(unittest.TestCase):
    tmp = None
    out = None

    @classmethod
    def setUpClass(cls):
        cls.chromium = find_chromium()
        if os.environ.get("VL_DOCS_BUILD"):
            cls.out = Path(os.environ["VL_DOCS_BUILD"]).resolve() / "docs"
            if not (cls.out / "html" / "index.html").exists():
                raise unittest.SkipTest(f"VL_DOCS_BUILD: {cls.out}/html/index.html not built "
                                        "(cmake --build BUILD --target docs)")
            cls.build_log = ""
            return
        if not LESSONS:
            raise RuntimeError("set LESSONS to the lessons binary (ctest does)")
        cls.tmp = tempfile.TemporaryDirectory(prefix="vl-docs-")
        cls.out = Path(cls.tmp.name) / "docs"
        run = subprocess.run([sys.executable, str(DOCS / "build_docs.py"), "--lessons", LESSONS,
                              "--source", str(SOURCE), "--out", str(cls.out)],
                             capture_output=True, text=True, timeout=900)
        cls.build_log = run.stdout + run.stderr
        cls.build_status = run.returncode

    @classmethod
    def tearDownClass(cls):
        if cls.tmp:
            cls.tmp.cleanup()

    # -- helpers ------------------------------------------------------------------------------
    def audit(self):
        return json.loads((self.out / "audit.json").read_text(encoding="utf-8"))

    def lesson_pages(self):
        """The HTML of every page the generator wrote (pages/lesson_*.md)."""
        pages = [self.out / "html" / (md.stem + ".html") for md in sorted((self.out / "pages").glob("lesson_*.md"))]
        self.assertTrue(pages, "the generator wrote no lesson page")
        for page in pages:
            self.assertTrue(page.exists(), f"Doxygen did not make {page.name}")
        return pages

    def require_chromium(self):
        if not self.chromium:
            self.fail("chromium not found: the docs test opens the pages in headless Chromium. "
                      "Install Debian's package (apt-get install -y chromium); scripts/install-deps.sh "
                      "should list `chromium`.")

    def chromium_run(self, page: Path, *extra):
        self.require_chromium()
        with tempfile.TemporaryDirectory(prefix="vl-chromium-") as profile:
            run = subprocess.run([self.chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                                  "--virtual-time-budget=10000", *extra, page.as_uri()],
                                 capture_output=True, text=True, timeout=180)
        self.assertEqual(run.returncode, 0, f"chromium failed on {page.name}:\n{run.stderr[-3000:]}")
        return run.stdout

    # -- the tests ----------------------------------------------------------------------------
    def test_1_site_builds_without_doxygen_warnings(self):
        if getattr(self, "build_status", 0):
            self.fail(f"docs build failed (a Doxygen warning fails it):\n{self.build_log[-6000:]}")
        self.assertTrue((self.out / "html" / "index.html").exists(), self.build_log[-3000:])
        self.assertTrue((self.out / "html" / "mathjax" / "MathJax.js").exists(), "MathJax not copied into the site")

    def test_2_every_audited_lesson_has_a_page_and_the_index_lists_it(self):
        index = (self.out / "html" / "index.html").read_text(encoding="utf-8")
        for lesson in self.audit()["lessons"]:
            page = self.out / "html" / ("lesson_" + re.sub(r"[^A-Za-z0-9]", "_", lesson["id"]) + ".html")
            self.assertTrue(page.exists(), f"no page for lesson {lesson['id']}")
            self.assertIn(page.name, index, f"index does not link {page.name}")

    def test_3_pages_load_nothing_from_the_network(self):
        for page in (self.out / "html").glob("*.html"):
            parser = NetworkLoads()
            parser.feed(page.read_text(encoding="utf-8", errors="replace"))
            self.assertEqual(parser.remote, [], f"{page.name} loads from the network")
        self.assertIn('src="mathjax/MathJax.js"', (self.out / "html" / "index.html").read_text(encoding="utf-8"))

    def test_4_lesson_pages_in_chromium(self):
        shots = build_dir() / "docs-test"
        shots.mkdir(parents=True, exist_ok=True)
        audit = {l["id"]: l for l in self.audit()["lessons"]}
        for page in self.lesson_pages():
            with self.subTest(page=page.name):
                dom = self.chromium_run(page, "--dump-dom")
                (shots / (page.stem + ".dom.html")).write_text(dom, encoding="utf-8")
                lesson = next((l for l in audit.values()
                               if "lesson_" + re.sub(r"[^A-Za-z0-9]", "_", l["id"]) == page.stem), None)
                source_md = (self.out / "pages" / (page.stem + ".md")).read_text(encoding="utf-8")
                # Formulas: typeset by MathJax, none left raw.
                if "\\f[" in source_md or "\\f$" in source_md:
                    self.assertRegex(dom, r'class="MathJax(_Display|_Preview)?"|<mjx-container',
                                     "MathJax did not typeset the formulas")
                    self.assertRegex(dom, r'id="MathJax-Element-\d+-Frame"|<mjx-container',
                                     "no MathJax output element")
                text = re.sub(r"<script\b.*?</script>", "", dom, flags=re.S)
                self.assertNotIn("$$", text, "raw $$ left on the page")
                self.assertNotIn("\\f[", text, "raw \\f[ left on the page")
                self.assertNotIn("MathJax_Message\" style=\"\"", dom)
                # Verdicts: the banner agrees with the audit; one per claim and per documented line.
                if lesson:
                    ok = all(c["status"] == "passed" for c in lesson["claims"]) and \
                        all(li["status"] == "passed" for li in lesson["listings"]) and not lesson["problems"] and \
                        (lesson["claims"] or lesson["listings"])
                    self.assertIn("vl-banner-pass" if ok else "vl-banner-fail", dom)
                    if not ok:
                        self.assertIn("fails verification", dom)
                    for claim in lesson["claims"]:
                        self.assertIn(f'id="claim-{re.sub(r"[^A-Za-z0-9-]", "-", claim["id"])}"', dom)
                    n_lines = sum(len(li["lines"]) for li in lesson["listings"])
                    n_verdicts = len(re.findall(r'class="vl-verdict vl-(pass|fail)"', dom))
                    self.assertGreaterEqual(n_verdicts, len(lesson["claims"]) + n_lines, "verdicts missing")
                # Screenshot, kept for a human to look at.
                shot = shots / (page.stem + ".png")
                shot.unlink(missing_ok=True)
                self.chromium_run(page, f"--screenshot={shot}", "--window-size=1280,2400")
                self.assertTrue(shot.exists() and shot.stat().st_size > 10000, f"no screenshot {shot}")
                print(f"\nscreenshot: {shot}", flush=True)

    def test_5_linear_rnn_page_has_its_listing_snippet_outputs_and_plot(self):
        page = self.out / "html" / "lesson_linear_rnn.html"
        if not page.exists():
            self.skipTest("no linear-rnn lesson in this audit")
        html_text = page.read_text(encoding="utf-8")
        self.assertRegex(html_text, r'<div class="fragment">.*listing_main', "the C++ listing was not snippeted")
        self.assertIn("Output of <code>linear-rnn.main</code>", html_text)
        self.assertIn("le due forme coincidono: True", html_text)
        self.assertIn("linear-rnn-cost-chunked-linear-cost.svg", html_text, "the cost plot is missing")
        self.assertTrue((self.out / "html" / "linear-rnn-cost-chunked-linear-cost.svg").exists())
        self.assertIn("Provenance", html_text)
        commit = self.audit()["provenance"]["commit"]
        self.assertIn(commit, html_text)


def export_specs(tmp: Path) -> Path:
    """The specs as the engine parsed them (`lessons spec --json`), which generate.py presents."""
    if not LESSONS:
        raise RuntimeError("set LESSONS to the lessons binary (ctest does)")
    out = tmp / "specs.json"
    run = subprocess.run([LESSONS, "spec", "--root", str(SOURCE), "--json", str(out)],
                         capture_output=True, text=True, timeout=300)
    if run.returncode:
        raise RuntimeError(f"lessons spec failed: {run.stderr}")
    return out


class Generator(unittest.TestCase):
    """The generator alone (no Doxygen, no browser): a failing lesson is shown, in red."""

    def test_failing_lesson_is_red_at_the_top_and_in_the_index(self):
        spec = SOURCE / "specs" / "linear_rnn.md"
        if not spec.exists():
            self.skipTest("no specs/linear_rnn.md")
        lesson = {"id": "linear-rnn", "title": "Causal linear attention is an RNN", "spec": str(spec), "problems": [],
                  "claims": [{"id": "linear-rnn.causal", "kind": "invariant", "statement": "s", "source": "x",
                              "tolerance": "0", "status": "vacuous", "why": "a control was not rejected",
                              "spec_line": 1, "checks": [{"name": "c", "measured": 0.0, "passed": True, "detail": "",
                                                          "error": "", "controls": [{"name": "mask shifted",
                                                                                      "rejected": False, "measured": 0.0,
                                                                                      "detail": ""}]}]}],
                  "listings": [{"id": "linear-rnn.main", "function": "f", "status": "failed", "why": "1 line differs",
                                "produced": ["a", "b"], "arrays": [],
                                "lines": [{"line": 1, "documented": "a", "produced": "a", "rule": "exact", "passed": True, "detail": ""},
                                          {"line": 2, "documented": "c", "produced": "b", "rule": "exact", "passed": False, "detail": "differs"}]}]}
        audit = {"provenance": {"commit": "abc", "compiler": "g", "build": "b", "blas": "o", "date": "d"},
                 "passed": 0, "failed": 2, "problems": [], "lessons": [lesson]}
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "audit.json").write_text(json.dumps(audit))
            run = subprocess.run([sys.executable, str(DOCS / "generate.py"), "--source", str(SOURCE),
                                  "--specs", str(export_specs(Path(tmp))),
                                  "--audit", str(Path(tmp) / "audit.json"), "--out", str(Path(tmp) / "pages")],
                                 capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stderr)
            page = (Path(tmp) / "pages" / "lesson_linear_rnn.md").read_text(encoding="utf-8")
            index = (Path(tmp) / "pages" / "index.md").read_text(encoding="utf-8")
        banner = page.index("vl-banner")
        self.assertIn("vl-banner-fail", page[banner - 20:banner + 40])
        self.assertLess(banner, page.index("Softmax attention"), "the failure must be said at the top")
        self.assertIn("is <b>vacuous</b>", page)
        self.assertIn("NOT rejected", page)
        self.assertIn("vl-row-fail", page)
        self.assertIn("✗ fails", index)

    def test_missing_audit_report_is_shown_not_hidden(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = subprocess.run([sys.executable, str(DOCS / "generate.py"), "--source", str(SOURCE),
                                  "--specs", str(export_specs(Path(tmp))),
                                  "--audit", str(Path(tmp) / "none.json"), "--out", str(Path(tmp) / "pages")],
                                 capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stderr)
            index = (Path(tmp) / "pages" / "index.md").read_text(encoding="utf-8")
        self.assertIn("The audit did not produce a report", index)

    def test_missing_spec_export_is_shown_not_hidden(self):
        # A spec the engine refuses leaves no export (lessons spec exits 2): the site says so and
        # shows the engine's message, rather than pages of prose the audit never read.
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "specs.json.stderr").write_text("lessons: error: specs/x.md:7: '~~~claim': ...\n")
            (Path(tmp) / "audit.json").write_text(json.dumps({"lessons": [{"id": "x", "title": "X", "problems": ["bad"],
                                                                         "claims": [], "listings": []}]}))
            run = subprocess.run([sys.executable, str(DOCS / "generate.py"), "--source", str(SOURCE),
                                  "--specs", str(Path(tmp) / "specs.json"),
                                  "--audit", str(Path(tmp) / "audit.json"), "--out", str(Path(tmp) / "pages")],
                                 capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stderr)
            index = (Path(tmp) / "pages" / "index.md").read_text(encoding="utf-8")
            page = (Path(tmp) / "pages" / "lesson_x.md").read_text(encoding="utf-8")
        self.assertIn("The engine did not export the specs", index)
        for text in (index, page):
            self.assertIn("specs/x.md:7: &#x27;~~~claim&#x27;", text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
