"""NumPy goldens for the C++ RNG and printing (src/numeric/numpy_random.*, numpy_format.*).

Writes, under reference_outputs/numpy/:
  random_streams.json  per seed and per stream (uniform float64/float32, standard normal
                       float64/float32 from np.random.default_rng(seed)): the count, the first
                       8 values exactly (float.hex / float32 bit pattern) and the sha256 of the
                       little-endian bytes of all `count` values; plus multi-call continuation
                       cases and the lessons' Q, K, V draws (seed 0).
  array_str.json       random float64/float32 arrays (1-D, 2-D, a few 3-D and summarized ones)
                       with str(a) under NumPy's default print options.
  scalars.json         repr(float), np.round(x, d) and Python format specs ({:>9.3f}, {:.2e}, ...)
                       on chosen and random values, including exact ties.
Run: /usr/bin/python3 reference_outputs/generators/numpy_goldens.py   (each file is recorded in the manifest)
"""
import hashlib
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import manifest  # noqa: E402

OUT_DIR = os.path.join(manifest.GOLDEN_DIR, "numpy")
GENERATOR = "reference_outputs/generators/numpy_goldens.py"
STREAM_COUNT = 50_000


def f64_hex(values):
    return [float(v).hex() for v in np.asarray(values, dtype=np.float64).ravel()]


def f32_bits(values):
    """float32 values as their IEEE bit patterns, 8 hex digits each."""
    return ["%08x" % b for b in np.asarray(values, dtype=np.float32).ravel().view(np.uint32)]


def encode(values):
    a = np.asarray(values)
    return f32_bits(a) if a.dtype == np.float32 else f64_hex(a)


# One draw of `count` values for each stream kind, from a fresh generator.
STREAMS = {
    "uniform_f64": lambda rng, n: rng.random(n),
    "uniform_f32": lambda rng, n: rng.random(n, dtype=np.float32),
    "normal_f64": lambda rng, n: rng.standard_normal(n),
    "normal_f32": lambda rng, n: rng.standard_normal(n, dtype=np.float32),
}


def seeds():
    fixed = [0, 1, 2, 3, 7, 42, 123, 1234, 2**31 - 1, 2**32 - 1, 2**32, 2**63, 2**64 - 1,
             2**64, 2**64 + 1, 2**96 + 12345, 2**127, 2**128 - 1]
    # Seeds whose float32 normal streams reach a wedge test where NumPy's double-precision
    # exp(-0.5 * x * x) and a float expf would decide differently (found by search).
    fixed += [794, 1015, 1350]
    rs = np.random.RandomState(20240601)  # only to pick the large random seeds
    randoms = []
    for bits in (40, 64, 80, 100, 127, 128):
        words = rs.randint(0, 2**32, size=4, dtype=np.uint64)
        v = sum(int(w) << (32 * i) for i, w in enumerate(words))
        randoms.append(v % (2**bits))
    return fixed + randoms


def stream_goldens():
    out = {"count": STREAM_COUNT, "seeds": []}
    for seed in seeds():
        entry = {"seed": str(seed), "streams": {}}
        for name, draw in STREAMS.items():
            values = draw(np.random.default_rng(seed), STREAM_COUNT)
            le = values.astype(values.dtype.newbyteorder("<"), copy=False)
            entry["streams"][name] = {
                "first8": encode(values[:8]),
                "sha256": hashlib.sha256(le.tobytes()).hexdigest(),
            }
        out["seeds"].append(entry)

    # Successive calls on one generator continue its stream.
    def calls(seed, steps):
        rng = np.random.default_rng(seed)
        res = []
        for kind, shape in steps:
            v = STREAMS[kind](rng, tuple(shape))
            res.append({"kind": kind, "shape": list(shape), "values": encode(v)})
        return {"seed": str(seed), "calls": res}

    out["continuation"] = [
        calls(0, [("normal_f64", (3, 4)), ("normal_f64", (5,)), ("normal_f64", (2, 2))]),
        calls(42, [("normal_f64", (3, 4)), ("normal_f64", (5,)), ("normal_f64", (2, 2))]),
        calls(2**128 - 1, [("uniform_f64", (3, 4)), ("uniform_f64", (5,)), ("uniform_f64", (2, 2))]),
        # float32 draws buffer the high half of a 64-bit output; float64 draws leave it alone.
        calls(7, [("normal_f32", (3,)), ("uniform_f64", (2,)), ("normal_f32", (3,)),
                  ("uniform_f32", (1,)), ("normal_f64", (2, 3)), ("uniform_f32", (5,))]),
        calls(2**64 + 1, [("normal_f32", (2, 3, 2)), ("normal_f64", (4,)), ("uniform_f32", (7,))]),
    ]
    # The lessons' draws: Q, K, V = three standard_normal calls on default_rng(0).
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((6, 4)), rng.standard_normal((6, 4)), rng.standard_normal((6, 5))
    out["lesson_qkv_seed0"] = {"Q": f64_hex(q), "K": f64_hex(k), "V": f64_hex(v)}
    return out


def random_array(rs, dtype):
    """An array with a mix of shapes, magnitudes and special values, as lessons print them."""
    ndim = rs.choice([1, 1, 2, 2, 2, 3]) if rs.rand() < 0.97 else 2
    if ndim == 1:
        shape = (int(rs.randint(1, 25)),)
    elif ndim == 2:
        shape = (int(rs.randint(1, 9)), int(rs.randint(1, 13)))
    else:
        shape = (int(rs.randint(1, 4)), int(rs.randint(1, 4)), int(rs.randint(1, 6)))
    n = int(np.prod(shape))
    kind = rs.randint(0, 9)
    scale = 10.0 ** rs.uniform(-6, 9)
    if kind == 0:    # one magnitude
        a = rs.standard_normal(n) * scale
    elif kind == 1:  # magnitudes spread over many decades
        a = rs.standard_normal(n) * 10.0 ** rs.uniform(-6, 9, size=n)
    elif kind == 2:  # integer-valued
        a = np.floor(rs.standard_normal(n) * 10 ** rs.randint(0, 6))
    elif kind == 3:  # rounded like the lessons' listings
        a = np.round(rs.standard_normal(n), rs.randint(0, 5))
    elif kind == 4:  # probabilities (softmax rows)
        e = np.exp(rs.standard_normal(n))
        a = e / e.sum()
    elif kind == 5:  # with zeros and negative zeros
        a = rs.standard_normal(n) * scale
        a[rs.rand(n) < 0.3] = 0.0
        a[rs.rand(n) < 0.1] = -0.0
    elif kind == 6:  # non-finite values
        a = rs.standard_normal(n) * scale
        specials = [np.nan, np.inf, -np.inf]
        for i in np.nonzero(rs.rand(n) < 0.3)[0]:
            a[i] = specials[rs.randint(0, 3)]
    elif kind == 7:  # ones, halves, constants
        a = np.full(n, rs.choice([1.0, 0.5, -2.0, 0.0, 100.0, 1e-5]))
    else:            # uniform in a small range (fixed-point)
        a = rs.uniform(-1, 1, size=n) * rs.choice([1, 10, 1000])
    return a.reshape(shape).astype(dtype)


def array_str_goldens():
    rs = np.random.RandomState(7)
    cases = []
    for dtype, count in ((np.float64, 1100), (np.float32, 300)):
        for _ in range(count):
            a = random_array(rs, dtype)
            cases.append({"dtype": np.dtype(dtype).name, "shape": list(a.shape),
                          "values": encode(a), "str": str(a)})
    # Hand-picked lines from the lessons and edge cases.
    picked = [np.array([0.367, 0.063, 0.113, 0.115, 0.342]), np.ones(5), np.zeros((2, 3)),
              np.array([1e-5, 1.0]), np.array([1e8]), np.array([99999999.0]),
              np.array([0.0001, 0.1]), np.array([1000.0, 1.0]), np.array([1000.5, 1.0]),
              np.array([np.nan]), np.array([-np.inf, 1.0]), np.array([np.nan, np.inf, -np.inf]),
              np.array([0.125, 0.375]), np.array([1.0 / 3, 2.0 / 3]), np.array([-0.0, 0.0]),
              np.array([1e100, 1e-100]), np.array([123456789.123]), np.arange(30.0),
              np.arange(40.0).reshape(2, 20) / 7, np.array([[1.0, -2.5], [3.25, 4.0]]),
              np.array([]), np.zeros((0, 3))]
    for a in picked:
        cases.append({"dtype": "float64", "shape": list(a.shape), "values": encode(a),
                      "str": str(a)})
    # Summarized arrays (more than 1000 elements print with "...").
    for shape in ((1001,), (40, 30), (3, 400), (2, 3, 200)):
        a = rs.standard_normal(shape)
        cases.append({"dtype": "float64", "shape": list(shape), "values": encode(a),
                      "str": str(a)})
    return {"numpy": np.__version__, "cases": cases}


def scalar_goldens():
    rs = np.random.RandomState(11)
    reprs = [0.1, 1e-05, 1.0, 0.0, -0.0, 1e16, 1e15, 123456789012345680.0, 0.0001, 0.00012,
             2.5, -1.5e-7, 5e-324, 1.7976931348623157e308, float("inf"), float("-inf"),
             float("nan"), 1 / 3, 100.0, 1e22]
    reprs += list(rs.standard_normal(300) * 10.0 ** rs.uniform(-12, 20, size=300))
    repr_cases = [{"x": float(x).hex(), "repr": repr(float(x))} for x in reprs]

    round_inputs = [0.5, 1.5, 2.5, -0.5, -2.5, 0.125, 0.375, 1.0005, 2.675, 0.0625, 1234.5678,
                    0.3449999999999, 0.1 + 0.2]
    round_inputs += list(rs.standard_normal(600) * 10.0 ** rs.uniform(-4, 6, size=600))
    round_cases = []
    for x in round_inputs:
        for d in (-2, -1, 0, 1, 2, 3, 4, 6, 8, 10, 12):
            round_cases.append({"x": float(x).hex(), "decimals": d,
                                "y": float(np.round(np.float64(x), d)).hex()})

    specs = ["{:>9.3f}", "{:.2e}", "{:.1e}", "{:.3f}", "{:.4f}", "{:.2f}", "{:8.4f}", "{:.6f}",
             "{:+.3f}", "{:.3e}", "{:10.2e}", "{:.0f}", "{:.1f}"]
    # Exact ties in binary (x.x25, x.125, ...) and values that only look like ties.
    values = [0.125, 0.375, 2.5, 0.5, 1.5, -0.125, 0.0625, 1.0005, 2.675, 1.125e-3, 1125.0,
              12.5, 0.45, 1e-9, 123456.789, -0.0, 0.0, 1e20, 3.14159, 0.001, 9.9995, 99.95,
              float("inf"), float("-inf"), float("nan")]
    values += list(rs.standard_normal(200) * 10.0 ** rs.uniform(-5, 7, size=200))
    values += list(np.round(rs.uniform(-10, 10, size=100), 3) + 0.0005)
    format_cases = [{"spec": s, "x": float(x).hex(), "out": s.format(float(x))}
                    for s in specs for x in values]
    return {"repr": repr_cases, "round": round_cases, "format": format_cases}


def write(name, obj, note):
    path = os.path.join(OUT_DIR, name)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, separators=(",", ":"))
        f.write("\n")
    os.replace(tmp, path)
    size = os.path.getsize(path)
    assert size < 2_000_000, f"{path}: {size} bytes, over the 2 MB budget"
    manifest.record(f"numpy/{name}", GENERATOR, manifest.library_versions(np), note=note)
    print(f"wrote {path} ({size} bytes)")


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    write("random_streams.json", stream_goldens(),
          "np.random.default_rng streams: first values and sha256 of 50000 values per seed")
    write("array_str.json", array_str_goldens(), "str(ndarray) under default print options")
    write("scalars.json", scalar_goldens(), "repr(float), np.round, Python format specs")


if __name__ == "__main__":
    main()
