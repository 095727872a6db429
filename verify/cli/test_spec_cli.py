"""`lessons spec`: the specs as the engine parsed them, as JSON (what docs/generate.py presents).

On the real specs the export holds every claim id that `lessons list` shows and every block's
line span matches the file; a malformed spec exits 2 naming file:line and leaves an existing
--json file as it was; and a spec whose claim is fenced with `~~~` (Markdown shows it, the engine
would not read it) is refused by `lessons audit` too, naming file:line.
Run by ctest with LESSONS=<binary> and VL_SOURCE_DIR=<checkout>; /usr/bin/python3.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

LESSONS = os.environ["LESSONS"]
SOURCE = os.environ["VL_SOURCE_DIR"]


def run(*args):
    return subprocess.run([LESSONS, *args], capture_output=True, text=True, timeout=600)


def line_of(text, needle):
    """1-based line of the first line of text that starts with needle."""
    return next(k + 1 for k, line in enumerate(text.splitlines()) if line.startswith(needle))


class SpecCli(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="vl_spec_")
        for sub in ("specs", "reference_outputs"):
            shutil.copytree(os.path.join(SOURCE, sub), os.path.join(self.dir, sub))
        self.spec = os.path.join(self.dir, "specs", "linear_rnn.md")
        with open(self.spec, encoding="utf-8") as f:
            self.text = f.read()

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def export(self, *args):
        out = os.path.join(self.dir, "specs.json")
        r = run("spec", *args, "--json", out)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(out, encoding="utf-8") as f:
            return json.load(f)

    def break_first_claim_fence(self):
        """The first claim block fenced with ~~~ instead of ```: returns the opening line."""
        at = line_of(self.text, "```claim")
        lines = self.text.split("\n")
        close = next(k for k in range(at, len(lines)) if lines[k] == "```")
        lines[at - 1], lines[close] = "~~~claim", "~~~"
        with open(self.spec, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        return at

    def test_export_holds_every_claim_the_audit_lists(self):
        listed = run("list", "--root", SOURCE)
        self.assertEqual(listed.returncode, 0, listed.stderr)
        claims = re.findall(r"^  claim   (\S+)  \(", listed.stdout, re.M)
        self.assertGreater(len(claims), 10, listed.stdout)
        exported = self.export("--root", SOURCE)
        ids = [b["claim"]["id"] for s in exported["specs"] for b in s["blocks"] if b["kind"] == "claim"]
        self.assertEqual(sorted(ids), sorted(claims))
        for b in (b for s in exported["specs"] for b in s["blocks"] if b["kind"] == "claim"):
            self.assertIn(b["claim"]["subject"], ("computation", "our-code"))
            # A comparison exactly when there is a number to compare with.
            if b["claim"]["tolerance"] == "none":
                self.assertIsNone(b["claim"]["compare"], b["claim"]["id"])
            else:
                self.assertIn(b["claim"]["compare"], ("<=", "<", ">=", ">", "=="), b["claim"]["id"])

    def test_block_spans_cover_the_file_in_order(self):
        for s in self.export("--root", SOURCE)["specs"]:
            with self.subTest(spec=s["file"]):
                with open(s["file"], encoding="utf-8") as f:
                    lines = f.read().split("\n")
                previous = lines.index("---", 1) + 1  # the front matter's closing line
                for b in s["blocks"]:
                    self.assertGreater(b["first_line"], previous, b)
                    self.assertLessEqual(b["first_line"], b["last_line"], b)
                    written = "".join(line + "\n" for line in lines[b["first_line"] - 1:b["last_line"]])
                    self.assertEqual(b["text"], written, b)
                    if b["kind"] != "prose":
                        self.assertTrue(b["text"].startswith("```" + b["kind"]), b)
                        self.assertTrue(b["text"].endswith("\n```\n"), b)
                    # Between two blocks, only blank lines: nothing of the spec is left out.
                    self.assertEqual("".join(lines[previous:b["first_line"] - 1]).strip(), "", b)
                    previous = b["last_line"]
                self.assertEqual("".join(lines[previous:]).strip(), "")
                kinds = {b["kind"] for b in s["blocks"]}
                self.assertTrue({"prose", "claim", "listing", "output"} <= kinds, kinds)

    def test_rules_are_exported_as_written_and_as_parsed(self):
        spec = self.export(self.spec)["specs"][0]
        rules = [r for b in spec["blocks"] if b["kind"] == "rules" for r in b["rules"]["rules"]]
        self.assertTrue(rules)
        lines = self.text.split("\n")
        for r in rules:
            self.assertEqual(lines[r["line"] - 1], r["written"])
            self.assertIn(r["rule"], r["written"])
            self.assertIn(r["reason"], r["written"])
            self.assertLessEqual(r["first_line"], r["last_line"])

    def test_malformed_spec_exits_2_naming_file_line_and_writes_nothing(self):
        at = self.break_first_claim_fence()
        out = os.path.join(self.dir, "specs.json")
        with open(out, "w") as f:
            f.write("the previous export\n")
        r = run("spec", "--root", self.dir, "--json", out)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(f"{self.spec}:{at}: '~~~claim'", r.stderr)
        self.assertIn("write '```claim'", r.stderr)
        with open(out) as f:
            self.assertEqual(f.read(), "the previous export\n")
        self.assertEqual(sorted(os.listdir(self.dir)), ["reference_outputs", "specs", "specs.json"])  # no temporary left

    def test_audit_refuses_a_tilde_claim_naming_file_line(self):
        at = self.break_first_claim_fence()
        r = run("audit", "linear-rnn", "--root", self.dir)
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertIn(f"linear_rnn.md:{at}: '~~~claim'", r.stdout + r.stderr)

    def test_bad_arguments_exit_2(self):
        r = run("spec", "--root", os.path.join(self.dir, "nowhere"))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("nowhere/specs: not a directory", r.stderr)
        r = run("spec", self.spec, "--json", os.path.join(self.dir, "no", "such", "dir", "x.json"))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("its folder does not exist", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
