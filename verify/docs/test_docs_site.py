#!/usr/bin/python3
"""The docs site as a whole: it builds without a Doxygen warning, every audited lesson has a page
the index links, nothing loads from the network, the linear-rnn page shows its code, outputs and
plot, and the "try it" panels of the masking page and of the attention page's heads listing,
clicked in headless Chromium, show row 0 turning into [1, 0, ...] with the causal mask and, for
every state they offer, exactly the weights and outputs the audit compared with the goldens
(torch's, and NumPy's for the heads with the mask), within the spec's tolerance.

    VL_DOCS_BUILD=build LESSONS=build/bin/lessons /usr/bin/python3 verify/docs/test_docs_site.py

Without VL_DOCS_BUILD it builds the site into a temporary folder first.
"""
import json
import re
import urllib.parse
from html import unescape as html_unescape
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from test_docs import EXTRA_PAGES, SOURCE, NetworkLoads, SiteHelpers  # noqa: E402  (verify/cli/test_docs.py)


class DocsSite(SiteHelpers, unittest.TestCase):
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
            parser.feed_tags(page.read_text(encoding="utf-8", errors="replace"))
            self.assertEqual(parser.remote, [], f"{page.name} loads from the network")
        self.assertIn('src="mathjax/MathJax.js"', (self.out / "html" / "index.html").read_text(encoding="utf-8"))

    def test_6_try_it_panel_shows_the_audited_weights(self):
        self.check_try_it("masking", "masking.main", {"unmasked": ("W_unmasked", "Y_unmasked"), "causal": ("W_causal", "Y_causal")})

    def test_7_heads_try_it_panel_toggles_the_mask(self):
        self.check_try_it("attention", "attention.heads",
                          {"unmasked": ("weights", "output"), "causal": ("weights_causal", "output_causal")})

    def test_8_seed_try_it_panel_shows_what_its_claim_judged(self):
        """Seed 002's "try it" (attention.fixture-try-it): the panel after the claim's card shows the
        arrays that claim's check judged, read from the audit's JSON, every state and row; the
        reader's two steps give what the claim states (row 0 [1, 0, 0] with the mask; heads 0 and 1
        apart in row 2 by at least the claim's tolerance)."""
        import numpy as np
        page = self.out / "html" / "lesson_attention.html"
        if not page.exists():
            self.skipTest("no attention lesson in this audit")
        lesson = next(l for l in self.audit()["lessons"] if l["id"] == "attention")
        claim = next(c for c in lesson["claims"] if c["id"] == "attention.fixture-try-it" and c["precision"] == "float64")
        self.assertEqual(claim["status"], "passed")
        series = {x["name"]: x["values"] for x in claim["checks"][0]["series"]}
        heads, seq, width = (int(x) for x in series["shape (heads, seq, d_model)"])
        judged = {t: (np.array(series["W_" + t]).reshape(heads, seq, seq), np.array(series["Y_" + t]).reshape(seq, width))
                  for t in ("unmasked", "causal")}
        d = self.open_page(page, 1400)
        states = self.panel_states(d, "tryit-attention-fixture-try-it")
        self.assertEqual(len(states), 2 * heads * seq)
        for key, got in states.items():
            t, h, r = key.split()
            np.testing.assert_array_equal(np.array(got["w"]), judged[t][0][int(h), int(r)], key)
            np.testing.assert_array_equal(np.array(got["y"]), judged[t][1][int(r)], key)
        self.assertEqual(states["causal 0 0"]["w"], [1, 0, 0])
        self.assertGreaterEqual(min(states["unmasked 0 0"]["w"]), 0.25)
        for t in ("unmasked", "causal"):
            gap = np.abs(np.array(states[f"{t} 0 2"]["w"]) - np.array(states[f"{t} 1 2"]["w"])).max()
            self.assertGreaterEqual(gap, float(claim["tolerance"]), t)

    @staticmethod
    def panel_states(d, panel_id):
        """Every state a "try it" panel offers, read off the page as a reader sets it (one script:
        set the controls, fire their change events, read the cells): {"causal|unmasked head row":
        {"w": the weights of the selected head's row shown, "y": the output row shown}}."""
        return d.execute_script("""
            var p = document.getElementById(arguments[0]), out = {};
            var m = p.querySelector('.vl-try-mask'), h = p.querySelector('.vl-try-headsel'), r = p.querySelector('.vl-try-row');
            function fire(el) { el.dispatchEvent(new Event('change')); }
            [false, true].forEach(function (causal) {
              m.checked = causal; fire(m);
              Array.from(h.options).forEach(function (ho) {
                h.value = ho.value; fire(h);
                Array.from(r.options).forEach(function (ro) {
                  r.value = ro.value; fire(r);
                  out[(causal ? 'causal' : 'unmasked') + ' ' + ho.value + ' ' + ro.value] = {
                    w: Array.from(p.querySelectorAll('tr.vl-try-w0 td')).map(function (c) { return +c.dataset.value; }),
                    y: p.querySelector('.vl-try-y').dataset.values.split(',').map(Number)};
                });
              });
            });
            return out;""", panel_id)

    def check_try_it(self, lesson_id, listing_id, names):
        """Click the listing's panel as a reader would: row 0 turns into [1, 0, ...] with the mask;
        every state it offers shows the weights and outputs the audit compared with the goldens
        (names: state -> (weights array, output array) of the listing), within the spec's tolerance."""
        import numpy as np
        page = self.out / "html" / ("lesson_" + lesson_id.replace("-", "_") + ".html")
        if not page.exists():
            self.skipTest(f"no {lesson_id} lesson in this audit")
        lesson = next(l for l in self.audit()["lessons"] if l["id"] == lesson_id)
        listing = next(li for li in lesson["listings"] if li["id"] == listing_id)
        self.assertEqual(listing["status"], "passed")
        arrays = {a["name"]: a for a in listing["arrays"]}
        for w, y in names.values():
            self.assertIn(w, arrays, f"{listing_id} does not compare {w} with a golden")
            self.assertIn(y, arrays, f"{listing_id} does not compare {y} with a golden")
        tol = {name: arrays[name]["tolerance"] for pair in names.values() for name in pair}
        golden = {t: np.load(SOURCE / "reference_outputs" / arrays[w]["golden"]) for t, (w, _) in names.items()}
        y_golden = {t: np.load(SOURCE / "reference_outputs" / arrays[y]["golden"]) for t, (_, y) in names.items()}
        panel_id = "tryit-" + listing_id.replace(".", "-")
        d = self.open_page(page, 1400)
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select
        panel = d.find_element(By.CSS_SELECTOR, f".vl-try#{panel_id}")
        d.execute_script("arguments[0].scrollIntoView({block: 'center'});", panel)
        mask = panel.find_element(By.CSS_SELECTOR, ".vl-try-mask")
        head, head2 = Select(panel.find_element(By.CSS_SELECTOR, ".vl-try-headsel")), Select(panel.find_element(By.CSS_SELECTOR, ".vl-try-head2"))
        row = Select(panel.find_element(By.CSS_SELECTOR, ".vl-try-row"))

        def shown(k=0):
            cells = panel.find_elements(By.CSS_SELECTOR, f"tr.vl-try-w{k} td")
            return np.array([float(c.get_attribute("data-value")) for c in cells]), [c.text for c in cells]

        self.assertFalse(mask.is_selected())
        head.select_by_value("0")
        row.select_by_value("0")
        w, _ = shown()
        self.assertLessEqual(np.abs(w - golden["unmasked"][0, 0]).max(), tol[names["unmasked"][0]])
        self.assertGreater(w[1:].max(), 0.01, "without the mask row 0 sees the later keys")
        mask.click()  # the toggle: row 0 becomes [1, 0, ...]
        self.assertTrue(mask.is_selected())
        w, text = shown()
        self.assertEqual(w[0], 1.0)
        self.assertTrue((w[1:] == 0).all(), w)
        self.assertEqual(text[:2], ["1", "0"])
        # Every state the panel offers, read off the page as shown, against the goldens.
        states = self.panel_states(d, panel_id)
        self.assertEqual(len(states), 2 * golden["causal"].shape[0] * golden["causal"].shape[1])
        for key, got in states.items():
            t, h, r = key.split()
            self.assertLessEqual(np.abs(np.array(got["w"]) - golden[t][int(h), int(r)]).max(), tol[names[t][0]], key)
            self.assertLessEqual(np.abs(np.array(got["y"]) - y_golden[t][int(r)]).max(), tol[names[t][1]], key)
        if not mask.is_selected():
            mask.click()
        # Two heads in row 2 (causal): different weights, both on keys 0-2 only.
        head.select_by_value("0")
        head2.select_by_value("1")
        row.select_by_value("2")
        a, b = shown(0)[0], shown(1)[0]
        self.assertGreater(np.abs(a - b).max(), 0.05)
        self.assertTrue((a[3:] == 0).all() and (b[3:] == 0).all())

    def test_5_linear_rnn_page_has_its_listing_snippet_outputs_and_plot(self):
        page = self.out / "html" / "lesson_linear_rnn.html"
        if not page.exists():
            self.skipTest("no linear-rnn lesson in this audit")
        html_text = page.read_text(encoding="utf-8")
        self.assertRegex(html_text, r'class="vl-code-body" data-lang="cpp">[^<]*listing_main', "the C++ twin is not shown")
        self.assertIn('class="vl-code vl-code-seed"', html_text, "the lesson's own code is not quoted")
        self.assertIn('class="vl-code vl-code-kernel"', html_text, "the kernel is not shown")
        self.assertIn("Output of <code>linear-rnn.main</code>", html_text)
        self.assertIn("le due forme coincidono: True", html_text)
        self.assertIn("linear-rnn-cost-chunked-linear-cost.svg", html_text, "the cost plot is missing")
        self.assertTrue((self.out / "html" / "linear-rnn-cost-chunked-linear-cost.svg").exists())
        self.assertIn("Provenance", html_text)
        commit = self.audit()["provenance"]["commit"]
        self.assertIn(commit, html_text)

    def test_11_every_card_names_its_quantity(self):
        # A card's headline says what was measured, from the spec's measure: line ("largest |row
        # sum − 1| 2.2·10⁻¹⁶ ≤ 10⁻⁶"), never a bare "measured 0 ≤ 0"; the same for the controls.
        bare = []
        for page in self.lesson_pages():
            text = page.read_text(encoding="utf-8")
            cards = re.findall(r'class="vl-measured[^"]*">(.*?)</span>', text, re.S)
            self.assertTrue(cards, f"{page.name}: no card headline found")
            bare += [f"{page.name}: {c[:60]}" for c in cards if re.match(r"\s*measured\b", c)]
            bare += [f"{page.name}: {c[:60]}" for c in re.findall(r"rejected: (measured [^<]{0,60})", text)]
        self.assertEqual(bare, [], "cards that do not name their quantity")

    def test_12_figures_speak_english(self):
        # The lessons print Italian labels; a figure draws them in English (docs/gloss.json) and its
        # caption quotes the lesson's words. Matplotlib writes each drawn string into the SVG as a
        # comment beside its glyphs, so a gloss phrase in an SVG is a phrase drawn untranslated.
        phrases = json.loads((SOURCE / "docs" / "gloss.json").read_text(encoding="utf-8"))["phrases"]
        figures = [p for p in sorted((self.out / "html").glob("*.svg")) if p.name != "doxygen.svg"]
        self.assertTrue(figures, "no figures in the site")
        drawn = {p.name: p.read_text(encoding="utf-8") for p in figures}
        # The drawn strings (each comment; a wrapped title is one string with its line breaks), spaces
        # collapsed; a phrase anywhere in one, at word boundaries.
        strings = {name: [" ".join(c.split()) for c in re.findall(r"<!--(.*?)-->", text, re.S)] for name, text in drawn.items()}
        untranslated = [f"{name}: «{w}»" for name, ss in strings.items() for w in phrases
                        if any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", x) for x in ss)]
        self.assertEqual(untranslated, [], "figure text not in English")
        self.assertNotIn("W_unmasked", "".join(drawn.values()), "a heat map titled by a variable name")

    def test_13_no_machine_path_on_a_written_page(self):
        # A page is read on other machines: it names files relative to the checkout, never this
        # build machine's folders or interpreter (the conformance page quoted the candidates'
        # commands as /usr/bin/python3 /work/…/adapters/…).
        html = self.out / "html"
        pages = self.lesson_pages() + [html / f"{name}.html" for name in EXTRA_PAGES]
        # This machine's own folders, literally, and any absolute path under the usual roots (a file:// link too).
        literal = {str(SOURCE.resolve()), str(self.out.resolve()), str(Path.home()), sys.executable, tempfile.gettempdir()}
        machine = re.compile(r"(?<![\w.-])/(?:usr|home|tmp|work|root|opt|var|srv|mnt|Users|__w)/[\w./+-]+")
        found = []
        for p in pages:
            text = p.read_text(encoding="utf-8")
            found += [f"{p.name}: {m}" for m in sorted(set(machine.findall(text)))]
            found += [f"{p.name}: {x}" for x in sorted(literal) if len(x) > 1 and x in text]
        self.assertIn("conformance.html", [p.name for p in pages])
        self.assertEqual(found, [], "machine paths on the pages")

    def test_14_quoted_lesson_code_has_no_raw_tex(self):
        # The lesson's code is quoted from its seed; a notebook's text cells in the quoted range
        # (Italian prose with \\( … \\) TeX) are left out (docs/listing_code.json text_cells).
        raw = []
        for page in self.lesson_pages():
            for body in re.findall(r'<figure class="vl-code vl-code-seed">(.*?)</figure>', page.read_text(encoding="utf-8"), re.S):
                raw += [f"{page.name}: {m}" for m in re.findall(r"\\[(\[]|\\mathbf", body)]
        self.assertEqual(raw, [], "raw TeX in a quoted seed listing")

    def test_15_every_figure_opens_full_size(self):
        # Doxygen draws a figure in an <object> that takes no tap; under each, a link opens the SVG
        # on its own (test_10 checks that every link's target exists).
        figures = 0
        for page in self.lesson_pages():
            text = page.read_text(encoding="utf-8")
            drawn = re.findall(r'<object type="image/svg\+xml" data="([^"]+)"', text)
            links = re.findall(r'<div class="vl-figure-open"><a href="([^"]+)"', text)
            self.assertEqual(links, drawn, f"{page.name}: a figure without its full-size link")
            figures += len(drawn)
        self.assertGreater(figures, 5, "no figures found: the test reads nothing")

    def test_8_architecture_page_links_resolve(self):
        # docs/pages/architecture.md links the source files it describes: each must be in the site.
        page = self.out / "html" / "architecture.html"
        self.assertTrue(page.exists(), "no architecture page (docs/pages/architecture.md)")
        text = page.read_text(encoding="utf-8")
        targets = set(re.findall(r'href="([^"#:]+)(?:#[^"]*)?"', text))
        self.assertIn("backend_8hpp_source.html", targets)
        missing = sorted(t for t in targets if not (page.parent / t).exists())
        self.assertEqual(missing, [], "architecture page links to files the site lacks")

    def test_10_written_pages_link_within_the_site(self):
        # A reader follows a link from any written page (the index, the lessons, the extra pages):
        # each must lead to a file the site has (never a file:// path on the build machine), and
        # the protocol page for candidates must be a page that the index, the architecture page
        # and the conformance matrix link.
        html = self.out / "html"
        pages = [p for p in sorted(html.glob("*.html")) if p.stem.startswith("lesson_") or p.stem in EXTRA_PAGES]
        self.assertTrue((html / "candidates.html").exists(), "no candidates page (docs/candidates.md)")
        bad, texts = [], {}

        def anchors(target: Path):
            if target not in texts:
                texts[target] = set(re.findall(r'(?:id|name)="([^"]+)"', target.read_text(encoding="utf-8", errors="replace")))
            return texts[target]

        for page in pages:
            text = page.read_text(encoding="utf-8")
            for href in re.findall(r'href="([^"]*)"', text):
                href = html_unescape(href)
                path, _, fragment = href.partition("#")
                target = page if not path else html / urllib.parse.unquote(path)
                if href.startswith("file:"):
                    bad.append(f"{page.name}: {href}")
                elif re.match(r"^[a-z]+:", href):
                    continue
                elif not target.exists():
                    bad.append(f"{page.name}: {href} (missing)")
                elif fragment and target.suffix == ".html" and fragment not in anchors(target):
                    bad.append(f"{page.name}: {href} (no such anchor)")
        self.assertEqual(bad, [], "links a reader of the site cannot follow")
        for name in ("index.html", "architecture.html", "conformance.html"):
            self.assertIn('href="candidates.html"', (html / name).read_text(encoding="utf-8"), f"{name} does not link the candidates page")
        spec = (html / "lesson_attention.html").read_text(encoding="utf-8")
        self.assertIn('href="specs/attention.md.txt"', spec)
        self.assertTrue((html / "specs" / "attention.md.txt").exists())

    def test_9_code_spans_stay_code(self):
        # Doxygen 1.9 closes a `code span` early at a ' inside it and prints the rest as prose with
        # typographic quotes (‘lessons audit --candidate ’…): the shell command a reader would copy
        # is then wrong. Our pages' prose uses straight quotes, so a ‘ on a written page (not a
        # source listing) is such a span.
        broken = []
        for page in sorted((self.out / "html").glob("*.html")):
            if page.name.endswith("_source.html"):
                continue
            text = page.read_text(encoding="utf-8")
            for m in re.finditer("‘|&lsquo;", text):
                broken.append(f"{page.name}: …{re.sub(r'<[^>]+>', '', text[m.start():m.start() + 80])}…")
        self.assertEqual(broken, [], "a code span broken by a quote (write the command with double quotes)")


if __name__ == "__main__":
    unittest.main(verbosity=2)
