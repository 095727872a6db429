#!/usr/bin/python3
"""The conformance matrix page of the docs site (docs/conformance_page.py), in headless Chromium:
it was built from this build's audits (its columns are plain, fused, the NumPy and the torch
adapters; its cells agree with the JSONs it was built from), it shows torch's NaN at a query with
no visible key as a FAIL with the reason in words, and it says what ran (commit, commands,
versions). Read from the site test docs_site built:

    VL_DOCS_BUILD=build /usr/bin/python3 verify/candidates/test_conformance_page.py
"""
import json
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from test_docs import SiteHelpers  # noqa: E402  (verify/cli/test_docs.py)


class ConformancePage(SiteHelpers, unittest.TestCase):
    def page(self):
        pages = [p for p in (self.out / "html").glob("*.html") if "conformance" in p.name and "_8md" not in p.name]
        self.assertEqual(len(pages), 1, f"one conformance page expected, found {[p.name for p in pages]}")
        return pages[0]

    def test_page_shows_this_builds_audits(self):
        from selenium.webdriver.common.by import By
        d = self.open_page(self.page())
        # Every table's cells as the browser renders them, read in one call (a WebDriver round trip
        # per cell would cost a thousand).
        tables = d.execute_script(
            "return Array.from(document.querySelectorAll('table.markdownTable')).map(t => Array.from(t.rows)"
            ".map(r => Array.from(r.cells).map(c => c.innerText.trim())));")
        self.assertGreaterEqual(len(tables), 2, "the claims table and the listings table")
        header = tables[0][0]
        self.assertEqual(header[:3], ["claim", "tolerance", "plain"], header)
        self.assertEqual(header[3], "fused")
        self.assertEqual(header[4], "numpy-reference")
        self.assertTrue(header[5].startswith("torch"), header)
        rows = {cells[0]: cells for cells in tables[0][1:]}
        # Each cell is the verdict of the audit JSON the page was built from.
        verdict = {"passed": "PASS", "failed": "FAIL", "not applicable": "N/A"}
        for i, name in enumerate(["plain", "fused", "numpy", "torch"]):
            r = json.loads((self.out / "conformance" / f"audit-{name}.json").read_text()) if name != "plain" \
                else json.loads((self.out / "audit.json").read_text())
            for lesson in r["lessons"]:
                for c in lesson["claims"]:
                    if c["subject"] == "our-code":
                        continue
                    self.assertIn(c["id"], rows, f"{c['id']} missing from the page")
                    # float64 in the implementation's own column; another precision in "NAME [precision]"
                    p = c.get("precision", "float64")
                    col = 2 + i if p == "float64" else header.index(f"{header[2 + i]} [{p}]")
                    self.assertTrue(rows[c["id"]][col].startswith(verdict.get(c["status"], "?")),
                                    f"{c['id']} for {name} in {p}: page says {rows[c['id']][col]!r}, the audit {c['status']}")
        for name in ("plain [float32]", "plain [bfloat16]", "plain [float16]", "numpy-reference [float16]"):
            self.assertIn(name, header)  # every precision the implementation computes in, a column each
        self.assertTrue(rows["masking.mha-fully-masked-row"][5].startswith("FAIL"), rows["masking.mha-fully-masked-row"])
        self.assertTrue(rows["masking.mha-fully-masked-row"][4].startswith("PASS"), rows["masking.mha-fully-masked-row"])
        listings = {cells[0]: cells for cells in tables[1][1:]}
        self.assertEqual(listings["masking.main"][3], "PASS", listings["masking.main"])  # the NumPy adapter's listing
        text = d.find_element(By.TAG_NAME, "body").text
        self.assertIn("NaN", text.split("Where an implementation departs from the lesson")[1])
        ran = text.split("What ran")[1]
        for word in ("commit", "numpy_reference.py", "torch_reference.py", "NumPy", "torch"):
            self.assertIn(word, ran)
        self.screenshot(self.page(), 1400)

    def test_phone_width_cuts_nothing(self):
        # At 390 px the page's prose and the commands under "What ran" (long paths) wrap, the
        # matrix tables scroll in their own boxes: the page itself never scrolls sideways, and no
        # inline code runs past the text column.
        d = self.open_page(self.page(), 390)
        wide = d.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth;")
        self.assertLessEqual(wide, 1, f"the page scrolls sideways by {wide} px at 390 px")
        cut = d.execute_script(
            "var col = document.querySelector('div.contents').getBoundingClientRect().right;"
            "return Array.from(document.querySelectorAll('div.textblock p code, div.textblock li code'))"
            ".filter(c => c.getBoundingClientRect().right > col + 1).map(c => c.textContent.slice(0, 60));")
        self.assertEqual(cut, [], "inline code past the text column at 390 px")
        self.screenshot(self.page(), 390)


if __name__ == "__main__":
    unittest.main()
