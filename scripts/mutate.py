#!/usr/bin/python3
"""Mutation testing of our own code: apply curated single-change mutants, one at a time, to a
scratch copy of the tree, rebuild incrementally, run the tests that can kill each (stop at the
first kill, then the audit as a last resort) and report the kill rate and the survivors.

    scripts/mutate.py --scratch /tmp/mut [--list scripts/mutants.json] [--only ID ...]
                      [--sample N] [--budget-min 60] [--json out.json] [--markdown out.md]

The scratch copy must exist and hold a configured build dir (`--build`, default SCRATCH/build);
`--sync` first copies this checkout's src/, verify/, specs/, reference_outputs/ there. The tree
here is never modified. Each mutant's `find` must occur exactly once in its file (else the list
is stale: an error, not a survivor). A mutant that does not compile is "stillborn" and left out
of the rate. Per mutant the wall time is recorded; the run stops starting new mutants once the
budget is spent, and says how many it did not run. Exit status: 0 when every mutant that ran was
killed or is argued equivalent in the list, 1 otherwise, 2 on bad input.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def fail(msg):
    print(f"mutate.py: {msg}", file=sys.stderr)
    sys.exit(2)


def spread(mutants):
    """Round-robin over the folders (engine, numeric, kernels, backends), .cpp files first, so that
    a run cut short by its budget has still sampled every part of the code."""
    groups = {}
    for m in sorted(mutants, key=lambda m: m["file"].endswith(".hpp")):
        groups.setdefault(str(Path(m["file"]).parent), []).append(m)
    out, queues = [], list(groups.values())
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


def load(list_file):
    try:
        data = json.loads(Path(list_file).read_text())
        mutants = data["mutants"]
    except (OSError, ValueError, KeyError) as e:
        fail(f"{list_file}: cannot read the mutant list: {e}")
    seen = set()
    for i, m in enumerate(mutants):
        for key in ("id", "file", "find", "replace", "what", "tests"):
            if key not in m:
                fail(f"{list_file}: mutant {i} ({m.get('id', '?')}) has no '{key}'")
        if m["id"] in seen:
            fail(f"{list_file}: mutant id '{m['id']}' given twice")
        seen.add(m["id"])
    return mutants


def run(cmd, cwd, timeout):
    """(returncode, seconds, tail of output); a timeout counts as a failure (rc 124)."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
        rc, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        rc, out = 124, e.stdout or b""
    return rc, time.monotonic() - t0, out.decode(errors="replace")[-2000:]


NEW_TESTS = set()  # the list's "new_tests": run last, so that "killed before them" can be told


def tests_of(m, audit):
    """Older tests in the list's order, then the audit, then the list's new tests."""
    old = [t for t in m["tests"] if t not in NEW_TESTS and t != "audit"]
    new = [t for t in m["tests"] if t in NEW_TESTS]
    return old + (["audit"] if audit or "audit" in m["tests"] else []) + new


def targets_of(tests):
    t = set()
    for name in tests:
        group = re.match(r"test_([a-z]+)_", name)
        if group:
            t.add(f"verify_{group.group(1)}")  # ctest test_<group>_* runs a suite of verify_<group>
        else:
            t.add("lessons")  # the audit, and every CLI test, runs it
    return sorted(t)


def kill_commands(m, scratch, build, audit):
    for name in tests_of(m, audit):
        if name == "audit":
            yield name, [str(build / "bin" / "lessons"), "audit", "--root", str(scratch)]
        else:
            yield name, ["ctest", "--test-dir", str(build), "-R", f"^{name}$", "--no-tests=error", "--timeout", "300"]


def one(m, scratch, build, jobs, audit):
    path = scratch / m["file"]
    try:
        original = path.read_text()
    except OSError as e:
        return {"status": "error", "detail": f"{m['file']}: {e}"}
    if original.count(m["find"]) != 1:
        return {"status": "error", "detail": f"{m['file']}: 'find' occurs {original.count(m['find'])} times (expected once)"}
    t0 = time.monotonic()
    result = {"status": "survived", "killed_by": None}
    try:
        path.write_text(original.replace(m["find"], m["replace"]))
        rc, secs, out = run(["nice", "-n", "19", "cmake", "--build", str(build), "-j", str(jobs), "--target", *targets_of(tests_of(m, audit))],
                            scratch, 1800)
        result["build_s"] = round(secs, 1)
        if rc != 0:
            result.update(status="stillborn", detail=out[-600:])
            return result
        for name, cmd in kill_commands(m, scratch, build, audit):
            rc, secs, out = run(["nice", "-n", "19", *cmd], scratch, 600)
            result.setdefault("runs", []).append({"test": name, "rc": rc, "s": round(secs, 1)})
            if rc != 0:
                result.update(status="killed", killed_by=name, killed_before=name not in NEW_TESTS)
                break
    finally:
        path.write_text(original)
        result["s"] = round(time.monotonic() - t0, 1)
    return result


def markdown(results, mutants, meta):
    by = {m["id"]: m for m in mutants}
    ran = [r for r in results if r["status"] in ("killed", "survived")]
    killed = sum(r["status"] == "killed" for r in ran)
    equivalent = [r for r in ran if r["status"] == "survived" and by[r["id"]].get("equivalent")]
    before = sum(r["status"] == "killed" and r.get("killed_before") for r in ran)
    lines = [
        "# Mutation testing: the suite's measured strength {#mutation}",
        "",
        f"Generated by `scripts/mutate.py` on {meta['date']} (commit {meta['commit']}), from the curated list "
        "`scripts/mutants.json`: each mutant is one change to our code (an operator, a constant, a loop bound, an "
        "off-by-one, a swapped argument), built in a scratch copy and run against the tests that can catch it, then the audit.",
        "",
        f"**{killed} of {len(ran)} mutants killed ({100.0 * killed / max(1, len(ran)):.1f}%)**; "
        f"{len(equivalent)} survivors argued equivalent; "
        f"{sum(r['status'] == 'stillborn' for r in results)} did not compile (left out); "
        f"{meta['not_run']} not run (time budget); total {meta['wall_min']:.1f} min. "
        f"Before this list's new tests ({', '.join(f'`{t}`' for t in sorted(NEW_TESTS)) or 'none'}): "
        f"{before} of {len(ran)} ({100.0 * before / max(1, len(ran)):.1f}%).",
        "",
    ] + ([f"Runs: {meta['runs']}.", ""] if meta.get("runs") else []) + [
        "| mutant | file | change | verdict | killed by | s |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        m = by[r["id"]]
        verdict = r["status"] + (" (equivalent)" if r["status"] == "survived" and m.get("equivalent") else "")
        verdict += f" ({r['rerun']})" if r.get("rerun") else ""
        lines.append(f"| `{r['id']}` | `{m['file']}` | {m['what']} | {verdict} | {r.get('killed_by') or ''} | {r.get('s', '')} |")
    surv = [r for r in results if r["status"] == "survived"]
    if surv:
        lines += ["", "## Survivors", ""]
        for r in surv:
            m = by[r["id"]]
            lines.append(f"- `{r['id']}` ({m['file']}: `{m['find']}` → `{m['replace']}`): "
                         + (f"equivalent: {m['equivalent']}" if m.get("equivalent") else "**not killed, not argued**"))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scratch", help="the scratch copy (never this checkout); required for a run")
    ap.add_argument("--build", help="its configured build dir (default SCRATCH/build)")
    ap.add_argument("--list", default=str(HERE / "scripts" / "mutants.json"))
    ap.add_argument("--only", nargs="*", default=[], help="mutant ids")
    ap.add_argument("--sample", type=int, help="a random sample of N mutants")
    ap.add_argument("--ci", action="store_true", help="only the mutants marked \"ci\": true (their tests need no audit)")
    ap.add_argument("--no-audit", action="store_true", help="run only each mutant's listed tests, not the audit after them")
    ap.add_argument("--seed", type=int, default=None, help="the sample's seed (default: from the date)")
    ap.add_argument("--budget-min", type=float, default=60.0, help="start no mutant after this many minutes")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="build jobs (default: every core)")
    ap.add_argument("--sync", action="store_true", help="copy src/ verify/ specs/ reference_outputs/ here to the scratch first")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--markdown", help="write the table here (docs/pages/mutation.md)")
    ap.add_argument("--report-from", help="no run: write --markdown from an earlier run's --json (after arguing survivors in the list)")
    ap.add_argument("--merge", nargs="*", default=[],
                    help="with --report-from: later runs' --json whose results replace the earlier run's, mutant by mutant (the "
                         "mutants re-run at a later commit, new ones); --json writes the merged run")
    ap.add_argument("--check-list", action="store_true",
                    help="no run: check that every mutant's 'find' occurs exactly once in its file of this checkout (ctest mutants_list_live)")
    a = ap.parse_args()
    if a.check_list:
        stale = []
        for m in load(a.list):
            path = HERE / m["file"]
            count = path.read_text().count(m["find"]) if path.is_file() else -1
            if count != 1:
                stale.append(f"{m['id']}: {m['file']}" + (" does not exist" if count < 0 else f": 'find' occurs {count} times (expected once)"))
        for line in stale:
            print(f"{a.list}: stale mutant {line}", file=sys.stderr)
        print(f"{a.list}: {len(load(a.list)) - len(stale)} mutants apply, {len(stale)} stale")
        return 1 if stale else 0
    if a.report_from:
        NEW_TESTS.update(json.loads(Path(a.list).read_text()).get("new_tests", []))
        try:
            done = json.loads(Path(a.report_from).read_text())
        except (OSError, ValueError) as e:
            fail(f"--report-from {a.report_from}: {e}")
        if not a.markdown:
            fail("--report-from needs --markdown OUT")
        for later_file in a.merge:
            try:
                later = json.loads(Path(later_file).read_text())
            except (OSError, ValueError) as e:
                fail(f"--merge {later_file}: {e}")
            redone = {r["id"]: r for r in later["results"]}
            kept = [r for r in done["results"] if r["id"] not in redone]
            m, lm = done["meta"], later["meta"]
            earlier_runs = m.get("runs") or f"{m['commit']}, {m['date']}: {len(done['results'])} mutants, {m['wall_min']:.0f} min"
            done = {"results": kept + later["results"],
                    "meta": {**m, "date": max(m["date"], lm["date"]), "not_run": m["not_run"] + lm["not_run"],
                             "wall_min": m["wall_min"] + lm["wall_min"],
                             "commit": f"{m['commit']} ({len(kept)} mutants), {lm['commit']} ({len(redone)}: re-run or new)",
                             "runs": f"{earlier_runs}; then {lm['commit']}, {lm['date']}: {len(redone)} mutants, {lm['wall_min']:.0f} min ("
                                     + ", ".join(sorted(redone)) + ")"}}
        listed = {m["id"] for m in load(a.list)}
        unknown = sorted(r["id"] for r in done["results"] if r["id"] not in listed)
        if unknown:
            fail(f"--report-from: results for mutants not in {a.list}: {', '.join(unknown)}")
        if a.json:
            Path(a.json).write_text(json.dumps(done, indent=1) + "\n")
        Path(a.markdown).write_text(markdown(done["results"], load(a.list), done["meta"]))
        return 0
    if not a.scratch:
        fail("--scratch is required (a copy of the tree outside this checkout, with a configured build dir)")
    scratch = Path(a.scratch).resolve()
    build = Path(a.build).resolve() if a.build else scratch / "build"
    if scratch == HERE or HERE in scratch.parents:
        fail(f"--scratch {scratch}: must be a copy outside this checkout, never the checkout itself")
    if not (build / "CMakeCache.txt").is_file():
        fail(f"--build {build}: not a configured build dir (run cmake -S {scratch} -B {build} first)")
    mutants = load(a.list)
    NEW_TESTS.update(json.loads(Path(a.list).read_text()).get("new_tests", []))
    if a.only:
        unknown = set(a.only) - {m["id"] for m in mutants}
        if unknown:
            fail(f"--only: unknown mutant ids {sorted(unknown)}")
        mutants = [m for m in mutants if m["id"] in a.only]
    mutants = spread(mutants)
    if a.ci:
        mutants = [m for m in mutants if m.get("ci")]
    if a.sample:
        rng = random.Random(a.seed if a.seed is not None else int(time.strftime("%Y%m%d")))
        mutants = rng.sample(mutants, min(a.sample, len(mutants)))
    if a.sync:
        # Copy only what differs, stamped now: a copy keeping its older mtime would leave the
        # scratch build's objects of the previous content in place (make would see nothing new).
        for d in ("src", "verify", "specs", "reference_outputs", "CMakeLists.txt"):
            for src in ([HERE / d] if (HERE / d).is_file() else sorted((HERE / d).rglob("*"))):
                dst = scratch / src.relative_to(HERE)
                if src.is_file() and (not dst.is_file() or dst.read_bytes() != src.read_bytes()):
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(src, dst)
    # Baseline: the unmutated scratch copy must pass every test the mutants name (else a "kill"
    # would be the tree's own failure, not the mutant's).
    names = sorted({t for m in mutants for t in tests_of(m, not a.no_audit)})
    # Configure again first: a verify/test_*.cpp new to the copy is a target only after it. With
    # ccache as the compiler launcher, putting a mutated file back costs the next mutant's build
    # cache hits, not a second compile of everything that includes it: the 2026-12-01 run spent
    # 11615 of its 12303 s building, half of it recompiling files already put back.
    launcher = "ccache" if os.environ.get("VL_NO_CCACHE") != "1" and shutil.which("ccache") else ""
    rc, secs, out = run(["cmake", "-S", str(scratch), "-B", str(build), f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}",
                         f"-DCMAKE_C_COMPILER_LAUNCHER={launcher}"], scratch, 600)
    if rc != 0:
        fail(f"the scratch copy does not configure:\n{out}")
    rc, secs, out = run(["nice", "-n", "19", "cmake", "--build", str(build), "-j", str(a.jobs), "--target", *targets_of(names)], scratch, 3600)
    if rc != 0:
        fail(f"the unmutated scratch copy does not build:\n{out}")
    for name, cmd in kill_commands({"tests": names}, scratch, build, False):
        rc, secs, out = run(["nice", "-n", "19", *cmd], scratch, 900)
        if rc != 0:
            fail(f"the unmutated scratch copy fails {name}: fix the tree first\n{out}")
        print(f"baseline {name}: passed ({secs:.1f} s)", flush=True)
    # The commit is read before the run: one made in this checkout while the mutants run is not
    # what they ran against.
    stamp = scratch / ".vl-commit"  # written by mutate-all.sh: the commit the copy holds (else this checkout's HEAD)
    commit = stamp.read_text().strip() if stamp.is_file() else subprocess.run(
        ["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(HERE), "status", "--porcelain", "--", "src", "verify", "specs", "reference_outputs", "CMakeLists.txt"],
                           stdout=subprocess.PIPE, text=True).stdout.strip()
    commit = (commit or "?") + (" with uncommitted changes synced" if a.sync and dirty else "")
    t_start = time.monotonic()
    results, not_run = [], 0
    for i, m in enumerate(mutants):
        if time.monotonic() - t_start > a.budget_min * 60:
            not_run = len(mutants) - i
            print(f"budget of {a.budget_min} min spent: {not_run} mutants not run", flush=True)
            break
        try:
            r = one(m, scratch, build, a.jobs, not a.no_audit)
        except KeyboardInterrupt:  # Ctrl-C (kill -INT): the mutant is restored (one's finally); report what ran
            not_run = len(mutants) - i
            print(f"interrupted: {not_run} mutants not run", flush=True)
            break
        r["id"] = m["id"]
        results.append(r)
        print(f"[{i + 1}/{len(mutants)}] {m['id']}: {r['status']} {r.get('killed_by') or ''} ({r.get('s', 0)} s)", flush=True)
        if r["status"] == "error":
            fail(f"mutant {m['id']}: {r['detail']}")
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit, "not_run": not_run,
            "wall_min": (time.monotonic() - t_start) / 60, "jobs": a.jobs, "compiler_launcher": launcher or "none"}
    if a.json:
        Path(a.json).write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    if a.markdown:
        Path(a.markdown).write_text(markdown(results, load(a.list), meta))
    ran = [r for r in results if r["status"] in ("killed", "survived")]
    killed = sum(r["status"] == "killed" for r in ran)
    by = {m["id"]: m for m in mutants}
    unargued = [r["id"] for r in ran if r["status"] == "survived" and not by[r["id"]].get("equivalent")]
    print(f"{killed} of {len(ran)} killed; survivors not argued: {', '.join(unargued) or 'none'}")
    return 1 if unargued else 0


if __name__ == "__main__":
    sys.exit(main())
