"""`lessons eval attention` with ONNX's cache, window and score-stage options, against a NumPy
reference written here from ONNX's definition: query i sits at p = offset + i (offset = the past
length with --past-key, nonpad_kv_seqlen[b] - Sq with --nonpad-kv-seqlen, else 0) and sees key
j iff j < L_b, j <= p (causal), p - left <= j <= p + right (window). float64 must agree to 1e-12.
Bad combinations: exit 2, a message naming the options, and no file written.
Run by ctest with LESSONS=<binary>; /usr/bin/python3.
"""
import os
import subprocess
import tempfile
import unittest

import numpy as np

LESSONS = os.environ["LESSONS"]


def run(*args):
    return subprocess.run([LESSONS, *map(str, args)], capture_output=True, text=True, timeout=300)


def onnx_attention(q, k, v, past_k=None, past_v=None, nonpad=None, causal=False, left=-1, right=-1, softcap=0.0):
    """Returns Y and the four score stages (0 scaled, 1 softcapped, 2 masked, 3 softmax)."""
    if past_k is not None:
        k = np.concatenate([past_k, k], axis=2)
        v = np.concatenate([past_v, v], axis=2)
    B, H, Sq, D = q.shape
    Sk = k.shape[2]
    rep = H // k.shape[1]
    kr, vr = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
    s0 = (q @ np.swapaxes(kr, -1, -2)) / np.sqrt(D)
    s1 = softcap * np.tanh(s0 / softcap) if softcap > 0 else s0
    ok = np.ones((B, 1, Sq, Sk), dtype=bool)
    for b in range(B):
        L = Sk if nonpad is None else int(nonpad[b])
        offset = past_k.shape[2] if past_k is not None else (L - Sq if nonpad is not None else 0)
        for i in range(Sq):
            p = offset + i
            for j in range(Sk):
                ok[b, 0, i, j] = (j < L and (not causal or j <= p) and (left < 0 or j >= p - left)
                                  and (right < 0 or j <= p + right))
    s2 = np.where(ok, s1, -np.inf)
    m = np.max(s2, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s2 - m)
    tot = e.sum(axis=-1, keepdims=True)
    w = np.divide(e, tot, out=np.zeros_like(e), where=tot > 0)
    return w @ vr, [s0, s1, s2, w], k, v


class Cache(unittest.TestCase):
    def setUp(self):
        self.dir = self.enterContext(tempfile.TemporaryDirectory(prefix="vl_eval_cache_"))
        self.rng = np.random.default_rng(17)
        self.q = self.rng.standard_normal((2, 4, 3, 8))
        self.k = self.rng.standard_normal((2, 2, 3, 8))
        self.v = self.rng.standard_normal((2, 2, 3, 5))
        self.pk = self.rng.standard_normal((2, 2, 6, 8))
        self.pv = self.rng.standard_normal((2, 2, 6, 5))

    def path(self, name):
        return os.path.join(self.dir, name)

    def save(self, name, a):
        np.save(self.path(name), a)
        return self.path(name)

    def base(self, k=None, v=None):
        return ["eval", "attention", "--q", self.save("q.npy", self.q), "--k", self.save("k.npy", self.k if k is None else k),
                "--v", self.save("v.npy", self.v if v is None else v), "--out", self.path("y.npy")]

    def ok(self, *args):
        r = run(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return np.load(self.path("y.npy"))

    def test_past_key_value_and_present(self):
        y = self.ok(*self.base(), "--causal", "--past-key", self.save("pk.npy", self.pk), "--past-value", self.save("pv.npy", self.pv),
                    "--present-key", self.path("prk.npy"), "--present-value", self.path("prv.npy"))
        want, _, k, v = onnx_attention(self.q, self.k, self.v, self.pk, self.pv, causal=True)
        self.assertLess(np.abs(y - want).max(), 1e-12)
        self.assertTrue(np.array_equal(np.load(self.path("prk.npy")), k))
        self.assertTrue(np.array_equal(np.load(self.path("prv.npy")), v))
        # the queries sit after the 6 past positions (not at Sk - Sq = 6 by coincidence: 3 new keys
        # for 3 queries); without --causal every key is seen
        y2 = self.ok(*self.base(), "--past-key", self.path("pk.npy"), "--past-value", self.path("pv.npy"))
        self.assertLess(np.abs(y2 - onnx_attention(self.q, self.k, self.v, self.pk, self.pv)[0]).max(), 1e-12)
        self.assertGreater(np.abs(y2 - y).max(), 1e-3)

    def test_nonpad_kv_seqlen_and_windows(self):
        k = self.rng.standard_normal((2, 2, 9, 8))
        v = self.rng.standard_normal((2, 2, 9, 5))
        lengths = np.array([9, 5], dtype=np.int64)
        for left, right, causal in [(-1, -1, True), (2, -1, True), (1, 1, False)]:
            args = [*self.base(k, v), "--nonpad-kv-seqlen", self.save("n.npy", lengths), "--left-window", left,
                    "--right-window", right] + (["--causal"] if causal else [])
            y = self.ok(*args)
            want = onnx_attention(self.q, k, v, nonpad=lengths, causal=causal, left=left, right=right)[0]
            self.assertLess(np.abs(y - want).max(), 1e-12, (left, right, causal))

    def test_qk_output_every_mode(self):
        _, stages, _, _ = onnx_attention(self.q, self.k, self.v, causal=True, left=1, softcap=2.0)
        for mode in range(4):
            self.ok(*self.base(), "--causal", "--left-window", 1, "--softcap", 2.0, "--qk-output", mode, self.path("s.npy"))
            got = np.load(self.path("s.npy"))
            self.assertEqual(got.shape, (2, 4, 3, 3))
            fin = np.isfinite(stages[mode])
            self.assertTrue(np.array_equal(fin, np.isfinite(got)), mode)
            self.assertLess(np.abs(got[fin] - stages[mode][fin]).max(), 1e-12, mode)
        # the stages differ from each other (mode 1 is softcapped, 2 masked)
        self.assertGreater(np.abs(stages[0] - stages[1]).max(), 1e-3)

    def test_backend_option_runs_the_same_rules(self):
        # --backend NAME computes with that backend: the cache and window rules are the front
        # end's (onnx/attention_rules.hpp), so each backend meets the same reference
        pk, pv = self.save("pk.npy", self.pk), self.save("pv.npy", self.pv)
        want = onnx_attention(self.q, self.k, self.v, self.pk, self.pv, causal=True, left=2)[0]
        for backend in ["plain", "fused"]:
            y = self.ok(*self.base(), "--causal", "--left-window", 2, "--past-key", pk, "--past-value", pv, "--backend", backend)
            self.assertLess(np.abs(y - want).max(), 1e-12, backend)
        # what a backend lacks is refused, naming it; an unknown name before anything is read
        os.remove(self.path("y.npy"))
        for extra, words in [(["--backend", "fused", "--weights", self.path("w.npy")], "has no attention-weights"),
                             (["--backend", "nope"], "nope")]:
            r = run(*self.base(), *extra)
            self.assertEqual(r.returncode, 2, (extra, r.stdout + r.stderr))
            self.assertIn(words, r.stderr, extra)
            for o in ["y.npy", "w.npy"]:
                self.assertFalse(os.path.exists(self.path(o)), (extra, o))

    def test_bad_combinations_write_nothing(self):
        pk, pv = self.save("pk.npy", self.pk), self.save("pv.npy", self.pv)
        n = self.save("n.npy", np.array([3, 2], dtype=np.int64))
        outs = ["y.npy", "prk.npy", "s.npy"]
        cases = [
            (["--past-key", pk], "--past-key and --past-value go together"),
            (["--past-key", pk, "--past-value", pv, "--nonpad-kv-seqlen", n], "--nonpad-kv-seqlen cannot be given together"),
            (["--past-key", pk, "--past-value", pv, "--causal-bottom-right"], "--causal-bottom-right with --past-key"),
            (["--left-window", -3], "--left-window -3"),
            (["--qk-output", 4, self.path("s.npy")], "--qk-output 4: MODE is 0"),
            (["--past-key", self.save("bad.npy", self.rng.standard_normal((2, 2, 6, 7))), "--past-value", pv,
              "--present-key", self.path("prk.npy")], "--past-key " + self.path("bad.npy") + " has shape (2, 2, 6, 7)"),
            (["--nonpad-kv-seqlen", self.save("n3.npy", np.array([3, 4], dtype=np.int64))], "holds 4; each length must be an integer in [0, 3]"),
            (["--nonpad-kv-seqlen", self.save("nf.npy", np.array([3.0, 2.0]))], "expected integers of shape (2,)"),
        ]
        huge_past = self.save("huge_pk.npy", np.full((2, 2, 6, 8), 1e308))
        cases.append((["--past-key", huge_past, "--past-value", pv], "the scores may overflow float64"))
        for extra, words in cases:
            r = run(*self.base(), *extra)
            self.assertEqual(r.returncode, 2, (extra, r.stdout + r.stderr))
            self.assertIn(words, r.stderr, extra)
            for o in outs:
                self.assertFalse(os.path.exists(self.path(o)), (extra, o))


def numpy_float16_attention(q, k, v, causal=False):
    """ONNX's reference program in NumPy float16 (each operation rounds to float16)."""
    s = np.sqrt(1 / np.sqrt(q.shape[-1]))
    qk = np.matmul(q * s, np.swapaxes(k * s, -1, -2))
    if causal:
        sq, sk = qk.shape[-2:]
        qk = qk + np.where(np.tril(np.ones((sq, sk), dtype=bool)), np.float16(0), np.float16(-np.inf))
    m = np.max(qk, axis=-1, keepdims=True)
    e = np.exp(qk - m)
    w = e / np.sum(e, axis=-1, keepdims=True)
    return np.matmul(w, v), w


class Float16(unittest.TestCase):
    def setUp(self):
        self.dir = self.enterContext(tempfile.TemporaryDirectory(prefix="vl_eval_f16_"))
        rng = np.random.default_rng(23)
        self.q = rng.random((2, 3, 4, 8)).astype(np.float16)
        self.k = rng.random((2, 3, 6, 8)).astype(np.float16)
        self.v = rng.random((2, 3, 6, 8)).astype(np.float16)

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_float16_in_float16_out_as_the_reference(self):
        for name, a in [("q", self.q), ("k", self.k), ("v", self.v)]:
            np.save(self.path(name + ".npy"), a)
        for causal in [False, True]:
            r = run("eval", "attention", "--q", self.path("q.npy"), "--k", self.path("k.npy"), "--v", self.path("v.npy"),
                    "--out", self.path("y.npy"), "--qk-output", 3, self.path("w.npy"), "--present-key", self.path("pk.npy"),
                    *(["--causal"] if causal else []))
            self.assertEqual(r.returncode, 0, r.stderr)
            y, w, pk = np.load(self.path("y.npy")), np.load(self.path("w.npy")), np.load(self.path("pk.npy"))
            self.assertEqual((y.dtype, w.dtype, pk.dtype), (np.float16,) * 3)
            ey, ew = numpy_float16_attention(self.q, self.k, self.v, causal)
            u = 2.0 ** -11  # float16's unit round-off; tolerance as lessons onnx: rtol 2u, atol 2u max|expected|
            for got, want in [(y, ey), (w, ew)]:
                err = np.abs(got.astype(np.float64) - want.astype(np.float64))
                self.assertTrue(np.all(err <= 2 * u * np.abs(want.astype(np.float64)).max() + 2 * u * np.abs(want)), err.max())
            self.assertTrue(np.array_equal(pk, self.k))
            # and it is float16 arithmetic: the float64 answer is further away than float16 round-off at places
            y64 = numpy_float16_attention(self.q.astype(np.float64), self.k.astype(np.float64), self.v.astype(np.float64), causal)[0]
            self.assertGreater(np.abs(y.astype(np.float64) - y64).max(), 0)

    def test_float16_scores_that_overflow_are_refused(self):
        big = np.full((1, 1, 2, 8), 200, dtype=np.float16)  # scores 200·200·8/sqrt(8) > 65504
        for name in "qkv":
            np.save(self.path(name + ".npy"), big)
        r = run("eval", "attention", "--q", self.path("q.npy"), "--k", self.path("k.npy"), "--v", self.path("v.npy"),
                "--out", self.path("y.npy"))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("the scores may overflow float16", r.stderr)
        self.assertFalse(os.path.exists(self.path("y.npy")))

    def test_float16_mixed_with_float64_is_refused(self):
        np.save(self.path("q.npy"), self.q)
        np.save(self.path("k.npy"), self.k.astype(np.float64))
        np.save(self.path("v.npy"), self.v)
        r = run("eval", "attention", "--q", self.path("q.npy"), "--k", self.path("k.npy"), "--v", self.path("v.npy"),
                "--out", self.path("y.npy"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("--k " + self.path("k.npy") + ": dtype float64, but the inputs are float16", r.stderr)
        self.assertFalse(os.path.exists(self.path("y.npy")))


if __name__ == "__main__":
    unittest.main()
