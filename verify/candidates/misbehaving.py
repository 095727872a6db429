#!/usr/bin/python3
"""A candidate that misbehaves at its N-th request (N = 1 unless given), for the audit's error
paths (verify/cli/test_candidates.py):

    python3 verify/candidates/misbehaving.py MODE [N]

crash        exits with status 3 at request N, and every N-th request of each restart
crash-once   exits at request N of its first run only (the restart then serves everything): the
             first run leaves the file $VL_MISBEHAVING_MARK (required) behind to tell the next
hang         sleeps for an hour at request N (and its child process too: a process group to kill);
             it first leaves the file $VL_MISBEHAVING_MARK, if set, to say it hangs
garbage      replies a line that is not JSON at request N
wrong-id     replies with id + 1000 at request N
wrong-shape  writes an output with one row too many at request N
wrong-dtype  writes an output as float32 when the inputs are float64 at request N
litter       also writes a file of its own (and a folder with a file in it) into request N's folder,
             and at request N + 1 replies an error if that folder is still there (first leaving the
             file $VL_MISBEHAVING_MARK, if set, to say request N + 1 came)
squat        makes the folder of request N + 1 (r<id + 1>, beside its own) before the suite does
no-hello     never answers the hello
Requests other than N are served by the NumPy reference adapter.
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "adapters"))
import numpy_reference as ref  # noqa: E402

OPS = {"attention": ref.attention, "attention_backward": ref.attention_backward, "mha": ref.mha,
       "positional_encoding": ref.positional_encoding, "linear_attention": ref.linear_attention}


def main():
    mode, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1
    first_run = True
    if mode == "crash-once":
        mark = os.environ["VL_MISBEHAVING_MARK"]
        first_run = not os.path.exists(mark)
        open(mark, "w").close()
    seen = 0
    littered = None
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "hello":
            if mode == "no-hello":
                time.sleep(3600)
            print(json.dumps({"id": 0, "ok": True, "name": f"misbehaving {mode}", "ops": sorted(OPS)}), flush=True)
            continue
        seen += 1
        reply = {"id": req["id"], "ok": True}
        if mode == "litter" and seen == n + 1:
            if os.environ.get("VL_MISBEHAVING_MARK"):  # tell a test "request N + 1 came"
                open(os.environ["VL_MISBEHAVING_MARK"], "w").close()
            if littered and os.path.exists(littered):
                print(json.dumps({"id": req["id"], "ok": False, "error": f"request {n}'s folder {littered} is still there"}), flush=True)
                continue
        inputs = {k: np.load(p) for k, p in req["inputs"].items()}
        out = OPS[req["op"]](inputs, req["attrs"], set(req["outputs"]))
        dtype = next((a.dtype for a in inputs.values() if a.dtype.kind == "f"), np.float64)
        for name, path in req["outputs"].items():
            np.save(path, np.asarray(out[name], dtype=dtype))
        if seen == n:
            if mode == "crash" or (mode == "crash-once" and first_run):
                print("misbehaving: crashing on purpose", file=sys.stderr, flush=True)
                os._exit(3)
            if mode == "hang":
                subprocess.Popen(["sleep", "3600"])  # a child that must die with the group
                if os.environ.get("VL_MISBEHAVING_MARK"):  # tell a test "hanging now, child started"
                    open(os.environ["VL_MISBEHAVING_MARK"], "w").close()
                time.sleep(3600)
            if mode == "garbage":
                print("this is not JSON", flush=True)
                continue
            if mode == "wrong-id":
                reply["id"] += 1000
            name, path = next(iter(req["outputs"].items()))
            if mode == "wrong-shape":
                a = np.asarray(out[name], dtype=dtype)
                np.save(path, np.concatenate([a, a[:1]], axis=0))
            if mode == "wrong-dtype":
                np.save(path, np.asarray(out[name], dtype=np.float32))
            if mode == "squat":
                os.makedirs(os.path.join(os.path.dirname(os.path.dirname(path)), f"r{req['id'] + 1}"))
            if mode == "litter":
                folder = littered = os.path.dirname(path)
                open(os.path.join(folder, "scratch.txt"), "w").write("mine\n")
                os.makedirs(os.path.join(folder, "cache"))
                open(os.path.join(folder, "cache", "entry"), "w").write("mine\n")
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
