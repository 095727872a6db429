"""`lessons rng torch ...` against PyTorch, live and bit for bit.

Run by ctest (cli_test_rng_torch) with LESSONS = path to the lessons binary, using Debian's
/usr/bin/python3 and its torch (1.13, CPU capability AVX2; torch.randn float32 with >= 16
elements takes the AVX2 kernel, which is what vl::torch_rng reproduces).
"""
import os
import subprocess
import tempfile
import unittest

import numpy as np
import torch

LESSONS = os.environ.get("LESSONS")
DTYPES = {"float64": torch.float64, "float32": torch.float32}


def run(*args):
    return subprocess.run([LESSONS, "rng", "torch", *map(str, args)], capture_output=True, text=True, timeout=60)


def same_bits(test, path, expected, what):
    got = np.load(path)
    exp = expected.detach().numpy()
    test.assertEqual(got.dtype, exp.dtype, what)
    test.assertEqual(got.shape, exp.shape, what)
    # compare bytes: equal bits, signed zeros included
    test.assertEqual(got.tobytes(), exp.tobytes(), f"{what}: values differ")


def torch_cpu_capability():
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage" in line:
            return line.split(":")[1].strip()
    return "unknown"


@unittest.skipUnless(LESSONS, "set LESSONS to the lessons binary (ctest does)")
class TorchStreams(unittest.TestCase):
    def test_torch_dispatches_to_avx2(self):
        # float32 randn with >= 16 elements runs a different kernel under other capabilities
        # (ATEN_CPU_CAPABILITY=default: 387 of 1000 values differ); we reproduce AVX2's.
        self.assertEqual(torch_cpu_capability(), "AVX2",
                         "this torch does not dispatch to AVX2; the float32 comparisons below assume it")

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_normal_matches_torch_randn(self):
        shapes = ["1", "2", "15", "16", "17", "31", "32", "33", "40", "1,6,16", "3,5,7", "1000"]
        count = 0
        for seed in (0, 1, 123, 2**32 + 3):
            for dtype in DTYPES:
                for shape in shapes:
                    out = os.path.join(self.dir, "n.npy")
                    r = run("normal", "--seed", seed, "--shape", shape, "--dtype", dtype, "--out", out)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    torch.manual_seed(seed)
                    dims = [int(s) for s in shape.split(",")]
                    same_bits(self, out, torch.randn(*dims, dtype=DTYPES[dtype]),
                              f"normal seed {seed} {dtype} shape {shape}")
                    count += 1
        self.assertEqual(count, 96)

    def test_normal_default_dtype_is_float64(self):
        out = os.path.join(self.dir, "d.npy")
        r = run("normal", "--seed", 4, "--shape", "5,4", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        torch.manual_seed(4)
        same_bits(self, out, torch.randn(5, 4, dtype=torch.float64), "default dtype")

    def test_uniform_matches_torch_uniform_(self):
        for seed in (0, 9):
            for dtype in DTYPES:
                for shape, low, high in (("17", None, None), ("4,5", -0.25, 0.25), ("100", -3.0, 7.5)):
                    out = os.path.join(self.dir, "u.npy")
                    extra = [] if low is None else ["--low", low, "--high", high]
                    r = run("uniform", "--seed", seed, "--shape", shape, "--dtype", dtype, "--out", out, *extra)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    torch.manual_seed(seed)
                    dims = [int(s) for s in shape.split(",")]
                    t = torch.empty(*dims, dtype=DTYPES[dtype]).uniform_(0.0 if low is None else low,
                                                                         1.0 if high is None else high)
                    same_bits(self, out, t, f"uniform seed {seed} {dtype} {shape} [{low}, {high})")

    def test_mha_init_matches_torch(self):
        for seed in (0, 5):
            for dtype in DTYPES:
                for d, h in ((16, 4), (16, 1), (8, 2), (12, 3)):
                    out = os.path.join(self.dir, f"mha_{seed}_{dtype}_{d}_{h}")
                    r = run("mha-init", "--seed", seed, "--embed-dim", d, "--heads", h, "--dtype", dtype,
                            "--out-dir", out)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    torch.manual_seed(seed)
                    m = torch.nn.MultiheadAttention(d, h, batch_first=True, dtype=DTYPES[dtype])
                    what = f"mha seed {seed} {dtype} d={d} h={h}"
                    same_bits(self, os.path.join(out, "in_proj_weight.npy"), m.in_proj_weight, what)
                    same_bits(self, os.path.join(out, "in_proj_bias.npy"), m.in_proj_bias, what)
                    same_bits(self, os.path.join(out, "out_proj_weight.npy"), m.out_proj.weight, what)
                    same_bits(self, os.path.join(out, "out_proj_bias.npy"), m.out_proj.bias, what)

    def assert_input_error(self, args, names):
        r = run(*args)
        self.assertEqual(r.returncode, 2, f"{args}: exit {r.returncode}, stderr {r.stderr!r}")
        self.assertIn(names, r.stderr, f"{args}: message should name {names}")

    def test_bad_arguments_are_input_errors(self):
        out = os.path.join(self.dir, "bad.npy")
        cases = [
            (["normal", "--seed", "-1", "--shape", "3", "--out", out], "--seed"),
            (["normal", "--seed", "abc", "--shape", "3", "--out", out], "--seed"),
            (["normal", "--seed", "1.5", "--shape", "3", "--out", out], "--seed"),
            (["normal", "--seed", "18446744073709551616", "--shape", "3", "--out", out], "--seed"),
            (["normal", "--seed", "0", "--shape", "2,,3", "--out", out], "--shape"),
            (["normal", "--seed", "0", "--shape", "x", "--out", out], "--shape"),
            (["normal", "--seed", "0", "--shape", "-4", "--out", out], "--shape"),
            (["normal", "--seed", "0", "--shape", "100000,100000", "--out", out], "--shape"),
            (["normal", "--seed", "0", "--shape", "3", "--dtype", "float16", "--out", out], "--dtype"),
            (["uniform", "--seed", "0", "--shape", "3", "--low", "2", "--high", "1", "--out", out], "--low"),
            (["uniform", "--seed", "0", "--shape", "3", "--low", "nan", "--out", out], "--low"),
            (["mha-init", "--seed", "0", "--embed-dim", "16", "--heads", "3", "--out-dir", self.dir], "--heads"),
            (["mha-init", "--seed", "0", "--embed-dim", "16", "--heads", "0", "--out-dir", self.dir], "--heads"),
            (["mha-init", "--seed", "0", "--embed-dim", "0", "--heads", "1", "--out-dir", self.dir], "--embed-dim"),
            (["mha-init", "--seed", "0", "--embed-dim", "x", "--heads", "1", "--out-dir", self.dir], "--embed-dim"),
            (["mha-init", "--seed", "0", "--embed-dim", "8", "--heads", "2", "--dtype", "int8",
              "--out-dir", self.dir], "--dtype"),
        ]
        for args, name in cases:
            with self.subTest(args=args):
                self.assert_input_error(args, name)
        self.assertFalse(os.path.exists(out), "a failed command must not leave an output file")

    def test_unwritable_paths_are_input_errors(self):
        blocker = os.path.join(self.dir, "file")
        with open(blocker, "w") as f:
            f.write("not a folder")
        target = os.path.join(blocker, "x.npy")    # parent is a regular file
        r = run("normal", "--seed", "0", "--shape", "3", "--out", target)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(target, r.stderr)
        r = run("mha-init", "--seed", "0", "--embed-dim", "8", "--heads", "2", "--out-dir", os.path.join(blocker, "d"))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--out-dir", r.stderr)


if __name__ == "__main__":
    unittest.main()
