"""Golden of lesson attention, listing 3 with the causal mask, computed by NumPy from the equations.

The listing's module (nn.MultiheadAttention(16, 4) after torch.manual_seed(0)) and its input are
the goldens torch wrote (attention_goldens.py: heads.in_proj_weight, in_proj_bias, out_proj_weight,
out_proj_bias, x). From them, in plain NumPy float64 (Vaswani et al. 2017, §3.2.2):

  [Q | K | V] = x W_inᵀ + b_in                     x: (n, d), W_in: (3d, d)  ->  (n, d) each
  head h reads columns h·dh … (h+1)·dh − 1        dh = d / H
  S_h = Q_h K_hᵀ / √dh, S_h[i, j] = −∞ for j > i  (n, n) per head
  W_h = softmax(S_h) over j                        (H, n, n): heads.weights_causal
  Y   = [W_0 V_0 | … | W_{H−1} V_{H−1}] W_outᵀ + b_out   (n, d): heads.output_causal

The same code without the mask must reproduce torch's own output and weights (heads.out_torch,
heads.w_torch) to 1e-12, or nothing is written: that ties this NumPy reading of the equations to
the module the lesson uses. Run: /usr/bin/python3 reference_outputs/generators/attention_heads_causal_goldens.py
"""
import os
import sys

import numpy as np

import manifest

GEN = "reference_outputs/generators/attention_heads_causal_goldens.py"
HEADS = 4


def load(name):
    return np.load(os.path.join(manifest.GOLDEN_DIR, "attention", f"heads.{name}.npy"))


def multi_head(x, w_in, b_in, w_out, b_out, heads, causal):
    n, d = x.shape
    dh = d // heads
    q, k, v = np.split(x @ w_in.T + b_in, 3, axis=1)
    split = lambda a: a.reshape(n, heads, dh).transpose(1, 0, 2)  # (H, n, dh)
    s = split(q) @ split(k).transpose(0, 2, 1) / np.sqrt(dh)
    if causal:
        s = np.where(np.triu(np.ones((n, n), dtype=bool), k=1), -np.inf, s)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    concat = (w @ split(v)).transpose(1, 0, 2).reshape(n, d)
    return concat @ w_out.T + b_out, w


def main():
    args = [load(n) for n in ("x", "in_proj_weight", "in_proj_bias", "out_proj_weight", "out_proj_bias")]
    y, w = multi_head(*args, HEADS, causal=False)
    gap = max(np.abs(y - load("out_torch")).max(), np.abs(w - load("w_torch")).max())
    if not gap <= 1e-12:
        sys.exit(f"{GEN}: unmasked NumPy multi-head attention differs from torch's golden by {gap:.3e} (> 1e-12)")
    y, w = multi_head(*args, HEADS, causal=True)
    libs = manifest.library_versions(np)
    for name, value, note in (("weights_causal", w, "per-head weights (h, n, n)"), ("output_causal", y, "output (n, d)")):
        rel = f"attention/heads.{name}.npy"
        np.save(os.path.join(manifest.GOLDEN_DIR, rel), np.ascontiguousarray(value, dtype=np.float64))
        manifest.record(rel, GEN, libs, seed=0,
                        note=f"listing 3 with the causal mask (j > i blocked): the {note}, by NumPy from the equations, "
                             f"on torch's parameters and input (heads.*); unmasked, the same code is {gap:.1e} from torch's")


if __name__ == "__main__":
    main()
