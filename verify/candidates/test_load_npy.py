#!/usr/bin/python3
"""adapters/vl_candidate.py's load_npy reads what np.load(path, allow_pickle=False) reads: the same
dtype, shape, memory order, values and writability for each kind of array a .npy file can hold
(the suite writes only little-endian C-order 1.0 files, but an adapter's helper may be handed any),
the same exception for each kind of broken file, and a repeated header read from its table. Its
save_npy writes the bytes np.save(path, a, allow_pickle=False) writes, for every kind of array,
and raises what np.save raises.

    /usr/bin/python3 verify/candidates/test_load_npy.py
"""
import io
import os
import sys
import tempfile
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "adapters"))
import vl_candidate  # noqa: E402


def npy_bytes(a, version=None):
    out = io.BytesIO()
    np.lib.format.write_array(out, a, version=version, allow_pickle=False)
    return out.getvalue()


class LoadNpy(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def file(self, content: bytes) -> str:
        path = os.path.join(self.dir.name, f"a{len(os.listdir(self.dir.name))}.npy")
        with open(path, "wb") as f:
            f.write(content)
        return path

    def assert_same_as_np_load(self, path):
        want = np.load(path, allow_pickle=False)
        for _ in range(2):  # the second read takes the header from the table
            got = vl_candidate.load_npy(path)
            self.assertEqual((got.dtype, got.shape), (want.dtype, want.shape))
            self.assertEqual((got.flags.c_contiguous, got.flags.f_contiguous), (want.flags.c_contiguous, want.flags.f_contiguous))
            self.assertTrue(got.flags.writeable)
            self.assertTrue(np.array_equal(got, want, equal_nan=got.dtype.kind in "fc"))

    def test_arrays_read_as_np_load_reads_them(self):
        rng = np.random.default_rng(1)
        arrays = [rng.standard_normal((3, 4)), rng.standard_normal((2, 3, 5)).astype(np.float32),
                  np.float16([[1.5, np.nan], [np.inf, -0.0]]), np.arange(6, dtype=np.uint16).reshape(2, 3),
                  np.array([[True, False]]), np.array(2.5), np.zeros((0, 7)), np.zeros((4, 0), dtype=np.float32),
                  np.asfortranarray(rng.standard_normal((3, 5))), rng.standard_normal(4).astype(">f8"),
                  np.array([(1, 2.0)], dtype=[("a", "<i4"), ("b", "<f8")])]
        for a in arrays:
            for version in ((1, 0), (2, 0), (3, 0)):
                with self.subTest(dtype=a.dtype.str, shape=a.shape, version=version):
                    self.assert_same_as_np_load(self.file(npy_bytes(a, version)))
        with self.subTest("bytes after the data"):
            self.assert_same_as_np_load(self.file(npy_bytes(np.ones(3)) + b"\0" * 16))

    def test_a_header_is_parsed_once(self):
        parsed = []
        size, reader = vl_candidate._HEADER_READERS[1]

        def counting(fp):
            parsed.append(1)
            return reader(fp)
        vl_candidate._HEADER_READERS[1] = (size, counting)
        try:
            path = self.file(npy_bytes(np.ones((5, 6, 7))))
            for _ in range(3):
                vl_candidate.load_npy(path)
        finally:
            vl_candidate._HEADER_READERS[1] = (size, reader)
        self.assertEqual(len(parsed), 1)

    def test_broken_files_raise_what_np_load_raises(self):
        good = npy_bytes(np.ones((2, 3)))
        minor = bytearray(good)
        minor[7] = 1
        broken = {"empty": b"", "magic only": good[:8], "header cut": good[:20], "data cut": good[:-8],
                  "version 1.1": bytes(minor), "object dtype": good.replace(b"'<f8'", b"'|O' "),
                  "not a dictionary": good[:10] + b"[1, 2]".ljust(len(good) - 10 - 48 - 1) + b"\n" + good[-48:]}
        for what, content in broken.items():
            with self.subTest(what):
                path = self.file(content)
                with self.assertRaises(Exception) as want:
                    np.load(path, allow_pickle=False)
                with self.assertRaises(type(want.exception)) as got:
                    vl_candidate.load_npy(path)
                self.assertEqual(str(got.exception), str(want.exception))

class SaveNpy(unittest.TestCase):
    def test_bytes_as_np_save_writes_them(self):
        rng = np.random.default_rng(2)
        arrays = [rng.standard_normal((3, 4)), rng.standard_normal((2, 3, 5)).astype(np.float32),
                  np.float16([[1.5, np.nan], [np.inf, -0.0]]), np.arange(6, dtype=np.uint16).reshape(2, 3),
                  np.array([[True, False]]), np.array(2.5), np.zeros((0, 7)), np.zeros((4, 0), dtype=np.float32),
                  np.arange(5, dtype=np.int64), rng.standard_normal(4).astype(">f8"),
                  np.asfortranarray(rng.standard_normal((3, 5))), rng.standard_normal((3, 5)),  # the same shape in C order after it
                  rng.standard_normal((4, 6))[:, ::2],  # not contiguous
                  np.array([(1, 2.0)], dtype=[("a", "<i4"), ("b", "<f8")]), np.array(["ab", "c"]),
                  np.zeros((1,) * 31 + (10 ** 6,), dtype=np.uint8)]  # the most axes, a long shape
        with tempfile.TemporaryDirectory() as d:
            for i, a in enumerate(arrays):
                with self.subTest(dtype=a.dtype.str, shape=a.shape[:4]):
                    want, got = os.path.join(d, f"want{i}.npy"), os.path.join(d, f"got{i}.npy")
                    np.save(want, a, allow_pickle=False)
                    for _ in range(2):  # the second write takes the header from the table
                        vl_candidate.save_npy(got, a)
                        self.assertEqual(Path(got).read_bytes(), Path(want).read_bytes())

    def test_what_np_save_takes_besides(self):
        with tempfile.TemporaryDirectory() as d:
            np.save(os.path.join(d, "want"), [[1.0, 2.0]], allow_pickle=False)  # a list; ".npy" added
            vl_candidate.save_npy(Path(d) / "got", [[1.0, 2.0]])
            self.assertEqual((Path(d) / "got.npy").read_bytes(), (Path(d) / "want.npy").read_bytes())
            out = io.BytesIO()
            vl_candidate.save_npy(out, np.arange(3.0))  # a file object
            self.assertEqual(out.getvalue(), npy_bytes(np.arange(3.0)))

    def test_errors_as_np_save_raises_them(self):
        with tempfile.TemporaryDirectory() as d:
            a = np.array([object()])
            with self.assertRaises(ValueError) as want:
                np.save(os.path.join(d, "w.npy"), a, allow_pickle=False)
            with self.assertRaises(ValueError) as got:
                vl_candidate.save_npy(os.path.join(d, "g.npy"), a)
            self.assertEqual(str(got.exception), str(want.exception))
            with self.assertRaises(FileNotFoundError):
                vl_candidate.save_npy(os.path.join(d, "no-such-folder", "g.npy"), np.zeros(3))


if __name__ == "__main__":
    unittest.main(verbosity=2)
