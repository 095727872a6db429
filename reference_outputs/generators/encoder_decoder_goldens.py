"""Numeric goldens and the documented output of lesson encoder-decoder, computed by PyTorch.

Everything here is torch 1.13's own nn.TransformerEncoderLayer / TransformerDecoderLayer /
TransformerEncoder / TransformerDecoder, in float64, eval mode, dropout 0, batch_first, run with
autograd on so that the encoder layer takes its general path (the no-grad "fast path" of
TransformerEncoder turns padded positions into zeros; our kernels compute what the general path
computes). Weights and inputs are drawn by torch from the seeds of CASES: the listing's 0 and two
arbitrary large ones. Writes reference_outputs/encoder-decoder/:

  <case>.out.npy       the layer's (or the N-layer stack's) output for the inputs drawn after it
  init.<case>.npy      every state_dict() entry of the layer, flattened and concatenated in
                       torch's order (the torch-compatible generator must give these bit for bit)
  counts.npy           per case: torch's parameter count of one layer (sum of numel)
  main.*.npy, main.txt the listing: a 2-layer encoder and decoder (d = 16, h = 4, d_ff = 32) from
                       torch.manual_seed(0), its outputs, and the lines it prints

It also checks, and says in the manifest, what nn.TransformerEncoder(layer, N) does to the
copies: they are deep copies (equal values, no draws: the generator's state is unchanged).
Run: /usr/bin/python3 reference_outputs/generators/encoder_decoder_goldens.py
"""
import os

import numpy as np
import torch
import torch.nn.functional as F

import manifest

SCRIPT = "reference_outputs/generators/encoder_decoder_goldens.py"
LESSON = "encoder-decoder"
F64 = torch.float64

# name: (kind, seed, d, heads, d_ff, layers, batch, S (encoder positions), T (decoder positions),
#        norm_first, activation, padding, perturb)  -- padding: key-padding of the last key of batch 0;
# perturb: alpha > 0 adds alpha * torch.randn to every state_dict() entry after the initialisation
# (drawn in torch's order, before the inputs), so that the attention biases and LayerNorm's beta and
# gamma, which torch initialises to 0 and 1, count. alpha is a power of two, so p + alpha * r rounds
# the same whether or not the addition is fused.
CASES = {
    "enc_post_relu": ("encoder", 0, 16, 4, 32, 1, 2, 6, 0, False, "relu", False, 0),
    "enc_pre_gelu": ("encoder", 918273645, 24, 3, 40, 1, 2, 7, 0, True, "gelu", True, 0),
    "enc_stack": ("encoder", 2718281828, 16, 2, 32, 2, 2, 5, 0, False, "gelu", False, 0),
    "dec_post_relu": ("decoder", 0, 16, 4, 32, 1, 2, 6, 5, False, "relu", False, 0),
    "dec_pre_gelu": ("decoder", 918273645, 24, 3, 40, 1, 2, 7, 4, True, "gelu", True, 0),
    "dec_stack": ("decoder", 2718281828, 16, 2, 32, 2, 2, 5, 6, True, "relu", False, 0),
    "enc_perturbed": ("encoder", 31415926, 16, 4, 32, 2, 2, 6, 0, False, "gelu", True, 0.25),
    "dec_perturbed": ("decoder", 27182818, 16, 2, 24, 2, 2, 5, 6, True, "relu", True, 0.25),
}


def layer(kind, d, h, d_ff, norm_first, activation):
    cls = torch.nn.TransformerEncoderLayer if kind == "encoder" else torch.nn.TransformerDecoderLayer
    return cls(d, h, d_ff, dropout=0.0, activation=activation, batch_first=True, norm_first=norm_first, dtype=F64)


def stack(kind, one, n):
    """nn.TransformerEncoder/Decoder(one, n), checking that the copies equal `one` and draw nothing."""
    before = torch.get_rng_state()
    cls = torch.nn.TransformerEncoder if kind == "encoder" else torch.nn.TransformerDecoder
    s = cls(one, n, enable_nested_tensor=False) if kind == "encoder" else cls(one, n)
    assert torch.equal(before, torch.get_rng_state()), "the stack drew random numbers"
    ref = one.state_dict()
    for copy in s.layers:
        for k, v in copy.state_dict().items():
            assert torch.equal(v, ref[k]), f"copy differs in {k}"
    return s.eval()


def causal(t):
    return torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)  # True = may not attend


def padding(batch, s):
    m = torch.zeros(batch, s, dtype=torch.bool)
    m[0, -1] = True
    return m


def perturb(one, alpha):
    """Every state_dict() entry += alpha * torch.randn(entry.shape), in torch's order."""
    with torch.no_grad():
        for v in one.state_dict().values():  # detached views of the parameters: add_ changes them
            v.add_(torch.randn(v.shape, dtype=F64), alpha=alpha)


def flat_state(one):
    return torch.cat([v.reshape(-1) for v in one.state_dict().values()])


def save(rel, array, seed, note, libs):
    path = os.path.join(manifest.GOLDEN_DIR, LESSON, rel)
    np.save(path, np.ascontiguousarray(array, dtype=np.float64))
    manifest.record(f"{LESSON}/{rel}", SCRIPT, libs, seed=seed, note=note)


def run_case(name, spec, libs):
    kind, seed, d, h, d_ff, n, b, s, t, norm_first, act, pad, alpha = spec
    torch.manual_seed(seed)
    one = layer(kind, d, h, d_ff, norm_first, act).eval()
    init = flat_state(one).detach().numpy().copy()
    if alpha:
        perturb(one, alpha)
    model = stack(kind, one, n) if n > 1 else one
    if kind == "encoder":
        x = torch.randn(b, s, d, dtype=F64)
        out = model(x, src_key_padding_mask=padding(b, s) if pad else None)
    else:
        tgt = torch.randn(b, t, d, dtype=F64)
        memory = torch.randn(b, s, d, dtype=F64)
        out = model(tgt, memory, tgt_mask=causal(t), memory_key_padding_mask=padding(b, s) if pad else None)
    what = f"{kind} {'stack of ' + str(n) + ' layers' if n > 1 else 'layer'} d={d} h={h} d_ff={d_ff} " \
           f"{'pre' if norm_first else 'post'}-norm {act}{', key padding' if pad else ''}" \
           f"{f', every parameter + {alpha} * randn after the initialisation' if alpha else ''}"
    save(f"{name}.out.npy", out.detach().numpy(), seed,
         f"torch.manual_seed({seed}); {what}; inputs randn after the layer (B={b}, S={s}, T={t})", libs)
    save(f"init.{name}.npy", init, seed,
         f"the state_dict() of the {kind} layer ({what}) as initialised, before any perturbation, flattened in torch's order", libs)
    if n > 1:
        print(f"{name}: nn.Transformer{kind.capitalize()}(layer, {n}): {n} deep copies, equal values, no draws")
    return sum(p.numel() for p in one.parameters())


# ---- the listing ------------------------------------------------------------------------------

def written_out_encoder(x, layers):
    """LayerNorm(x + Sublayer(x)) written out with torch's functional ops (post-norm, ReLU)."""
    for m in layers:
        a = F.multi_head_attention_forward(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1), m.self_attn.embed_dim,
                                           m.self_attn.num_heads, m.self_attn.in_proj_weight, m.self_attn.in_proj_bias,
                                           None, None, False, 0.0, m.self_attn.out_proj.weight, m.self_attn.out_proj.bias,
                                           training=False, need_weights=False)[0].transpose(0, 1)
        x = F.layer_norm(x + a, (x.shape[-1],), m.norm1.weight, m.norm1.bias, 1e-5)
        f = F.linear(F.relu(F.linear(x, m.linear1.weight, m.linear1.bias)), m.linear2.weight, m.linear2.bias)
        x = F.layer_norm(x + f, (x.shape[-1],), m.norm2.weight, m.norm2.bias, 1e-5)
    return x


def written_out_decoder(x, memory, layers, mask):
    def mha(mod, q, kv, attn_mask):
        return F.multi_head_attention_forward(q.transpose(0, 1), kv.transpose(0, 1), kv.transpose(0, 1), mod.embed_dim,
                                              mod.num_heads, mod.in_proj_weight, mod.in_proj_bias, None, None, False, 0.0,
                                              mod.out_proj.weight, mod.out_proj.bias, training=False, need_weights=False,
                                              attn_mask=attn_mask)[0].transpose(0, 1)
    for m in layers:
        x = F.layer_norm(x + mha(m.self_attn, x, x, mask), (x.shape[-1],), m.norm1.weight, m.norm1.bias, 1e-5)
        x = F.layer_norm(x + mha(m.multihead_attn, x, memory, None), (x.shape[-1],), m.norm2.weight, m.norm2.bias, 1e-5)
        f = F.linear(F.relu(F.linear(x, m.linear1.weight, m.linear1.bias)), m.linear2.weight, m.linear2.bias)
        x = F.layer_norm(x + f, (x.shape[-1],), m.norm3.weight, m.norm3.bias, 1e-5)
    return x


def influence(run, inputs, fresh):
    """table[i, j] = max |Δ output[i]| when input position j is replaced by fresh[j]."""
    base = run(inputs)
    table = torch.zeros(base.shape[1], inputs.shape[1], dtype=F64)
    for j in range(inputs.shape[1]):
        changed = inputs.clone()
        changed[:, j] = fresh[:, j]
        table[:, j] = (run(changed) - base).abs().amax(dim=-1)[0]
    return table


def listing(libs):
    d, h, d_ff, n_layers, S, T = 16, 4, 32, 2, 6, 5
    torch.manual_seed(0)
    encoder = stack("encoder", layer("encoder", d, h, d_ff, False, "relu"), n_layers)
    decoder = stack("decoder", layer("decoder", d, h, d_ff, False, "relu"), n_layers)
    src = torch.randn(1, S, d, dtype=F64)
    tgt = torch.randn(1, T, d, dtype=F64)
    src_new = torch.randn(1, S, d, dtype=F64)
    tgt_new = torch.randn(1, T, d, dtype=F64)
    mem_new = torch.randn(1, S, d, dtype=F64)
    mask = causal(T)
    memory = encoder(src)
    out = decoder(tgt, memory, tgt_mask=mask)
    enc_diff = (written_out_encoder(src, encoder.layers) - memory).abs().max().item()
    dec_diff = (written_out_decoder(tgt, memory, decoder.layers, mask) - out).abs().max().item()
    enc_count = sum(p.numel() for p in encoder.layers[0].parameters())
    dec_count = sum(p.numel() for p in decoder.layers[0].parameters())
    attn, ffn, ln = 4 * d * d + 4 * d, 2 * d * d_ff + d_ff + d, 2 * d
    assert enc_count == attn + ffn + 2 * ln and dec_count == 2 * attn + ffn + 3 * ln
    roles = [
        ("auto-attenzione dell'encoder (uscita dell'encoder, posizione cambiata in ingresso)",
         influence(lambda x: encoder(x), src, src_new)),
        ("auto-attenzione mascherata del decoder (uscita del decoder, posizione cambiata del target)",
         influence(lambda x: decoder(x, memory, tgt_mask=mask), tgt, tgt_new)),
        ("attenzione encoder-decoder (uscita del decoder, posizione cambiata della memoria)",
         influence(lambda m: decoder(tgt, m, tgt_mask=mask), memory, mem_new)),
    ]
    lines = [f"encoder, {n_layers} strati: nn.TransformerEncoder contro LayerNorm(x + Sottostrato(x)) per esteso, "
             f"differenza massima = {enc_diff:.1e}",
             f"decoder, {n_layers} strati: nn.TransformerDecoder contro LayerNorm(x + Sottostrato(x)) per esteso, "
             f"differenza massima = {dec_diff:.1e}",
             f"parametri per strato: encoder {enc_count} = {attn} + {ffn} + 2*{ln}, decoder {dec_count} = 2*{attn} + {ffn} + 3*{ln}"]
    for title, table in roles:
        lines.append(title + ":")
        for i, row in enumerate(table.tolist()):
            lines.append(f"  {i}: " + " ".join(f"{v:.1e}" for v in row))
    for line in lines:
        print(line)
    with open(os.path.join(manifest.GOLDEN_DIR, LESSON, "main.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    manifest.record_documented(f"{LESSON}/main.txt", SCRIPT, f"{LESSON}.main",
                               note="the article prints no listing for this section: these are the lines this script "
                                    "prints running the listing in torch (differences against the formula written out "
                                    "with torch's functional ops, parameter counts, the three roles' influence tables)")
    for name, value in (("memory", memory), ("out", out), ("enc_influence", roles[0][1]),
                        ("self_influence", roles[1][1]), ("cross_influence", roles[2][1])):
        save(f"main.{name}.npy", value.detach().numpy()[0] if value.dim() == 3 else value.detach().numpy(), 0,
             f"listing encoder-decoder.main: {name} by torch.nn.TransformerEncoder/Decoder (2 layers, d=16, h=4, d_ff=32)", libs)


def main():
    torch.set_num_threads(2)
    os.makedirs(os.path.join(manifest.GOLDEN_DIR, LESSON), exist_ok=True)
    libs = manifest.library_versions(np, torch)
    counts = [run_case(name, spec, libs) for name, spec in CASES.items()]
    save("counts.npy", np.array(counts, dtype=np.float64), None,
         "torch's parameter count (sum of numel) of one layer of each case, in the order " + ", ".join(CASES), libs)
    listing(libs)


if __name__ == "__main__":
    main()
