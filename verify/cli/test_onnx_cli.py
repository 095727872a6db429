"""`lessons onnx DIR` and `lessons compare A.npy B.npy`, driven as a user drives them.

Run by ctest (cli_test_onnx_cli) with LESSONS = path to the lessons binary and VL_SOURCE_DIR =
the checkout, using Debian's /usr/bin/python3 and its NumPy.
"""
import os
import re
import shutil
import stat
import subprocess
import tempfile
import unittest

import numpy as np

LESSONS = os.environ.get("LESSONS")
ROOT = os.environ.get("VL_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = os.path.join(ROOT, "..", "shared", "external", "onnx-attention")


def lessons(*args):
    return subprocess.run([LESSONS, *map(str, args)], capture_output=True, text=True, timeout=300)


def writable_copy(src, dst):
    shutil.copytree(src, dst)
    for d, _, files in os.walk(dst):
        os.chmod(d, stat.S_IRWXU)
        for f in files:
            os.chmod(os.path.join(d, f), stat.S_IRUSR | stat.S_IWUSR)


@unittest.skipUnless(LESSONS, "set LESSONS to the lessons binary (ctest does)")
class Onnx(unittest.TestCase):
    def test_all_cases_pass(self):
        r = lessons("onnx", CASES)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(lines[-1], "41 passed, 0 failed")
        self.assertEqual(len(lines), 42)
        for line in lines[:-1]:
            self.assertRegex(line, r"^PASS test_attention_\S+ \(max abs err [0-9.e+-]+\)$")

    def test_one_case_folder(self):
        r = lessons("onnx", os.path.join(CASES, "test_attention_3d_gqa_causal"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(), [r.stdout.splitlines()[0], "1 passed, 0 failed"])
        self.assertTrue(r.stdout.startswith("PASS test_attention_3d_gqa_causal (max abs err "))

    def test_wrong_expectation_fails_with_index(self):
        # test_attention_4d and _causal share inputs; swap in the non-causal answer.
        with tempfile.TemporaryDirectory() as tmp:
            case = os.path.join(tmp, "test_attention_4d_causal")
            writable_copy(os.path.join(CASES, "test_attention_4d_causal"), case)
            shutil.copyfile(os.path.join(CASES, "test_attention_4d", "test_data_set_0", "output_0.pb"),
                            os.path.join(case, "test_data_set_0", "output_0.pb"))
            writable_copy(os.path.join(CASES, "test_attention_4d"), os.path.join(tmp, "test_attention_4d"))
            r = lessons("onnx", tmp)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        lines = r.stdout.splitlines()
        self.assertRegex(lines[1], r"^FAIL test_attention_4d_causal: output 0 \(Y\): max abs err \S+ at index \(\d+, \d+, \d+, \d+\)")
        self.assertEqual(lines[-1], "1 passed, 1 failed")

    def test_unsupported_case_is_skipped(self):
        # A case whose Q is float16 (the converted input) is skipped with the reason.
        with tempfile.TemporaryDirectory() as tmp:
            case = os.path.join(tmp, "case_fp16")
            writable_copy(os.path.join(CASES, "test_attention_4d"), case)
            path = os.path.join(case, "test_data_set_0", "input_0.pb")
            with open(path, "rb") as f:
                data = bytearray(f.read())
            # data_type is field 2 (tag 0x10) = 1 (float); make it 10 (float16) with half the raw bytes
            i = data.index(b"\x10\x01")
            data[i + 1] = 10
            j = data.index(b"\x4a")  # raw_data, length 768 as a 2-byte varint
            n = 384
            data = data[:j] + bytes([0x4a, 0x80 | (n & 0x7F), n >> 7]) + data[j + 3:j + 3 + n]
            with open(path, "wb") as f:
                f.write(data)
            r = lessons("onnx", case)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("SKIP case_fp16: float16 inputs", r.stdout)
        self.assertEqual(r.stdout.splitlines()[-1], "0 passed, 0 failed, 1 skipped")

    def test_missing_dir_and_no_case(self):
        r = lessons("onnx", os.path.join(CASES, "no_such_case"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("no_such_case: no such directory", r.stderr)
        with tempfile.TemporaryDirectory() as tmp:
            r = lessons("onnx", tmp)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no ONNX test case here", r.stderr)

    def test_corrupt_case_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            case = os.path.join(tmp, "test_attention_4d")
            writable_copy(os.path.join(CASES, "test_attention_4d"), case)
            with open(os.path.join(case, "model.onnx"), "r+b") as f:
                f.truncate(30)
            r = lessons("onnx", case)
        self.assertEqual(r.returncode, 1)
        self.assertRegex(r.stdout, r"FAIL test_attention_4d: error: .*model.onnx: corrupt protobuf at byte \d+: truncated")


@unittest.skipUnless(LESSONS, "set LESSONS to the lessons binary (ctest does)")
class Compare(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def save(self, name, a):
        path = os.path.join(self.dir, name)
        np.save(path, a)
        return path

    def test_equal_arrays_match(self):
        a = self.save("a.npy", np.arange(6.0).reshape(2, 3))
        r = lessons("compare", a, a)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("max abs error: 0", r.stdout)
        self.assertIn("verdict:       MATCH", r.stdout)

    def test_mismatch_names_the_worst_index(self):
        e = np.zeros((2, 3, 4))
        a = e.copy()
        a[1, 2, 3] = 0.5
        a[0, 1, 1] = 0.25
        r = lessons("compare", self.save("a.npy", a), self.save("e.npy", e))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("max abs error: 0.5", r.stdout)
        self.assertIn("worst index:   (1, 2, 3)", r.stdout)
        self.assertIn("MISMATCH: 2 of 24 elements", r.stdout)

    def test_tolerances(self):
        e = np.array([1.0, 100.0])
        a = e * (1 + 1e-4)
        pa, pe = self.save("a.npy", a), self.save("e.npy", e)
        self.assertEqual(lessons("compare", pa, pe).returncode, 1)
        r = lessons("compare", pa, pe, "--rtol", "1e-3")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertRegex(r.stdout, r"max rel error: 0\.0001")
        self.assertEqual(lessons("compare", pa, pe, "--atol", "0.02").returncode, 0)
        self.assertEqual(lessons("compare", pa, pe, "--atol", "0.001").returncode, 1)

    def test_float32_against_float64(self):
        e = np.array([0.1, 0.2, 0.3])
        pa, pe = self.save("a.npy", e.astype(np.float32)), self.save("e.npy", e)
        # float32 rounding is ~6e-8 relative: within the default rtol 1e-7, not within 1e-9
        self.assertEqual(lessons("compare", pa, pe).returncode, 0)
        r = lessons("compare", pa, pe, "--rtol", "1e-9")
        self.assertEqual(r.returncode, 1)
        self.assertIn("(float32 vs float64)", r.stdout)

    def test_nan_matches_only_nan(self):
        pa = self.save("a.npy", np.array([np.nan, 1.0]))
        self.assertEqual(lessons("compare", pa, pa).returncode, 0)
        pb = self.save("b.npy", np.array([0.0, 1.0]))
        self.assertEqual(lessons("compare", pa, pb).returncode, 1)

    def test_shape_mismatch_is_an_error(self):
        r = lessons("compare", self.save("a.npy", np.zeros((2, 3))), self.save("b.npy", np.zeros((3, 2))))
        self.assertEqual(r.returncode, 2)
        self.assertIn("has shape (2, 3) but", r.stderr)
        self.assertIn("cannot compare", r.stderr)

    def test_bad_files_are_errors(self):
        good = self.save("a.npy", np.zeros(2))
        r = lessons("compare", good, os.path.join(self.dir, "missing.npy"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.npy: no such file", r.stderr)
        bad = os.path.join(self.dir, "bad.npy")
        with open(bad, "wb") as f:
            f.write(b"not numpy")
        r = lessons("compare", bad, good)
        self.assertEqual(r.returncode, 2)
        self.assertIn("bad.npy: not a .npy file", r.stderr)
        r = lessons("compare", good)
        self.assertNotEqual(r.returncode, 0)  # CLI11: B is required


if __name__ == "__main__":
    unittest.main()
