#!/usr/bin/python3
"""One ctest: audit a candidate and require exactly the given claims (and listings) to fail.

    check_candidate.py LESSONS --root CHECKOUT CANDIDATE_COMMAND [--fail ID ...] [--reason ID=TEXT ...]

Runs `LESSONS audit --candidate CANDIDATE_COMMAND --json F --junit G` over every lesson, in every
precision the candidate declares (the audit's default), then requires: the exit status is 1 if
any claim must fail, else 0; the claims failed in some precision are exactly --fail (status
"failed", never "error"); every other claim about the computation passed or is not applicable
for the protocol's reasons, or in another precision than float64 for the spec's (no claim error,
no vacuous check); every negative control was rejected; --reason's text is in each failed claim's "why";
the JUnit file names each failed claim in a <failure>. A listing id in --fail is a listing whose
goldens the candidate must fail; every other listing that ran through the candidate must pass,
and one that did not must be not applicable (our own code, or an operation the protocol lacks).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def exchange_dir():
    """A fresh temporary folder for the audit (its TMPDIR), which must be empty when the audit
    ends: the suite's exchange folder removed, nothing the candidate wrote left behind (ONNX
    Runtime's mat-debug-<pid>.log was, one per run, until its adapter removed it). It sits in the
    temporary folder, which under ctest is the run's own, in memory where /dev/shm has room
    (verify/test_tmpdir.py)."""
    return tempfile.mkdtemp(prefix="vl-check-candidate-")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lessons")
    ap.add_argument("candidate")
    ap.add_argument("--fail", nargs="*", default=[])
    ap.add_argument("--reason", nargs="*", default=[])
    ap.add_argument("--root", required=True)
    ap.add_argument("--keep-json", help="also copy the audit's JSON here (for the conformance matrix test)")
    a = ap.parse_args()
    exchange = exchange_dir()
    with tempfile.TemporaryDirectory() as tmp:
        report, junit = os.path.join(tmp, "audit.json"), os.path.join(tmp, "audit.xml")
        try:
            run = subprocess.run([a.lessons, "audit", "--root", a.root, "--candidate", a.candidate, "--json", report,
                                  "--junit", junit], capture_output=True, text=True, timeout=300, cwd=a.root,
                                 env=dict(os.environ, TMPDIR=exchange))
            # ONNX Runtime keeps one session-id file per temporary folder (.ses: a timestamp and a
            # UUID), rewritten by each run rather than added to: not a leftover of this audit.
            left = sorted(f for f in os.listdir(exchange) if f != ".ses")
        finally:
            shutil.rmtree(exchange, ignore_errors=True)
        problems = []
        if left:
            problems.append(f"the audit left {left} in its temporary folder (TMPDIR)")
        want_rc = 1 if a.fail else 0
        if run.returncode != want_rc:
            problems.append(f"exit status {run.returncode}, expected {want_rc}")
        if not os.path.exists(report):
            print(f"no report (exit status {run.returncode}):\n{run.stdout[-2000:]}{run.stderr[-2000:]}", file=sys.stderr)
            return 1
        with open(report) as f:
            r = json.load(f)
        if a.keep_json:
            shutil.copyfile(report, a.keep_json)
        cases = {t.get("name"): t for t in ET.parse(junit).getroot().iter("testcase")}
    # The audit judges every precision the candidate declares: a claim per (id, precision).
    judged = [c for lesson in r["lessons"] for c in lesson["claims"]]
    claims = {c["id"]: c for c in judged if c.get("precision", "float64") == "float64"}
    listings = {li["id"]: li for lesson in r["lessons"] for li in lesson["listings"]}
    failed = sorted({c["id"] for c in judged if c["status"] == "failed"})
    want_claims = sorted(i for i in a.fail if i not in listings)
    if failed != want_claims:
        problems.append(f"failed claims {failed}, expected {want_claims}")
    failed_listings = sorted(i for i, li in listings.items() if li["status"] == "failed")
    want_listings = sorted(i for i in a.fail if i in listings)
    if failed_listings != want_listings:
        problems.append(f"failed listings {failed_listings}, expected {want_listings}: " +
                        "; ".join(f"{i}: {listings[i]['why']}" for i in failed_listings))
    for i, li in listings.items():
        if li["status"] not in ("passed", "failed", "not applicable"):
            problems.append(f"listing {i}: {li['status']}: {li['why']}")
    for c in judged:
        i = c["id"] if c.get("precision", "float64") == "float64" else f'{c["id"]} [{c["precision"]}]'
        if c["status"] not in ("passed", "failed", "not applicable"):
            problems.append(f"{i}: {c['status']}: {c['why']}")
        # N/A only for the protocol's reasons, or, in another precision, the spec's own (tolerance-<p>: n/a)
        spec_says = c.get("precision", "float64") != "float64" and c["why"].startswith(f'not in {c["precision"]}: ')
        if c["subject"] != "our-code" and c["status"] == "not applicable" and "vl-candidate/1" not in c["why"] and not spec_says:
            problems.append(f"{i}: not applicable for another reason than the protocol: {c['why']}")
        for check in c["checks"]:
            for ctl in check["controls"]:
                if not ctl["rejected"]:
                    problems.append(f"{i}: control '{ctl['name']}' not rejected")
    for item in a.reason:
        cid, text = item.split("=", 1)
        for c in judged:
            if c["id"] == cid and c["status"] == "failed" and text not in c["why"]:
                problems.append(f"{cid} [{c.get('precision', 'float64')}]: reason '{c['why']}' does not say '{text}'")
    for cid in want_claims:
        case = cases.get(f"claim {cid}")
        if case is None or case.find("failure") is None:
            problems.append(f"JUnit has no failing test case 'claim {cid}'")
    if sum(c["status"] == "passed" for c in judged) == 0:
        problems.append("no claim passed")
    print(run.stdout[-3000:])
    if problems:
        print("\n".join(["PROBLEMS:"] + problems), file=sys.stderr)
        print(run.stderr[-3000:], file=sys.stderr)
        return 1
    ran = sorted(i for i, li in listings.items() if li["status"] in ("passed", "failed"))
    print(f"ok: {len(failed)} claim(s) failed as expected: {', '.join(failed) or 'none'}; "
          f"listings through the candidate: {', '.join(ran) or 'none'} ({len(failed_listings)} failed as expected)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
