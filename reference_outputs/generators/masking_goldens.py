"""Numeric goldens of lesson masking, computed by PyTorch (an independent reference).

Runs the seed article's listing 5 as it is written: torch.manual_seed(0), an
nn.MultiheadAttention(16, 4, batch_first=True, float64), x = randn(1, 8, 16), x2 = x with
positions 5, 6, 7 redrawn, and the module run with and without the causal mask. Writes the
module's parameters, the inputs, the four outputs and the per-position changes as .npy in
reference_outputs/masking/, and records them (and the documented output main.txt) in the
manifest. The C++ listing draws the same numbers with our torch-compatible generator and is
compared with these files.
Run: /usr/bin/python3 reference_outputs/generators/masking_goldens.py
"""
import os

import numpy as np
import torch

import manifest

SEED, D, H, N, CHANGED_FROM = 0, 16, 4, 8, 5
OUT = os.path.join(manifest.GOLDEN_DIR, "masking")
SEED_FILE = "../shared/seeds/001_73eef1ea17806d95.txt"
SCRIPT = "reference_outputs/generators/masking_goldens.py"


def main():
    torch.set_num_threads(2)
    torch.manual_seed(SEED)
    mha = torch.nn.MultiheadAttention(D, H, batch_first=True, dtype=torch.float64)
    causal = torch.triu(torch.ones(N, N, dtype=torch.bool), diagonal=1)  # torch: True = blocked

    def run(x, mask):
        with torch.no_grad():
            out, w = mha(x, x, x, attn_mask=mask, need_weights=True, average_attn_weights=False)
            return out[0].numpy(), w[0].numpy()

    x = torch.randn(1, N, D, dtype=torch.float64)
    x2 = x.clone()
    x2[:, CHANGED_FROM:] = torch.randn(1, N - CHANGED_FROM, D, dtype=torch.float64)

    arrays = {
        "in_proj_weight": mha.in_proj_weight.detach().numpy(),
        "out_proj_weight": mha.out_proj.weight.detach().numpy(),
        "x": x[0].numpy(),
        "x2": x2[0].numpy(),
    }
    for tag, mask in (("unmasked", None), ("causal", causal)):
        y, w = run(x, mask)
        y2, _ = run(x2, mask)
        arrays[f"Y_{tag}"] = y
        arrays[f"Y2_{tag}"] = y2
        arrays[f"W_{tag}"] = w
        arrays[f"diff_{tag}"] = np.abs(y - y2).max(axis=-1)

    os.makedirs(OUT, exist_ok=True)
    libs = manifest.library_versions(np, torch)
    for name, value in arrays.items():
        rel = f"masking/main.{name}.npy"
        np.save(os.path.join(manifest.GOLDEN_DIR, rel), np.ascontiguousarray(value, dtype=np.float64))
        manifest.record(rel, SCRIPT, libs, seed=SEED,
                        note=f"{name} of the seed article's listing 5 (d={D}, h={H}, n={N}; positions "
                             f"{CHANGED_FROM}..{N - 1} redrawn) computed by torch.nn.MultiheadAttention")
    mha_cross_case(libs)
    manifest.record_documented("masking/main.txt", SEED_FILE, "masking.main",
                               note="listing 5's two printed lines, verbatim as the source shows them")


def mha_cross_case(libs):
    """A second case for kernels/reference/multi_head_attention.hpp, beyond the listing: cross-attention
    (queries of length 3 over keys/values of length 5), batch 2, 4 heads, a bool attn_mask
    (True = blocked), a key_padding_mask (lengths 5 and 3), and then an additive float mask."""
    torch.manual_seed(1)
    mha = torch.nn.MultiheadAttention(D, H, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_bias.uniform_(-0.5, 0.5)      # non-zero biases, so their use is tested
        mha.out_proj.bias.uniform_(-0.5, 0.5)
    q = torch.randn(2, 3, D, dtype=torch.float64)
    kv = torch.randn(2, 5, D, dtype=torch.float64)
    blocked = torch.zeros(3, 5, dtype=torch.bool)
    blocked[0, 4] = blocked[1, 0] = blocked[2, 2] = True
    padding = torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
    additive = torch.randn(3, 5, dtype=torch.float64)
    with torch.no_grad():
        out_b, w_b = mha(q, kv, kv, attn_mask=blocked, key_padding_mask=padding, need_weights=True,
                         average_attn_weights=False)
        out_a, w_a = mha(q, kv, kv, attn_mask=additive, need_weights=True, average_attn_weights=False)
    arrays = {
        "in_proj_weight": mha.in_proj_weight, "in_proj_bias": mha.in_proj_bias,
        "out_proj_weight": mha.out_proj.weight, "out_proj_bias": mha.out_proj.bias,
        "query": q, "kv": kv, "blocked": blocked, "padding": padding, "additive": additive,
        "out_bool": out_b, "weights_bool": w_b, "out_additive": out_a, "weights_additive": w_a,
    }
    for name, value in arrays.items():
        rel = f"masking/mha_cross.{name}.npy"
        np.save(os.path.join(manifest.GOLDEN_DIR, rel), value.detach().numpy().astype(np.float64))
        manifest.record(rel, SCRIPT, libs, seed=1,
                        note=f"{name}: torch.nn.MultiheadAttention({D}, {H}) cross-attention with masks "
                             "(verify/test_lesson_masking.cpp)")


if __name__ == "__main__":
    main()
