#!/usr/bin/python3
"""Every browser check of the docs site, in one process and one headless Chromium: the site as a
whole and its "try it" panels (test_docs_site.py), each written page at 1400 and 390 px
(test_docs_pages.py), and the conformance page (verify/candidates/test_conformance_page.py).
ctest docs_browser runs it on the site that test docs_site built:

    VL_DOCS_BUILD=build LESSONS=build/bin/lessons /usr/bin/python3 verify/docs/test_docs_browser.py

Each of the three still runs on its own (VL_DOCS_PAGE=masking narrows the pages to one lesson's).
"""
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "candidates"), str(HERE.parent / "cli")]
import test_conformance_page  # noqa: E402
import test_docs_pages  # noqa: E402
import test_docs_site  # noqa: E402

if __name__ == "__main__":
    loader = unittest.TestLoader()
    suite = unittest.TestSuite(loader.loadTestsFromModule(m) for m in (test_docs_site, test_docs_pages, test_conformance_page))
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)
