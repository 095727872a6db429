"""Numeric goldens of lesson linear-family, computed by NumPy from ONNX LinearAttention's
equations (an independent reference: the recurrence token by token, in float64).

Draws the listing's case from default_rng(21) in the order Q, K, V, x, y (B = 1, T = 6,
q_num_heads 2, kv_num_heads 1, d_k = 4, d_v = 3); keys normalised, log-decay log σ(x + 2) per
head, β = σ(y). Per rule, per token: decay the state, correct the value (delta rules), write,
read with scale 1/√d_k. Writes reference_outputs/linear-family/main.O_<rule>.npy (B, T, Hq·d_v)
and records them, and the documented output main.txt, in the manifest.
Run: /usr/bin/python3 reference_outputs/generators/linear_family_goldens.py
"""
import os

import numpy as np

import manifest

SEED, T, HQ, HKV, DK, DV = 21, 6, 2, 1, 4, 3
RULES = ("linear", "gated", "delta", "gated_delta")


def recurrence(q, k, v, g, beta, rule):
    """q (T, HQ, DK), k (T, HKV, DK), v (T, HKV, DV), g and beta (T, HKV) -> (T, HQ·DV)."""
    state = np.zeros((HKV, DK, DV))
    out = np.zeros((T, HQ, DV))
    for t in range(T):
        for h in range(HKV):
            if rule in ("gated", "gated_delta"):
                state[h] *= np.exp(g[t, h])
            u = v[t, h]
            if rule in ("delta", "gated_delta"):
                u = beta[t, h] * (u - state[h].T @ k[t, h])
            state[h] += np.outer(k[t, h], u)
        for j in range(HQ):
            out[t, j] = state[j // (HQ // HKV)].T @ q[t, j] / np.sqrt(DK)
    return out.reshape(1, T, HQ * DV)


def main():
    rng = np.random.default_rng(SEED)
    q = rng.standard_normal((1, T, HQ * DK)).reshape(T, HQ, DK)
    k = rng.standard_normal((1, T, HKV * DK)).reshape(T, HKV, DK)
    v = rng.standard_normal((1, T, HKV * DV)).reshape(T, HKV, DV)
    x = rng.standard_normal((1, T, HKV)).reshape(T, HKV)
    y = rng.standard_normal((1, T, HKV)).reshape(T, HKV)
    k = k / np.linalg.norm(k, axis=-1, keepdims=True)
    g = -np.log1p(np.exp(-(x + 2.0)))
    beta = 1.0 / (1.0 + np.exp(-y))
    out_dir = os.path.join(manifest.GOLDEN_DIR, "linear-family")
    os.makedirs(out_dir, exist_ok=True)
    libs = manifest.library_versions(np)
    for rule in RULES:
        rel = f"linear-family/main.O_{rule}.npy"
        np.save(os.path.join(manifest.GOLDEN_DIR, rel), recurrence(q, k, v, g, beta, rule))
        manifest.record(rel, "reference_outputs/generators/linear_family_goldens.py", libs, seed=SEED,
                        note=f"output of the {rule} rule on the listing's case, ONNX's recurrence in NumPy float64")
    manifest.record_documented("linear-family/main.txt", "specs/linear_family.md", "linear-family.main",
                               note="the listing's six lines as the spec documents them (this lesson's own listing)")


if __name__ == "__main__":
    main()
