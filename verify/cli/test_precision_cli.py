"""`lessons audit --dtype`: the claims about the computation judged in float32, bfloat16 and float16, as a user runs it.

On our plain and fused backends, every attention and masking claim that states a float32
tolerance (or holds bit for bit) passes in float32 with every negative control rejected; one that
states none is reported untested, naming the line to write; a claim that cannot hold there is
N/A with its reason; the JSON and JUnit carry the precision; a bad --dtype is refused.
Run by ctest with LESSONS=<binary> and VL_SOURCE_DIR=<checkout>, and VL_AUDIT_JSON and
VL_AUDIT_FUSED_JSON, the full audits' JSON (audit_all's, audit_all_fused's), whose verdicts the
Float32 cases read; /usr/bin/python3.
"""
import json
import os
import shutil
import subprocess
import tempfile
import unittest
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

LESSONS = os.environ["LESSONS"]
SOURCE = os.environ["VL_SOURCE_DIR"]
sys.path.insert(0, os.path.join(SOURCE, "docs"))
from build_docs import audit_of_this_build  # noqa: E402  (whether an audit JSON stands for this build)


def audit(*args):
    return subprocess.run([LESSONS, "audit", "--root", SOURCE, *args], capture_output=True, text=True, timeout=600)


ADAPTERS = os.path.join(SOURCE, "adapters")

# A candidate as a user writes one: the NumPy adapter's attention, its hello listing DTYPES
# (None: no "dtypes" at all, a candidate written before them); with UPCAST its float32 outputs
# are computed in float64 and written as float64 (the protocol's error: another dtype than asked).
CANDIDATE = """
import sys
sys.path.insert(0, {adapters!r})
import numpy as np
import numpy_reference as ref
from vl_candidate import serve
def attention(inputs, attrs, wanted):
    if {upcast!r} and inputs["q"].dtype == np.float32:
        out = ref.attention({{k: v.astype(np.float64) for k, v in inputs.items()}}, attrs, wanted)
        import vl_candidate
        vl_candidate._dtype_of = lambda *args: np.dtype(np.float64)
        return out
    return ref.attention(inputs, attrs, wanted)
serve("user-candidate", {{"attention": attention}}, dtypes={dtypes!r})
"""


def candidate(d, dtypes, upcast=False):
    path = os.path.join(d, "candidate.py")
    with open(path, "w") as f:
        f.write(CANDIDATE.format(adapters=ADAPTERS, dtypes=dtypes, upcast=upcast))
    return f"/usr/bin/python3 {path}"


class Candidates(unittest.TestCase):
    def test_a_candidate_without_dtypes_is_judged_in_float64_only(self):
        with tempfile.TemporaryDirectory() as d:
            r = audit("attention.convex-combination", "--dtype", "float64", "float32", "--candidate", candidate(d, None))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("PASS    claim attention.convex-combination   ", r.stdout)
        self.assertIn("N/A     claim attention.convex-combination [float32]", r.stdout)
        self.assertIn("backend 'user-candidate' does not compute in float32", r.stdout)

    def test_a_candidate_listing_float32_is_judged_in_it(self):
        with tempfile.TemporaryDirectory() as d:
            r = audit("attention.convex-combination", "--dtype", "float32", "--candidate", candidate(d, ["float64", "float32"]))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("PASS    claim attention.convex-combination [float32]", r.stdout)

    def test_a_candidate_listing_float32_only_is_not_judged_in_float64(self):
        with tempfile.TemporaryDirectory() as d:
            r = audit("attention.convex-combination", "--dtype", "float64", "float32", "--candidate", candidate(d, ["float32"]))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("N/A     claim attention.convex-combination   ", r.stdout)
        self.assertIn("backend 'user-candidate' does not compute in float64", r.stdout)
        self.assertIn("PASS    claim attention.convex-combination [float32]", r.stdout)

    def test_a_reply_in_another_dtype_is_an_error_naming_the_request(self):
        with tempfile.TemporaryDirectory() as d:
            r = audit("attention.convex-combination", "--dtype", "float32", "--candidate",
                      candidate(d, ["float64", "float32"], upcast=True))
        self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("ERROR   claim attention.convex-combination [float32]", r.stdout)
        self.assertRegex(r.stdout, r"request \d+ \(attention\): output 'y' is float64; the inputs are float32")

    def test_a_candidate_listing_dtypes_before_the_dtype_attr_is_not_sent_the_table_in_float32(self):
        # Its helper wrote every output in its inputs' dtype; the positional table has no floating
        # input, so it would answer a float32 request in float64 (an ERROR). It lists no "dtype"
        # attr: the request is refused, and the claims stay N/A, as they were for it.
        old = (
            "import json, sys\n"
            f"sys.path.insert(0, {ADAPTERS!r})\n"
            "import numpy as np\n"
            "import numpy_reference as ref\n"
            "for line in sys.stdin:\n"
            "    r = json.loads(line)\n"
            "    if r['op'] == 'hello':\n"
            "        print(json.dumps({'id': r['id'], 'ok': True, 'name': 'old', 'ops': ['positional_encoding'], 'attrs': [],\n"
            "                          'dtypes': ['float64', 'float32']}), flush=True)\n"
            "        continue\n"
            "    out = ref.positional_encoding({}, r['attrs'], set(r['outputs']))\n"
            "    for n, p in r['outputs'].items():\n"
            "        np.save(p, np.asarray(out[n], dtype=np.float64))\n"
            "    print(json.dumps({'id': r['id'], 'ok': True}), flush=True)\n")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "old.py")
            with open(path, "w") as f:
                f.write(old)
            r = audit("positions.unit-pairs", "--dtype", "float64", "float32", "--candidate", f"/usr/bin/python3 {path}")
        self.assertNotIn("ERROR", r.stdout, r.stdout)
        self.assertIn("PASS    claim positions.unit-pairs   ", r.stdout)
        self.assertIn("N/A     claim positions.unit-pairs [float32]", r.stdout)
        self.assertIn("its hello lists no attr 'dtype'", r.stdout)

    def test_float16_travels_as_f2_and_bfloat16_as_uint16_bits(self):
        # A candidate as its author writes one without our helper: it checks what arrives (float16
        # as '<f2'; bfloat16 as uint16 bits with attrs dtype "bfloat16"), computes with the NumPy
        # adapter in float32 and answers in the request's dtype; with WRONG, float32 instead.
        raw = (
            "import json, sys\n"
            f"sys.path.insert(0, {ADAPTERS!r})\n"
            "import numpy as np\n"
            "import numpy_reference as ref\n"
            "from vl_candidate import bfloat16_to_float32, float32_to_bfloat16\n"
            "WRONG = sys.argv[1] == 'wrong'\n"
            "for line in sys.stdin:\n"
            "    r = json.loads(line)\n"
            "    if r['op'] == 'hello':\n"
            "        print(json.dumps({'id': 0, 'ok': True, 'name': 'raw', 'ops': ['attention'], 'attrs': ['dtype'],\n"
            "                          'dtypes': ['float16', 'bfloat16']}), flush=True)\n"
            "        continue\n"
            "    dt = r['attrs']['dtype']\n"
            "    x = {n: np.load(p) for n, p in r['inputs'].items()}\n"
            "    want = {'float16': np.float16, 'bfloat16': np.uint16}[dt]\n"
            "    assert all(a.dtype == want for n, a in x.items() if n != 'mask'), (dt, {n: a.dtype for n, a in x.items()})\n"
            "    f = {n: (bfloat16_to_float32(a) if dt == 'bfloat16' else a.astype(np.float32)) if a.dtype != bool else a\n"
            "         for n, a in x.items()}\n"
            "    out = ref.attention(f, dict(r['attrs'], dtype='float32'), set(r['outputs']))\n"
            "    for n, p in r['outputs'].items():\n"
            "        y = np.asarray(out[n], dtype=np.float32)\n"
            "        np.save(p, y if WRONG else float32_to_bfloat16(y) if dt == 'bfloat16' else y.astype(np.float16))\n"
            "    print(json.dumps({'id': r['id'], 'ok': True}), flush=True)\n")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "raw.py")
            with open(path, "w") as f:
                f.write(raw)
            r = audit("attention.convex-combination", "--dtype", "bfloat16", "float16", "--candidate", f"/usr/bin/python3 {path} right")
            wrong = audit("attention.convex-combination", "--dtype", "bfloat16", "--candidate", f"/usr/bin/python3 {path} wrong")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("PASS    claim attention.convex-combination [bfloat16]", r.stdout)
        self.assertIn("PASS    claim attention.convex-combination [float16]", r.stdout)
        self.assertNotEqual(wrong.returncode, 0, wrong.stdout + wrong.stderr)
        self.assertRegex(wrong.stdout, r"request \d+ \(attention\): output 'y' is float32; the inputs are uint16 \(bfloat16's bits\)")

    def test_a_hello_with_an_unknown_dtype_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            r = audit("attention.convex-combination", "--candidate", candidate(d, ["float64", "float8"]))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn('the hello\'s "dtypes" lists "float8", not one of float64, float32, bfloat16, float16', r.stderr)


class Float32(unittest.TestCase):
    """Every claim of every lesson in each precision, on plain and fused. The verdicts are the full
    audits' that ctest has just made, audit_all (plain) and audit_all_fused (fused, the claims
    about the computation): an audit judges each claim in every precision its backend computes in,
    with the verdicts `--dtype` gives one precision at a time. Their JSON is read where it stands
    for this build (VL_AUDIT_JSON, VL_AUDIT_FUSED_JSON; docs/build_docs.py's check); otherwise
    (run by hand, or stale) this test runs the audit itself. What --dtype itself does (one
    precision in the report, the JUnit and the text; no listing) is test_dtype_selects_one_precision's."""
    reports = {}

    @classmethod
    def report(cls, backend):
        if backend not in cls.reports:
            path = os.environ.get({"plain": "VL_AUDIT_JSON", "fused": "VL_AUDIT_FUSED_JSON"}[backend])
            stale = audit_of_this_build(Path(path), LESSONS, Path(SOURCE).resolve(), backend) if path else "not given"
            if stale is None:
                with open(path) as f:
                    cls.reports[backend] = json.load(f)
            else:
                print(f"the {backend} audit runs here: its JSON {path} does not stand for this build: {stale}", file=sys.stderr)
                with tempfile.TemporaryDirectory() as d:
                    j = os.path.join(d, "a.json")
                    r = audit("--backend", backend, *(["--computation-only"] if backend == "fused" else []), "--json", j)
                    if r.returncode != 0:
                        raise AssertionError(f"the {backend} audit failed: {r.stdout[-3000:]}{r.stderr}")
                    with open(j) as f:
                        cls.reports[backend] = json.load(f)
        return cls.reports[backend]

    def judged(self, backend, minimum, precision="float32"):
        report = self.report(backend)
        scope = report["scope"]
        self.assertEqual((scope["cases"], scope["select"], scope["shard"]), (24, [], "1/1"), scope)
        self.assertIn(precision, scope["precisions"])
        claims = [c for lesson in report["lessons"] for c in lesson["claims"] if c["precision"] == precision]
        self.assertTrue(claims)
        passed = [c for c in claims if c["status"] == "passed"]
        for c in claims:
            with self.subTest(claim=c["id"]):
                self.assertIn(c["status"], ("passed", "not applicable"), c["why"])
                for ch in c["checks"]:
                    for ctl in ch["controls"]:
                        self.assertTrue(ctl["rejected"], f"{c['id']} [{precision}]: control {ctl['name']} not rejected")
        self.assertGreaterEqual(len(passed), minimum, [c["id"] for c in passed])
        return {c["id"]: c for c in claims}

    def test_dtype_selects_one_precision(self):
        for precision, backend in (("float32", "plain"), ("bfloat16", "fused"), ("float16", "plain")):
            with self.subTest(precision=precision, backend=backend), tempfile.TemporaryDirectory() as d:
                j, x = os.path.join(d, "a.json"), os.path.join(d, "a.xml")
                r = audit("masking", "--dtype", precision, "--backend", backend, "--json", j, "--junit", x)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                with open(j) as f:
                    report = json.load(f)
                junit = ET.parse(x).getroot()
                claims = [c for lesson in report["lessons"] for c in lesson["claims"]]
                self.assertTrue(claims)
                self.assertEqual({c["precision"] for c in claims}, {precision})
                self.assertEqual(report["scope"]["precisions"], [precision])
                self.assertEqual([l for lesson in report["lessons"] for l in lesson["listings"]], [])  # float64 facts
                self.assertIn(f"[{precision}]", r.stdout)
                self.assertTrue(any(tc.get("name", "").endswith(f"[{precision}]") for tc in junit.iter("testcase")))
                # Its verdicts are the full audit's in that precision.
                full = self.judged(backend, 0, precision)  # id -> claim
                for c in claims:
                    self.assertEqual((c["status"], [ch["measured"] for ch in c["checks"]]),
                                     (full[c["id"]]["status"], [ch["measured"] for ch in full[c["id"]]["checks"]]), c["id"])

    def test_plain(self):
        # Every claim about the computation, every lesson: judged in float32, or not applicable there
        # with the spec's reason; every control rejected.
        claims = self.judged("plain", 40)
        self.assertEqual(claims["attention.convex-combination"]["tolerance"], "1.1e-6")
        self.assertEqual(claims["masking.float16-bound"]["status"], "not applicable")
        self.assertIn("a claim about float16 already", claims["masking.float16-bound"]["why"])
        self.assertEqual(claims["masking.mha-fully-masked-row"]["status"], "passed")
        self.assertIn("not float32 numbers", claims["positions.rotation-error-growth"]["why"])
        self.assertIn("derived per layer only", claims["encoder-decoder.encoder-sees-every-position"]["why"])
        not_applicable = sorted(c["id"] for c in claims.values() if c["status"] == "not applicable")
        self.assertEqual(len(not_applicable), 5, not_applicable)

    def test_fused(self):
        claims = self.judged("fused", 17)
        self.assertEqual(claims["masking.masked-weights-zero"]["status"], "passed")  # through its outputs, in float32
        self.assertEqual(claims["attention.mha-matches-torch"]["status"], "passed")  # the module over the fused kernel

    def test_plain_and_fused_in_bfloat16_and_float16(self):
        # Storage formats: every claim judged there or N/A with the spec's reason (a worst-case
        # bound too wide to judge, mostly), every control rejected where it is judged.
        for precision, plain, fused in (("bfloat16", 15, 11), ("float16", 21, 15)):
            with self.subTest(precision=precision):
                claims = self.judged("plain", plain, precision=precision)
                self.assertEqual(claims["attention.weights-distribution"]["status"], "passed")
                self.assertIn("no bound", claims["attention.mha-matches-torch"]["why"])
                self.judged("fused", fused, precision=precision)

    def test_a_claim_with_no_float32_tolerance_is_untested_there(self):
        # The engine refuses to judge a claim about the computation in a precision its spec states
        # no tolerance for: untested, which fails, naming the line to write.
        with tempfile.TemporaryDirectory() as d:
            shutil.copytree(os.path.join(SOURCE, "specs"), os.path.join(d, "specs"))
            shutil.copytree(os.path.join(SOURCE, "reference_outputs"), os.path.join(d, "reference_outputs"))
            spec = os.path.join(d, "specs", "linear_rnn.md")
            with open(spec) as f:
                text = f.read()
            self.assertIn("tolerance-float32: 1e-5\n", text)
            with open(spec, "w") as f:
                f.write(text.replace("tolerance-float32: 1e-5\n", ""))
            r = subprocess.run([LESSONS, "audit", "--root", d, "linear-rnn.convex-combination", "--dtype", "float32"],
                               capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("FAIL    claim linear-rnn.convex-combination [float32]", r.stdout)
        self.assertIn("untested: the spec states no float32 tolerance for it (tolerance-float32:", r.stdout)

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
