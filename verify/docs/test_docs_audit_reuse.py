#!/usr/bin/python3
"""docs/build_docs.py --audit-json reuses an audit JSON only when it is this build's: the one
audit_all has just written is taken; the same report with another commit, another backend,
another root, written before the binary was linked, or not an audit at all, is refused (and the
docs build then runs the audit itself).

    VL_AUDIT_JSON_FRESH=build/audit-all.json LESSONS=build/bin/lessons VL_SOURCE_DIR=. \
        /usr/bin/python3 verify/docs/test_docs_audit_reuse.py
"""
import json
import os
import sys
import tempfile
import unittest
from pathlib import Path

SOURCE = Path(os.environ.get("VL_SOURCE_DIR", Path(__file__).resolve().parents[2])).resolve()
sys.path.insert(0, str(SOURCE / "docs"))
import build_docs  # noqa: E402


class AuditReuse(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        fresh = os.environ.get("VL_AUDIT_JSON_FRESH")
        if not fresh or not Path(fresh).is_file():
            raise unittest.SkipTest("VL_AUDIT_JSON_FRESH: no audit JSON from audit_all (ctest fixture audit_all_json)")
        cls.fresh, cls.lessons = Path(fresh), os.environ["LESSONS"]
        cls.report = json.loads(cls.fresh.read_text(encoding="utf-8"))
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def verdict(self, report=None, text=None, mtime=None):
        path = Path(self.tmp.name) / "audit.json"
        path.write_text(text if text is not None else json.dumps(report), encoding="utf-8")
        if mtime is not None:
            os.utime(path, (mtime, mtime))
        return build_docs.audit_of_this_build(path, self.lessons, SOURCE)

    def changed(self, **provenance):
        report = json.loads(json.dumps(self.report))
        report["provenance"].update(provenance)
        return report

    def test_audit_all_json_is_reused(self):
        self.assertIsNone(build_docs.audit_of_this_build(self.fresh, self.lessons, SOURCE))

    def test_another_commit_is_refused(self):
        self.assertIn("commit", self.verdict(self.changed(commit="0123456789ab")))

    def test_another_backend_is_refused(self):
        self.assertIn("backend", self.verdict(self.changed(backend="fused (the kernels `lessons eval` runs)")))

    def test_another_root_is_refused(self):
        report = dict(self.report, root="/elsewhere")
        self.assertIn("/elsewhere", self.verdict(report))

    def test_older_than_the_binary_is_refused(self):
        old = os.stat(self.lessons).st_mtime - 60
        self.assertIn("changed after", self.verdict(self.report, mtime=old))

    def test_not_an_audit_is_refused(self):
        self.assertIn("not an audit JSON", self.verdict(text="{truncated"))
        self.assertIn("not an audit JSON", self.verdict({"provenance": {}}))
        self.assertEqual(build_docs.audit_of_this_build(Path(self.tmp.name) / "absent.json", self.lessons, SOURCE),
                         "no such file")


if __name__ == "__main__":
    unittest.main(verbosity=2)
