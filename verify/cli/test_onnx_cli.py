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
NODE_CASES = os.path.join(ROOT, "..", "shared", "external", "onnx-node-attention")


def lessons(*args, env=None):
    return subprocess.run([LESSONS, *map(str, args)], capture_output=True, text=True, timeout=300, env=env)


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
        # A case whose Q is int32 (its raw bytes reread as int32) is skipped with the reason.
        with tempfile.TemporaryDirectory() as tmp:
            case = os.path.join(tmp, "case_int32")
            writable_copy(os.path.join(CASES, "test_attention_4d"), case)
            path = os.path.join(case, "test_data_set_0", "input_0.pb")
            with open(path, "rb") as f:
                data = bytearray(f.read())
            # data_type is field 2 (tag 0x10) = 1 (float); make it 6 (int32): same 4-byte items
            i = data.index(b"\x10\x01")
            data[i + 1] = 6
            with open(path, "wb") as f:
                f.write(data)
            r = lessons("onnx", case)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("SKIP case_int32: int32 inputs", r.stdout)
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
class NodeCases(unittest.TestCase):
    """The 101 cases of opsets 23-27: every Attention case passes, each output compared."""

    def test_all_101_pass_nothing_unchecked(self):
        r = lessons("onnx", NODE_CASES)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(lines[-1], "101 passed, 0 failed")
        self.assertEqual(len(lines), 102)
        self.assertNotIn("not compared", r.stdout)
        for line in lines[:-1]:
            self.assertRegex(line, r"^PASS test_(linear_)?attention_\S+ \(max abs err [0-9.e+-]+\)$")
        self.assertEqual(sum(line.startswith("PASS test_linear_attention_") for line in lines), 14)

    def test_the_fused_backend_faces_the_101_cases(self):
        # The same translation of each node, computed by the fused kernels: a case passes, or is
        # skipped naming what the backend lacks (the scores, storage rounding); none fails and
        # none passes with an output uncompared. The 14 LinearAttention cases pass since the
        # fused backend has the linear family (its chunked form the fast kernel's).
        r = lessons("onnx", NODE_CASES, "--backend", "fused")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 102)
        self.assertEqual(lines[-1], "79 passed, 0 failed, 22 skipped")
        self.assertEqual(sum(line.startswith("PASS test_linear_attention_") for line in lines), 14)
        for line in lines[:-1]:
            self.assertRegex(line, r"^(PASS test_(linear_)?attention_\S+ \(max abs err [0-9.e+-]+\)|SKIP test_attention_\S+: .*)$")
        skips = [line for line in lines[:-1] if not line.startswith("PASS ")]
        self.assertEqual(len(skips), 22)
        for line in skips:
            self.assertRegex(line, r"^SKIP test_attention_\S+: backend 'fused' has no (attention-scores|attention-storage-rounding)")
        old = lessons("onnx", CASES, "--backend", "fused")
        self.assertEqual(old.returncode, 0, old.stdout + old.stderr)
        self.assertEqual(old.stdout.splitlines()[-1], "41 passed, 0 failed")

    def test_a_candidate_faces_the_101_cases(self):
        # ONNX's cases through an external implementation (vl-candidate/1): float32 cases in float32;
        # what the protocol or its hello lacks (the float16 reference's storage rounding, a window,
        # the linear family) is a SKIP naming it, never a PASS. ONNX Runtime's two FAILs are its
        # lowest float where ONNX's reference has −∞ in the mode-2 scores its is_causal hides.
        # ONNX Runtime keeps a session-id file (.ses) in its temporary folder: one of this test's.
        tmp = self.enterContext(tempfile.TemporaryDirectory(prefix="vl-onnx-ort-"))
        ort = lessons("onnx", NODE_CASES, "--candidate", f"node {os.path.join(ROOT, 'adapters', 'onnxruntime', 'adapter.js')}",
                      env=dict(os.environ, TMPDIR=tmp))
        self.assertEqual(ort.returncode, 1, ort.stdout + ort.stderr)
        lines = ort.stdout.splitlines()
        # 73 requests: the 28 skipped cases are refused before a request is written, and not counted as sent.
        self.assertEqual(lines[-2:], ["71 passed, 2 failed, 28 skipped", "-- candidate: 73 requests sent; stopped"])
        fails = [line for line in lines if line.startswith("FAIL ")]
        self.assertEqual([f.split(":")[0] for f in fails],
                         [f"FAIL test_attention_4d_with_past_and_present_qk_matmul_bias_{m}_mask_causal" for m in ("3d", "4d")])
        for f in fails:
            self.assertIn("output 3 (qk_matmul_output): max abs err inf", f)
            self.assertIn("(got -3.40282347e+38, expected -inf)", f)
        for line in lines[:-2]:
            self.assertRegex(line, r"^(PASS test_\S+ \(max abs err [0-9.e+-]+\)|SKIP test_\S+: .*(vl-candidate/1|its hello lists no)|FAIL )")
        numpy_adapter = lessons("onnx", NODE_CASES, "--candidate", f"/usr/bin/python3 {os.path.join(ROOT, 'adapters', 'numpy_reference.py')}")
        self.assertEqual(numpy_adapter.returncode, 0, numpy_adapter.stdout + numpy_adapter.stderr)
        self.assertEqual(numpy_adapter.stdout.splitlines()[-2], "96 passed, 0 failed, 5 skipped")
        both = lessons("onnx", NODE_CASES, "--backend", "fused", "--candidate", "true")
        self.assertEqual(both.returncode, 2)
        self.assertIn("--candidate and --backend: run one implementation at a time", both.stderr)

    def test_a_kv_cache_goes_as_past_and_present(self):
        # A candidate that lists "past_kv" (not "first_query") gets ONNX's cache cases as a cache:
        # past_key/past_value in, present_key/present_value back, which must be the past followed by
        # the new keys; one that returns another present is an error on exactly those cases.
        with tempfile.TemporaryDirectory() as tmp:
            adapter = os.path.join(tmp, "past_kv.py")
            with open(adapter, "w") as f:
                f.write(f"""import os, sys
import numpy as np
sys.path.insert(0, {os.path.join(ROOT, 'adapters')!r})
import numpy_reference as ref
from vl_candidate import serve

def attention(inputs, attrs, wanted):
    inputs, attrs = dict(inputs), dict(attrs)
    if "past_key" in inputs:  # the cache, then the new keys; query i at the past's length + i
        attrs["first_query"] = inputs["past_key"].shape[2]
        inputs["k"] = np.concatenate([inputs.pop("past_key"), inputs["k"]], axis=2)
        inputs["v"] = np.concatenate([inputs.pop("past_value"), inputs["v"]], axis=2)
    out = ref.attention(inputs, attrs, wanted)
    out["present_key"], out["present_value"] = inputs["k"].copy(), inputs["v"]
    if os.environ.get("VL_WRONG_PRESENT"):
        out["present_key"][..., -1, 0] += 1
    return out

serve("past-kv", {{"attention": attention}}, attrs=["past_kv"], dtypes=["float32"])
""")
            run = lambda env: subprocess.run([LESSONS, "onnx", NODE_CASES, "--candidate", f"/usr/bin/python3 {adapter}"],
                                             capture_output=True, text=True, timeout=300, env=dict(os.environ, **env))
            right, wrong = run({}), run({"VL_WRONG_PRESENT": "1"})
            self.assertEqual(right.returncode, 0, right.stdout + right.stderr)
            cached = [line.split()[1] for line in right.stdout.splitlines() if line.startswith("PASS ") and "with_past" in line]
            self.assertEqual(len(cached), 10, right.stdout)  # the float32 cache cases without a window or a score stage other than 3
            by_name = {line.split()[1].rstrip(":"): line for line in wrong.stdout.splitlines() if line.startswith(("PASS", "FAIL", "SKIP"))}
            for name in cached:
                self.assertTrue(by_name[name].startswith("FAIL "), by_name[name])
                self.assertIn("output 'present_key' is not past_key followed by k", by_name[name])
            self.assertEqual(sum(line.startswith("FAIL ") for line in by_name.values()), 10)
            self.assertEqual(wrong.returncode, 1)

    def test_an_unknown_backend_is_refused(self):
        r = lessons("onnx", NODE_CASES, "--backend", "nope")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--backend nope: no such backend (there are: plain, fused", r.stderr)
        self.assertEqual(r.stdout, "")

    def test_linear_attention_verbose_names_both_outputs(self):
        r = lessons("onnx", "-v", os.path.join(NODE_CASES, "test_linear_attention_fp16"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("computed in float64 (chunked form, chunk_size 64)", r.stdout)
        self.assertIn("output 0 (output) float16", r.stdout)
        self.assertIn("output 1 (present_state) float16", r.stdout)

    def test_verbose_shows_precision_and_tolerances(self):
        r = lessons("onnx", "-v", os.path.join(NODE_CASES, "test_attention_4d_gqa_with_past_and_present_fp16"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        out = r.stdout
        self.assertIn("computed in float16 emulated in float64", out)
        for slot, name in [(0, "Y"), (1, "present_key"), (2, "present_value")]:
            self.assertRegex(out, rf"output {slot} \({name}\) float16 \(2, \d+, \d+, 8\): max abs err \S+, max rel err \S+; "
                                  r"tolerance rtol 0\.000977, atol \S+ \(float16: rtol 2u, atol 2u.max\|expected\|, u = 2\^-11\)")
        r = lessons("onnx", "--verbose", os.path.join(NODE_CASES, "test_attention_4d_with_qk_matmul_softcap"))
        self.assertIn("output 3 (qk_matmul_output) float (2, 3, 4, 6): max abs err", r.stdout)
        self.assertIn("tolerance rtol 0.001, atol 1e-07", r.stdout)

    def test_altered_float16_output_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            case = os.path.join(tmp, "test_attention_4d_fp16")
            writable_copy(os.path.join(NODE_CASES, "test_attention_4d_fp16"), case)
            path = os.path.join(case, "test_data_set_0", "output_0.pb")
            with open(path, "rb") as f:
                data = bytearray(f.read())
            data[-1] ^= 0x40  # the last element's exponent (raw_data is the file's last field)
            with open(path, "wb") as f:
                f.write(data)
            r = lessons("onnx", case)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"^FAIL test_attention_4d_fp16: output 0 \(Y\): max abs err \S+ at index \(1, 2, 3, 7\)")
        self.assertEqual(r.stdout.splitlines()[-1], "0 passed, 1 failed")

    def test_uncomputable_output_skips_not_passes(self):
        # qk_matmul_output_mode 2 -> 7 (no such mode): the case is SKIP, and not counted as passed.
        with tempfile.TemporaryDirectory() as tmp:
            case = os.path.join(tmp, "test_attention_4d_with_qk_matmul_bias")
            writable_copy(os.path.join(NODE_CASES, "test_attention_4d_with_qk_matmul_bias"), case)
            path = os.path.join(case, "model.onnx")
            with open(path, "rb") as f:
                data = bytearray(f.read())
            i = data.index(b"qk_matmul_output_mode")
            j = data.index(b"\x18\x02", i)
            data[j + 1] = 7
            with open(path, "wb") as f:
                f.write(data)
            r = lessons("onnx", case)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout.splitlines(), [
            "SKIP test_attention_4d_with_qk_matmul_bias: output 3 (qk_matmul_output) not computed: "
            "qk_matmul_output_mode 7 is not one of ONNX's modes 0-3",
            "0 passed, 0 failed, 1 skipped"])


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
