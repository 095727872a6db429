"""`lessons eval` against independent references computed here, live: NumPy for attention and
linear attention, PyTorch (Debian's torch 1.13) for nn.MultiheadAttention. float64 must agree to
1e-12; float32 is computed in float32 and must agree to float32 round-off. Bad inputs get a
message naming the option and file, exit 2, and no output file.
Run by ctest with LESSONS=<binary>; /usr/bin/python3.
"""
import os
import subprocess
import tempfile
import unittest

import numpy as np
import torch

LESSONS = os.environ["LESSONS"]


def run(*args):
    return subprocess.run([LESSONS, *map(str, args)], capture_output=True, text=True, timeout=300)


def softmax(s):
    m = np.max(s, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def reference_attention(q, k, v, allowed=None, bias=None, scale=None, causal=False, bottom_right=False, softcap=0.0):
    """NumPy: (..., Sq, D) x (..., Sk, D) x (..., Sk, Dv) with masks broadcast to (..., Sq, Sk)."""
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = (q @ np.swapaxes(k, -1, -2)) * scale
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    sq, sk = s.shape[-2:]
    ok = np.ones(s.shape, dtype=bool)
    if causal:
        offset = sk - sq if bottom_right else 0
        ok &= np.tril(np.ones((sq, sk), dtype=bool), k=offset)
    if allowed is not None:
        ok &= np.broadcast_to(allowed, s.shape)
    if bias is not None:
        s = s + bias
    s = np.where(ok, s, -np.inf)
    w = softmax(s)
    return w @ v, w


class Eval(unittest.TestCase):
    def setUp(self):
        self.dir = self.enterContext(tempfile.TemporaryDirectory(prefix="vl_eval_"))
        self.rng = np.random.default_rng(20261129)

    def path(self, name):
        return os.path.join(self.dir, name)

    def save(self, name, a):
        np.save(self.path(name), a)
        return self.path(name)

    def eval_attention(self, q, k, v, *extra, weights=False):
        args = ["eval", "attention", "--q", self.save("q.npy", q), "--k", self.save("k.npy", k),
                "--v", self.save("v.npy", v), "--out", self.path("y.npy"), *extra]
        if weights:
            args += ["--weights", self.path("w.npy")]
        r = run(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        y = np.load(self.path("y.npy"))
        return (y, np.load(self.path("w.npy"))) if weights else y

    def test_attention_batches_masks_scales(self):
        n = self.rng.standard_normal
        cases = 0
        for lead in ((), (3,), (2, 3)):
            for sq, sk in ((5, 5), (4, 7)):
                q, k, v = n((*lead, sq, 8)), n((*lead, sk, 8)), n((*lead, sk, 6))
                y, w = self.eval_attention(q, k, v, weights=True)
                ry, rw = reference_attention(q, k, v)
                np.testing.assert_allclose(y, ry, rtol=0, atol=1e-12)
                np.testing.assert_allclose(w, rw, rtol=0, atol=1e-12)
                allowed = self.rng.random((sq, sk)) > 0.3
                allowed[:, 0] = True
                y = self.eval_attention(q, k, v, "--mask", self.save("m.npy", allowed), "--scale", 0.7)
                np.testing.assert_allclose(y, reference_attention(q, k, v, allowed=allowed, scale=0.7)[0], rtol=0, atol=1e-12)
                bias = n((1, sk))
                y = self.eval_attention(q, k, v, "--mask", self.save("b.npy", bias), "--softcap", 2.0)
                np.testing.assert_allclose(y, reference_attention(q, k, v, bias=bias, softcap=2.0)[0], rtol=0, atol=1e-12)
                for flag, br in (("--causal", False), ("--causal-bottom-right", True)):
                    y = self.eval_attention(q, k, v, flag)
                    ref = reference_attention(q, k, v, causal=True, bottom_right=br)[0]
                    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-12)
                cases += 1
        self.assertEqual(cases, 6)

    def test_fully_masked_row_gives_zeros(self):
        n = self.rng.standard_normal
        q, k, v = n((3, 4)), n((3, 4)), n((3, 2))
        allowed = np.ones((3, 3), dtype=bool)
        allowed[1] = False
        y = self.eval_attention(q, k, v, "--mask", self.save("m.npy", allowed))
        self.assertTrue(np.all(y[1] == 0.0))
        self.assertFalse(np.isnan(y).any())

    def test_grouped_query_heads_4d_and_packed(self):
        n = self.rng.standard_normal
        b, hq, g, s, d = 2, 6, 3, 5, 4
        q, k, v = n((b, hq, s, d)), n((b, g, s, d)), n((b, g, s, d))
        rep = hq // g
        ref = reference_attention(q, np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1))[0]
        np.testing.assert_allclose(self.eval_attention(q, k, v), ref, rtol=0, atol=1e-12)
        pack = lambda x: np.ascontiguousarray(x.transpose(0, 2, 1, 3)).reshape(x.shape[0], x.shape[2], -1)
        y = self.eval_attention(pack(q), pack(k), pack(v), "--q-heads", hq, "--kv-heads", g)
        np.testing.assert_allclose(y, pack(ref), rtol=0, atol=1e-12)

    def test_float32_is_computed_in_float32(self):
        n = self.rng.standard_normal
        q, k, v = (n((6, 8)).astype(np.float32) for _ in range(3))
        y = self.eval_attention(q, k, v)
        self.assertEqual(y.dtype, np.float32)
        ref = reference_attention(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64))[0]
        # float32 round-off: a few ulps (2^-24 ≈ 6e-8) of the O(1) values per operation chain.
        np.testing.assert_allclose(y, ref, rtol=0, atol=1e-5)

    def test_mha_against_torch(self):
        torch.manual_seed(5)
        for heads, causal in ((4, False), (2, True), (1, False)):
            mha = torch.nn.MultiheadAttention(16, heads, batch_first=True, dtype=torch.float64)
            with torch.no_grad():
                mha.in_proj_bias.normal_()
                mha.out_proj.bias.normal_()
            x = torch.randn(2, 7, 16, dtype=torch.float64)
            mask = torch.triu(torch.ones(7, 7, dtype=torch.bool), 1) if causal else None
            with torch.no_grad():
                ref, ref_w = mha(x, x, x, attn_mask=mask, need_weights=True, average_attn_weights=False)
            args = ["eval", "mha", "--x", self.save("x.npy", x.numpy()), "--heads", heads,
                    "--in-proj-weight", self.save("wi.npy", mha.in_proj_weight.detach().numpy()),
                    "--in-proj-bias", self.save("bi.npy", mha.in_proj_bias.detach().numpy()),
                    "--out-proj-weight", self.save("wo.npy", mha.out_proj.weight.detach().numpy()),
                    "--out-proj-bias", self.save("bo.npy", mha.out_proj.bias.detach().numpy()),
                    "--out", self.path("y.npy"), "--weights", self.path("w.npy")]
            if causal:
                args.append("--causal")
            r = run(*args)
            self.assertEqual(r.returncode, 0, r.stderr)
            np.testing.assert_allclose(np.load(self.path("y.npy")), ref.numpy(), rtol=0, atol=1e-12)
            np.testing.assert_allclose(np.load(self.path("w.npy")), ref_w.numpy(), rtol=0, atol=1e-12)
            # Without --weights the fused kernels compute it (block products, the fused attention):
            # other sums in another order, the same function to float64's round-off.
            fused = args[:args.index("--weights")] + args[args.index("--weights") + 2:]
            os.remove(self.path("y.npy"))
            r = run(*fused)
            self.assertEqual(r.returncode, 0, r.stderr)
            np.testing.assert_allclose(np.load(self.path("y.npy")), ref.numpy(), rtol=0, atol=1e-12)
            # float32 inputs, float32 output: within float32's round-off of the float64 module's:
            # |y| ≤ ~4 here, a few chains of 16 products and a softmax, each step ≤ 2^-24 relative
            # (≈ 6·10⁻⁸); seen: 7.7·10⁻⁷ at most, 1e-5 leaves a margin of 13 and fails a wrong weight.
            f32 = [a.replace(".npy", "32.npy") if isinstance(a, str) and a.endswith(".npy") and "y.npy" not in a else a for a in fused]
            for a, b in zip(fused, f32):
                if a != b:
                    np.save(b, np.load(a).astype(np.float32))
            r = run(*f32)
            self.assertEqual(r.returncode, 0, r.stderr)
            y32 = np.load(self.path("y.npy"))
            self.assertEqual(y32.dtype, np.float32)
            np.testing.assert_allclose(y32, ref.numpy(), rtol=0, atol=1e-5)

    def test_linear_attention_three_forms(self):
        n = self.rng.standard_normal
        q, k, v = n((11, 4)), n((11, 4)), n((11, 3))
        phi = lambda x: np.where(x > 0, x + 1.0, np.exp(x))
        a = np.tril(phi(q) @ phi(k).T)
        ref = (a @ v) / a.sum(axis=1, keepdims=True)
        for form in (["parallel"], ["recurrent"], ["chunked", "--chunk", "1"], ["chunked", "--chunk", "4"],
                     ["chunked", "--chunk", "20"]):
            r = run("eval", "linear-attention", "--q", self.save("q.npy", q), "--k", self.save("k.npy", k),
                    "--v", self.save("v.npy", v), "--out", self.path("o.npy"), "--form", *form)
            self.assertEqual(r.returncode, 0, r.stderr)
            np.testing.assert_allclose(np.load(self.path("o.npy")), ref, rtol=0, atol=1e-12, err_msg=str(form))


class OpenBlasOnDemand(unittest.TestCase):
    """OpenBLAS is opened by the first BLAS call, not at start (src/kernels/platform/blas_library.hpp):
    the fused attention and the fast chunked linear attention never call it, so their processes
    never load it; linear attention's parallel form (xtensor-blas products) does. The dynamic
    loader's own log (LD_DEBUG=files) says which files it loaded and why."""

    def loaded_files(self, *args):
        d = self.enterContext(tempfile.TemporaryDirectory(prefix="vl_blas_"))
        rng = np.random.default_rng(3)
        paths = []
        for name in "qkv":
            paths.append(os.path.join(d, f"{name}.npy"))
            np.save(paths[-1], rng.standard_normal((16, 8)).astype(np.float32))
        r = subprocess.run([LESSONS, *args, "--q", paths[0], "--k", paths[1], "--v", paths[2], "--out", os.path.join(d, "o.npy")],
                           capture_output=True, text=True, timeout=300, env={**os.environ, "LD_DEBUG": "files"})
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertRegex(r.stderr, r"calling init: \S*libstdc\+\+")  # the log is there: an absent line means not loaded
        return r.stderr

    # A library the loader maps and initialises: "calling init: <path>". (A dlopen with RTLD_NOLOAD,
    # which only asks whether it is there, logs "dynamically loaded by" but maps nothing.)
    OPENBLAS_INIT = r"calling init: \S*libopenblas"

    def test_fused_attention_never_loads_openblas(self):
        self.assertNotRegex(self.loaded_files("eval", "attention"), self.OPENBLAS_INIT)

    def test_fast_chunked_linear_attention_never_loads_openblas(self):
        self.assertNotRegex(self.loaded_files("eval", "linear-attention", "--form", "chunked", "--chunk", "4"), self.OPENBLAS_INIT)

    def test_fused_mha_never_loads_openblas(self):
        # Without --weights, eval mha is the fused kernels' (kernels/fused/multi_head_attention_fused.hpp);
        # with them, the reference's, whose products are BLAS's.
        d = self.enterContext(tempfile.TemporaryDirectory(prefix="vl_blas_"))
        rng = np.random.default_rng(4)
        files = {"--x": (16, 8), "--in-proj-weight": (24, 8), "--in-proj-bias": (24,), "--out-proj-weight": (8, 8), "--out-proj-bias": (8,)}
        args = ["eval", "mha", "--heads", "2", "--out", os.path.join(d, "y.npy")]
        for option, shape in files.items():
            args += [option, os.path.join(d, option.strip("-") + ".npy")]
            np.save(args[-1], rng.standard_normal(shape).astype(np.float32))
        def log(*extra):
            r = subprocess.run([LESSONS, *args, *extra], capture_output=True, text=True, timeout=300, env={**os.environ, "LD_DEBUG": "files"})
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            self.assertRegex(r.stderr, r"calling init: \S*libstdc\+\+")
            return r.stderr
        self.assertNotRegex(log(), self.OPENBLAS_INIT)
        self.assertRegex(log("--weights", os.path.join(d, "w.npy")), self.OPENBLAS_INIT)

    def test_a_blas_path_loads_it_when_it_runs(self):
        self.assertRegex(self.loaded_files("eval", "linear-attention", "--form", "parallel"), self.OPENBLAS_INIT)


class PositionalEncoding(unittest.TestCase):
    def test_against_numpy(self):
        out = os.path.join(self.enterContext(tempfile.TemporaryDirectory(prefix="vl_pe_")), "pe.npy")
        for n, d in ((1, 2), (7, 16), (50, 64), (40, 15)):
            pos = np.arange(n)[:, None]
            ang = pos / 10000 ** (2 * np.arange((d + 1) // 2)[None, :] / d)
            ref = np.zeros((n, d))
            ref[:, 0::2] = np.sin(ang)
            ref[:, 1::2] = np.cos(ang[:, : d // 2])
            # float32 computes the angle pos·ω in float32: its error grows with the angle, a few
            # units of 2^-24 times (n + 1); sin and cos add one more rounding.
            for dtype, tol in (("float64", 1e-12), ("float32", 4 * 2.0**-24 * (n + 1))):
                r = run("eval", "positional-encoding", "--length", n, "--dim", d, "--dtype", dtype, "--out", out)
                self.assertEqual(r.returncode, 0, r.stderr)
                pe = np.load(out)
                self.assertEqual(pe.dtype, np.dtype(dtype))
                np.testing.assert_allclose(pe, ref, rtol=0, atol=tol, err_msg=f"n={n} d={d} {dtype}")

    def test_bad_sizes(self):
        out = os.path.join(self.enterContext(tempfile.TemporaryDirectory(prefix="vl_pe_")), "pe.npy")
        for args, words in ((["--length", "0", "--dim", "4"], "--length"), (["--length", "3", "--dim", "0"], "--dim"),
                            (["--length", "3", "--dim", "4", "--dtype", "int8"], "--dtype")):
            r = run("eval", "positional-encoding", *args, "--out", out)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(words, r.stderr)
            self.assertFalse(os.path.exists(out))


class BadInput(unittest.TestCase):
    def setUp(self):
        self.dir = self.enterContext(tempfile.TemporaryDirectory(prefix="vl_eval_bad_"))
        rng = np.random.default_rng(1)
        self.q = os.path.join(self.dir, "q.npy")
        np.save(self.q, rng.standard_normal((4, 3)))
        self.out = os.path.join(self.dir, "y.npy")

    def refused(self, words, *args):
        r = run(*args)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(words, r.stderr)
        self.assertFalse(os.path.exists(self.out), "an output was left behind")

    def save(self, name, a):
        p = os.path.join(self.dir, name)
        np.save(p, a)
        return p

    def test_bad_inputs(self):
        q = self.q
        att = ["eval", "attention", "--out", self.out]
        self.refused("--q: /nonexistent.npy: no such file", *att, "--q", "/nonexistent.npy", "--k", q, "--v", q)
        nan = np.ones((4, 3))
        nan[1, 2] = np.nan
        self.refused("is nan", *att, "--q", self.save("nan.npy", nan), "--k", q, "--v", q)
        self.refused("dtype int64", *att, "--q", self.save("i.npy", np.ones((4, 3), dtype=np.int64)), "--k", q, "--v", q)
        self.refused("dtype float32, but the inputs are float64", *att, "--q", q, "--k", self.save("f.npy", np.ones((4, 3), np.float32)), "--v", q)
        self.refused("does not broadcast", *att, "--q", q, "--k", q, "--v", q, "--mask", self.save("m.npy", np.ones((3, 3), bool)))
        self.refused("is empty", *att, "--q", self.save("e.npy", np.ones((0, 3))), "--k", q, "--v", q)
        self.refused("not divisible by 2 heads", *att, "--q", self.save("p.npy", np.ones((1, 4, 3))), "--k", q, "--v", q,
                     "--q-heads", "2", "--kv-heads", "1")
        self.refused("folder", "eval", "attention", "--q", q, "--k", q, "--v", q, "--out", "/nonexistent/dir/y.npy")
        self.refused("--chunk", "eval", "linear-attention", "--q", q, "--k", q, "--v", q, "--form", "chunked", "--out", self.out)
        w = self.save("w.npy", np.ones((9, 3)))
        b = self.save("b.npy", np.ones(9))
        self.refused("--heads 2: d_model 3 is not divisible", "eval", "mha", "--x", q, "--heads", "2", "--in-proj-weight", w,
                     "--in-proj-bias", b, "--out-proj-weight", self.save("wo.npy", np.ones((3, 3))),
                     "--out-proj-bias", self.save("bo.npy", np.ones(3)), "--out", self.out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
