#!/usr/bin/python3
"""Each written page as a reader's Chromium shows it, at 1400 and at 390 px (a phone).

For every lesson page (or only VL_DOCS_PAGE's, e.g. `masking`; ctest runs them all, in
verify/docs/test_docs_browser.py): after MathJax ran, no MathJax error and no raw TeX or ASCII math (`d_k`,
`10000^(2/d)`) in the text; no output line wrapped or scrolling in a box of its own, and at
1400 px every output comparison fits without scrolling; the banner agrees with the audit and
comes once; at 390 px the navigation tree is gone, the text column takes most of the
width, and the page itself never scrolls sideways (a wide formula, table or output scrolls in a
box of its own). The site's other written pages (index, Related Pages, architecture, candidates,
conformance, mutation) get the last check too. Screenshots at both widths go to <build>/docs/screenshots/ (paths
printed), to be looked at: each page's first screen, or with VL_DOCS_SCREENSHOTS=full the whole page.

    VL_DOCS_BUILD=build LESSONS=build/bin/lessons /usr/bin/python3 verify/docs/test_docs_pages.py

Needs chromium, chromium-driver and python3-selenium (scripts/install-deps.sh); a missing one
fails the test with the package name.
"""
import os
import re
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from test_docs import EXTRA_PAGES, SOURCE, SiteHelpers  # noqa: E402  (verify/cli/test_docs.py)


class DocsPages(SiteHelpers, unittest.TestCase):
    def pages(self):
        pages = self.lesson_pages()
        only = os.environ.get("VL_DOCS_PAGE")
        if only:
            pages = [p for p in pages if p.stem == "lesson_" + re.sub(r"[^A-Za-z0-9]", "_", only)]
            self.assertTrue(pages, f"VL_DOCS_PAGE={only}: no page lesson_{only}.html in the site")
        return pages

    def test_4_lesson_pages_in_chromium(self):
        audit = {l["id"]: l for l in self.audit()["lessons"]}
        for page in self.pages():
            with self.subTest(page=page.name):
                d = self.open_page(page, 1400)
                lesson = next((l for l in audit.values()
                               if "lesson_" + re.sub(r"[^A-Za-z0-9]", "_", l["id"]) == page.stem), None)
                # Math: typeset, no MathJax error, no raw TeX or ASCII math left in the prose.
                errors = d.execute_script(
                    "return Array.from(document.querySelectorAll('.MathJax .merror, .MathJax_Error, .mjx-merror, merror'))"
                    ".map(e => e.textContent).concat(Array.from(document.querySelectorAll('.MathJax span'))"
                    ".filter(e => e.style && e.style.color === 'red').map(e => 'red: ' + e.textContent));")
                self.assertEqual(errors, [], f"{page.name}: MathJax errors")
                # No "Typesetting math: N%" box over the text while it typesets (docs/mathjax_config.js).
                self.assertEqual(d.execute_script("return MathJax.Hub.config.messageStyle;"), "none",
                                 f"{page.name}: MathJax shows its progress box")
                # (Program output is shown verbatim as evidence: check details, code, output lines.)
                prose = d.execute_script(
                    "var out = [];"
                    "document.querySelectorAll('div.headertitle, div.caption, div.contents p, div.contents li, div.contents td, div.contents h1, "
                    "div.contents h2, div.contents h3').forEach(function (e) {"
                    "  var c = e.cloneNode(true);"
                    "  c.querySelectorAll('code, pre, .MathJax, .MathJax_Display, .MathJax_Preview, script, .vl-detail, "
                    ".vl-control-why, .vl-why, .vl-check-name, .vl-rule-why')"
                    ".forEach(function (x) { x.remove(); });"
                    "  out.push(c.textContent); });"
                    "return out;")
                raw = [t.strip()[:160] for t in prose
                       if re.search(r"\\[A-Za-z]+|\$\$|\\f[\[$]|\b(?:max|min|[A-Za-z])_[A-Za-z0-9{]|\^[({A-Za-z0-9−-]", t)]
                self.assertEqual(raw, [], f"{page.name}: raw TeX or ASCII math in the text")
                # Output lines: none wraps (tables keep their columns), none scrolls in a box of its own.
                bad = d.execute_script(
                    "return Array.from(document.querySelectorAll('pre.vl-line')).filter(function (p) {"
                    "  var lh = parseFloat(getComputedStyle(p).lineHeight) || 16;"
                    "  var lines = p.textContent.split('\\n').length;"
                    "  return p.scrollWidth > p.clientWidth + 1 || p.clientHeight > lines * lh * 1.5 + 8; })"
                    ".map(p => p.textContent.slice(0, 60));")
                self.assertEqual(bad, [], f"{page.name}: output lines clipped or wrapped")
                # At 1400 px every output comparison fits: no line needs its box scrolled to be read.
                cut = d.execute_script(
                    "return Array.from(document.querySelectorAll('.vl-output .vl-scroll')).filter(function (s) {"
                    "  return s.scrollWidth > s.clientWidth + 1; }).map(s => s.textContent.slice(0, 80));")
                self.assertEqual(cut, [], f"{page.name}: output lines cut at 1400 px")
                if lesson:
                    ok = all(c["status"] == "passed" or (c.get("precision", "float64") != "float64" and
                                                         c["status"] == "not applicable") for c in lesson["claims"]) and \
                        all(li["status"] == "passed" for li in lesson["listings"]) and not lesson["problems"] and \
                        (lesson["claims"] or lesson["listings"])
                    html_text = d.page_source
                    self.assertIn("vl-banner-pass" if ok else "vl-banner-fail", html_text)
                    for claim in lesson["claims"]:
                        self.assertIn(f'id="claim-{re.sub(r"[^A-Za-z0-9-]", "-", claim["id"])}"', html_text)
                    self.assertEqual(len(re.findall(r'class="vl-banner vl-banner-(?:pass|fail)[" ]', html_text)), 1, "the audit's summary must come once")
                # The lesson comes first: its first heading within the first screen on a desktop, and
                # the audit's summary after the lesson's opening (a failing lesson says so first).
                first = self.first_heading(d)
                self.assertLess(first, d.execute_script("return window.innerHeight"), f"{page.name} at 1400 px: the lesson's "
                                "first heading is below the first screen")
                if lesson and ok:
                    banner = d.execute_script("return document.querySelector('.vl-banner').getBoundingClientRect().top + window.scrollY")
                    self.assertGreater(banner, first, f"{page.name}: the verification summary comes before the lesson")
                self.screenshot(page, 1400)
                # 390 px: the navigation tree is gone and the text takes the width (the same load, resized).
                d.set_window_size(PHONE, 1000)
                # MathJax re-lays out on resize: the offsets are read once it has.
                d.execute_async_script("var done = arguments[arguments.length - 1];"
                                       "if (window.MathJax && MathJax.Hub) { MathJax.Hub.Queue(function () { done(true); }); } else { done(false); }")
                self.assertLess(self.first_heading(d), 2 * d.execute_script("return window.innerHeight"),
                                f"{page.name} at {PHONE} px: the lesson's first heading is below the second screen")
                inner = d.execute_script("return window.innerWidth")
                width = d.execute_script("return document.querySelector('div.contents').getBoundingClientRect().width")
                self.assertGreater(width, 0.85 * inner, f"{page.name} at {PHONE} px: text column {width} of {inner} px")
                self.assert_no_sideways_scroll(d, page)
                self.assert_wide_tables_scroll_with_a_cue(d, page)
                self.assert_figures_at_their_drawn_size(d, page)
                self.screenshot(page, PHONE)

    def assert_figures_at_their_drawn_size(self, d, page):
        """At phone width a figure is not scaled down: its text renders at its drawn size (the
        smallest is 7 pt = 9.3 px, test_7), and its box scrolls sideways."""
        drawn = d.execute_script(
            "return Array.from(document.querySelectorAll('div.image object')).map(function (o) {"
            "  return [o.getAttribute('data'), o.getBoundingClientRect().width, getComputedStyle(o.parentElement).overflowX]; });")
        for name, width, overflow in drawn:
            head = (page.parent / name).read_text(encoding="utf-8")[:2000]
            pt = float(re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', head).group(1))
            self.assertGreaterEqual(width, pt * 4 / 3 - 1, f"{page.name} at {PHONE} px: {name} drawn {width:.0f} px wide, "
                                                           f"scaled down from {pt * 4 / 3:.0f} px: its text shrinks with it")
            self.assertEqual(overflow, "auto", f"{page.name}: {name}'s box does not scroll")

    def test_7_figure_text_is_at_least_7_pt(self):
        # Every size docs/plots.py gives text (matplotlib's rc and each call's fontsize/labelsize) is
        # at least 7 pt: 9.3 px at a figure's drawn size, which a phone keeps (test_4).
        src = (SOURCE / "docs" / "plots.py").read_text(encoding="utf-8")
        sizes = [float(x) for x in re.findall(r"(?:fontsize|labelsize|\"(?:font\.size|legend\.fontsize|axes\.titlesize)\")\s*[=:]\s*([\d.]+)", src)]
        self.assertGreater(len(sizes), 5, "no text sizes found in plots.py: the test reads nothing")
        self.assertGreaterEqual(min(sizes), 7, f"a figure's text below 7 pt: {sorted(sizes)[:5]}")

    def test_5_other_pages_fit_a_phone(self):
        if os.environ.get("VL_DOCS_PAGE"):
            self.skipTest("VL_DOCS_PAGE: one lesson page only")
        html = self.out / "html"
        wide_tables = 0
        for name in EXTRA_PAGES:
            with self.subTest(page=name):
                page = html / f"{name}.html"
                self.assertTrue(page.exists(), f"no {page.name} in the site")
                d = self.open_page(page, PHONE)
                self.assert_no_sideways_scroll(d, page)
                wide_tables += self.assert_wide_tables_scroll_with_a_cue(d, page)
                self.screenshot(page, PHONE)
        self.assertGreater(wide_tables, 0, f"no table wider than {PHONE} px on the index, conformance or mutation pages: nothing was checked")

    def assert_wide_tables_scroll_with_a_cue(self, d, page):
        """Every table wider than its box at phone width scrolls in it with its first column pinned
        and the right-edge shadow (lessons.css) as the cue; returns how many there were."""
        # A table is wide when its content is wider than the column it stands in (its own box's
        # scrollWidth, or the table's, against the column's width). The box that scrolls is the
        # table itself or the .vl-scroll around it; the compared output lines (vl-compare) have no
        # first column to pin.
        tables = d.execute_script(
            "var col = document.querySelector('div.contents').clientWidth;"
            "return Array.from(document.querySelectorAll('div.contents table')).filter(function (t) {"
            "  if (t.closest('div.toc, .vl-try')) return false;"
            "  var box = t.closest('.vl-scroll') || t;"
            "  return Math.max(box.scrollWidth, t.scrollWidth) > Math.min(col, box.parentElement.clientWidth) + 1; }).map(function (t) {"
            "  var box = t.closest('.vl-scroll') || t, first = t.querySelector('tbody tr > :first-child');"
            "  var pinned = t.classList.contains('vl-compare') || (first && getComputedStyle(first).position === 'sticky');"
            "  return [t.className, getComputedStyle(box).overflowX, pinned,"
            "          getComputedStyle(box).backgroundImage.indexOf('radial-gradient') >= 0]; });")
        bad = [t for t in tables if t[1] != "auto" or not t[2] or not t[3]]
        self.assertEqual(bad, [], f"{page.name} at {PHONE} px: wide tables without a scroll box, a pinned first column or the cue "
                                  "[class, overflow-x, first cell's position, shadow]")
        return len(tables)

    def first_heading(self, d):
        """The page offset of the lesson's first heading (not the contents box's)."""
        return d.execute_script(
            "var hs = Array.from(document.querySelectorAll('div.textblock h1, div.textblock h2')).filter(h => !h.closest('div.toc'));"
            "return hs.length ? hs[0].getBoundingClientRect().top + window.scrollY : 1e9;")

    def assert_no_sideways_scroll(self, d, page):
        """Neither the document nor Doxygen's text scroller is wider than the window."""
        wide = d.execute_script(
            "var inner = window.innerWidth, out = [];"
            "[document.scrollingElement, document.getElementById('doc-content')].forEach(function (e) {"
            "  if (e && e.scrollWidth > inner + 1) out.push((e.id || 'document') + ' ' + e.scrollWidth); });"
            "if (out.length) {"  # name the widest element that sticks out, for the message
            "  var worst = null;"
            "  document.querySelectorAll('div.contents *').forEach(function (x) {"
            "    for (var p = x.parentElement; p && !p.matches('div.contents'); p = p.parentElement)"
            "      if (getComputedStyle(p).overflowX !== 'visible') return;"  # inside a box that scrolls on its own
            "    var r = x.getBoundingClientRect(); if (r.right > inner + 1 && (!worst || r.right > worst[0])) worst = [r.right, x]; });"
            "  if (worst) out.push('widest: <' + worst[1].tagName.toLowerCase() + ' class=\"' + worst[1].className + '\"> ' +"
            "                      (worst[1].textContent || '').trim().slice(0, 80));"
            "}"
            "return out;")
        self.assertEqual(wide, [], f"{page.name} at {PHONE} px scrolls sideways (window {PHONE} px)")


PHONE = 390  # px: a phone's width in CSS pixels



if __name__ == "__main__":
    unittest.main(verbosity=2)
