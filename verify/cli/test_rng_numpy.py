"""`lessons rng numpy ...` against NumPy itself, bit for bit.

Run by ctest (cli_test_rng_numpy) with LESSONS=<path to the lessons binary>, or by hand:
  LESSONS=build/bin/lessons /usr/bin/python3 verify/cli/test_rng_numpy.py
Each case draws with the CLI, loads the .npy and compares with np.random.default_rng(seed)
(np.array_equal on the values and an exact dtype and shape check). Bad arguments must exit
with status 2 and an error naming the argument, leaving no output file behind.
"""
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

LESSONS = os.environ.get("LESSONS", "lessons")


def run(*args):
    return subprocess.run([LESSONS, "rng", "numpy", *args], capture_output=True, text=True,
                          timeout=120)


class RngNumpyTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="vl_rng_numpy_")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def draw(self, dist, seed, shape, dtype=None):
        out = os.path.join(self.dir, "out.npy")
        args = [dist, "--seed", str(seed), "--shape", ",".join(map(str, shape)), "--out", out]
        if dtype is not None:
            args += ["--dtype", dtype]
        res = run(*args)
        self.assertEqual(res.returncode, 0, res.stderr)
        return np.load(out)

    def expected(self, dist, seed, shape, dtype):
        rng = np.random.default_rng(seed)
        if dist == "normal":
            return rng.standard_normal(shape, dtype=dtype)
        return rng.random(shape, dtype=dtype)

    def test_matches_numpy_bit_for_bit(self):
        seeds = [0, 1, 42, 2**32, 2**64 + 1, 2**128 - 1, 98765432123456789]
        shapes = [(6, 4), (7,), (2, 3, 5), (1, 1), (1000,)]
        checked = 0
        for dist in ("normal", "uniform"):
            for dtype in ("float64", "float32"):
                for seed in seeds:
                    for shape in shapes:
                        with self.subTest(dist=dist, dtype=dtype, seed=seed, shape=shape):
                            got = self.draw(dist, seed, shape, dtype)
                            want = self.expected(dist, seed, shape, np.dtype(dtype))
                            self.assertEqual(got.dtype, want.dtype)
                            self.assertEqual(got.shape, want.shape)
                            self.assertTrue(np.array_equal(got, want))
                            # bit patterns too (array_equal treats 0.0 == -0.0)
                            self.assertEqual(got.tobytes(), want.tobytes())
                            checked += got.size
        self.assertEqual(checked, 4 * 7 * (24 + 7 + 30 + 1 + 1000))

    def test_default_dtype_is_float64(self):
        got = self.draw("normal", 0, (6, 4))
        self.assertEqual(got.dtype, np.float64)
        self.assertTrue(np.array_equal(got, np.random.default_rng(0).standard_normal((6, 4))))

    def test_lesson_q_k_v_first_draw(self):
        # Q = default_rng(0).standard_normal((6, 4)): Q[0, 0] == 0.1257302210933933
        got = self.draw("normal", 0, (6, 4), "float64")
        self.assertEqual(float(got[0, 0]), 0.1257302210933933)

    def bad(self, *args, names):
        out = os.path.join(self.dir, "bad.npy")
        res = run(*args, "--out", out) if "--out" not in args else run(*args)
        self.assertEqual(res.returncode, 2, f"{args}: {res.stdout} {res.stderr}")
        self.assertIn(names, res.stderr)
        self.assertFalse(os.path.exists(out))

    def test_bad_arguments_exit_2_naming_the_argument(self):
        self.bad("normal", "--seed=-1", "--shape", "3", names="--seed")
        self.bad("normal", "--seed", "abc", "--shape", "3", names="--seed")
        self.bad("normal", "--seed", "1.5", "--shape", "3", names="--seed")
        self.bad("normal", "--seed", str(2**128), "--shape", "3", names="--seed")
        self.bad("normal", "--seed", "1", "--shape", "", names="--shape")
        self.bad("normal", "--seed", "1", "--shape", "3,0", names="--shape")
        self.bad("normal", "--seed", "1", "--shape", "0", names="--shape")
        self.bad("normal", "--seed", "1", "--shape", "3,x", names="--shape")
        self.bad("normal", "--seed", "1", "--shape", "3,,4", names="--shape")
        self.bad("normal", "--seed", "1", "--shape=-3", names="--shape")
        self.bad("normal", "--seed", "1", "--shape", "100000,100000", names="--shape")
        self.bad("normal", "--seed", "1", "--shape", "3", "--dtype", "float16", names="--dtype")
        self.bad("gamma", "--seed", "1", "--shape", "3", names="distribution")
        missing_dir = os.path.join(self.dir, "no", "such", "dir", "x.npy")
        self.bad("normal", "--seed", "1", "--shape", "3", "--out", missing_dir, names="--out")

    def test_seed_2_128_minus_1_is_accepted(self):
        got = self.draw("uniform", 2**128 - 1, (3,), "float32")
        self.assertTrue(np.array_equal(got, np.random.default_rng(2**128 - 1).random(3, dtype=np.float32)))


if __name__ == "__main__":
    unittest.main()
