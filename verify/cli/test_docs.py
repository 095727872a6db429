#!/usr/bin/python3
"""The docs generator, and what the browser tests of the site share.

Here: the generator alone (no Doxygen, no browser) shows a failing lesson, a missing audit and
a missing spec export in red rather than hiding them. SiteHelpers is the site (built into a
temporary folder by docs/build_docs.py, or VL_DOCS_BUILD's, a build dir holding docs/html) and
one headless Chromium driven by Selenium, for verify/docs/test_docs_site.py (the site, the
"try it" panel), verify/docs/test_docs_pages.py (each page at 1400 and 390 px) and
verify/candidates/test_conformance_page.py. ctest builds the site once (test docs_site) and runs
the three in one process, with one Chromium (verify/docs/test_docs_browser.py, test
docs_browser), with VL_DOCS_BUILD (CMakeLists.txt).

    LESSONS=build/bin/lessons /usr/bin/python3 verify/cli/test_docs.py

The browser tests need Debian's chromium, chromium-driver and python3-selenium
(scripts/install-deps.sh); a missing one fails them with the package names.
"""
import atexit
import base64
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
# The site's written pages besides the lessons (html/NAME.html): the index, Doxygen's Related
# Pages, and the pages of docs/pages/, docs/candidates.md and the conformance matrix.
EXTRA_PAGES = ("index", "pages", "architecture", "candidates", "conformance", "mutation")
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
    """Every resource a page would fetch from the network (script/link/img/object/iframe).
    feed_tags(text) parses only those start tags (found with their quoted attributes whole), which
    is what handle_starttag reads: the same verdict as feed(text) at a tenth of the cost on
    Doxygen's thousand pages (a tag inside a comment is parsed too: it can only add a finding)."""

    TAGS = re.compile(r"""<(?:script|img|iframe|object|link)\b(?:[^>"']|"[^"]*"|'[^']*')*>""", re.I)

    def __init__(self):
        super().__init__()
        self.remote = []

    def feed_tags(self, text):
        for tag in self.TAGS.finditer(text):
            self.feed(tag.group(0))

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        url = {"script": a.get("src"), "img": a.get("src"), "iframe": a.get("src"), "object": a.get("data"),
               "link": a.get("href") if tag == "link" else None}.get(tag)
        if url and re.match(r"^(https?:)?//", url.strip()):
            self.remote.append(f"<{tag}> {url}")


# One headless Chromium per process, shared by every class of docs tests that runs in it (starting
# one costs about a second and a half); it is quit when the process ends. Its TMPDIR is a folder of
# its own, removed after it: quit, Chromium leaves its singleton-socket folder
# (org.chromium.Chromium.*) in its temporary folder.
_DRIVER = None
_DRIVER_TMP = None


def _quit_driver():
    global _DRIVER, _DRIVER_TMP
    if _DRIVER is not None:
        _DRIVER.quit()
        _DRIVER = None
    if _DRIVER_TMP is not None:
        _DRIVER_TMP.cleanup()
        _DRIVER_TMP = None


class SiteHelpers:
    """The site (built here, or VL_DOCS_BUILD's) and one headless Chromium, for the docs tests
    (this file and verify/docs/test_docs_pages.py)."""
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

    @classmethod
    def browser(cls):
        """The process's headless Chromium (Selenium + Debian's chromium-driver), started once."""
        global _DRIVER, _DRIVER_TMP
        if _DRIVER is not None:
            return _DRIVER
        try:
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
        except ImportError:
            raise AssertionError("python3-selenium is not installed: the docs tests drive headless Chromium with it "
                                 "(scripts/install-deps.sh installs python3-selenium and chromium-driver)")
        driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
        if not Path(driver_path).exists() or not find_chromium():
            raise AssertionError("chromium or chromedriver not found: the docs tests open the pages in headless Chromium "
                                 "(scripts/install-deps.sh installs chromium and chromium-driver)")
        opts = webdriver.ChromeOptions()
        for flag in CHROMIUM_FLAGS:
            opts.add_argument(flag)
        opts.binary_location = find_chromium()
        _DRIVER_TMP = tempfile.TemporaryDirectory(prefix="vl-chromium-")
        atexit.register(_quit_driver)
        _DRIVER = webdriver.Chrome(service=Service(driver_path, env=dict(os.environ, TMPDIR=_DRIVER_TMP.name)), options=opts)
        _DRIVER.set_script_timeout(60)
        return _DRIVER

    def open_page(self, page: Path, width: int = 1400):
        """The page at this width, after MathJax has typeset everything."""
        d = self.browser()
        d.set_window_size(width, 1000)
        d.get(page.as_uri())
        d.execute_async_script(
            "var done = arguments[arguments.length - 1];"
            "if (window.MathJax && MathJax.Hub) { MathJax.Hub.Queue(function () { done(true); }); } else { done(false); }")
        return d

    def screenshot(self, page: Path, width: int):
        """The page at this width, for a person to look at: its first screen (a window 1000 px tall),
        or with VL_DOCS_SCREENSHOTS=full the whole page, in tiles of a window at most 12000 px tall
        (Chromium's limit is ~16k). ctest takes the first screens: the whole pages were half of
        docs_browser's time (15 of 30 s on 2 cores: a 12000-px window lays out and paints the page
        once more)."""
        d = self.browser()
        # With Doxygen's navigation tree the text scrolls inside #doc-content, not the document.
        scroller = "(function () { var c = document.getElementById('doc-content');" \
                   "return c && c.scrollHeight > c.clientHeight + 1 ? c : document.scrollingElement; })()"
        full = os.environ.get("VL_DOCS_SCREENSHOTS") == "full"
        tile = 12000 if full else 1000
        d.set_window_size(width, tile)
        view = d.execute_script("return window.innerHeight")  # the window less Chromium's own bars
        height = d.execute_script(f"return {scroller}.scrollHeight") if full else view
        shots = build_dir() / "docs" / "screenshots"
        shots.mkdir(parents=True, exist_ok=True)
        for old in shots.glob(f"{page.stem}-{width}*.png"):
            old.unlink()
        paths = []
        tops = [0]
        while tops[-1] + view < height:  # a further tile only where the page goes on (200 px overlap)
            tops.append(tops[-1] + view - 200)
        for k, top in enumerate(tops):
            d.execute_script(f"{scroller}.scrollTop = arguments[0];", top)
            shot = shots / (f"{page.stem}-{width}.png" if k == 0 else f"{page.stem}-{width}-{k + 1}.png")
            # Chromium's fast PNG encoder (DevTools' optimizeForSpeed): half the time of the default
            # one on these 1400 x 12000 tiles, for a file a third larger.
            png = d.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})
            shot.write_bytes(base64.b64decode(png["data"]))
            self.assertTrue(shot.exists() and shot.stat().st_size > 10000, f"no screenshot {shot}")
            paths.append(shot)
        print(f"\nscreenshots: {', '.join(str(p) for p in paths)} ({width} x {height} px{'' if full else ', the first screen'})",
              flush=True)
        d.execute_script(f"{scroller}.scrollTop = 0;")
        return paths

    @classmethod
    def tearDownClass(cls):
        if cls.tmp:
            cls.tmp.cleanup()


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

    def generate(self, lesson, passed, failed):
        """The written pages (name → text) for an audit of this one lesson, with the real specs' export."""
        audit = {"provenance": {"commit": "abc", "compiler": "g", "build": "b", "blas": "o", "date": "d"},
                 "passed": passed, "failed": failed, "problems": [], "lessons": [lesson]}
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "audit.json").write_text(json.dumps(audit))
            run = subprocess.run([sys.executable, str(DOCS / "generate.py"), "--source", str(SOURCE),
                                  "--specs", str(export_specs(Path(tmp))),
                                  "--audit", str(Path(tmp) / "audit.json"), "--out", str(Path(tmp) / "pages")],
                                 capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stderr)
            return {p.name: p.read_text(encoding="utf-8") for p in (Path(tmp) / "pages").glob("*.md")}

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
        pages = self.generate(lesson, passed=0, failed=2)
        page, index = pages["lesson_linear_rnn.md"], pages["index.md"]
        banner = page.index("vl-banner")
        self.assertIn("vl-banner-fail", page[banner - 20:banner + 40])
        self.assertLess(banner, page.index("Softmax attention"), "the failure must be said at the top")
        self.assertIn("is <b>vacuous</b>", page)
        self.assertIn("NOT rejected", page)
        self.assertIn("vl-row-fail", page)
        self.assertIn("✗ fails", index)

    def test_every_quotation_of_a_lesson_is_glossed(self):
        # A card's source quotes the lesson in its own language (Italian, Russian): each quotation
        # is followed by its English, '"…": …', as the engine exported the claims and listings.
        foreign = re.compile(r"[а-яА-ЯёЁ]|\b(?:il|la|le|lo|gli|della|delle|dei|che|non|per|con|una|sono|è|si|del|nel|ogni|quindi|"
                             r"forma|pesi|uscita|maschera|posizione|stato|teste)\b", re.I)
        with tempfile.TemporaryDirectory() as tmp:
            specs = json.loads(export_specs(Path(tmp)).read_text(encoding="utf-8"))["specs"]
        bare, quoted = [], 0
        for spec in specs:
            for b in spec["blocks"]:
                fields = b.get("claim") or b.get("listing") or {}
                for text in (fields.get("source", ""), fields.get("refutes", "")):
                    for m in re.finditer(r'"([^"]+)"', text):
                        if foreign.search(m.group(1)):
                            quoted += 1
                            if not re.match(r"(:| \()", text[m.end():]):  # '"…": English' or '"…" (English)'
                                bare.append(f'{spec["lesson"]}: "{m.group(1)[:60]}"')
        self.assertGreater(quoted, 20, "no quotation of the lessons found: the test reads nothing")
        self.assertEqual(bare, [], "quotations of a lesson without an English gloss")

    def test_every_comment_of_the_quoted_lesson_code_has_its_english(self):
        # The lesson's code is quoted verbatim (Italian comments); docs/listing_code.json gives each
        # comment's English by line, shown under the quote. A comment with a word of four letters or
        # more (not an identifier) in the quoted range, outside the text cells left out, needs one.
        where = json.loads((DOCS / "listing_code.json").read_text(encoding="utf-8"))["listings"]
        seeds = SOURCE.parent / "shared" / "seeds"
        if not seeds.is_dir():
            self.skipTest(f"not run: no seeds folder {seeds} on this machine")
        missing, checked = [], 0
        for lid, w in where.items():
            if "seed" not in w:
                continue
            text = (seeds / w["seed"]).read_text(encoding="utf-8").splitlines()
            a, b = w["lines"]
            cells = {n for x, y in w.get("text_cells", []) for n in range(x, y + 1)}
            for n in range(a, b + 1):
                comment = re.search(r"#\s*(.*)$", text[n - 1])
                if n in cells or not comment or not re.search(r"(?<![\w^])[A-Za-zà-ù]{4,}(?![\w(])", comment.group(1)):
                    continue
                checked += 1
                if str(n) not in w.get("comments", {}):
                    missing.append(f"{lid} line {n}: {comment.group(1)[:60]}")
        self.assertGreater(checked, 10, "no comments found in the quoted code: the test reads nothing")
        self.assertEqual(missing, [], "comments of the quoted lesson code without their English")

    def test_a_timing_outlier_is_said_under_the_figure(self):
        # The cost listing's times come from one run: a doubling that took 15× (a busy machine) sits
        # under "grows like n²" only with a comment; steady doublings and rounded milliseconds get none.
        sys.path.insert(0, str(DOCS))
        try:
            import plots
        finally:
            sys.path.remove(str(DOCS))
        note = plots.timing_outliers([(512, 0.003), (1024, 0.011), (2048, 0.06), (4096, 0.9)])
        self.assertIn("n = 2048 → 4096 took 15.0× longer where n² predicts 4×", note)
        self.assertNotIn("1024 → 2048", note)
        self.assertEqual(plots.timing_outliers([(512, 0.001), (1024, 0.009), (2048, 0.05), (4096, 0.2)]), "")
        self.assertIn("n = 2048 → 4096 took only 1.2× as long where n² predicts 4×",
                      plots.timing_outliers([(1024, 0.012), (2048, 0.05), (4096, 0.06)]))

    def test_a_card_reads_its_direction_from_the_spec(self):
        # encoder-decoder.encoder-sees-every-position is "at least 1e-3" (compare: >= in the spec):
        # its card reads "0.3087 ≥ 0.001", and a control it rejected reads "< 0.001"; the
        # direction comes from the spec's export, not from the docs' own tables.
        spec = SOURCE / "specs" / "encoder_decoder.md"
        cid = "encoder-decoder.encoder-sees-every-position"
        claim = {"id": cid, "kind": "bound", "statement": "s", "source": "x", "tolerance": "1e-3",  # no "compare": the spec's
                 "status": "passed", "why": "", "spec_line": 1,
                 "checks": [{"name": "c", "measured": 0.3087, "passed": True, "detail": "", "error": "",
                             "controls": [{"name": "the encoder given the causal mask", "rejected": True,
                                           "measured": 0.0, "detail": "", "error": "", "unmet": []}]}]}
        lesson = {"id": "encoder-decoder", "title": "t", "spec": str(spec), "problems": [], "claims": [claim], "listings": []}
        page = self.generate(lesson, passed=1, failed=0)["lesson_encoder_decoder.md"]
        card = page[page.index('id="claim-encoder-decoder-encoder-sees-every-position"'):]
        card = card[:card.index("vl-source")]
        self.assertIn("0.3087 ≥ 0.001", card)
        self.assertNotIn("≤", card)
        self.assertIn("rejected: smallest |Δ output i| over changed positions j 0 < 0.001", card)

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
