"""Goldens of lesson attention, seed 002's module (the heads over (seq, d_model) rows, no
projections), computed by torch 1.13's own fused attention, torch.nn.functional._scaled_dot_product_attention.

Each case: Q, K, V (seq, d_model) in float64; H heads; head h reads columns h·hd … (h+1)·hd − 1,
hd = d_model / H (Q.view(seq, H, hd).transpose(0, 1): torch's own reshape, not ours); torch's SDPA
scales by 1/√hd (its query's last dimension), with is_causal for the masked cases:

  module.<case>.out.npy   O (seq, d_model) = the heads' outputs side by side
  module.<case>.w.npy     W (H, seq, seq), the per-head weights (need_attn_weights)

Cases: seed 002's fixture (seq 3, d_model 4: q[x] = (x+1)/10, k[x] = (x//4 + 1)/4 − (x%2)/3,
v[x] = (x+1)/10, each operation in float32 as the seed's code and our fixture compute it) with 1, 2 and 4 heads, and a
rectangular one (seq 5, d_model 6, 3 heads of 2: torch.manual_seed(27), randn, its inputs written
as module.rect.{q,k,v}.npy), each unmasked and causal.
Run: /usr/bin/python3 reference_outputs/generators/attention_module_goldens.py
"""
import os

import numpy as np
import torch
import torch.nn.functional as F

import manifest

GEN = "reference_outputs/generators/attention_module_goldens.py"


def fixture():
    x = np.arange(12)
    f = np.float32
    q = (x + 1).astype(f) / f(10)  # each operation in float32, as the seed's code (and our fixture) computes it
    k = (x // 4 + 1).astype(f) / f(4) - (x % 2).astype(f) / f(3)
    v = (x + 1).astype(f) / f(10)
    return [a.astype(np.float64).reshape(3, 4) for a in (q, k, v)]


def module(q, k, v, heads, causal):
    seq, d = q.shape
    split = lambda a: torch.from_numpy(a).view(seq, heads, d // heads).transpose(0, 1)  # (H, seq, hd)
    out, w = F._scaled_dot_product_attention(split(q), split(k), split(v), need_attn_weights=True, is_causal=causal)
    return out.transpose(0, 1).reshape(seq, d).numpy(), w.numpy()


def save(rel, value, note, libs, seed=None):
    np.save(os.path.join(manifest.GOLDEN_DIR, rel), np.ascontiguousarray(value, dtype=np.float64))
    manifest.record(rel, GEN, libs, seed=seed, note=note)


def main():
    libs = manifest.library_versions(np, torch)
    torch.manual_seed(27)
    rect = [torch.randn(5, 6, dtype=torch.float64).numpy() for _ in range(3)]
    for name, a in zip("qkv", rect):
        save(f"attention/module.rect.{name}.npy", a, f"the rectangular case's {name.upper()} (5, 6): torch.randn after "
             "torch.manual_seed(27), Q, K, V in that order", libs, seed=27)
    cases = [(f"fixture_h{h}", fixture(), h) for h in (1, 2, 4)] + [("rect_h3", rect, 3)]
    for name, (q, k, v), heads in cases:
        for causal in (False, True):
            case = name + ("_causal" if causal else "")
            out, w = module(q, k, v, heads, causal)
            what = f"seed 002's module, {name.split('_')[0]} inputs, {heads} head(s){', causal' if causal else ''}"
            save(f"attention/module.{case}.out.npy", out, f"{what}: the output (seq, d_model), torch 1.13's "
                 "_scaled_dot_product_attention per head", libs)
            save(f"attention/module.{case}.w.npy", w, f"{what}: the per-head weights (H, seq, seq)", libs)


if __name__ == "__main__":
    main()
