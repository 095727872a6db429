"""Write the small .npy fixtures read by verify/test_numeric_npy.cpp into verify/fixtures/npy/.

Good files are written by NumPy itself (np.save, or numpy.lib.format for versions 2.0/3.0);
bad files are NumPy's bytes cut or edited by hand, each for one error the reader must report.
Every array's values are listed in the test, so each file is checked against known numbers.
Run with Debian's interpreter: /usr/bin/python3 verify/reference/npy_fixtures.py
"""
import os

import numpy as np
import numpy.lib.format as npf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fixtures", "npy")


def path(name):
    return os.path.join(OUT, name)


def save(name, array):
    np.save(path(name), array)


def save_version(name, array, version):
    with open(path(name), "wb") as f:
        npf.write_array(f, array, version=version)


def write_bytes(name, data):
    with open(path(name), "wb") as f:
        f.write(data)


def npy_bytes(array):
    import io
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def main():
    os.makedirs(OUT, exist_ok=True)
    m23 = np.arange(6, dtype=np.float64).reshape(2, 3) / 4 - 0.5  # [[-0.5,-0.25,0],[0.25,0.5,0.75]]

    # --- good files: dtypes, byte orders, layouts, versions
    save("f8_c.npy", m23)
    save("f4_c.npy", m23.astype(np.float32))
    save("f8_big.npy", m23.astype(">f8"))
    save("f4_big.npy", m23.astype(">f4"))
    save("f8_fortran.npy", np.asfortranarray(m23))
    save("i4_fortran_3d.npy", np.asfortranarray(np.arange(24, dtype=np.int32).reshape(2, 3, 4)))
    save("f2.npy", np.array([1.0, -2.5, 0.0, 65504.0, 6.103515625e-05, 5.960464477539063e-08,
                             np.inf, -np.inf], dtype=np.float16))
    save("f2_big.npy", np.array([1.5, -0.375], dtype=">f2"))
    save("b1.npy", np.array([[True, False, True], [False, False, True]]))
    save("i1.npy", np.array([-128, -1, 0, 127], dtype=np.int8))
    save("i2_big.npy", np.array([-32768, 12345], dtype=">i2"))
    save("i8.npy", np.array([-(2 ** 53), -1, 0, 2 ** 53], dtype=np.int64))
    save("u1.npy", np.array([0, 255], dtype=np.uint8))
    save("u2.npy", np.array([0, 65535], dtype=np.uint16))
    save("u4_big.npy", np.array([0, 4294967295], dtype=">u4"))
    save("u8.npy", np.array([0, 2 ** 53], dtype=np.uint64))
    save("scalar.npy", np.float64(3.25))
    save("empty.npy", np.zeros((0, 3)))
    save_version("v2.npy", m23, (2, 0))
    save_version("v3.npy", m23, (3, 0))
    save("nan.npy", np.array([np.nan, 1.0]))

    # --- reference bytes for the writer: our save() must write exactly these
    save("numpy_written_f8.npy", m23)
    save("numpy_written_f4_3d.npy", np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 0.5)
    save("numpy_written_b1.npy", np.array([True, False, True]))
    save("numpy_written_scalar.npy", np.float64(-1.5))

    # --- bad files
    save("i8_too_big.npy", np.array([1, 2 ** 53 + 1], dtype=np.int64))
    save("u8_too_big.npy", np.array([2 ** 64 - 1], dtype=np.uint64))
    save("unicode.npy", np.array(["ab", "c"]))
    np.save(path("object.npy"), np.array([1, "x"], dtype=object), allow_pickle=True)
    save("complex.npy", np.array([1 + 2j]))
    save("structured.npy", np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
    good = npy_bytes(m23)
    write_bytes("truncated_data.npy", good[:-5])
    write_bytes("truncated_header.npy", good[:40])
    write_bytes("truncated_prefix.npy", good[:9])
    write_bytes("bad_magic.npy", b"\x93NUMPZ" + good[6:])
    write_bytes("empty_file.npy", b"")
    write_bytes("bad_version.npy", good[:6] + b"\x07\x00" + good[8:])
    # shape (2,) in the header but six float64 values in the data
    write_bytes("count_mismatch.npy", good.replace(b"'shape': (2, 3), ", b"'shape': (2,),   "))
    # malformed dict: a missing closing brace / a missing key / a non-integer dimension
    write_bytes("malformed_brace.npy", good.replace(b"(2, 3), }", b"(2, 3),  "))
    write_bytes("malformed_nokey.npy", good.replace(b"'fortran_order': False", b"'fortran_ordr': False "))
    write_bytes("malformed_shape.npy", good.replace(b"(2, 3)", b"(2, x)"))


if __name__ == "__main__":
    main()
