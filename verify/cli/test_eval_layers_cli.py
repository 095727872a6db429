"""`lessons rng torch encoder-layer-init|decoder-layer-init` and `lessons eval
encoder-layer|decoder-layer` against PyTorch (Debian's torch 1.13), live.

The init verbs must write torch's state_dict() bit for bit; eval must match torch's
TransformerEncoderLayer / TransformerDecoderLayer (eval mode, autograd on so that the encoder
layer takes its general path) to 1e-12 in float64, on weights and inputs torch draws here from
seeds the lesson does not use, with the biases and norms redrawn so that no entry is trivial.
Bad input gets a message naming the option or file, exit 2, and no output file.
Run by ctest with LESSONS=<binary>; /usr/bin/python3.
"""
import os
import subprocess
import tempfile
import unittest

import numpy as np
import torch

LESSONS = os.environ.get("LESSONS")
SEEDS = (7919, 2**33 + 12345)  # arbitrary: not the lesson's


def run(*args):
    return subprocess.run([LESSONS, *map(str, args)], capture_output=True, text=True, timeout=120)


def make_layer(decoder, d, h, d_ff, norm_first, activation, dtype=torch.float64):
    cls = torch.nn.TransformerDecoderLayer if decoder else torch.nn.TransformerEncoderLayer
    return cls(d, h, d_ff, dropout=0.0, activation=activation, batch_first=True, norm_first=norm_first, dtype=dtype).eval()


@unittest.skipUnless(LESSONS, "set LESSONS to the lessons binary (ctest does)")
class Layers(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def save_weights(self, layer, folder):
        os.makedirs(folder, exist_ok=True)
        for name, value in layer.state_dict().items():
            np.save(os.path.join(folder, name + ".npy"), value.detach().numpy())
        return folder

    def test_init_verbs_match_torch_state_dict(self):
        checked = 0
        for decoder in (False, True):
            verb = "decoder-layer-init" if decoder else "encoder-layer-init"
            for seed in SEEDS:
                for dtype, tdtype in (("float64", torch.float64), ("float32", torch.float32)):
                    for d, h, d_ff in ((16, 4, 32), (12, 3, 20)):
                        out = self.path(f"{verb}-{seed}-{dtype}-{d}")
                        r = run("rng", "torch", verb, "--seed", seed, "--d-model", d, "--heads", h,
                                "--dim-feedforward", d_ff, "--dtype", dtype, "--out-dir", out)
                        self.assertEqual(r.returncode, 0, r.stderr)
                        torch.manual_seed(seed)
                        ref = make_layer(decoder, d, h, d_ff, False, "relu", tdtype).state_dict()
                        self.assertEqual(sorted(os.listdir(out)), sorted(k + ".npy" for k in ref))
                        for name, value in ref.items():
                            got = np.load(os.path.join(out, name + ".npy"))
                            self.assertEqual(got.dtype, value.numpy().dtype, name)
                            self.assertEqual(got.tobytes(), value.numpy().tobytes(), f"{verb} seed {seed} {dtype}: {name}")
                            checked += 1
        self.assertEqual(checked, 8 * 12 + 8 * 18)

    def run_case(self, decoder, seed, norm_first, activation, causal, padding):
        d, h, d_ff, B, S, T = 16, 4, 24, 2, 6, 5
        torch.manual_seed(seed)
        layer = make_layer(decoder, d, h, d_ff, norm_first, activation)
        with torch.no_grad():
            for name, p in layer.named_parameters():
                if "bias" in name or name.startswith("norm"):
                    p.normal_()
        x = torch.randn(B, T if decoder else S, d, dtype=torch.float64)
        memory = torch.randn(B, S, d, dtype=torch.float64)
        mask = torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool), diagonal=1) if causal else None
        pad = torch.zeros(B, S, dtype=torch.bool)
        pad[1, -2:] = True
        folder = self.save_weights(layer, self.path(f"w{seed}{decoder}{norm_first}{activation}{causal}{padding}"))
        args = ["--weights", folder, "--heads", h, "--activation", activation, "--out", self.path("y.npy")]
        if norm_first:
            args.append("--norm-first")
        if causal:
            args.append("--causal")
        np.save(self.path("x.npy"), x.numpy())
        np.save(self.path("m.npy"), memory.numpy())
        np.save(self.path("pad.npy"), pad.numpy())
        if decoder:
            ref = layer(x, memory, tgt_mask=mask, memory_key_padding_mask=pad if padding else None)
            args = ["eval", "decoder-layer", "--tgt", self.path("x.npy"), "--memory", self.path("m.npy")] + args
            if padding:
                args += ["--memory-key-padding-mask", self.path("pad.npy")]
        else:
            ref = layer(x, src_mask=mask, src_key_padding_mask=pad if padding else None)
            args = ["eval", "encoder-layer", "--x", self.path("x.npy")] + args
            if padding:
                args += ["--key-padding-mask", self.path("pad.npy")]
        r = run(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = np.load(self.path("y.npy"))
        return float(np.max(np.abs(got - ref.detach().numpy())))

    def test_eval_layers_match_torch(self):
        worst, cases = 0.0, 0
        for decoder in (False, True):
            for seed in SEEDS:
                for norm_first in (False, True):
                    for activation in ("relu", "gelu"):
                        causal = decoder or seed == SEEDS[1]
                        e = self.run_case(decoder, seed, norm_first, activation, causal, padding=(seed == SEEDS[0]))
                        self.assertLess(e, 1e-12, f"decoder={decoder} seed={seed} norm_first={norm_first} {activation}")
                        worst, cases = max(worst, e), cases + 1
        print(f"\neval encoder-layer/decoder-layer: {cases} cases, max |ours - torch 1.13| = {worst:.2e}")

    def test_float32_in_float32(self):
        # float32 weights and inputs are computed in float32: torch's float32 layer agrees to
        # float32 round-off (2^-24 ≈ 6e-8 relative, through a few hundred operations: 1e-5).
        for decoder in (False, True):
            torch.manual_seed(SEEDS[0])
            layer = make_layer(decoder, 16, 4, 32, decoder, "gelu", torch.float32)
            folder = self.save_weights(layer, self.path(f"f32{decoder}"))
            x = torch.randn(2, 5, 16)
            memory = torch.randn(2, 6, 16)
            np.save(self.path("x32.npy"), x.numpy())
            np.save(self.path("m32.npy"), memory.numpy())
            args = ["--weights", folder, "--heads", 4, "--activation", "gelu", "--out", self.path("y32.npy")]
            if decoder:
                ref = layer(x, memory, tgt_mask=torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1))
                r = run("eval", "decoder-layer", "--tgt", self.path("x32.npy"), "--memory", self.path("m32.npy"),
                        "--norm-first", "--causal", *args)
            else:
                ref = layer(x)
                r = run("eval", "encoder-layer", "--x", self.path("x32.npy"), *args)
            self.assertEqual(r.returncode, 0, r.stderr)
            got = np.load(self.path("y32.npy"))
            self.assertEqual(got.dtype, np.float32)
            self.assertLess(float(np.max(np.abs(got - ref.detach().numpy()))), 1e-5)

    def test_bad_weights_are_named(self):
        torch.manual_seed(1)
        layer = make_layer(False, 8, 2, 16, False, "relu")
        folder = self.save_weights(layer, self.path("w"))
        np.save(self.path("x.npy"), np.random.default_rng(0).standard_normal((1, 4, 8)))
        out = self.path("y.npy")
        base = ["eval", "encoder-layer", "--x", self.path("x.npy"), "--weights", folder, "--heads", 2, "--out", out]
        os.remove(os.path.join(folder, "norm2.bias.npy"))
        r = run(*base)
        self.assertEqual(r.returncode, 2)
        self.assertIn("norm2.bias.npy", r.stderr)
        np.save(os.path.join(folder, "norm2.bias.npy"), np.zeros(7))
        r = run(*base)
        self.assertEqual(r.returncode, 2)
        self.assertIn("norm2.bias.npy", r.stderr)
        self.assertIn("(7)", r.stderr)
        np.save(os.path.join(folder, "norm2.bias.npy"), np.zeros(8))
        r = run(*base, "--activation", "tanh")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--activation", r.stderr)
        r = run(*base[:-3], 3, "--out", out)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--heads", r.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertEqual(run(*base).returncode, 0)
        self.assertTrue(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
