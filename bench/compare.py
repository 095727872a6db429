#!/usr/bin/python3
"""Our attention kernels next to NumPy and PyTorch, in one run, on the same sizes.

    /usr/bin/python3 bench/compare.py [--bench build-perf/bin/attention_bench]
        [--lessons build-perf/bin/lessons] [--fma-peak build-perf/bin/fma_peak]
        [--out build-perf/bench.json] [--quick]

1. runs attention_bench (Google Benchmark, --benchmark_format=json, 5 repetitions: the median
   and the best of each);
2. times, in this process, NumPy + OpenBLAS (Debian's python3-numpy) and PyTorch on the same
   sizes: the listing's computation (S = Q@K.T/√d; softmax in place; S@V), an n×n×d sgemm,
   and chunked linear attention (chunk 64);
3. times the whole `lessons eval attention` process at n = 4096, d = 64, float32 (hyperfine if
   installed, else a loop here) against NumPy doing the listing's computation in-process;
4. runs fma_peak (the machine's float32 FMA ceiling, registers only) and times the same eval
   process on n = 16 inputs (its fixed cost: start, loading, writing), to say what the process
   could take at best: 4·n²·d flops at the FMA peak plus that fixed cost;
5. prints one table of medians and ratios and writes everything as JSON (docs/plots.py draws
   the measured curves from it: VL_BENCH_JSON, or build-perf/bench.json, build/bench.json);
6. prints issue 23's targets as a table (measured vs target, PASS/FAIL) headed by what ran: the
   CPU model and vector width, our kernels' vector path and OpenBLAS's core, as the audit's
   provenance gives them (`lessons audit linear-rnn.causal --json`). A kernel's rate is judged
   by its best repetition over the FMA ceiling, which fma_peak also reports as a best; the
   median's ratio is printed beside it (targets_table says why). The fused kernel is timed
   with our block products on the selected path, on each path explicitly (a path the CPU lacks
   is "not run"), and with BLAS products (the alternative), in the same run. NumPy's listing is
   also timed in fresh processes: in the default environment and, only where OpenBLAS's default
   core is narrower than the CPU, with OPENBLAS_CORETYPE set to the core made for it (SkylakeX
   for AVX-512, Haswell for AVX2); the eval target is judged against the faster. Our side never
   gets the variable, unless --blas-core CORE asks (e.g. Prescott, to emulate issue 23's
   fallback on a CPU OpenBLAS knows).

7. issue 40's additions, in the same run: the fused backward (FlashAttention-2's flop count,
   10·n²·d); ONNX Runtime's Attention, full and causal, n = 512 … 8192, timed in its own Node
   process (bench/ort_attention_time.js, intra-op threads = the CPUs) beside our fused kernel,
   ORT/ours printed; the `eval linear-attention` and `eval mha` processes (their fixed cost at a
   small size; linear attention also at n = 16384 against its kernel); the linear family's
   chunked forms in float32 at T = 16k, the reference and the fast kernel (linear_family_bench); and issue 40's targets as a second
   table, each judged by medians.

--quick: one repetition, n up to 4096, fewer process runs (a minute or two, not a measurement).

Everything runs on the same machine in the same minutes; the load average before and after is
recorded, because on a shared 2-core machine it is the first thing that explains a number.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
D = 64


def load():
    return list(os.getloadavg())


def median_time(fn, repeats=5, warmup=1):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), ts


# --- the C++ side -------------------------------------------------------------------------------
BENCH_NAMES = ("attention_plain", "attention_materialized", "attention_fused", "attention_fused_causal", "attention_fused_1thread",
               "linear_chunked_xtensor", "linear_chunked_fast", "sgemm_nxnxd", "sgemm_square",
               # issue 23: BLAS products against ours, each vector path explicitly, float64, batched heads
               "attention_fused_blas", "attention_fused_causal_blas", "attention_fused_f64", "attention_fused_f64_blas",
               "attention_fused_baseline", "attention_fused_avx2", "attention_fused_avx512", "attention_fused_batched",
               "attention_fused_batched_blas",
               # issue 40: the fused backward (FlashAttention-2's flop count)
               "attention_fused_backward", "attention_fused_backward_causal", "attention_fused_backward_1thread",
               "attention_fused_backward_f64")
ORT_SCRIPT = ROOT / "bench/ort_attention_time.js"
ORT_PACKAGE = ROOT / "adapters/onnxruntime/node_modules/onnxruntime-node"


def bench_filter(quick: bool) -> str:
    """Google Benchmark's --benchmark_filter: our names; --quick stops the n ranges at 4096."""
    sizes = "(512|1024|2048|4096)/" if quick else ""
    return "^BM_(" + "|".join(BENCH_NAMES) + ")/" + sizes


def run_cpp(bench: Path, quick: bool, env=None):
    args = [str(bench), "--benchmark_format=json", f"--benchmark_filter={bench_filter(quick)}",
            "--benchmark_repetitions=1" if quick else "--benchmark_repetitions=5",
            "--benchmark_min_time=0.05" if quick else "--benchmark_min_time=0.2"]
    out = subprocess.run(args, check=True, capture_output=True, text=True, env=env).stdout
    data = json.loads(out)
    rows = {}
    for b in data["benchmarks"]:
        if b.get("error_occurred"):  # a vector path this CPU lacks: reported as not run
            kernel, _, rest = b.get("run_name", b["name"]).partition("/")
            rows[(kernel.removeprefix("BM_"), int(rest.split("/")[0]))] = None
            continue
        if b.get("run_type") == "aggregate":  # the repetitions themselves are read: median and best below
            continue
        name = b["run_name"] if "run_name" in b else b["name"]
        kernel, _, rest = name.partition("/")
        n = int(rest.split("/")[0])
        scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ns")]
        rows.setdefault((kernel.removeprefix("BM_"), n), []).append(
            {"real": b["real_time"] * scale, "cpu": b["cpu_time"] * scale, "rate": b.get("rate"),
             "rate_computed": b.get("rate_computed")})
    def med(v, key):
        return statistics.median(r[key] for r in v) if v[0][key] is not None else None
    def best(v, key):  # the fastest repetition: the largest rate
        return max(r[key] for r in v) if v[0][key] is not None else None
    return {k: ({"seconds": med(v, "real"), "cpu_seconds": med(v, "cpu"), "rate": med(v, "rate"),
                 "rate_computed": med(v, "rate_computed"), "best_seconds": min(r["real"] for r in v),
                 "best_rate": best(v, "rate"), "best_rate_computed": best(v, "rate_computed"), "repetitions": len(v)}
                if v is not None else {"not_run": "this CPU lacks the path"})
            for k, v in rows.items()}, data.get("context", {})


def run_linear_family(bench: Path, quick: bool, env=None) -> tuple[dict, dict]:
    """The linear family's chunked forms in float32 at T = 16k, in one linear_family_bench run: the
    reference's (BM_linear_family_f32, one thread) and the fast kernel's (BM_linear_family_fast_f32,
    every thread), each {rule: {"seconds", "rate"}} medians, "rate" two flops per multiply-add the
    reference counts."""
    if not bench.exists():
        return {}, {}
    args = [str(bench), "--benchmark_format=json", "--benchmark_filter=^BM_linear_family(_fast)?_f32/",
            f"--benchmark_repetitions={1 if quick else 5}"]
    try:
        data = json.loads(subprocess.run(args, check=True, capture_output=True, text=True, env=env).stdout)
    except subprocess.CalledProcessError as e:
        print(f"linear_family_bench failed, not run: {e.stderr.strip()[-300:]}", file=sys.stderr)
        return {}, {}
    runs = {"BM_linear_family_f32": {}, "BM_linear_family_fast_f32": {}}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        kernel, rule = b["run_name"].split("/")[:2]
        runs[kernel].setdefault(rule, []).append((b["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]], b["rate"]))
    medians = {kernel: {rule: {"seconds": statistics.median(t for t, _ in v), "rate": statistics.median(r for _, r in v), "repetitions": len(v)}
                        for rule, v in by_rule.items()} for kernel, by_rule in runs.items()}
    return medians["BM_linear_family_f32"], medians["BM_linear_family_fast_f32"]


def run_ort(sizes, repeats: int, threads: int):
    """ONNX Runtime's Attention, full and causal, in its own Node process (bench/ort_attention_time.js,
    in-process timing there, `threads` intra-op threads): ({(n, causal): row}, None) or ({}, why not)."""
    if not shutil.which("node"):
        return {}, "node is not installed"
    if not ORT_PACKAGE.exists():
        return {}, f"{ORT_PACKAGE.relative_to(ROOT)} is missing (scripts/install-deps.sh installs it)"
    try:
        out = subprocess.run(["node", str(ORT_SCRIPT), "--threads", str(threads), "--repeats", str(repeats), *map(str, sizes)],
                             check=True, capture_output=True, text=True, timeout=3600).stdout
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        return {}, f"{ORT_SCRIPT.name} failed: {(getattr(e, 'stderr', '') or str(e)).strip()[-300:]}"
    rows = {}
    for line in out.splitlines():
        r = json.loads(line)
        rows[(r["n"], r["causal"])] = r
    return rows, None


def ort_table(cpp: dict, ort: dict) -> list[dict]:
    """Ours (the fused kernel, in-process, median) against ONNX Runtime's Attention (median) at each n both ran."""
    out = []
    for (n, causal), r in sorted(ort.items()):
        ours = cpp.get(("attention_fused_causal" if causal else "attention_fused", n))
        if not ours or "seconds" not in ours:
            continue
        out.append({"n": n, "causal": causal, "ours_seconds": ours["seconds"], "ort_seconds": r["median_ms"] / 1e3,
                    "ort_over_ours": r["median_ms"] / 1e3 / ours["seconds"], "ort_threads": r["threads"], "onnxruntime": r["onnxruntime"]})
    return out


def time_eval_other(lessons: Path, runs: int, env=None) -> dict:
    """`lessons eval linear-attention` (chunked) and `eval mha`, whole processes, float32, at a small
    size (their fixed cost) and, for linear attention, at n = 16384 (against its kernel in-process)."""
    import numpy as np
    tmp = Path(tempfile.mkdtemp(prefix="vl-bench-"))
    rng = np.random.default_rng(1)
    out = {}
    for n in (16, 16384):
        attention_args = eval_inputs(tmp, n)[1]  # q, k, v (n, D) float32, as eval attention's
        inputs = attention_args[attention_args.index("--q"):attention_args.index("--out")]
        cmd = [str(lessons), "eval", "linear-attention", "--form", "chunked", "--chunk", "64", *inputs, "--out", str(tmp / "lo.npy")]
        out[f"linear_chunked_{n}"] = time_process(cmd, runs, tmp, env)
    d, s = 64, 16
    files = {"x": (s, d), "w": (3 * d, d), "b": (3 * d,), "ow": (d, d), "ob": (d,)}
    for name, shape in files.items():
        np.save(tmp / f"m{name}.npy", (rng.standard_normal(shape) / np.sqrt(d)).astype(np.float32))
    cmd = [str(lessons), "eval", "mha", "--x", str(tmp / "mx.npy"), "--in-proj-weight", str(tmp / "mw.npy"), "--in-proj-bias",
           str(tmp / "mb.npy"), "--out-proj-weight", str(tmp / "mow.npy"), "--out-proj-bias", str(tmp / "mob.npy"), "--heads", "8",
           "--out", str(tmp / "mo.npy")]
    out["mha_16"] = time_process(cmd, runs, tmp, env)
    shutil.rmtree(tmp, ignore_errors=True)
    return out


# --- NumPy and PyTorch ---------------------------------------------------------------------------
def numpy_listing(np, q, k, v):
    s = q @ k.T / np.float32(math.sqrt(q.shape[1]))
    s -= s.max(axis=1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=1, keepdims=True)
    return s @ v


def listing_means(np, q, k, v):
    """Five means of five runs of the listing (the listing times itself as a mean of 5)."""
    means = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(5):
            numpy_listing(np, q, k, v)
        means.append((time.perf_counter() - t0) / 5)
    return means


def numpy_linear_chunked(np, pq, pk, v, chunk=64):
    n, dk = pq.shape
    S = np.zeros((v.shape[1], dk), pq.dtype)
    z = np.zeros(dk, pq.dtype)
    out = np.empty_like(v)
    for c in range(0, n, chunk):
        q, k, vv = pq[c:c + chunk], pk[c:c + chunk], v[c:c + chunk]
        a = np.tril(q @ k.T)
        out[c:c + chunk] = (a @ vv + q @ S.T) / (a.sum(1) + q @ z)[:, None]
        S += vv.T @ k
        z += k.sum(0)
    return out


def run_python(ns_quadratic, ns_linear, repeats):
    import numpy as np
    results = {}
    rng = np.random.default_rng(0)
    for n in ns_quadratic:
        q, k, v = (rng.standard_normal((n, D)).astype(np.float32) for _ in range(3))
        results[("numpy_listing", n)] = median_time(lambda: numpy_listing(np, q, k, v), repeats)[0]
        results[("numpy_sgemm_nxnxd", n)] = median_time(lambda: q @ k.T, repeats)[0]
    for n in ns_linear:
        pq, pk, v = (rng.standard_normal((n, D)).astype(np.float32) for _ in range(3))
        pq, pk = np.where(pq > 0, pq + 1, np.exp(pq)), np.where(pk > 0, pk + 1, np.exp(pk))
        results[("numpy_linear_chunked", n)] = median_time(lambda: numpy_linear_chunked(np, pq, pk, v), max(1, repeats // 2))[0]
    try:
        import torch
        torch.set_grad_enabled(False)
        for n in ns_quadratic:
            q, k, v = (torch.randn(n, D, dtype=torch.float32) for _ in range(3))
            f = lambda: torch.softmax(q @ k.T / math.sqrt(D), dim=-1) @ v  # noqa: E731
            results[("torch_listing", n)] = median_time(f, repeats)[0]
        results["torch_version"] = torch.__version__
        results["torch_threads"] = torch.get_num_threads()
    except ImportError:
        pass
    results["numpy_version"] = np.__version__
    return results


# --- the whole eval process ---------------------------------------------------------------------
def eval_inputs(tmp: Path, n: int):
    """q, k, v (n, D) float32 saved under tmp; returns them and the eval command on them."""
    import numpy as np
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((n, D)).astype(np.float32) for _ in range(3))
    for name, x in (("q", q), ("k", k), ("v", v)):
        np.save(tmp / f"{name}{n}.npy", x)
    return (q, k, v), ["eval", "attention", "--q", str(tmp / f"q{n}.npy"), "--k", str(tmp / f"k{n}.npy"), "--v",
                       str(tmp / f"v{n}.npy"), "--out", str(tmp / "o.npy")]


def time_process(cmd, runs: int, tmp: Path, env=None) -> dict:
    """Median wall time of a whole process: hyperfine if installed, else a loop here."""
    if shutil.which("hyperfine"):
        js = tmp / "hf.json"
        subprocess.run(["hyperfine", "-N", "--warmup", "2", "--runs", str(runs), "--export-json", str(js), " ".join(cmd)],
                       check=True, capture_output=True, env=env)
        r = json.loads(js.read_text())["results"][0]
        return {"tool": "hyperfine", "seconds": r["median"], "mean": r["mean"], "stddev": r["stddev"], "min": r["min"]}
    med, ts = median_time(lambda: subprocess.run(cmd, check=True, env=env), runs, warmup=2)
    return {"tool": "python loop", "seconds": med, "min": min(ts)}


def time_eval(lessons: Path, n: int, runs: int, env=None):
    import numpy as np
    tmp = Path(tempfile.mkdtemp(prefix="vl-bench-"))
    (q, k, v), args = eval_inputs(tmp, n)
    cmd = [str(lessons), *args]
    out = {"command": " ".join(cmd), "n": n}
    # The fixed cost of the process (start, loading, checks, writing): the same command on n = 16.
    out["fixed_seconds"] = time_process([str(lessons), *eval_inputs(tmp, 16)[1]], runs, tmp, env)["seconds"]
    out.update(time_process(cmd, runs, tmp, env))
    # The listing's computation in NumPy, in-process: mean of 5, as the listing does; and the median of 5 such means.
    means = listing_means(np, q, k, v)
    out["numpy_seconds"] = statistics.median(means)
    out["numpy_means"] = means  # they vary run to run (58-77 ms seen at n = 4096: 64 MiB of fresh pages each time)
    o = np.load(tmp / "o.npy")
    ref = numpy_listing(np, q.astype(np.float64), k.astype(np.float64), v.astype(np.float64))
    out["max_abs_diff_vs_numpy_f64"] = float(np.abs(o - ref).max())
    shutil.rmtree(tmp, ignore_errors=True)
    return out


def machine(lessons: Path, env=None) -> dict:
    """What ran, as the audit's provenance says it (one small claim): CPU model and vector width,
    our kernels' vector path, OpenBLAS's core, and the line saying when that core is narrower."""
    with tempfile.TemporaryDirectory(prefix="vl-bench-") as t:
        js = Path(t) / "audit.json"
        subprocess.run([str(lessons), "audit", "linear-rnn.causal", "--root", str(ROOT), "--json", str(js)], check=True,
                       capture_output=True, env=env)
        return json.loads(js.read_text())["provenance"]


# The OpenBLAS core made for a CPU's widest vector unit (the audit's cpu_vector).
BEST_CORE = {"AVX-512": "SkylakeX", "AVX2+FMA": "Haswell"}


def numpy_listing_here(n: int) -> dict:
    """The listing in NumPy at n, in this process (median of 5 means of 5), and OpenBLAS's core."""
    import ctypes
    import numpy as np
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((n, D)).astype(np.float32) for _ in range(3))
    numpy_listing(np, q, k, v)
    means = listing_means(np, q, k, v)
    try:
        core = ctypes.CDLL("libblas.so.3").openblas_get_corename
        core.restype = ctypes.c_char_p
        core = core().decode()
    except (OSError, AttributeError):
        core = "unknown (not OpenBLAS)"
    return {"seconds": statistics.median(means), "means": means, "core": core}


def numpy_listing_with_core(n: int, core: str | None) -> dict:
    """numpy_listing_here in a fresh Python with OPENBLAS_CORETYPE=core (the variable is read
    when OpenBLAS loads), for the NumPy side only."""
    env = dict(os.environ)
    if core:
        env["OPENBLAS_CORETYPE"] = core
    else:
        env.pop("OPENBLAS_CORETYPE", None)
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--numpy-listing", str(n)], check=True,
                         capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def targets_table(cpp: dict, ev: dict | None, peak: dict | None, prov: dict) -> list[dict]:
    """Issue 23's targets, measured vs target, from this one run. A kernel's rate is judged as
    the same statistic as the ceiling it is divided by: fma_peak reports the best of its 5
    repetitions, so the kernel's is the best of its 5 (on a shared host the noise only ever slows
    a run down; a median over a best would charge the kernel with the neighbours' load). The
    median's ratio is printed beside it; the summary lines above the table are medians. The eval target compares two medians (hyperfine's, and
    NumPy's median of means)."""
    rows = []
    if not peak:
        return rows
    ceiling, ceiling_avx2 = peak["gflops_all_threads"] * 1e9, peak.get("gflops_all_threads_avx2", 0) * 1e9

    def rate(name, n, key="rate"):
        """(best, median) of the benchmark's rate `key`, or (None, None)."""
        r = cpp.get((name, n))
        if r is None or r.get(key) is None:
            return None, None
        return r.get("best_" + key), r[key]

    def add(what, value, target, higher=True, note="", median=None):
        ok = None if value is None or target is None else (value >= target if higher else value <= target)
        rows.append({"target": what, "measured": value, "median": median, "goal": target, "higher_is_better": higher,
                     "pass": ok, "note": note})

    def frac(r, c):
        return None if r is None or not c else r / c

    def add_rate(what, name, n, c, target, key="rate", note=""):
        best, median = rate(name, n, key)
        add(what, frac(best, c), target, note=note, median=frac(median, c))
    add_rate("fused, n=4096, d=64, f32, 2 threads: rate / FMA ceiling", "attention_fused", 4096, ceiling, 0.6,
             note=f"our block_gemm, {prov.get('kernel_path')} path")
    add_rate("causal, n=4096: rate over computed blocks / ceiling", "attention_fused_causal", 4096, ceiling, 0.55, key="rate_computed")
    add_rate("float64, n=4096: rate / float64 ceiling (f32 / 2)", "attention_fused_f64", 4096, ceiling / 2, 0.5)
    add_rate("batched B=4, H=8, n=1024: rate / ceiling", "attention_fused_batched", 1024, ceiling, 0.6)
    if ev:
        add("lessons eval attention, n=4096: process / NumPy listing (best core)", ev["seconds"] / ev["numpy_seconds_target"], 0.33,
            higher=False, note=f"medians; NumPy on core {ev['numpy_core_target']}: {ev['numpy_seconds_target']:.4f} s")
    add_rate("AVX2 path explicitly, n=4096: rate / AVX2 ceiling", "attention_fused_avx2", 4096, ceiling_avx2, 0.6,
             note="the AVX2 clone selected by FusedConfig::path")
    avx512 = cpp.get(("attention_fused_avx512", 4096))
    if avx512 is None or "not_run" in avx512:
        rows.append({"target": "AVX-512 path explicitly, n=4096: rate / ceiling", "measured": None, "median": None, "goal": 0.6,
                     "pass": None, "note": "not run: this CPU lacks AVX-512F", "higher_is_better": True})
    else:
        add_rate("AVX-512 path explicitly, n=4096: rate / ceiling", "attention_fused_avx512", 4096, ceiling, 0.6)
    add_rate("baseline path (std::fma), n=1024: rate / ceiling", "attention_fused_baseline", 1024, ceiling, None,
             note="no target: the fallback for CPUs without AVX2")
    for name, n, what in (("attention_fused_blas", 4096, "fused"), ("attention_fused_causal_blas", 4096, "causal"),
                          ("attention_fused_batched_blas", 1024, "batched")):
        add_rate(f"alternative: BLAS products ({what}): rate / ceiling", name, n, ceiling, None,
                 key="rate_computed" if what == "causal" else "rate", note=f"OpenBLAS core {prov.get('blas_core')}")
    add_rate("alternative: BLAS products (float64): rate / f64 ceiling", "attention_fused_f64_blas", 4096, ceiling / 2, None)
    return rows


def issue40_targets(cpp: dict, ev: dict | None, other: dict | None, ort_rows: list, family: dict, peak: dict | None,
                    family_ref: dict | None = None) -> list[dict]:
    """Issue 40's targets from this one run, each judged by medians (the kernels' median repetition
    over fma_peak's best: the ceiling is what the machine can do, the median what a user gets)."""
    rows = []
    if not peak:
        return rows
    ceiling = peak["gflops_all_threads"] * 1e9

    def add(what, value, target, higher=True, note=""):
        ok = None if value is None or target is None else (value >= target if higher else value <= target)
        rows.append({"target": what, "measured": value, "goal": target, "higher_is_better": higher, "pass": ok, "note": note})

    def med_rate(name, n, key="rate"):
        r = cpp.get((name, n))
        return None if not r or r.get(key) is None else r[key] / ceiling
    add("fused backward, n=4096, d=64, f32, 2 threads: 10n^2d / time / ceiling", med_rate("attention_fused_backward", 4096), 0.5,
        note="FlashAttention-2's count: 2.5x the forward's 4n^2d")
    add("fused backward, causal, n=4096: 5n^2d / time / ceiling", med_rate("attention_fused_backward_causal", 4096), None)
    add("fused backward, float64, n=4096: 10n^2d / time / (ceiling / 2)",
        None if med_rate("attention_fused_backward_f64", 4096) is None else 2 * med_rate("attention_fused_backward_f64", 4096), None)
    add("fused forward, n=4096: rate / ceiling", med_rate("attention_fused", 4096), 0.7)
    add("fused forward, causal, n=4096: rate over computed blocks / ceiling", med_rate("attention_fused_causal", 4096, "rate_computed"), 0.65)
    add("fused forward, batched B=4, H=8, n=1024: rate / ceiling", med_rate("attention_fused_batched", 1024), 0.65)
    kernel = cpp.get(("attention_fused", 4096), {}).get("seconds")
    if ev and kernel:
        add("eval attention n=4096: process / (1.5 x kernel + 3 ms)", ev["seconds"] / (1.5 * kernel + 0.003), 1.0, higher=False,
            note=f"process {ev['seconds'] * 1e3:.1f} ms, kernel in-process {kernel * 1e3:.1f} ms")
        add("eval attention n=16: process (ms)", ev["fixed_seconds"] * 1e3, 3.0, higher=False)
        add("eval attention n=4096: process / NumPy listing", ev["seconds"] / ev["numpy_seconds_target"], 0.33, higher=False)
    if other:
        lin = cpp.get(("linear_chunked_fast", 16384), {}).get("seconds")
        if lin:
            p = other["linear_chunked_16384"]["seconds"]
            add("eval linear-attention chunked n=16384: process / (1.5 x kernel + 3 ms)", p / (1.5 * lin + 0.003), 1.0, higher=False,
                note=f"process {p * 1e3:.1f} ms, its kernel (the fast chunked one, phi applied outside its timing) in-process {lin * 1e3:.1f} ms")
        add("eval linear-attention n=16: process (ms)", other["linear_chunked_16"]["seconds"] * 1e3, 3.0, higher=False)
        add("eval mha S=16, d=64: process (ms)", other["mha_16"]["seconds"] * 1e3, 3.0, higher=False)
    for r in ort_rows:
        if r["n"] >= 1024:
            add(f"ONNX Runtime / ours, {'causal' if r['causal'] else 'full'}, n={r['n']}", r["ort_over_ours"], 2.0,
                note=f"ONNX Runtime {r['onnxruntime']}, {r['ort_threads']} threads, {r['ort_seconds'] * 1e3:.1f} ms")
    for rule, r in sorted(family.items()):
        add(f"linear family chunked {rule}, fast kernel, f32, T=16384, d=64: rate / ceiling", r["rate"] / ceiling, 0.3,
            note=f"kernels/fused/linear_family_fast.hpp, every thread, {r['seconds'] * 1e3:.1f} ms; "
                 f"the reference's {family_ref[rule]['rate'] / ceiling:.2f}" if rule in (family_ref or {}) else "the fast kernel")
    return rows


def print_issue40(rows):
    print("\nIssue 40's targets (medians)")
    print(f"{'target':<78}{'measured':>10}{'goal':>9}  result")
    for r in rows:
        m = "-" if r["measured"] is None else f"{r['measured']:.3f}"
        g = "-" if r["goal"] is None else (">= " if r["higher_is_better"] else "<= ") + f"{r['goal']:.2f}"
        res = "n/a" if r["pass"] is None else ("PASS" if r["pass"] else "FAIL")
        print(f"{r['target']:<78}{m:>10}{g:>9}  {res}{'  (' + r['note'] + ')' if r.get('note') else ''}")


def print_targets(rows, prov):
    print(f"\nIssue 23's targets on {prov.get('cpu')} ({prov.get('cpu_vector')}); our kernels' vector path: "
          f"{prov.get('kernel_path')}; BLAS core: {prov.get('blas_core')}")
    if prov.get("blas_narrower"):
        print(f"  {prov['blas_narrower']}")
    print("measured: a kernel's best repetition over the ceiling (fma_peak's best); median: its median repetition over it")
    print(f"{'target':<70}{'measured':>10}{'median':>8}{'goal':>8}  result")
    for r in rows:
        m = "-" if r["measured"] is None else f"{r['measured']:.3f}"
        md = "-" if r.get("median") is None else f"{r['median']:.3f}"
        g = "-" if r["goal"] is None else (">= " if r["higher_is_better"] else "<= ") + f"{r['goal']:.2f}"
        res = "n/a" if r["pass"] is None else ("PASS" if r["pass"] else "FAIL")
        print(f"{r['target']:<70}{m:>10}{md:>8}{g:>8}  {res}{'  (' + r['note'] + ')' if r.get('note') else ''}")


# The exponent of n in each kernel's counted work (the claims that count it): the measured time's
# log-log slope is reported beside it, never asserted (timing lives here, in the benchmark).
COUNTED_EXPONENT = {
    "attention_materialized": "2: attention.table1-costs, listing 6's 'quadruples per doubling'",
    "attention_plain": "2: attention.table1-costs",
    "attention_fused": "2: the same 2n²d products, block by block",
    "linear_chunked_fast": "1: linear-rnn.cost-counted",
    "linear_chunked_xtensor": "1: linear-rnn.cost-counted",
}


def measured_slopes(cpp: dict) -> dict:
    """{kernel_loglog_slope: slope} for each kernel of COUNTED_EXPONENT timed at two sizes or more."""
    out = {}
    for kernel in COUNTED_EXPONENT:
        pts = sorted((n, r["seconds"]) for (k, n), r in cpp.items() if k == kernel and "seconds" in r)
        if len(pts) >= 2:
            out[f"{kernel}_loglog_slope"] = slope([p[0] for p in pts], [p[1] for p in pts])
    return out


def slope(ns, ts):
    xs, ys = [math.log(n) for n in ns], [math.log(t) for t in ts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=str(ROOT / "build-perf/bin/attention_bench"))
    ap.add_argument("--lessons", default=str(ROOT / "build-perf/bin/lessons"))
    ap.add_argument("--fma-peak", default=str(ROOT / "build-perf/bin/fma_peak"))
    ap.add_argument("--linear-family-bench", default=str(ROOT / "build-perf/bin/linear_family_bench"))
    ap.add_argument("--out", default=str(ROOT / "build-perf/bench.json"))
    ap.add_argument("--quick", action="store_true", help="one repetition, n <= 4096, fewer runs (a smoke test)")
    ap.add_argument("--blas-core", metavar="CORE",
                    help="OPENBLAS_CORETYPE for our side (benchmarks, eval): e.g. Prescott to emulate issue 23's fallback")
    ap.add_argument("--numpy-listing", type=int, metavar="N", help=argparse.SUPPRESS)  # the helper below, in a fresh process
    a = ap.parse_args()
    if a.numpy_listing:
        print(json.dumps(numpy_listing_here(a.numpy_listing)))
        return 0
    ours_env = dict(os.environ)
    if a.blas_core:
        ours_env["OPENBLAS_CORETYPE"] = a.blas_core
    load_before = load()
    prov = machine(Path(a.lessons), ours_env) if Path(a.lessons).exists() else {}
    cpp, context = run_cpp(Path(a.bench), a.quick, ours_env)
    ns_quadratic = sorted({n for (k, n) in cpp if k in ("attention_plain", "attention_materialized")})
    ns_linear = sorted({n for (k, n) in cpp if k.startswith("linear_chunked")})
    py = run_python(ns_quadratic, ns_linear, 3 if a.quick else 5)
    ev = time_eval(Path(a.lessons), 4096, 5 if a.quick else 20, ours_env) if Path(a.lessons).exists() else None
    if ev:
        # NumPy in the default environment (above, in-process) and, where OpenBLAS's default core
        # is narrower than the CPU, also on the core made for it: the target is judged against the
        # faster NumPy. Our side never gets the variable (unless --blas-core asks).
        default = machine(Path(a.lessons), {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"})
        ev["numpy_default_core"] = numpy_listing_with_core(4096, None)
        best = BEST_CORE.get(default.get("cpu_vector", "").split(" ")[0]) if default.get("blas_narrower") else None
        ev["numpy_best_core"] = numpy_listing_with_core(4096, best) if best else None
        # The target's NumPy: on the better core in a fresh process where the variable is needed,
        # else this process's own timing above (one number, the one the eval line prints).
        if ev["numpy_best_core"]:
            ev["numpy_seconds_target"] = ev["numpy_best_core"]["seconds"]
            ev["numpy_core_target"] = f"{ev['numpy_best_core']['core']}, OPENBLAS_CORETYPE set, fresh process"
        else:
            ev["numpy_seconds_target"] = ev["numpy_seconds"]
            ev["numpy_core_target"] = f"{ev['numpy_default_core']['core']}, the default, in-process"
    other = time_eval_other(Path(a.lessons), 5 if a.quick else 20, ours_env) if Path(a.lessons).exists() else None
    family_ref, family = run_linear_family(Path(a.linear_family_bench), a.quick, ours_env)
    ort_sizes = [512, 1024, 2048, 4096] + ([] if a.quick else [8192])
    ort, ort_why_not = run_ort(ort_sizes, 3 if a.quick else 5, os.cpu_count() or 1)
    peak = (json.loads(subprocess.run([a.fma_peak], check=True, capture_output=True, text=True).stdout)
            if Path(a.fma_peak).exists() else None)
    load_after = load()

    rows = []
    for (kernel, n), r in sorted(cpp.items()):
        row = {"kernel": kernel, "n": n, **r}
        if "not_run" in r:
            rows.append(row)
            continue
        ref_key = {"sgemm_nxnxd": "numpy_sgemm_nxnxd", "sgemm_square": None}.get(
            kernel, "numpy_linear_chunked" if kernel.startswith("linear") else "numpy_listing")
        if "backward" in kernel:  # NumPy's listing is a forward: nothing to set a backward beside
            ref_key = None
        if (ref_key, n) in py:
            row["numpy_seconds"] = py[(ref_key, n)]
            row["vs_numpy"] = r["seconds"] / py[(ref_key, n)]
        if ("torch_listing", n) in py and kernel.startswith("attention") and "backward" not in kernel:
            row["torch_seconds"] = py[("torch_listing", n)]
        rows.append(row)

    print(f"CPU {prov.get('cpu')} ({prov.get('cpu_vector')}); our kernels' vector path {prov.get('kernel_path')}; "
          f"our BLAS core {prov.get('blas_core')}" + (f" (OPENBLAS_CORETYPE={a.blas_core}, --blas-core)" if a.blas_core else "")
          + f"; {prov.get('blas')}")
    if prov.get("blas_narrower"):
        print(prov["blas_narrower"])
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}; {os.cpu_count()} CPUs; "
          f"NumPy {py.get('numpy_version')}, torch {py.get('torch_version', '-')} ({py.get('torch_threads', '-')} threads)")
    print(f"{'kernel':<28}{'n':>8}{'ours (s)':>11}{'cpu (s)':>10}{'GFLOP/s':>9}{'NumPy (s)':>11}{'ours/NumPy':>11}{'torch (s)':>11}")
    for r in rows:
        if "not_run" in r:
            print(f"{r['kernel']:<28}{r['n']:>8}  not run: {r['not_run']}")
            continue
        rate = f"{r['rate'] / 1e9:9.1f}" if r.get("rate") else " " * 9
        np_s = f"{r['numpy_seconds']:11.4f}" if "numpy_seconds" in r else " " * 11
        ratio = f"{r['vs_numpy']:11.2f}" if "vs_numpy" in r else " " * 11
        th = f"{r['torch_seconds']:11.4f}" if "torch_seconds" in r else " " * 11
        print(f"{r['kernel']:<28}{r['n']:>8}{r['seconds']:11.4f}{r['cpu_seconds']:10.4f}{rate}{np_s}{ratio}{th}")
    summary = {}
    fused = cpp.get(("attention_fused", 4096))
    sgemm = cpp.get(("sgemm_square", 2048)) or cpp.get(("sgemm_nxnxd", 4096))
    if fused and sgemm and fused.get("rate") and sgemm.get("rate"):
        summary["fused_rate_over_sgemm"] = fused["rate"] / sgemm["rate"]
    summary.update(measured_slopes(cpp))
    print("\nmeasured log-log slopes of time against n, beside the exponents the cost claims count: " + "; ".join(
        f"{k.removesuffix('_loglog_slope')} {v:.2f} (counted {COUNTED_EXPONENT[k.removesuffix('_loglog_slope')]})"
        for k, v in summary.items() if k.endswith("_loglog_slope")))
    f16, l16 = cpp.get(("attention_fused", 16384)), cpp.get(("linear_chunked_fast", 16384))
    if f16 and l16:
        summary["fused_over_linear_fast_at_16384"] = f16["seconds"] / l16["seconds"]
    if ev:
        summary["eval_over_numpy"] = ev["seconds"] / ev["numpy_seconds"]
        print(f"\nlessons eval attention, n = 4096, d = 64, float32 (whole process, {ev['tool']}): {ev['seconds']:.4f} s median; "
              f"NumPy listing in-process (median of 5 means of 5): {ev['numpy_seconds']:.4f} s "
              f"({min(ev['numpy_means']):.4f}-{max(ev['numpy_means']):.4f}); ratio {summary['eval_over_numpy']:.2f} "
              f"(target <= 0.33); max |eval - NumPy f64| = {ev['max_abs_diff_vs_numpy_f64']:.2e}")
        print(f"NumPy's listing in fresh processes: default environment {ev['numpy_default_core']['seconds']:.4f} s "
              f"(core {ev['numpy_default_core']['core']})" + (
                  f", OPENBLAS_CORETYPE={ev['numpy_best_core']['core']} {ev['numpy_best_core']['seconds']:.4f} s"
                  if ev["numpy_best_core"] else "; the default core is not narrower than the CPU, so no OPENBLAS_CORETYPE is set"))
    if peak:
        all_rate = peak["gflops_all_threads"] * 1e9
        print(f"\nFMA ceiling ({peak['isa']}, registers only): {peak['gflops_1thread']:.1f} GFLOP/s on 1 thread, "
              f"{peak['gflops_all_threads']:.1f} on {peak['threads']}")
        if fused and fused.get("rate"):
            summary["fused_rate_over_fma_peak"] = fused["rate"] / all_rate
        if ev:
            flops = 4.0 * ev["n"] ** 2 * D
            ev["flops_at_peak_seconds"] = flops / all_rate
            ev["floor_seconds"] = ev["flops_at_peak_seconds"] + ev["fixed_seconds"]
            ev["target_seconds"] = ev["numpy_seconds"] / 3
            summary["eval_floor_over_numpy"] = ev["floor_seconds"] / ev["numpy_seconds"]
            # The rate the flops alone would need to meet the target, leaving nothing for the
            # exponentials, the reading and the writing.
            budget = ev["target_seconds"] - ev["fixed_seconds"]
            ev["needed_rate_over_fma_peak"] = flops / budget / all_rate if budget > 0 else math.inf
            summary["eval_target_needs_fma_peak_fraction"] = ev["needed_rate_over_fma_peak"]
            print(f"eval at n = {ev['n']}: its {flops / 1e9:.2f} GFLOP take {ev['flops_at_peak_seconds'] * 1e3:.1f} ms at that "
                  f"ceiling; with the process's fixed cost ({ev['fixed_seconds'] * 1e3:.1f} ms, n = 16) the floor is "
                  f"{ev['floor_seconds'] * 1e3:.1f} ms = {summary['eval_floor_over_numpy']:.2f} x NumPy. The target, "
                  f"{ev['target_seconds'] * 1e3:.1f} ms (NumPy / 3), needs the flops alone at "
                  f"{ev['needed_rate_over_fma_peak']:.0%} of the FMA ceiling, with no time left for the exponentials, "
                  f"reading and writing" + (": below the floor, out of reach of any float32 kernel here"
                                            if ev["floor_seconds"] > ev["target_seconds"] else "") + ".")
    for k, v in summary.items():
        print(f"{k}: {v:.3f}")
    ort_rows = ort_table(cpp, ort)
    if ort_why_not:
        print(f"\nONNX Runtime not run: {ort_why_not}")
    elif ort_rows:
        print(f"\nONNX Runtime {ort_rows[0]['onnxruntime']} Attention (opset 23, one head, d = 64, float32, its own process, "
              f"{ort_rows[0]['ort_threads']} intra-op threads) against our fused kernel (in-process, its default threads: "
              f"{os.cpu_count()}), medians:")
        print(f"{'':>6}{'n':>7}{'ours (ms)':>11}{'ORT (ms)':>10}{'ORT/ours':>10}")
        for r in ort_rows:
            print(f"{'causal' if r['causal'] else 'full':>6}{r['n']:>7}{r['ours_seconds'] * 1e3:11.2f}{r['ort_seconds'] * 1e3:10.2f}"
                  f"{r['ort_over_ours']:10.2f}")
    if other:
        print("\nother eval processes (medians): " + "; ".join(f"{k} {v['seconds'] * 1e3:.2f} ms" for k, v in other.items()))
    for label, runs in (("reference kernel, one thread", family_ref), ("fast kernel, every thread", family)):
        if runs:
            print(f"linear family chunked, float32, T = 16384, d = 64 ({label}): " + "; ".join(
                f"{rule} {r['seconds'] * 1e3:.1f} ms, {r['rate'] / 1e9:.1f} GFLOP/s" for rule, r in sorted(runs.items())))
    targets = targets_table(cpp, ev, peak, prov)
    print_targets(targets, prov)
    targets40 = issue40_targets(cpp, ev, other, ort_rows, family, peak, family_ref)
    print_issue40(targets40)
    doc = {"load_before": load_before, "load_after": load_after, "cpus": os.cpu_count(), "context": context,
           "python": {"numpy": py.get("numpy_version"), "torch": py.get("torch_version"), "torch_threads": py.get("torch_threads")},
           "d": D, "rows": rows,
           "python_results": [{"kernel": k[0], "n": k[1], "seconds": v} for k, v in py.items() if isinstance(k, tuple)],
           "eval": ev, "fma_peak": peak, "summary": summary, "provenance": prov, "blas_core_forced": a.blas_core,
           "targets": targets, "issue40_targets": targets40, "onnxruntime": ort_rows, "onnxruntime_not_run": ort_why_not,
           "eval_other": other, "linear_family_f32": family_ref, "linear_family_fast_f32": family}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(doc, indent=1))
    print(f"\nwrote {a.out}")


if __name__ == "__main__":
    sys.exit(main())
