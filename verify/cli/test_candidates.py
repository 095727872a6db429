"""`lessons audit --candidate`: the error paths of vl-candidate/1 (docs/candidates.md).

A candidate that crashes, hangs, replies garbage or a wrong id, or writes an output of the wrong
shape or dtype gets an ERROR naming the request and a non-zero exit, within its timeouts, and
leaves nothing running; one that lacks operations gets N/A, never a pass. The fixtures are
verify/candidates/misbehaving.py (and small adapters written here). The adapters' and the broken
candidates' full audits are ctest's candidate_* tests (verify/candidates/check_candidate.py).
Run by ctest with LESSONS=<binary> and VL_SOURCE_DIR=<checkout>; /usr/bin/python3.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

LESSONS = os.environ["LESSONS"]
SOURCE = os.environ["VL_SOURCE_DIR"]
PY = sys.executable
MISBEHAVING = os.path.join(SOURCE, "verify", "candidates", "misbehaving.py")
CLAIMS = ["masking.first-position-self", "masking.prefix-unchanged", "masking.alignment"]


def processes_with(token):
    """Pids of live processes whose environment holds VL_TEST_TOKEN=token."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if f"VL_TEST_TOKEN={token}".encode() in f.read().split(b"\0"):
                    with open(f"/proc/{pid}/stat") as s:
                        if s.read().split()[2] != "Z":
                            found.append(int(pid))
        except OSError:
            pass
    return found


def write_adapter(folder, name, body):
    """A small adapter written as a user writes one: the helper module imported, `body` after it."""
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write("import sys\nsys.path.insert(0, %r)\n" % os.path.join(SOURCE, "adapters") + body)
    return path


def audit(candidate, *args, claims=CLAIMS, env=None):
    token = f"{os.getpid()}-{time.monotonic_ns()}"
    full_env = dict(os.environ, VL_TEST_TOKEN=token, **(env or {}))
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "audit.json")
        # timeout: a guard against a hung audit (the test then fails), not a timing
        run = subprocess.run([LESSONS, "audit", *claims, "--root", SOURCE, "--candidate", candidate, "--json", report, *args],
                             capture_output=True, text=True, timeout=120, env=full_env, cwd=tmp)
        run.claims = {}
        if os.path.exists(report):
            with open(report) as f:
                r = json.load(f)
            run.claims = {c["id"]: c for lesson in r["lessons"] for c in lesson["claims"]}
        run.left_running = processes_with(token)
        for _ in range(20):  # a killed process may take a moment to be reaped by init
            if not run.left_running:
                break
            time.sleep(0.1)
            run.left_running = processes_with(token)
    return run


class CandidateErrors(unittest.TestCase):
    def misbehave(self, mode, *args, n=1, claims=CLAIMS, env=None):
        run = audit(f"{PY} {MISBEHAVING} {mode} {n}", *args, claims=claims, env=env)
        self.assertEqual(run.left_running, [], f"{mode}: candidate processes left running")
        return run

    def test_crash_twice_then_nothing_more_is_sent(self):
        run = self.misbehave("crash")
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        statuses = [run.claims[c]["status"] for c in CLAIMS]
        self.assertEqual(statuses, ["error"] * 3, run.stdout)
        self.assertIn("request 1 (attention): the candidate exited with status 3 (restarted it)", run.stdout)
        self.assertIn("crashing on purpose", run.stdout)  # its stderr, quoted
        self.assertIn("for the second time: not restarted", run.stdout)
        self.assertIn("not sent: the candidate crashed twice", run.stdout)

    def test_what_a_candidate_leaves_in_a_request_folder_goes_with_it(self):
        # The suite removes the files it named one by one; a folder holding more goes whole, before
        # the next request (the candidate checks), not only with the exchange folder at the end.
        with tempfile.TemporaryDirectory() as exchange, tempfile.TemporaryDirectory() as d:
            mark = os.path.join(d, "second-request")
            run = self.misbehave("litter", claims=["attention.convex-combination"], env={"TMPDIR": exchange, "VL_MISBEHAVING_MARK": mark})
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            self.assertEqual(run.claims["attention.convex-combination"]["status"], "passed", run.stdout)
            self.assertTrue(os.path.exists(mark), "no second request: nothing looked for the first one's folder")
            self.assertEqual(os.listdir(exchange), [], "the audit left files in its temporary folder")

    def test_a_request_folder_made_by_the_candidate_is_its_error(self):
        # The suite writes a request's inputs into a folder it has just made: one already there is
        # the candidate's doing, an ERROR naming it (never the inputs' fault, never written into).
        run = self.misbehave("squat", claims=["attention.convex-combination"])
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertEqual(run.claims["attention.convex-combination"]["status"], "error", run.stdout)
        self.assertIn("request 2 (attention): cannot make its folder", run.stdout)
        self.assertIn("it is there already (not made by the suite)", run.stdout)

    def test_crash_once_is_restarted(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = self.misbehave("crash-once", env={"VL_MISBEHAVING_MARK": os.path.join(tmp, "mark")})
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertEqual([run.claims[c]["status"] for c in CLAIMS], ["error", "passed", "passed"], run.stdout)

    def test_hang_is_killed_at_the_timeout(self):
        # That the hang was killed at all is what the test can see without a clock: otherwise the
        # audit would wait the candidate's hour and trip audit()'s 120 s guard. That it took 2 s
        # and not 100 is a duration, which no test here asserts.
        run = self.misbehave("hang", "--candidate-timeout", "2")
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertEqual([run.claims[c]["status"] for c in CLAIMS], ["error"] * 3, run.stdout)
        self.assertIn("request 1 (attention): the candidate sent no reply within 2 s (its process group was killed)", run.stdout)
        self.assertIn("request 2 (attention): not sent: the candidate timed out at request 1 (attention)", run.stdout)
        self.assertIn("ERROR   claim masking.alignment", run.stdout)

    def test_no_hello(self):
        run = self.misbehave("no-hello", "--candidate-timeout", "2")
        self.assertEqual(run.returncode, 2)
        self.assertIn("no reply to the hello", run.stderr)

    def test_lies(self):
        for mode, text in (("garbage", "the reply is not a JSON object: 'this is not JSON'"),
                           ("wrong-id", "the reply answers id 1001, not 1"),
                           ("wrong-shape", "output 'weights' has shape (2, 1, 1, 1); the operation defines (1, 1, 1, 1)"),
                           ("wrong-dtype", "output 'weights' is float32; the inputs are float64")):
            with self.subTest(mode=mode):
                run = self.misbehave(mode, claims=CLAIMS[:1])
                self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
                self.assertEqual(run.claims[CLAIMS[0]]["status"], "error")
                self.assertIn(f"candidate 'misbehaving {mode}', request 1 (attention): {text}", run.stdout)

    def test_lacking_operations_are_not_applicable(self):
        with tempfile.TemporaryDirectory() as tmp:
            adapter = write_adapter(tmp, "pe_only.py", "import numpy_reference as ref\nfrom vl_candidate import serve, Unsupported\n"
                                    "def attention(i, a, w):\n    raise Unsupported('no attention today')\n"
                                    "serve('pe-only', {'positional_encoding': ref.positional_encoding, 'attention': attention})\n")
            run = audit(f"{PY} {adapter}", claims=["positions", "masking.alignment"])
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            self.assertEqual(run.claims["masking.alignment"]["status"], "not applicable")
            self.assertIn("unsupported: no attention today", run.claims["masking.alignment"]["why"])
            self.assertEqual(run.claims["positions.unit-pairs"]["status"], "passed")
            self.assertEqual(run.claims["positions.permutation-equivariant"]["status"], "not applicable")  # no mha
            # Nothing applicable ran: not a pass.
            run = audit(f"{PY} {adapter}", claims=["masking.alignment"])
            self.assertEqual(run.returncode, 1, run.stdout)

    def test_a_refusal_counts_only_where_the_input_is_wrong(self):
        # "invalid: ..." is a refusal of the input: residual-keeps-width counts it for the layers
        # whose FFN changes the width, and requires the same layers with the width kept accepted,
        # so a candidate that refuses every layer fails; elsewhere the refusal is an ERROR.
        with tempfile.TemporaryDirectory() as tmp:
            adapter = write_adapter(tmp, "refuses_layers.py", "from vl_candidate import serve, InvalidInput\n"
                                    "def layer(i, a, w):\n    raise InvalidInput('no layer is good enough')\n"
                                    "serve('refuses-layers', {'encoder_layer': layer, 'decoder_layer': layer})\n")
            run = audit(f"{PY} {adapter}", claims=["encoder-decoder.residual-keeps-width", "encoder-decoder.encoder-matches-torch"])
            self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
            width = run.claims["encoder-decoder.residual-keeps-width"]
            self.assertEqual(width["status"], "failed", width)
            self.assertIn("a layer whose FFN keeps the width was not accepted", width["why"])
            self.assertIn("invalid: no layer is good enough", width["why"])
            self.assertEqual(run.claims["encoder-decoder.encoder-matches-torch"]["status"], "error")

    def test_claims_about_our_code_run_no_control_on_a_candidate(self):
        # attention.score-std reads our own experiment (subject: our-code): on a candidate it is N/A,
        # and so are its controls, which break our code whatever is audited; our plain backend's
        # audit runs them (the candidate's claims about the computation keep theirs).
        numpy_ref = f"{PY} {os.path.join(SOURCE, 'adapters', 'numpy_reference.py')}"
        ids = ["attention.score-std", "masking.first-position-self"]
        run = audit(numpy_ref, claims=ids)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        ours = run.claims["attention.score-std"]
        self.assertEqual(ours["status"], "not applicable")
        self.assertEqual([ctl for ch in ours["checks"] for ctl in ch["controls"]], [])
        self.assertRegex(run.stdout, r"N/A +claim attention.score-std .* controls not run \(N/A\)")
        theirs = [ctl for ch in run.claims["masking.first-position-self"]["checks"] for ctl in ch["controls"]]
        self.assertTrue(theirs and all(ctl["rejected"] for ctl in theirs))
        plain = subprocess.run([LESSONS, "audit", "attention.score-std", "--root", SOURCE], capture_output=True, text=True,
                               timeout=120)
        self.assertEqual(plain.returncode, 0, plain.stdout + plain.stderr)
        self.assertRegex(plain.stdout, r"PASS +claim attention.score-std .* controls rejected ([1-9]\d*)/\1")

    def test_bad_arguments(self):
        for args, text in ((["--candidate-timeout", "0"], "--candidate-timeout 0"),
                           (["--backend", "fused"], "--candidate and --backend")):
            run = audit(f"{PY} {MISBEHAVING} crash", *args)
            self.assertEqual(run.returncode, 2, run.stdout)
            self.assertIn(text, run.stderr)
        run = audit("/nonexistent/candidate")
        self.assertEqual(run.returncode, 2)
        self.assertIn("no reply to the hello: it exited with status 127", run.stderr)


if __name__ == "__main__":
    unittest.main()
