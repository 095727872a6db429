"""`lessons eval linear-attention --update-rule ...` (ONNX LinearAttention's layout and options)
against a NumPy recurrence written here from the operator's equations: decay, then the delta
correction, then the write, then the read. float64 must agree to 1e-12 in every form; bad shapes
and combinations get ONNX's rule as the message, exit 2 and no output file.
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


def heads(x, h):
    """(B, T, H·D) -> (B, H, T, D)"""
    b, t, hd = x.shape
    return x.reshape(b, t, h, hd // h).transpose(0, 2, 1, 3)


def recurrence(q, k, v, hq, hkv, rule, decay=None, beta=None, past=None, scale=None):
    q4, k4, v4 = heads(q, hq), heads(k, hkv), heads(v, hkv)
    b, _, t, dk = q4.shape
    dv = v4.shape[-1]
    s = np.zeros((b, hkv, dk, dv)) if past is None else past.copy()
    scale = 1 / np.sqrt(dk) if not scale else scale
    out = np.zeros((b, hq, t, dv))
    g4 = None if decay is None else (heads(decay, hkv) if decay.shape[-1] != hkv else decay.transpose(0, 2, 1)[..., None])
    for i in range(t):
        kt, vt = k4[:, :, i], v4[:, :, i]
        if g4 is not None:
            s = s * np.exp(g4[:, :, i])[..., None]
        if beta is not None:
            bt = beta[:, i, :] if beta.shape[-1] == hkv else np.repeat(beta[:, i, :], hkv, axis=1)
            vt = bt[..., None] * (vt - np.einsum("bhdm,bhd->bhm", s, kt))
        s = s + kt[..., :, None] * vt[..., None, :]
        out[:, :, i] = scale * np.einsum("bhd,bhdm->bhm", q4[:, :, i], np.repeat(s, hq // hkv, axis=1))
    return out.transpose(0, 2, 1, 3).reshape(b, t, -1), s


class LinearFamily(unittest.TestCase):
    def setUp(self):
        self.dir = self.enterContext(tempfile.TemporaryDirectory(prefix="vl_lf_"))
        rng = np.random.default_rng(21)
        self.b, self.t, self.hq, self.hkv, self.dk, self.dv = 2, 9, 4, 2, 3, 5
        n = rng.standard_normal
        self.q = n((self.b, self.t, self.hq * self.dk))
        k = n((self.b, self.t, self.hkv, self.dk))
        self.k = (k / np.linalg.norm(k, axis=-1, keepdims=True)).reshape(self.b, self.t, -1)
        self.v = n((self.b, self.t, self.hkv * self.dv))
        self.decay = -np.log1p(np.exp(-(n((self.b, self.t, self.hkv * self.dk)) + 2)))
        self.beta = 1 / (1 + np.exp(-n((self.b, self.t, self.hkv))))
        self.past = n((self.b, self.hkv, self.dk, self.dv))

    def path(self, name):
        return os.path.join(self.dir, name)

    def save(self, name, a):
        np.save(self.path(name), a)
        return self.path(name)

    def base(self, rule, *extra):
        return ["eval", "linear-attention", "--update-rule", rule, "--q", self.save("q.npy", self.q), "--k",
                self.save("k.npy", self.k), "--v", self.save("v.npy", self.v), "--q-heads", self.hq, "--kv-heads",
                self.hkv, "--out", self.path("o.npy"), *extra]

    def test_every_rule_and_form_against_numpy(self):
        per_head = self.decay[..., :: self.dk].copy()
        for rule, decay, beta in (("linear", None, None), ("gated", self.decay, None), ("gated", per_head, None),
                                  ("delta", None, self.beta), ("gated_delta", per_head, self.beta[..., :1].copy())):
            want, state = recurrence(self.q, self.k, self.v, self.hq, self.hkv, rule, decay, beta, self.past, 0.7)
            extra = ["--past-state", self.save("past.npy", self.past), "--present-state", self.path("s.npy"), "--scale", 0.7]
            if decay is not None:
                extra += ["--decay", self.save("g.npy", decay)]
            if beta is not None:
                extra += ["--beta", self.save("beta.npy", beta)]
            for form in (["recurrent"], ["parallel"], ["chunked"], ["chunked", "--chunk", "2"], ["chunked", "--chunk", "4"]):
                r = run(*self.base(rule, *extra, "--form", *form))
                self.assertEqual(r.returncode, 0, r.stderr)
                np.testing.assert_allclose(np.load(self.path("o.npy")), want, rtol=0, atol=1e-12, err_msg=f"{rule} {form}")
                np.testing.assert_allclose(np.load(self.path("s.npy")), state, rtol=0, atol=1e-12, err_msg=f"{rule} {form}")

    def test_float32_stays_float32(self):
        f = lambda a: a.astype(np.float32)
        want, _ = recurrence(f(self.q).astype(np.float64), f(self.k).astype(np.float64), f(self.v).astype(np.float64),
                             self.hq, self.hkv, "linear")
        r = run("eval", "linear-attention", "--update-rule", "linear", "--q", self.save("q.npy", f(self.q)), "--k",
                self.save("k.npy", f(self.k)), "--v", self.save("v.npy", f(self.v)), "--q-heads", self.hq, "--kv-heads",
                self.hkv, "--out", self.path("o.npy"), "--form", "chunked")
        self.assertEqual(r.returncode, 0, r.stderr)
        got = np.load(self.path("o.npy"))
        self.assertEqual(got.dtype, np.float32)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)

    def refused(self, args, message):
        out = self.path("o.npy")
        if os.path.exists(out):
            os.remove(out)
        r = run(*args)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(message, r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_onnx_rules_are_the_messages(self):
        g, beta = ["--decay", self.save("g.npy", self.decay)], ["--beta", self.save("beta.npy", self.beta)]
        self.refused(self.base("delta", *g, *beta, "--form", "chunked"), "update_rule 'delta' forbids the decay input")
        self.refused(self.base("gated_delta", *g, "--form", "chunked"), "update_rule 'gated_delta' requires the beta input")
        self.refused(self.base("gated", "--form", "chunked"), "update_rule 'gated' requires the decay input")
        self.refused(self.base("linear", *beta, "--form", "chunked"), "update_rule 'linear' forbids the beta input")
        bad = ["--decay", self.save("bad.npy", self.decay[..., :5])]
        self.refused(self.base("gated", *bad, "--form", "chunked"), "kv_num_heads (2) or kv_num_heads·d_k (6)")
        self.refused(self.base("linear", "--past-state", self.save("p.npy", self.past[:, :, :2]), "--form", "recurrent"),
                     "past_state has shape (2, 2, 2, 5)")
        args = self.base("linear", "--form", "chunked")
        args[args.index("--q-heads") + 1] = 3
        self.refused(args, "q_num_heads (3) must be a positive multiple of kv_num_heads (2)")

    def test_onnx_options_need_the_update_rule(self):
        r = run("eval", "linear-attention", "--q", self.save("q.npy", self.q[0]), "--k", self.save("k.npy", self.q[0]),
                "--v", self.save("v.npy", self.v[0]), "--out", self.path("o.npy"), "--form", "parallel", "--decay",
                self.save("g.npy", self.decay))
        self.assertEqual(r.returncode, 2)
        self.assertIn("--decay: ONNX LinearAttention's options need --update-rule", r.stderr)


if __name__ == "__main__":
    unittest.main()
