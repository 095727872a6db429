"""Numeric goldens of lesson attention, computed by PyTorch and NumPy (independent references).

  lookup.*   listing 1 (seed article 001): Q, K, V from default_rng(0); output and weights by
             torch 1.13's own fused entry point, torch.nn.functional._scaled_dot_product_attention
             (the function the lesson calls, under its 1.13 name; need_attn_weights=True), checked
             here against softmax(QKᵀ/√d_k)V written in torch ops to within 1e-12.
  scale.*    listing 2: the five rows of the √d_k table, in full precision, computed by NumPy as
             the lesson computes them (default_rng(1), 4000 trials, 16 keys).
  heads.*    listing 3: nn.MultiheadAttention(16, 4, dtype=float64) after torch.manual_seed(0):
             its parameters and the input x (to cross-check our bit-exact torch streams), its
             output and per-head weights.
  sdpa_*     claim attention.matches-torch: batched heads with a boolean mask, a causal case,
             and scores around 1e3; inputs from default_rng(seed), outputs and weights by torch's
             _scaled_dot_product_attention (bool attn_mask, is_causal), checked as lookup's.
  sdpa_gqa.* claim attention.matches-torch, the case where every option counts: grouped-query
             heads (4 over 2), scale 0.3, softcap 5, an additive float mask, a bottom-right causal
             mask with Sq = 4 < Sk = 6; written in torch ops (repeat_interleave for the groups):
             torch 1.13's _scaled_dot_product_attention takes no scale, softcap or float mask.
  grad_*     claim attention.backward: dQ, dK, dV by torch autograd (causal, two heads).

Run: /usr/bin/python3 reference_outputs/generators/attention_goldens.py
"""
import os

import numpy as np
import torch

import manifest

OUT = os.path.join(manifest.GOLDEN_DIR, "attention")
GEN = "reference_outputs/generators/attention_goldens.py"
SEED_FILE = "../shared/seeds/001_73eef1ea17806d95.txt"


def save(name, value, seed, note, libs):
    rel = f"attention/{name}.npy"
    np.save(os.path.join(manifest.GOLDEN_DIR, rel), np.ascontiguousarray(value, dtype=np.float64))
    manifest.record(rel, GEN, libs, seed=seed, note=note)


def torch_formula(q, k, v, allowed=None, causal=False):
    """softmax(Q Kᵀ/√d + M) V written in torch ops, float64; `allowed` True = may attend."""
    scores = q @ k.transpose(-1, -2) / np.sqrt(q.shape[-1])
    if causal:
        n, m = scores.shape[-2], scores.shape[-1]
        scores = scores.masked_fill(torch.triu(torch.ones(n, m, dtype=torch.bool), diagonal=1), float("-inf"))
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w


def torch_sdpa(q, k, v, allowed=None, causal=False):
    """torch 1.13's torch.nn.functional._scaled_dot_product_attention in float64 (output, weights),
    after checking it against the formula in torch ops; `allowed` True = may attend."""
    q, k, v = (torch.from_numpy(np.asarray(a, dtype=np.float64)) for a in (q, k, v))
    mask = None if allowed is None else torch.from_numpy(allowed)
    batched = q.dim() > 2  # the function wants a batch dimension
    args = (q, k, v) if batched else (q[None], k[None], v[None])
    out, w = torch.nn.functional._scaled_dot_product_attention(*args, attn_mask=mask, need_attn_weights=True, is_causal=causal)
    if not batched:
        out, w = out[0], w[0]
    ref_out, ref_w = torch_formula(q, k, v, mask, causal)
    # Within the claims' float64 tolerance (the case with scores around 1e3 differs most: 1e3·u per score)
    assert (out - ref_out).abs().max() < 1e-12 and (w - ref_w).abs().max() < 1e-12, "SDPA and the formula disagree"
    return out.numpy(), w.numpy()


def lookup(libs):
    rng = np.random.default_rng(0)
    n, d_k, d_v = 5, 8, 4
    q, k, v = rng.standard_normal((n, d_k)), rng.standard_normal((n, d_k)), rng.standard_normal((n, d_v))
    out, w = torch_sdpa(q, k, v)
    save("lookup.out_torch", out, 0, "listing 1: torch.nn.functional._scaled_dot_product_attention (float64), Q,K,V from default_rng(0)", libs)
    save("lookup.w_torch", w, 0, "listing 1: the attention weights by torch's _scaled_dot_product_attention (float64)", libs)


def scale_table(libs):
    rng = np.random.default_rng(1)
    n_keys, trials = 16, 4000

    def softmax(z):
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def jac_norm(p):
        J = np.einsum("ti,ij->tij", p, np.eye(p.shape[1])) - np.einsum("ti,tj->tij", p, p)
        return np.sqrt((J ** 2).sum(axis=(1, 2)))

    rows = []
    for d_k in (4, 16, 64, 256, 1024):
        q = rng.standard_normal((trials, 1, d_k))
        k = rng.standard_normal((trials, n_keys, d_k))
        s = (q * k).sum(axis=-1)
        p_raw, p_scl = softmax(s), softmax(s / np.sqrt(d_k))
        rows.append([s.std(), p_raw.max(axis=1).mean(), jac_norm(p_raw).mean(), p_scl.max(axis=1).mean(),
                     jac_norm(p_scl).mean()])
    save("scale.table", np.array(rows), 1,
         "listing 2 in full precision: per d_k = 4..1024, std(q.k), mean max weight and mean |J|_F without, "
         "then with the scale; computed by NumPy as the lesson computes them", libs)


def heads(libs):
    torch.manual_seed(0)
    d, h, n = 16, 4, 6
    mha = torch.nn.MultiheadAttention(d, h, batch_first=True, dtype=torch.float64)
    x = torch.randn(1, n, d, dtype=torch.float64)
    with torch.no_grad():
        ref, ref_w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    for name, value, note in (
            ("in_proj_weight", mha.in_proj_weight, "(3d, d) W_Q, W_K, W_V stacked"),
            ("in_proj_bias", mha.in_proj_bias, "(3d)"),
            ("out_proj_weight", mha.out_proj.weight, "(d, d)"),
            ("out_proj_bias", mha.out_proj.bias, "(d)"),
            ("x", x[0], "(n, d) the input, drawn after the module's parameters")):
        save(f"heads.{name}", value.detach().numpy(), 0,
             f"listing 3: nn.MultiheadAttention(16, 4, dtype=float64) after torch.manual_seed(0): {note}", libs)
    save("heads.out_torch", ref[0].detach().numpy(), 0, "listing 3: the module's output (n, d)", libs)
    save("heads.w_torch", ref_w[0].detach().numpy(), 0, "listing 3: the per-head weights (h, n, n)", libs)


# The claim's cases: (name, seed, q/k/v shapes, kind). Inputs are drawn in the order q, k, v
# (then the mask, rng.random((Sq, Sk)) < 0.6 with key 0 always allowed), as the C++ check draws them.
SDPA_CASES = (
    ("sdpa_masked", 10, (2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 6), "mask"),
    ("sdpa_causal", 11, (1, 2, 6, 8), (1, 2, 6, 8), (1, 2, 6, 8), "causal"),
    ("sdpa_large", 12, (1, 1, 6, 16), (1, 1, 6, 16), (1, 1, 6, 5), "large"),
)


def sdpa_cases(libs):
    for name, seed, sq, sk, sv, kind in SDPA_CASES:
        rng = np.random.default_rng(seed)
        q, k, v = rng.standard_normal(sq), rng.standard_normal(sk), rng.standard_normal(sv)
        allowed = None
        if kind == "mask":
            allowed = rng.random((sq[2], sk[2])) < 0.6
            allowed[:, 0] = True
        if kind == "large":  # scores q.k/4 with std 32*32*4/4 = 1024: exp overflows without the max
            q, k = 32.0 * q, 32.0 * k
        out, w = torch_sdpa(q, k, v, allowed=allowed, causal=kind == "causal")
        save(f"{name}.out", out, seed, f"claim attention.matches-torch, case {kind}: output by torch's _scaled_dot_product_attention (float64)", libs)
        save(f"{name}.w", w, seed, f"claim attention.matches-torch, case {kind}: weights by torch's _scaled_dot_product_attention (float64)", libs)


def sdpa_gqa(libs):
    seed = 14
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((1, 4, 4, 5)), rng.standard_normal((1, 2, 6, 5)), rng.standard_normal((1, 2, 6, 3))
    bias = rng.standard_normal((4, 6))
    tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
    tk, tv = tk.repeat_interleave(2, dim=1), tv.repeat_interleave(2, dim=1)  # query head h reads kv head h // 2
    s = 0.3 * (tq @ tk.transpose(-1, -2))
    s = 5.0 * torch.tanh(s / 5.0) + torch.from_numpy(bias)
    future = torch.arange(6)[None, :] > torch.arange(4)[:, None] + 2  # bottom-right: query i sees j <= i + Sk - Sq
    w = torch.softmax(s.masked_fill(future, float("-inf")), dim=-1)
    note = "claim attention.matches-torch, GQA 4/2 heads, scale 0.3, softcap 5, additive mask, bottom-right causal"
    save("sdpa_gqa.out", (w @ tv).numpy(), seed, note + ": output by torch (float64)", libs)
    save("sdpa_gqa.w", w.numpy(), seed, note + ": weights by torch (float64)", libs)


def gradients(libs):
    seed = 13
    rng = np.random.default_rng(seed)
    shape = (1, 2, 5, 4)
    q, k, v, g = (rng.standard_normal(shape) for _ in range(4))
    tq, tk, tv = (torch.from_numpy(a).requires_grad_(True) for a in (q, k, v))
    scores = tq @ tk.transpose(-1, -2) / np.sqrt(shape[-1])
    scores = scores.masked_fill(torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1), float("-inf"))
    out = torch.softmax(scores, dim=-1) @ tv
    out.backward(torch.from_numpy(g))
    for name, t in (("dq", tq), ("dk", tk), ("dv", tv)):
        save(f"grad_causal.{name}", t.grad.numpy(), seed,
             f"claim attention.backward: {name} of causal attention by torch autograd (float64), "
             "q, k, v, dO from default_rng(13)", libs)


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.set_num_threads(2)
    libs = manifest.library_versions(np, torch)
    lookup(libs)
    scale_table(libs)
    heads(libs)
    sdpa_cases(libs)
    sdpa_gqa(libs)
    gradients(libs)
    for listing, note in (
            ("lookup", "listing 1 (soft dictionary lookup): its three printed lines"),
            ("scale", "listing 2 (why divide by √d_k): the six-line table"),
            ("heads", "listing 3 (multiple heads): its six printed lines"),
            ("cost", "listing 6 (the cost of n²): the five-line table; the times are the author's machine's")):
        manifest.record_documented(f"attention/{listing}.txt", SEED_FILE, f"attention.{listing}",
                                   note=note + ", verbatim as the source shows them")


if __name__ == "__main__":
    main()
