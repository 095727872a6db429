#!/usr/bin/python3
"""One ctest: `lessons audit --candidate` stopped by a signal leaves nothing behind.

    check_signal.py LESSONS --root CHECKOUT

Two runs, each with TMPDIR a fresh folder of this test's (so that /tmp/vl-candidate-* of other
runs cannot confuse it), the candidate's process group id written to a file by its shell:

1. SIGTERM while the candidate hangs inside request 3 (verify/candidates/misbehaving.py hang 3,
   which starts a child `sleep`, then leaves a mark file to say it hangs: the test waits for that
   mark, not for a guessed time): the audit must die by SIGTERM within 10 s;
2. SIGINT as soon as a request is seen in flight (its folder exists): it must end within 10 s,
   by SIGINT or with 130.

The 10 s are a guard against an audit that ignores the signal (it would otherwise run on), not
a timing: a working audit ends at once.

Each time: no vl-candidate-* folder is left in TMPDIR and no process of the candidate's group
remains.
"""
import argparse
import glob
import os
import signal
import subprocess
import sys
import tempfile
import time


def wait_for(predicate, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def one_run(lessons, root, candidate, sig, ready, accepted_status):
    problems = []
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as scratch:
        pidfile = os.path.join(scratch, "pgid")
        command = f"echo $$ > {pidfile}; exec {candidate}"
        env = dict(os.environ, TMPDIR=tmp, VL_MISBEHAVING_MARK=os.path.join(scratch, "hanging"))
        audit = subprocess.Popen([lessons, "audit", "--root", root, "--candidate", command], cwd=root, env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            folders = lambda: glob.glob(os.path.join(tmp, "vl-candidate-*"))
            if not wait_for(lambda: os.path.exists(pidfile) and folders() and ready(folders(), scratch), 60):
                return [f"{signal.Signals(sig).name}: the audit never reached the point to interrupt"]
            with open(pidfile) as f:
                pgid = int(f.read())
            audit.send_signal(sig)
            try:
                _, err = audit.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                audit.kill()
                _, err = audit.communicate()
                return [f"{signal.Signals(sig).name}: the audit was still running 10 s after the signal"]
            if audit.returncode not in accepted_status:
                problems.append(f"{signal.Signals(sig).name}: exit status {audit.returncode}, expected one of {accepted_status}: {err[-500:]}")
            if folders():
                problems.append(f"{signal.Signals(sig).name}: left behind {folders()}")
            if not wait_for(lambda: not group_alive(pgid), 2):
                problems.append(f"{signal.Signals(sig).name}: the candidate's process group {pgid} is still running")
                os.killpg(pgid, signal.SIGKILL)
            print(f"{signal.Signals(sig).name}: exit status {audit.returncode}; no folder left, group {pgid} gone")
        finally:
            if audit.poll() is None:
                audit.kill()
                audit.wait()
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lessons")
    ap.add_argument("--root", required=True)
    a = ap.parse_args()
    py = sys.executable
    hang = f"{py} {os.path.join(a.root, 'verify/candidates/misbehaving.py')} hang 3"
    numpy_ref = f"{py} {os.path.join(a.root, 'adapters/numpy_reference.py')}"
    # The hanging candidate's mark: it is inside request 3, its child started.
    in_request_3 = lambda dirs, scratch: os.path.exists(os.path.join(scratch, "hanging"))
    # A request's folder r<id> lives while it is in flight: any one means the audit has begun.
    after_hello = lambda dirs, scratch: bool(glob.glob(os.path.join(dirs[0], "r*")))
    problems = one_run(a.lessons, a.root, hang, signal.SIGTERM, in_request_3, (-signal.SIGTERM,))
    problems += one_run(a.lessons, a.root, numpy_ref, signal.SIGINT, after_hello, (-signal.SIGINT, 128 + signal.SIGINT))
    if problems:
        print("\n".join(["PROBLEMS:"] + problems), file=sys.stderr)
        return 1
    print("ok: nothing left behind after SIGTERM or SIGINT")
    return 0


if __name__ == "__main__":
    sys.exit(main())
