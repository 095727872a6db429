"""Numeric goldens of lesson linear-rnn, computed by NumPy (an independent reference).

Draws Q, K, V from default_rng(0) as the seed notebook does, computes the parallel and
chunked forms with plain NumPy, and writes reference_outputs/linear-rnn/main.O_par.npy and
main.O_blk.npy, recording them (and the documented output main.txt) in the manifest.
Run: /usr/bin/python3 reference_outputs/generators/linear_rnn_goldens.py
"""
import os

import numpy as np

import manifest

SEED, N, D_K, D_V, B = 0, 6, 4, 5, 4
OUT = os.path.join(manifest.GOLDEN_DIR, "linear-rnn")
SEED_FILE = "../shared/seeds/000_54c235dce03e46f1.txt"


def feature_map(x):
    return np.where(x > 0, x + 1.0, np.exp(x))


def parallel_form(pq, pk, v):
    table = np.tril(pq @ pk.T)
    return (table @ v) / table.sum(axis=1, keepdims=True)


def chunked_form(pq, pk, v, chunk):
    n = pq.shape[0]
    state, norm = np.zeros((v.shape[1], pk.shape[1])), np.zeros(pk.shape[1])
    out = np.zeros((n, v.shape[1]))
    for start in range(0, n, chunk):
        q, k, vv = pq[start:start + chunk], pk[start:start + chunk], v[start:start + chunk]
        table = np.tril(q @ k.T)
        out[start:start + chunk] = (table @ vv + q @ state.T) / (table.sum(axis=1) + q @ norm)[:, None]
        state, norm = state + vv.T @ k, norm + k.sum(axis=0)
    return out


def main():
    rng = np.random.default_rng(SEED)
    q, k, v = rng.standard_normal((N, D_K)), rng.standard_normal((N, D_K)), rng.standard_normal((N, D_V))
    pq, pk = feature_map(q), feature_map(k)
    os.makedirs(OUT, exist_ok=True)
    libs = manifest.library_versions(np)
    for name, value in (("O_par", parallel_form(pq, pk, v)), ("O_blk", chunked_form(pq, pk, v, B))):
        rel = f"linear-rnn/main.{name}.npy"
        np.save(os.path.join(manifest.GOLDEN_DIR, rel), value)
        manifest.record(rel, "reference_outputs/generators/linear_rnn_goldens.py", libs, seed=SEED,
                        note=f"{name} of the seed listing (n={N}, d_k={D_K}, d_v={D_V}, B={B}) computed by NumPy")
    manifest.record_documented("linear-rnn/main.txt", SEED_FILE, "linear-rnn.main",
                               note="the nine printed lines, verbatim as the source shows them")


if __name__ == "__main__":
    main()
