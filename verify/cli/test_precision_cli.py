"""`lessons audit --dtype`: the claims about the computation judged in float32, as a user runs it.

On our plain and fused backends, every attention and masking claim that states a float32
tolerance (or holds bit for bit) passes in float32 with every negative control rejected; one that
states none is reported untested, naming the line to write; a claim that cannot hold there is
N/A with its reason; the JSON and JUnit carry the precision; a bad --dtype is refused.
Run by ctest with LESSONS=<binary> and VL_SOURCE_DIR=<checkout>; /usr/bin/python3.
"""
import json
import os
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET

LESSONS = os.environ["LESSONS"]
SOURCE = os.environ["VL_SOURCE_DIR"]


def audit(*args):
    return subprocess.run([LESSONS, "audit", "--root", SOURCE, *args], capture_output=True, text=True, timeout=600)


class Float32(unittest.TestCase):
    def judged(self, backend, minimum):
        with tempfile.TemporaryDirectory() as d:
            j, x = os.path.join(d, "a.json"), os.path.join(d, "a.xml")
            r = audit("attention", "masking", "--dtype", "float32", "--backend", backend, "--json", j, "--junit", x)
            with open(j) as f:
                report = json.load(f)
            junit = ET.parse(x).getroot()
        claims = [c for lesson in report["lessons"] for c in lesson["claims"]]
        self.assertTrue(claims)
        self.assertEqual({c["precision"] for c in claims}, {"float32"})
        self.assertEqual([l for lesson in report["lessons"] for l in lesson["listings"]], [])  # float64 facts
        passed = [c for c in claims if c["status"] == "passed"]
        for c in claims:
            with self.subTest(claim=c["id"]):
                self.assertIn(c["status"], ("passed", "not applicable", "untested"), c["why"])
                if c["status"] == "untested":
                    self.assertIn("tolerance-float32", c["why"])
                for ch in c["checks"]:
                    for ctl in ch["controls"]:
                        self.assertTrue(ctl["rejected"], f"{c['id']} [float32]: control {ctl['name']} not rejected")
        self.assertGreaterEqual(len(passed), minimum, [c["id"] for c in passed])
        self.assertIn("[float32]", r.stdout)
        self.assertTrue(any(tc.get("name", "").endswith("[float32]") for tc in junit.iter("testcase")))
        return {c["id"]: c for c in claims}

    def test_plain(self):
        claims = self.judged("plain", 11)
        self.assertEqual(claims["attention.convex-combination"]["tolerance"], "1.1e-6")
        self.assertEqual(claims["masking.float16-bound"]["status"], "not applicable")
        self.assertIn("a claim about float16 already", claims["masking.float16-bound"]["why"])
        # No float32 multi-head attention in the backend interface: not applicable, and said.
        self.assertIn("no multi-head-attention in float32", claims["masking.mha-fully-masked-row"]["why"])

    def test_fused(self):
        claims = self.judged("fused", 9)
        self.assertEqual(claims["masking.masked-weights-zero"]["status"], "passed")  # through its outputs, in float32

    def test_float64_and_float32_side_by_side(self):
        r = audit("masking.first-position-self", "--dtype", "float64", "float32")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("PASS    claim masking.first-position-self   ", r.stdout)
        self.assertIn("PASS    claim masking.first-position-self [float32]", r.stdout)
        self.assertIn("\n2 passed, 0 failed\n", r.stdout)

    def test_bad_dtype(self):
        r = audit("attention", "--dtype", "float8")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--dtype float8: not a precision (float64, float32, bfloat16, float16)", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
