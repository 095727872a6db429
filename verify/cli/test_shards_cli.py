"""`lessons audit --shard K/N` and `lessons report merge`, driven as a CI matrix drives them.

The shards of one audit, each run on its own, are joined by `report merge` into the report the
audit gives unsharded, item for item (only wall times and the date may differ); every shard
takes a deterministic, disjoint part; and merge refuses what is not the shards of one run (a
shard missing or twice, another selection, seed or commit, an item that is not its shard's, a
file that is not a report), naming the files and overwriting nothing.
Run by ctest with LESSONS=<binary> and VL_SOURCE_DIR=<checkout>; /usr/bin/python3.
"""
import json
import os
import subprocess
import tempfile
import unittest

LESSONS = os.environ["LESSONS"]
# A lesson whose audit takes well under a second: the shards' arithmetic, not the claims, is tested.
LESSON = "masking"


def run(*args):
    return subprocess.run([LESSONS, *args], capture_output=True, text=True, timeout=600)


def without_times(j):
    """The report with what differs between two runs of the same audit left out: wall times and the date."""
    if isinstance(j, dict):
        return {k: without_times(v) for k, v in j.items() if k not in ("seconds", "date")}
    if isinstance(j, list):
        return [without_times(x) for x in j]
    return j


class Shards(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = cls.enterClassContext(tempfile.TemporaryDirectory(prefix="vl_shards_"))
        cls.whole = cls.audit("--json", cls.path("whole.json"))
        cls.shards = [cls.audit("--shard", f"{k}/3", "--json", cls.path(f"s{k}.json")) for k in (1, 2, 3)]

    @classmethod
    def path(cls, name):
        return os.path.join(cls.tmp, name)

    @classmethod
    def audit(cls, *args):
        r = run("audit", LESSON, *args)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr
        with open(args[-1]) as f:
            return json.load(f)

    def items(self, report):
        return [(c["id"], c.get("precision"), c["item"]) for l in report["lessons"] for c in l["claims"] + l["listings"]]

    def merge(self, *names, out="merged.json"):
        return run("report", "merge", *[self.path(n) for n in names], "--json", self.path(out))

    def test_shards_partition_the_items(self):
        whole = self.items(self.whole)
        parts = [self.items(s) for s in self.shards]
        self.assertEqual(sorted(sum(parts, [])), sorted(whole))
        for k, part in enumerate(parts):
            self.assertTrue(part, f"shard {k + 1}/3 judged nothing")
            self.assertTrue(all(item % 3 == k for _, _, item in part), part)
            self.assertEqual(self.shards[k]["scope"]["shard"], f"{k + 1}/3")

    def test_merge_gives_the_unsharded_report(self):
        r = self.merge("s3.json", "s1.json", "s2.json")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(self.path("merged.json")) as f:
            merged = json.load(f)
        self.assertEqual(without_times(merged), without_times(self.whole))
        self.assertIn("merged 3 shard report(s)", r.stdout)
        self.assertRegex(r.stdout, r"(?m)^\d+ passed, 0 failed")

    def test_merge_junit(self):
        r = run("report", "merge", *[self.path(f"s{k}.json") for k in (1, 2, 3)], "--junit", self.path("merged.xml"))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("merged.xml")) as f:
            xml = f.read()
        claims = sum(len(l["claims"]) + len(l["listings"]) for l in self.whole["lessons"])
        self.assertIn(f'tests="{claims}"', xml)

    def refused(self, *names, says):
        target = self.path("kept.json")
        with open(target, "w") as f:
            f.write("the earlier report\n")
        r = run("report", "merge", *[self.path(n) for n in names], "--json", target)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertRegex(r.stderr, says)
        with open(target) as f:
            self.assertEqual(f.read(), "the earlier report\n", "a refused merge overwrote its output")

    def edited(self, name, edit):
        with open(self.path(name)) as f:
            j = json.load(f)
        edit(j)
        out = "edited_" + name
        with open(self.path(out), "w") as f:
            json.dump(j, f)
        return out

    def test_refuses_a_missing_shard(self):
        self.refused("s1.json", "s3.json", says=r"shard 2/3 is missing")

    def test_refuses_a_shard_twice(self):
        self.refused("s1.json", "s1.json", "s2.json", "s3.json", says=r"s1\.json and .*s1\.json: both are shard 1/3")

    def test_refuses_another_run(self):
        other = self.edited("s2.json", lambda j: j["provenance"].update(commit="0123456789ab"))
        self.refused("s1.json", other, "s3.json", says=r"different runs \(commits differ\)")
        other = self.edited("s2.json", lambda j: j["scope"].update(seed=7))
        self.refused("s1.json", other, "s3.json", says=r"--cases or --seed differ")
        other = self.edited("s2.json", lambda j: j["scope"].update(specs_sha256="0" * 64))
        self.refused("s1.json", other, "s3.json", says=r"specs differ")
        self.refused("whole.json", "s1.json", says=r"different runs \(shard 1/1 and 1/3")

    def test_refuses_an_item_not_its_shards(self):
        def move(j):  # to an item of shard 2's residue that no report has
            j["lessons"][0]["claims"][0]["item"] += 3000001
        self.refused(self.edited("s1.json", move), "s2.json", "s3.json", says=r"item \d+ is not shard 1/3's")

    def test_refuses_a_report_with_an_item_deleted(self):
        def drop(j):
            j["lessons"][0]["claims"].pop()
        self.refused("s1.json", self.edited("s2.json", drop), "s3.json", says=r"item \d+ of the run's \d+ is in no report")

    def test_refuses_to_write_over_an_input(self):
        r = run("report", "merge", *[self.path(f"s{k}.json") for k in (1, 2, 3)], "--json", self.path("s1.json"))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("it is one of the reports to merge", r.stderr)
        with open(self.path("s1.json")) as f:
            self.assertEqual(json.load(f), self.shards[0])

    def test_a_shard_with_nothing_to_judge_passes_and_merges(self):
        # One claim in float64 is one item: shard 2 of 2 has none, which is no failure of the run.
        one = ("masking.alignment", "--dtype", "float64")
        for k in (1, 2):
            r = run("audit", *one, "--shard", f"{k}/2", "--json", self.path(f"one{k}.json"))
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        r = run("report", "merge", self.path("one1.json"), self.path("one2.json"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"(?m)^1 passed, 0 failed")

    def test_refuses_what_is_not_a_report(self):
        with open(self.path("junk.json"), "w") as f:
            f.write('{"lessons": [')
        self.refused("junk.json", says=r"junk\.json: not an audit report")
        no_scope = self.edited("s1.json", lambda j: j.pop("scope"))
        self.refused(no_scope, "s2.json", "s3.json", says=r"edited_s1\.json: not an audit report")

    def test_bad_shard_arguments(self):
        for bad in ("0/2", "3/2", "1/0", "a/b", "1/2x", "2", "1/ 2", "+1/2", "99999999999/2"):
            r = run("audit", LESSON, "--shard", bad)
            self.assertEqual(r.returncode, 2, bad)
            self.assertIn(f"--shard {bad}: not a shard K/N", r.stderr)


class GeneratedCases(unittest.TestCase):
    """--cases and --seed reach the generated checks, the report says them, and a seed replays."""

    def report(self, *args):
        r = run("audit", "masking.masked-weights-zero", "-v", *args)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r.stdout

    def test_seed_and_cases_printed_and_replayed(self):
        a = self.report("--cases", "5", "--seed", "11")
        self.assertIn("-- generated cases: 5 per check that draws them, seed 11", a)
        self.assertIn("9 anchor and 5 drawn cases (seed 11) pass", a)
        self.assertNotIn("seed 20261206", a.split("-- claims")[0])  # every generated check, the outputs-only ones too
        self.assertEqual(a.split("-- provenance")[0], self.report("--cases", "5", "--seed", "11").split("-- provenance")[0])
        self.assertNotEqual(a.split("-- provenance")[0], self.report("--cases", "5", "--seed", "12").split("-- provenance")[0])

    def test_a_broken_backend_shows_its_smallest_failing_case(self):
        out = self.report("--cases", "5")
        line = next(l for l in out.splitlines() if "control window one key narrower" in l and "FAILS at the smallest case" in l)
        # A key at the window's edge hidden: the smallest case that shows it has one batch, one head,
        # a window of 1 and a query one position past a key (Sq + Sk = 3: two queries and a key, or
        # a query at position 1 bottom-right over two keys).
        smallest = dict(kv.split("=") for kv in line.split("smallest case found: ")[1].split(" (data seed")[0].split())
        self.assertEqual((smallest["B"], smallest["Hkv"], smallest["group"], smallest["window"]), ("1", "1", "1", "1"), line)
        self.assertEqual(int(smallest["Sq"]) + int(smallest["Sk"]), 3, line)


if __name__ == "__main__":
    unittest.main()
