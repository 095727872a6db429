"""Goldens for vl::torch_rng: PyTorch CPU random streams, bit for bit.

Writes reference_outputs/torch/torch_streams.json and records it in the manifest.
Run with Debian's interpreter and its PyTorch: /usr/bin/python3 reference_outputs/generators/torch_goldens.py

The file is a list of cases. A case seeds the default generator (torch.manual_seed(seed)) and
runs its ops in order on it; every floating value is stored with float.hex() (float32 values
widened to double first, which is exact), so the C++ test can compare bits.
  {"op": "randn",   "dtype": "float64"|"float32", "shape": [...]}          torch.randn
  {"op": "uniform", "dtype": ..., "shape": [...], "from": hex, "to": hex}  torch.empty(..).uniform_
  {"op": "mha",     "dtype": ..., "embed_dim": d, "heads": h}              nn.MultiheadAttention init
  {"op": "randperm", "n": n, "seed": s}   torch.randperm(n, generator=torch.Generator().manual_seed(s))
                                          (without "seed": on the default generator)
"""
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import manifest  # noqa: E402

REL = "torch/torch_streams.json"
DTYPES = {"float64": torch.float64, "float32": torch.float32}


def hexes(t):
    return [float(v).hex() for v in t.detach().reshape(-1).tolist()]


def run_op(op):
    kind = op["op"]
    if kind == "randn":
        return hexes(torch.randn(*op["shape"], dtype=DTYPES[op["dtype"]]))
    if kind == "uniform":
        t = torch.empty(*op["shape"], dtype=DTYPES[op["dtype"]])
        return hexes(t.uniform_(float.fromhex(op["from"]), float.fromhex(op["to"])))
    if kind == "mha":
        m = torch.nn.MultiheadAttention(op["embed_dim"], op["heads"], batch_first=True,
                                        dtype=DTYPES[op["dtype"]])
        return {"in_proj_weight": hexes(m.in_proj_weight), "in_proj_bias": hexes(m.in_proj_bias),
                "out_proj_weight": hexes(m.out_proj.weight), "out_proj_bias": hexes(m.out_proj.bias)}
    if kind == "randperm":
        gen = torch.Generator().manual_seed(op["seed"]) if "seed" in op else None
        return torch.randperm(op["n"], generator=gen).tolist()
    raise ValueError(kind)


def case(name, seed, ops):
    torch.manual_seed(seed)
    return {"name": name, "seed": seed, "ops": ops, "out": [run_op(op) for op in ops]}


def cases():
    out = []
    seeds = [0, 1, 42, 2**32 + 7]          # the last one: only the low 32 bits seed mt19937
    for dtype in DTYPES:
        # every numel 1..40 on a fresh seed: the scalar path (< 16), exactly 16, 32, and tails
        for seed in seeds:
            for n in range(1, 41):
                out.append(case(f"randn {dtype} seed {seed} numel {n}", seed,
                                [{"op": "randn", "dtype": dtype, "shape": [n]}]))
        # shapes, and a sequence that uses the cached second Box-Muller value across calls
        for seed in (0, 7):
            out.append(case(f"randn {dtype} seed {seed} shapes", seed, [
                {"op": "randn", "dtype": dtype, "shape": s} for s in ([1, 6, 16], [3, 5, 7], [1000])]))
            out.append(case(f"randn {dtype} seed {seed} cache sequence", seed, [
                {"op": "randn", "dtype": dtype, "shape": s}
                for s in ([1], [3], [16], [1], [2, 3], [17], [5], [1])]))
        # uniform_ with the bounds torch's initialisers use, and plain rand
        bound = 1 / math.sqrt(16)
        for seed in (0, 3):
            out.append(case(f"uniform {dtype} seed {seed}", seed, [
                {"op": "uniform", "dtype": dtype, "shape": s, "from": lo.hex(), "to": hi.hex()}
                for s, lo, hi in (([1], 0.0, 1.0), ([17], -0.3, 0.7), ([100], -bound, bound),
                                  ([4, 5], -2.5, 10.0))]))
        # MultiheadAttention initialisation
        for d, h in ((16, 4), (16, 1), (8, 2), (12, 3)):
            for seed in (0, 1):
                out.append(case(f"mha {dtype} d={d} h={h} seed {seed}", seed,
                                [{"op": "mha", "dtype": dtype, "embed_dim": d, "heads": h}]))
    # randperm n = 1..50 on its own generator, and on the default one (after randn)
    for seed in (0, 1, 3, 42, 2024):
        out.append(case(f"randperm seed {seed}", 0,
                        [{"op": "randperm", "n": n, "seed": seed} for n in range(1, 51)]))
    out.append(case("randperm default generator", 5, [
        {"op": "randn", "dtype": "float64", "shape": [3]},
        {"op": "randperm", "n": 7}, {"op": "randn", "dtype": "float64", "shape": [1]},
        {"op": "randperm", "n": 20}]))
    # the lesson's listings (shared/seeds/001, listings 3, 4 and 5), op for op
    mha = {"op": "mha", "dtype": "float64", "embed_dim": 16, "heads": 4}
    out.append(case("lesson listing 3", 0, [mha, {"op": "randn", "dtype": "float64", "shape": [1, 6, 16]}]))
    out.append(case("lesson listing 4", 0, [mha, {"op": "randn", "dtype": "float64", "shape": [1, 7, 16]},
                                            {"op": "randperm", "n": 7, "seed": 3}]))
    out.append(case("lesson listing 5", 0, [mha, {"op": "randn", "dtype": "float64", "shape": [1, 8, 16]},
                                            {"op": "randn", "dtype": "float64", "shape": [1, 3, 16]}]))
    return out


def main():
    torch.set_num_threads(1)
    doc = {
        "torch_version": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability()
        if hasattr(torch.backends, "cpu") and hasattr(torch.backends.cpu, "get_cpu_capability")
        else [l.split(":")[1].strip() for l in torch.__config__.show().splitlines()
              if "CPU capability usage" in l][0],
        "cases": cases(),
    }
    path = os.path.join(manifest.GOLDEN_DIR, REL)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    os.replace(tmp, path)
    manifest.record(REL, "reference_outputs/generators/torch_goldens.py", manifest.library_versions(torch),
                    note=f"{len(doc['cases'])} cases; CPU capability {doc['cpu_capability']}")
    print(f"wrote {path}: {len(doc['cases'])} cases, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
