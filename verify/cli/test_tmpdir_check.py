"""verify/test_tmpdir.py, ctest's own temporary folder: made fresh, and its check fails, naming
what was left, when a test leaves something there (the check ctest_tmpdir_check relies on)."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "test_tmpdir.py")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=60)


class TestTmpdir(unittest.TestCase):
    def setUp(self):
        self.link = os.path.join(self.enterContext(tempfile.TemporaryDirectory(prefix="vl-tmpdir-check-")), "test-tmp")

    def test_empty_passes_and_is_removed(self):
        self.assertEqual(run("make", self.link).returncode, 0)
        folder = os.path.realpath(self.link)
        self.assertEqual(os.listdir(folder), [])
        r = run("check", self.link)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.lexists(self.link) or os.path.exists(folder))

    def test_leftovers_fail_by_name_and_are_removed(self):
        run("make", self.link)
        folder = os.path.realpath(self.link)
        os.mkdir(os.path.join(self.link, "vl_eval_abc123"))
        open(os.path.join(self.link, ".ses"), "w").close()
        r = run("check", self.link)
        self.assertEqual(r.returncode, 1)
        self.assertIn("left 2 thing(s)", r.stderr)
        self.assertIn(".ses, vl_eval_abc123", r.stderr)
        self.assertFalse(os.path.lexists(self.link) or os.path.exists(folder))

    def test_make_starts_afresh_after_a_stopped_run(self):
        run("make", self.link)
        old = os.path.realpath(self.link)
        open(os.path.join(self.link, "left-by-a-stopped-run"), "w").close()
        run("make", self.link)
        self.assertFalse(os.path.exists(old))
        self.assertEqual(os.listdir(self.link), [])
        run("check", self.link)

    def test_no_folder_is_an_error(self):
        r = run("check", self.link)
        self.assertEqual(r.returncode, 1)
        self.assertIn("not there", r.stderr)


if __name__ == "__main__":
    unittest.main()
