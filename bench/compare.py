#!/usr/bin/python3
"""Our attention kernels next to NumPy and PyTorch, in one run, on the same sizes.

    /usr/bin/python3 bench/compare.py [--bench build-perf/bin/attention_bench]
        [--lessons build-perf/bin/lessons] [--fma-peak build-perf/bin/fma_peak]
        [--out build-perf/bench.json] [--quick]

1. runs attention_bench (Google Benchmark, --benchmark_format=json, 3 repetitions, medians);
2. times, in this process, NumPy + OpenBLAS (Debian's python3-numpy) and PyTorch on the same
   sizes: the listing's computation (S = Q@K.T/√d; softmax in place; S@V), an n×n×d sgemm,
   and chunked linear attention (chunk 64);
3. times the whole `lessons eval attention` process at n = 4096, d = 64, float32 (hyperfine if
   installed, else a loop here) against NumPy doing the listing's computation in-process;
4. runs fma_peak (the machine's float32 FMA ceiling, registers only) and times the same eval
   process on n = 16 inputs (its fixed cost: start, loading, writing), to say what the process
   could take at best: 4·n²·d flops at the FMA peak plus that fixed cost;
5. prints one table of medians and ratios and writes everything as JSON (docs/plots.py draws
   the measured curves from it: VL_BENCH_JSON, or build-perf/bench.json, build/bench.json).

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
BENCH_FILTER = ("BM_attention_plain|BM_attention_materialized|BM_attention_fused/|BM_attention_fused_causal/|"
                "BM_attention_fused_1thread|BM_linear_chunked|BM_sgemm")


def run_cpp(bench: Path, quick: bool):
    args = [str(bench), "--benchmark_format=json", f"--benchmark_filter={BENCH_FILTER}",
            "--benchmark_repetitions=1" if quick else "--benchmark_repetitions=3", "--benchmark_report_aggregates_only=true",
            "--benchmark_min_time=0.05" if quick else "--benchmark_min_time=0.2"]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    data = json.loads(out)
    rows = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b["run_name"] if "run_name" in b else b["name"]
        kernel, _, rest = name.partition("/")
        n = int(rest.split("/")[0])
        scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ns")]
        rows.setdefault((kernel.removeprefix("BM_"), n), []).append(
            {"real": b["real_time"] * scale, "cpu": b["cpu_time"] * scale, "rate": b.get("rate")})
    return {k: {"seconds": statistics.median(r["real"] for r in v), "cpu_seconds": statistics.median(r["cpu"] for r in v),
                "rate": statistics.median(r["rate"] for r in v) if v[0]["rate"] is not None else None}
            for k, v in rows.items()}, data.get("context", {})


# --- NumPy and PyTorch ---------------------------------------------------------------------------
def numpy_listing(np, q, k, v):
    s = q @ k.T / np.float32(math.sqrt(q.shape[1]))
    s -= s.max(axis=1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=1, keepdims=True)
    return s @ v


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


def time_process(cmd, runs: int, tmp: Path) -> dict:
    """Median wall time of a whole process: hyperfine if installed, else a loop here."""
    if shutil.which("hyperfine"):
        js = tmp / "hf.json"
        subprocess.run(["hyperfine", "-N", "--warmup", "2", "--runs", str(runs), "--export-json", str(js), " ".join(cmd)],
                       check=True, capture_output=True)
        r = json.loads(js.read_text())["results"][0]
        return {"tool": "hyperfine", "seconds": r["median"], "mean": r["mean"], "stddev": r["stddev"], "min": r["min"]}
    med, ts = median_time(lambda: subprocess.run(cmd, check=True), runs, warmup=2)
    return {"tool": "python loop", "seconds": med, "min": min(ts)}


def time_eval(lessons: Path, n: int, runs: int):
    import numpy as np
    tmp = Path(tempfile.mkdtemp(prefix="vl-bench-"))
    (q, k, v), args = eval_inputs(tmp, n)
    cmd = [str(lessons), *args]
    out = {"command": " ".join(cmd), "n": n}
    # The fixed cost of the process (start, loading, checks, writing): the same command on n = 16.
    out["fixed_seconds"] = time_process([str(lessons), *eval_inputs(tmp, 16)[1]], runs, tmp)["seconds"]
    out.update(time_process(cmd, runs, tmp))
    # The listing's computation in NumPy, in-process: mean of 5, as the listing does; and the median of 5 such means.
    means = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(5):
            numpy_listing(np, q, k, v)
        means.append((time.perf_counter() - t0) / 5)
    out["numpy_seconds"] = statistics.median(means)
    out["numpy_means"] = means  # they vary run to run (58-77 ms seen at n = 4096: 64 MiB of fresh pages each time)
    o = np.load(tmp / "o.npy")
    ref = numpy_listing(np, q.astype(np.float64), k.astype(np.float64), v.astype(np.float64))
    out["max_abs_diff_vs_numpy_f64"] = float(np.abs(o - ref).max())
    shutil.rmtree(tmp, ignore_errors=True)
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
    ap.add_argument("--out", default=str(ROOT / "build-perf/bench.json"))
    ap.add_argument("--quick", action="store_true", help="one repetition, fewer NumPy runs (a smoke test)")
    a = ap.parse_args()
    load_before = load()
    cpp, context = run_cpp(Path(a.bench), a.quick)
    ns_quadratic = sorted({n for (k, n) in cpp if k in ("attention_plain", "attention_materialized")})
    ns_linear = sorted({n for (k, n) in cpp if k.startswith("linear_chunked")})
    py = run_python(ns_quadratic, ns_linear, 3 if a.quick else 5)
    ev = time_eval(Path(a.lessons), 4096, 5 if a.quick else 20) if Path(a.lessons).exists() else None
    peak = (json.loads(subprocess.run([a.fma_peak], check=True, capture_output=True, text=True).stdout)
            if Path(a.fma_peak).exists() else None)
    load_after = load()

    rows = []
    for (kernel, n), r in sorted(cpp.items()):
        row = {"kernel": kernel, "n": n, **r}
        ref_key = {"sgemm_nxnxd": "numpy_sgemm_nxnxd", "sgemm_square": None}.get(
            kernel, "numpy_linear_chunked" if kernel.startswith("linear") else "numpy_listing")
        if (ref_key, n) in py:
            row["numpy_seconds"] = py[(ref_key, n)]
            row["vs_numpy"] = r["seconds"] / py[(ref_key, n)]
        if ("torch_listing", n) in py and kernel.startswith("attention"):
            row["torch_seconds"] = py[("torch_listing", n)]
        rows.append(row)

    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}; {os.cpu_count()} CPUs; "
          f"NumPy {py.get('numpy_version')}, torch {py.get('torch_version', '-')} ({py.get('torch_threads', '-')} threads)")
    print(f"{'kernel':<28}{'n':>8}{'ours (s)':>11}{'cpu (s)':>10}{'GFLOP/s':>9}{'NumPy (s)':>11}{'ours/NumPy':>11}{'torch (s)':>11}")
    for r in rows:
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
    for kernel in ("linear_chunked_fast", "linear_chunked_xtensor"):
        pts = sorted((n, r["seconds"]) for (k, n), r in cpp.items() if k == kernel)
        if len(pts) >= 2:
            summary[f"{kernel}_loglog_slope"] = slope([p[0] for p in pts], [p[1] for p in pts])
    f16, l16 = cpp.get(("attention_fused", 16384)), cpp.get(("linear_chunked_fast", 16384))
    if f16 and l16:
        summary["fused_over_linear_fast_at_16384"] = f16["seconds"] / l16["seconds"]
    if ev:
        summary["eval_over_numpy"] = ev["seconds"] / ev["numpy_seconds"]
        print(f"\nlessons eval attention, n = 4096, d = 64, float32 (whole process, {ev['tool']}): {ev['seconds']:.4f} s median; "
              f"NumPy listing in-process (median of 5 means of 5): {ev['numpy_seconds']:.4f} s "
              f"({min(ev['numpy_means']):.4f}-{max(ev['numpy_means']):.4f}); ratio {summary['eval_over_numpy']:.2f} "
              f"(target <= 0.33); max |eval - NumPy f64| = {ev['max_abs_diff_vs_numpy_f64']:.2e}")
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
    doc = {"load_before": load_before, "load_after": load_after, "cpus": os.cpu_count(), "context": context,
           "python": {"numpy": py.get("numpy_version"), "torch": py.get("torch_version"), "torch_threads": py.get("torch_threads")},
           "d": D, "rows": rows,
           "python_results": [{"kernel": k[0], "n": k[1], "seconds": v} for k, v in py.items() if isinstance(k, tuple)],
           "eval": ev, "fma_peak": peak, "summary": summary}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(doc, indent=1))
    print(f"\nwrote {a.out}")


if __name__ == "__main__":
    sys.exit(main())
