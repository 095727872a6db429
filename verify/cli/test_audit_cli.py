"""`lessons audit`, `accept`, `list` and `run`, driven as a user drives them.

Each case copies specs/ and reference_outputs/ into a temporary root, breaks one thing, and
requires `lessons audit --root` to fail and name the cause: one digit changed in a documented
output, a golden edited without its manifest, a claim without a check, a malformed spec; and
the review workflow (--update writes .received, accept moves it and updates the manifest,
documented outputs cannot be accepted, CI cannot accept).
Run by ctest with LESSONS=<binary> and VL_SOURCE_DIR=<checkout>; /usr/bin/python3.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

import numpy as np

LESSONS = os.environ["LESSONS"]
SOURCE = os.environ["VL_SOURCE_DIR"]


def run(*args, env=None):
    # CI=true makes `accept` refuse; the tests set it only where they test that.
    full_env = {k: v for k, v in os.environ.items() if k != "CI"}
    full_env.update(env or {})
    return subprocess.run([LESSONS, *args], capture_output=True, text=True, env=full_env, timeout=600)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


class Root:
    """A temporary copy of the checkout's specs/ and reference_outputs/."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="vl_audit_")
        shutil.copytree(os.path.join(SOURCE, "specs"), os.path.join(self.dir, "specs"))
        shutil.copytree(os.path.join(SOURCE, "reference_outputs"), os.path.join(self.dir, "reference_outputs"))

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def edit(self, relpath, old, new):
        p = self.path(relpath)
        with open(p, encoding="utf-8") as f:
            text = f.read()
        assert old in text, f"{old!r} not in {relpath}"
        with open(p, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))

    def reseal(self, golden):
        """Record a golden's new sha256 in the manifest (as a reviewed change would)."""
        with open(self.path("reference_outputs", "manifest.json")) as f:
            m = json.load(f)
        with open(self.path("reference_outputs", golden), "rb") as f:
            m["files"][golden]["sha256"] = hashlib.sha256(f.read()).hexdigest()
        with open(self.path("reference_outputs", "manifest.json"), "w") as f:
            json.dump(m, f, indent=2)

    def audit(self, *args, env=None):
        return run("audit", "--root", self.dir, *args, env=env)

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class AuditCli(unittest.TestCase):
    def setUp(self):
        self.root = Root()

    def tearDown(self):
        self.root.cleanup()

    def assertFailsWith(self, result, *words):
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        for w in words:
            self.assertIn(w, result.stdout, result.stdout)
        self.assertRegex(result.stdout.splitlines()[-1], r"^\d+ passed, [1-9]\d* failed$")

    def test_one_digit_changed_in_a_documented_output(self):
        # The lesson's text and our copy agree, and are sealed in the manifest, but say (6, 6).
        for f in ("specs/linear_rnn.md", "reference_outputs/linear-rnn/main.txt"):
            self.root.edit(f, "output O_par: (6, 5)", "output O_par: (6, 6)")
        self.root.reseal("linear-rnn/main.txt")
        r = self.root.audit("linear-rnn.main")
        self.assertFailsWith(r, "line 3 [exact] MISMATCH", "documented: output O_par: (6, 6)",
                             "produced:   output O_par: (6, 5)")

    def test_documented_output_edited_without_manifest(self):
        self.root.edit("reference_outputs/linear-rnn/main.txt", "(6, 6)", "(6, 7)")
        r = self.root.audit("linear-rnn.main")
        self.assertFailsWith(r, "linear-rnn/main.txt: sha256", "does not match the manifest",
                             "the spec's output block")

    def test_numeric_golden_edited_without_manifest(self):
        p = self.root.path("reference_outputs", "linear-rnn", "main.O_par.npy")
        a = np.load(p)
        a[0, 0] += 1e-3
        np.save(p, a)
        r = self.root.audit("linear-rnn.main")
        self.assertFailsWith(r, "main.O_par.npy: sha256", "array O_par")

    def test_root_goldens_are_the_ones_read(self):
        # A listing that compares with a torch golden reads it from --root, not from the
        # source tree: a stale golden there (sealed) fails the listing's bound rule.
        golden = "attention/lookup.out_torch.npy"
        p = self.root.path("reference_outputs", golden)
        a = np.load(p)
        a[0, 0] += 1e-3
        np.save(p, a)
        self.root.reseal(golden)
        r = self.root.audit("attention.lookup")
        self.assertFailsWith(r, "listing attention.lookup", "not below the derived bound 3.73e-14")

    def test_golden_missing_from_manifest(self):
        shutil.copy(self.root.path("reference_outputs", "linear-rnn", "main.txt"),
                    self.root.path("reference_outputs", "linear-rnn", "stray.txt"))
        r = self.root.audit("linear-rnn.main")
        self.assertFailsWith(r, "stray.txt: not in the manifest")

    def test_generator_gone_from_the_project(self):
        # The scripts beside the goldens are their provenance, not goldens (a __pycache__ there
        # is no stray golden); a generator the manifest names that is gone fails the audit.
        gen = self.root.path("reference_outputs", "generators")
        os.makedirs(os.path.join(gen, "__pycache__"), exist_ok=True)
        with open(os.path.join(gen, "__pycache__", "manifest.cpython-311.pyc"), "wb") as f:
            f.write(b"\0")
        r = self.root.audit("linear-rnn.main")
        self.assertNotIn("not in the manifest", r.stdout + r.stderr)
        os.remove(os.path.join(gen, "linear_rnn_goldens.py"))
        r = self.root.audit("linear-rnn.main")
        self.assertFailsWith(r, "its generator reference_outputs/generators/linear_rnn_goldens.py is not in the project")

    def test_claim_without_check(self):
        self.root.edit("specs/linear_rnn.md", "## Negative controls",
                       "```claim\nid: linear-rnn.unchecked\nkind: invariant\ntolerance: none\n"
                       "statement: Nobody checks this.\nsource: nowhere\n```\n\n## Negative controls")
        r = self.root.audit("linear-rnn.unchecked")
        self.assertFailsWith(r, "FAIL    claim linear-rnn.unchecked", "untested: no check verifies this claim")

    def test_malformed_spec_fails_the_lesson(self):
        self.root.edit("specs/linear_rnn.md", "kind: complexity", "kind: fast")
        r = self.root.audit("linear-rnn")
        self.assertFailsWith(r, "PROBLEM spec:", "linear_rnn.md:", "unknown claim kind 'fast'")

    def test_pristine_copy_passes_and_reports(self):
        j, x = self.root.path("audit.json"), self.root.path("audit.xml")
        # A pristine copy passes, every control rejected (one audit of the whole lesson for both).
        r = self.root.audit("linear-rnn", "--dtype", "float64", "--json", j, "--junit", x)  # the precisions: test_default_precisions
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"\n9 passed, 0 failed\n")  # the last lines name the report files
        self.assertIn("claims: 8, with a negative control: 8, controls rejected: 26/26", r.stdout)
        with open(j) as f:
            report = json.load(f)
        self.assertEqual(report["failed"], 0)
        for key in ("commit", "compiler", "blas", "date", "build"):
            self.assertTrue(report["provenance"][key])
        claims = report["lessons"][0]["claims"]
        self.assertEqual(len(claims), 8)
        for c in claims:
            self.assertEqual(c["status"], "passed")
            self.assertTrue(c["tolerance"])
            self.assertTrue(all(ctl["rejected"] for ch in c["checks"] for ctl in ch["controls"]))
        # The cost claim's check gives its numbers as series: n first, then each form's counts and
        # the formula of its leading terms (d = 16, B = 32 in the check).
        cost = next(c for c in claims if c["id"] == "linear-rnn.chunked-linear-cost")
        series = {s["name"]: s for s in cost["checks"][0]["series"]}
        self.assertEqual(cost["checks"][0]["series"][0]["name"], "n")
        ns = series["n"]["values"]
        self.assertEqual(ns, [256, 512, 1024, 2048, 4096])
        self.assertEqual(series["n²·d"]["values"], [n * n * 16 for n in ns])
        self.assertEqual(series["n²·d"]["formula_of"], "parallel")
        self.assertEqual(series["n·B·d + n·d²"]["values"], [n * 32 * 16 + n * 16 * 16 for n in ns])
        self.assertTrue(all(c >= f for c, f in zip(series["chunked"]["values"], series["n·B·d + n·d²"]["values"])))
        self.assertTrue(cost["checks"][0]["controls"][0]["series"])
        lines = report["lessons"][0]["listings"][0]["lines"]
        self.assertEqual([l["rule"] for l in lines][:2], ["ws", "exact"])
        suite = ET.parse(x).getroot()
        self.assertEqual(suite.get("tests"), "9")
        self.assertEqual(suite.get("failures"), "0")
        self.assertEqual(len(suite.findall(".//testcase")), 9)

    def test_selection_by_claim_and_listing(self):
        r = self.root.audit("linear-rnn.causal", "--dtype", "float64")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("claim linear-rnn.causal", r.stdout)
        self.assertNotIn("linear-rnn.forms-agree", r.stdout)
        self.assertEqual(r.stdout.splitlines()[-1], "1 passed, 0 failed")
        r = self.root.audit("linear-rnn.main")
        self.assertEqual(r.stdout.splitlines()[-1], "1 passed, 0 failed")

    def test_default_precisions(self):
        # No --dtype: every precision the backend computes in, float64 first (plain: all four).
        r = self.root.audit("linear-rnn.causal")
        self.assertEqual(r.returncode, 0, r.stdout)
        for p in ("   ", " [float32]", " [bfloat16]", " [float16]"):
            self.assertIn(f"PASS    claim linear-rnn.causal{p}", r.stdout)
        self.assertEqual(r.stdout.splitlines()[-1], "4 passed, 0 failed")

    def test_update_then_accept(self):
        # A generated golden that is sealed but stale: --update proposes, accept replaces.
        golden = self.root.path("reference_outputs", "linear-rnn", "main.O_par.npy")
        stale = np.load(golden)
        stale[2, 3] += 1e-9
        np.save(golden, stale)
        self.root.reseal("linear-rnn/main.O_par.npy")
        before = read_bytes(golden)
        r = self.root.audit("linear-rnn.main", "--update")
        self.assertEqual(r.returncode, 1)
        self.assertTrue(os.path.exists(golden + ".received"))
        self.assertEqual(read_bytes(golden), before, "--update must never write the golden itself")
        self.assertFalse(os.path.exists(self.root.path("reference_outputs", "linear-rnn", "main.txt.received")))
        # The proposal waiting for review is not a golden without provenance.
        r = self.root.audit("linear-rnn.causal")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertNotIn("not in the manifest", r.stdout + r.stderr)

        r = run("accept", "linear-rnn.main", "--root", self.root.dir, env={"CI": "true"})
        self.assertEqual(r.returncode, 2)
        self.assertIn("refused under CI", r.stderr)

        r = run("accept", "linear-rnn.main", "--root", self.root.dir)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("max |old − new| = 1.000e-09 at flat index 13", r.stdout)
        self.assertFalse(os.path.exists(golden + ".received"))
        with open(self.root.path("reference_outputs", "manifest.json")) as f:
            m = json.load(f)
        self.assertIn("lessons accept", m["files"]["linear-rnn/main.O_par.npy"]["generator"])
        r = self.root.audit("linear-rnn.main")
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_documented_output_cannot_be_accepted(self):
        shutil.copy(self.root.path("reference_outputs", "linear-rnn", "main.txt"),
                    self.root.path("reference_outputs", "linear-rnn", "main.txt.received"))
        r = run("accept", "--all", "--root", self.root.dir)
        self.assertEqual(r.returncode, 2)
        self.assertIn("documented output copied from a lesson", r.stderr)


class BadInput(unittest.TestCase):
    def test_unknown_id(self):
        r = run("audit", "no-such-lesson")
        self.assertEqual(r.returncode, 2)
        self.assertIn("'no-such-lesson' is not a lesson, listing or claim id", r.stderr)

    def test_missing_root(self):
        r = run("audit", "--root", "/nonexistent/checkout")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--root /nonexistent/checkout", r.stderr)

    def test_report_into_missing_folder_writes_nothing(self):
        r = run("audit", "linear-rnn.causal", "--json", "/nonexistent/dir/a.json")
        self.assertEqual(r.returncode, 2)
        self.assertIn("/nonexistent/dir/a.json", r.stderr)

    def test_bad_command_line(self):
        r = run("audit", "--no-such-flag")
        self.assertEqual(r.returncode, 2)
        r = run("run", "linear-rnn/nope")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no listing 'nope'", r.stderr)


class Backends(unittest.TestCase):
    """`lessons backends` and `lessons audit --backend`, as a user would try them."""

    def test_backends_lists_operations(self):
        r = run("backends")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("plain (default):", r.stdout)
        self.assertIn("fused:", r.stdout)
        fused = r.stdout[r.stdout.index("fused:"):]
        self.assertIn("operations: attention, attention-backward, multi-head-attention, linear-chunked", fused)
        self.assertIn("lacks:      attention-weights", fused)
        self.assertIn("multi-head-attention-weights", fused)
        self.assertIn("computes in: float64, float32, bfloat16, float16", fused)

    def test_fused_backend_reports_what_it_cannot_run(self):
        # It has no positional encoding: that claim is not applicable. It forms no weights: matches-torch is
        # judged by its check that reads them from the outputs, and the report says which could not run.
        with tempfile.TemporaryDirectory() as d:
            j, x = os.path.join(d, "a.json"), os.path.join(d, "a.xml")
            r = run("audit", "attention.matches-torch", "positions.shift-is-rotation", "--backend", "fused", "--dtype", "float64",
                    "--json", j, "--junit", x)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("N/A     claim positions.shift-is-rotation", r.stdout)
            self.assertIn("not applicable: backend 'fused' has no positional-encoding", r.stdout)
            self.assertIn("PASS    claim attention.matches-torch", r.stdout)
            self.assertIn("not applicable: backend 'fused' has no attention-weights", r.stdout)
            self.assertIn("; the weights read from the outputs (one-hot values)'", r.stdout)
            self.assertIn("-- backend: fused (", r.stdout)
            self.assertEqual(r.stdout.splitlines()[-3], "1 passed, 0 failed, 1 not applicable")
            with open(j) as f:
                report = json.load(f)
            self.assertEqual(report["not_applicable"], 1)
            self.assertTrue(report["provenance"]["backend"].startswith("fused"))
            claims = {c["id"]: c for lesson in report["lessons"] for c in lesson["claims"]}
            self.assertEqual({k: c["status"] for k, c in claims.items()},
                             {"attention.matches-torch": "passed", "positions.shift-is-rotation": "not applicable"})
            checks = claims["attention.matches-torch"]["checks"]
            self.assertIn("attention-weights", checks[0]["not_applicable"])
            self.assertEqual(checks[1]["not_applicable"], "")
            self.assertTrue(checks[1]["passed"])
            suite = ET.parse(x).getroot()
            self.assertEqual(suite.get("skipped"), "1")
            self.assertEqual(len(suite.findall(".//skipped")), 1)

    def test_computation_only_leaves_out_our_own_code(self):
        # What differs between implementations: no claim about our own code, no listing that is
        # our code throughout; the claims about the computation and listing 1 (through the backend) stay.
        with tempfile.TemporaryDirectory() as d:
            j = os.path.join(d, "a.json")
            r = run("audit", "attention", "--backend", "fused", "--computation-only", "--json", j)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            with open(j) as f:
                lesson = json.load(f)["lessons"][0]
        subjects = {c["subject"] for c in lesson["claims"]}
        self.assertEqual(subjects, {"computation"})
        self.assertIn("attention.matches-torch", {c["id"] for c in lesson["claims"]})
        self.assertEqual([l["id"] for l in lesson["listings"]], ["attention.lookup"])
        self.assertNotIn("attention.score-std", r.stdout)

    def test_nothing_applicable_is_said_and_fails(self):
        r = run("audit", "positions.shift-is-rotation", "--backend", "fused", "--dtype", "float64")
        self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("-- nothing was checked: no claim or listing ran on backend fused", r.stdout)
        self.assertEqual(r.stdout.splitlines()[-1], "0 passed, 0 failed, 1 not applicable")

    def test_all_failed_is_not_nothing_checked(self):
        # The torch adapter's NaN row fails this claim: checked, and failed, never "nothing was checked".
        torch_adapter = os.path.join(SOURCE, "adapters", "torch_reference.py")
        r = run("audit", "masking.fully-masked-row-zero", "--dtype", "float64", "--candidate", f"{sys.executable} {torch_adapter}")
        self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("FAIL    claim masking.fully-masked-row-zero", r.stdout)
        self.assertNotIn("nothing was checked", r.stdout)
        self.assertIn("\n0 passed, 1 failed\n", r.stdout)

    def test_unknown_backend(self):
        r = run("audit", "linear-rnn.causal", "--backend", "gpu")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--backend gpu: no such backend (there are: plain, fused", r.stderr)


class ListAndRun(unittest.TestCase):
    def test_run_prints_the_lessons_lines(self):
        r = run("run", "linear-rnn/main")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 9)
        self.assertEqual(lines[0], "Q, K: (6, 4)  V: (6, 5)")
        self.assertEqual(lines[-1], "scarto massimo < 1e-12: True")

    def test_list_names_claims_and_listings(self):
        r = run("list")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("listing linear-rnn.main", r.stdout)
        self.assertIn("claim   linear-rnn.causal", r.stdout)
        # The direction is the spec's: "at least 1e-3", bit-identical, a pass/fail property.
        self.assertIn("claim   encoder-decoder.encoder-sees-every-position  (bound, tolerance >= 1e-3)", r.stdout)
        self.assertIn("claim   linear-rnn.causal  (invariant, tolerance == 0)", r.stdout)
        self.assertIn("claim   attention.config-checked  (invariant, tolerance none)", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
