"""Numeric goldens of lesson positions, computed by PyTorch and NumPy (independent references).

Runs the seed article's listing 4 as it is written: torch.manual_seed(0), an
nn.MultiheadAttention(16, 4, batch_first=True, float64), x = randn(1, 7, 16), perm =
randperm(7) from a generator seeded 3, the module on x and x[:, perm] without and with the
sinusoidal encoding (built in NumPy, as the listing builds it), and the table pe(40, 16) of the
rotation check. Writes them as .npy in reference_outputs/positions/ and records them (and the
documented output main.txt) in the manifest.
Run: /usr/bin/python3 reference_outputs/generators/positions_goldens.py
"""
import os

import numpy as np
import torch

import manifest

SEED, PERM_SEED, D, H, N = 0, 3, 16, 4, 7
SEED_FILE = "../shared/seeds/001_73eef1ea17806d95.txt"
SCRIPT = "reference_outputs/generators/positions_goldens.py"


def pe(n, d):
    pos = np.arange(n)[:, None]
    i = np.arange(d // 2)[None, :]
    ang = pos / 10000 ** (2 * i / d)
    out = np.zeros((n, d))
    out[:, 0::2] = np.sin(ang)
    out[:, 1::2] = np.cos(ang)
    return out


def main():
    torch.set_num_threads(2)
    torch.manual_seed(SEED)
    mha = torch.nn.MultiheadAttention(D, H, batch_first=True, dtype=torch.float64)

    def run(x):
        with torch.no_grad():
            return mha(x, x, x, need_weights=False)[0]

    x = torch.randn(1, N, D, dtype=torch.float64)
    perm = torch.randperm(N, generator=torch.Generator().manual_seed(PERM_SEED))
    p = torch.from_numpy(pe(N, D))[None]
    arrays = {
        "in_proj_weight": mha.in_proj_weight.detach(),
        "out_proj_weight": mha.out_proj.weight.detach(),
        "x": x[0], "perm": perm.to(torch.float64), "P": p[0],
        "y": run(x)[0], "y_perm": run(x[:, perm])[0],
        "z": run(x + p)[0], "z_perm": run(x[:, perm] + p)[0],
        "pe40": torch.from_numpy(pe(40, D)),
    }
    os.makedirs(os.path.join(manifest.GOLDEN_DIR, "positions"), exist_ok=True)
    libs = manifest.library_versions(np, torch)
    for name, value in arrays.items():
        rel = f"positions/main.{name}.npy"
        np.save(os.path.join(manifest.GOLDEN_DIR, rel), np.ascontiguousarray(value.numpy(), dtype=np.float64))
        manifest.record(rel, SCRIPT, libs, seed=SEED,
                        note=f"{name} of the seed article's listing 4 (d={D}, h={H}, n={N}, randperm seed "
                             f"{PERM_SEED}) computed by torch.nn.MultiheadAttention / NumPy")
    manifest.record_documented("positions/main.txt", SEED_FILE, "positions.main",
                               note="listing 4's three printed lines, verbatim as the source shows them")


if __name__ == "__main__":
    main()
