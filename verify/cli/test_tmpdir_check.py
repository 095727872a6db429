"""verify/test_tmpdir.py, ctest's own temporary folder: made fresh, and its check fails, naming
what was left, when a test leaves something there (the check ctest_tmpdir_check relies on); it
removes only what it made."""
import os
import stat
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "test_tmpdir.py")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=60)


class TestTmpdir(unittest.TestCase):
    def setUp(self):
        self.here = self.enterContext(tempfile.TemporaryDirectory(prefix="vl-tmpdir-check-"))
        self.link = os.path.join(self.here, "test-tmp")
        self.addCleanup(run, "check", self.link)  # the folder make puts in /dev/shm, should a case fail

    def test_empty_passes_and_is_removed(self):
        self.assertEqual(run("make", self.link).returncode, 0)
        folder = os.path.realpath(self.link)
        self.assertEqual(os.listdir(folder), [])
        r = run("check", self.link)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.lexists(self.link) or os.path.exists(folder))

    def test_leftovers_fail_by_name_and_are_removed_read_only_ones_too(self):
        run("make", self.link)
        folder = os.path.realpath(self.link)
        left = os.path.join(self.link, "vl_eval_abc123")
        os.mkdir(left)
        open(os.path.join(left, "q.npy"), "w").close()
        os.chmod(left, stat.S_IRUSR | stat.S_IXUSR)  # as an ONNX case's read-only copy
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
        self.assertEqual(run("make", self.link).returncode, 0)
        self.assertFalse(os.path.exists(old))
        self.assertEqual(os.listdir(self.link), [])

    def test_no_folder_is_an_error(self):
        r = run("check", self.link)
        self.assertEqual(r.returncode, 1)
        self.assertIn("not there", r.stderr)

    def test_a_folder_it_did_not_make_is_never_removed(self):
        foreign = os.path.join(self.here, "mine")
        os.mkdir(foreign)
        open(os.path.join(foreign, "keep"), "w").close()
        os.symlink(foreign, self.link)  # a link to someone's folder
        for verb in ("make", "check"):
            r = run(verb, self.link)
            self.assertEqual(r.returncode, 1, verb)
            self.assertIn("not a folder this script made", r.stderr)
            self.assertTrue(os.path.exists(os.path.join(foreign, "keep")), verb)
        os.unlink(self.link)
        os.mkdir(self.link)  # a plain folder where the link goes
        open(os.path.join(self.link, "keep"), "w").close()
        r = run("make", self.link)
        self.assertEqual(r.returncode, 1)
        self.assertIn("is not a link made by this script", r.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.link, "keep")))
        os.remove(os.path.join(self.link, "keep"))
        os.rmdir(self.link)

    def test_a_removed_folder_is_named(self):
        run("make", self.link)
        os.rmdir(os.path.realpath(self.link))  # a test removed its TMPDIR
        r = run("check", self.link)
        self.assertEqual(r.returncode, 1)
        self.assertIn("names no folder", r.stderr)
        self.assertFalse(os.path.lexists(self.link))


if __name__ == "__main__":
    unittest.main()
