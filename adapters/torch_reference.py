#!/usr/bin/python3
"""PyTorch as a vl-candidate/1 candidate (docs/candidates.md):

    lessons audit --candidate 'python3 adapters/torch_reference.py'

attention            torch 1.13's own fused attention, F._scaled_dot_product_attention (its weights
                     through need_attn_weights), wherever its options reach: scale 1/√D (or a
                     request's scale within its precision's rounding of it), a bool mask (the
                     request's, the causal and the hidden keys folded into it), an additive mask
                     (the hidden keys at −∞ in it), or is_causal for a plain top-left causal mask;
                     otherwise (another scale, a softcap, a score stage asked) the math with torch
                     ops and F.softmax (as much model code writes it). Query head h reads kv head h // (Hq/Hkv)
                     (repeat_interleave); hidden keys are −∞ before the softmax, so a query with every
                     key hidden gets NaN (torch's softmax of an all −∞ row, in both paths), not the
                     lesson's zero row: the audit reports that departure;
                     the optional attrs kv_lengths, window and first_query (a KV cache, a sliding
                     window) as ONNX defines them, and the score stages of ONNX's qk_matmul_output_mode
mha                  torch.nn.MultiheadAttention(batch_first=True) itself, its parameters loaded
                     from the request, per-head weights (average_attn_weights=False)
attention_backward   autograd through the same forward, SDPA's own backward where the forward is SDPA
                     (dK, dV summed over a group by autograd)
positional_encoding  the sinusoidal table with torch ops
linear_attention     the table, the recurrence and the chunked form with torch ops
linear_family        ONNX LinearAttention's recurrence with torch ops, token by token, for every form
                     asked (the recurrence is the operator's definition)
layer_norm           torch.nn.LayerNorm itself, γ and β loaded from the request
encoder_layer        torch.nn.TransformerEncoderLayer(batch_first=True, dropout=0) itself, in eval mode,
decoder_layer        torch.nn.TransformerDecoderLayer likewise: built from the request's attrs, its
                     state_dict() loaded from the request's arrays, called with the request's masks;
                     torch runs the encoder layer through its fused fast path
                     (torch._transformer_encoder_layer_fwd) where it takes it (no grad, eval mode, an
                     even head count, ...): the audit judges what a user of the module gets

Every request is computed in its precision on the CPU, with one thread: float64, float32, or
torch.bfloat16 (torch 1.13's CPU kernels have no float16 matrix products).
"""
import os
import re
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vl_candidate import InvalidInput, Unsupported, serve  # noqa: E402

torch.set_num_threads(1)


_bfloat16 = False  # the request in hand asks for bfloat16 (its "dtype" attr): in_request_dtype sets it


def t(a):
    """An input as a tensor; in a bfloat16 request (its numbers float32, exactly) as torch.bfloat16."""
    x = torch.from_numpy(np.ascontiguousarray(a))
    return x.to(torch.bfloat16) if _bfloat16 and x.is_floating_point() else x


def as_numpy(x):
    """A result as NumPy: a bfloat16 tensor (NumPy has no bfloat16) as the float32 numbers it holds."""
    return x.float().numpy() if x.dtype == torch.bfloat16 else x.numpy()


def in_request_dtype(op):
    """The operation computing in its request's precision: bfloat16 as torch.bfloat16 (t, as_numpy)."""
    def run(inputs, attrs, wanted):
        global _bfloat16
        _bfloat16 = attrs.get("dtype") == "bfloat16"
        return op(inputs, attrs, wanted)
    return run


def hidden_keys(attrs, sq, sk):
    """Boolean (B or 1, 1, Sq, Sk), True = hidden, or None. Query i sits at position
    p = first_query + i, else i + (L_b − Sq) bottom-right or i top-left, with L_b batch b's key
    length (kv_lengths; Sk without): key j is hidden if j ≥ L_b, j > p (causal),
    j < p − left_window or j > p + right_window (−1: unbounded)."""
    lengths, first = attrs.get("kv_lengths"), attrs.get("first_query")
    left, right = attrs.get("left_window", -1), attrs.get("right_window", -1)
    if not (attrs.get("causal") or lengths is not None or left >= 0 or right >= 0):
        return None
    L = torch.tensor([sk] if lengths is None else list(lengths), dtype=torch.int64).view(-1, 1, 1)
    if first is not None:
        p0 = torch.full_like(L, int(first))
    elif attrs.get("alignment", "top_left") == "bottom_right":
        p0 = L - sq
    else:
        p0 = torch.zeros_like(L)
    p = torch.arange(sq).view(1, -1, 1) + p0  # (B or 1, Sq, 1)
    j = torch.arange(sk).view(1, 1, -1)
    hidden = j >= L
    if attrs.get("causal"):
        hidden = hidden | (j > p)
    if left >= 0:
        hidden = hidden | (j < p - left)
    if right >= 0:
        hidden = hidden | (j > p + right)
    return hidden.unsqueeze(1)


# The relative distance within which a request's scale is SDPA's own 1/√D: the request's 1/√D
# rounded to its precision (a float32 or bfloat16 request carries it so).
SCALE_ROUNDING = {"float32": 2.0 ** -24, "bfloat16": 2.0 ** -8}


def sdpa(q, k, v, attrs, mask):
    """torch 1.13's own fused attention, F._scaled_dot_product_attention, where its options reach:
    its scale is 1/√D (a request's scale within its precision's rounding of that); it takes a bool
    mask (true = may attend), an additive float mask, or is_causal (top-left); no softcap. O and W,
    or None where the request needs more."""
    scale, d = attrs.get("scale"), q.shape[-1]
    if attrs.get("softcap") or (scale is not None and abs(scale * np.sqrt(d) - 1) > SCALE_ROUNDING.get(attrs.get("dtype"), 2.0 ** -52)):
        return None
    sq, sk = q.shape[-2], k.shape[-2]
    hidden = hidden_keys(attrs, sq, sk)
    if mask is not None and mask.dtype != torch.bool:  # added to the scores, the hidden keys at −∞ in it
        added = mask.to(q.dtype).expand(q.shape[0], q.shape[1], sq, sk)
        if hidden is not None:
            added = added.masked_fill(hidden, float("-inf"))
        return F._scaled_dot_product_attention(q, k, v, attn_mask=added, need_attn_weights=True)
    top_left_causal = attrs.get("causal") and hidden is not None and attrs.get("alignment", "top_left") == "top_left" and \
        attrs.get("first_query") is None and attrs.get("kv_lengths") is None and \
        attrs.get("left_window", -1) < 0 and attrs.get("right_window", -1) < 0
    if top_left_causal and mask is None:
        return F._scaled_dot_product_attention(q, k, v, need_attn_weights=True, is_causal=True)
    allowed = None if hidden is None else ~hidden
    if mask is not None:
        allowed = mask if allowed is None else (allowed & mask)
    if allowed is not None:
        allowed = allowed.expand(q.shape[0], q.shape[1], sq, sk)
    return F._scaled_dot_product_attention(q, k, v, attn_mask=allowed, need_attn_weights=True)


def forward(q, k, v, attrs, mask, stages=None):
    """O and W: through torch's SDPA (sdpa) unless score stages are asked or its options do not
    reach; else the math with F.softmax. `stages`, a dict, receives the scores at ONNX's
    qk_matmul_output stages 0 (scale·QKᵀ), 1 (softcapped), 2 (masked: hidden keys −∞) and 3 (W)."""
    hq, hkv = q.shape[1], k.shape[1]
    if hq % hkv:
        raise ValueError(f"{hq} query heads are not a multiple of {hkv} kv heads")
    k, v = k.repeat_interleave(hq // hkv, dim=1), v.repeat_interleave(hq // hkv, dim=1)
    if stages is None:
        fused = sdpa(q, k, v, attrs, mask)
        if fused is not None:
            return fused
    stages = {} if stages is None else stages
    scale = attrs.get("scale")
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = stages[0] = scale * (q @ k.transpose(-1, -2))
    cap = attrs.get("softcap", 0) or 0
    if cap > 0:
        s = cap * torch.tanh(s / cap)
    stages[1] = s
    sq, sk = q.shape[-2], k.shape[-2]
    if mask is not None and mask.dtype != torch.bool:
        s = s + mask.to(q.dtype)
    elif mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    hidden = hidden_keys(attrs, sq, sk)
    if hidden is not None:
        s = s.masked_fill(hidden, float("-inf"))
    stages[2] = s
    w = stages[3] = F.softmax(s, dim=-1)
    return w @ v, w


def attention(inputs, attrs, wanted):
    mask, stages = inputs.get("mask"), ({} if "scores" in wanted else None)
    y, w = forward(t(inputs["q"]), t(inputs["k"]), t(inputs["v"]), attrs, None if mask is None else t(mask), stages)
    out = {"y": as_numpy(y), "weights": as_numpy(w)}
    if "scores" in wanted:
        out["scores"] = as_numpy(stages[int(attrs["qk_matmul_output_mode"])])
    return out


def attention_backward(inputs, attrs, wanted):
    q, k, v = (t(inputs[n]).requires_grad_(True) for n in ("q", "k", "v"))
    mask = inputs.get("mask")
    y, _ = forward(q, k, v, attrs, None if mask is None else t(mask))
    dq, dk, dv = torch.autograd.grad(y, (q, k, v), t(inputs["d_out"]))
    return {"dq": as_numpy(dq), "dk": as_numpy(dk), "dv": as_numpy(dv)}


def mha(inputs, attrs, wanted):
    query = t(inputs["query"])
    d, h = query.shape[-1], int(attrs["num_heads"])
    m = torch.nn.MultiheadAttention(d, h, batch_first=True, dtype=query.dtype)
    with torch.no_grad():
        for name in ("in_proj_weight", "in_proj_bias"):
            getattr(m, name).copy_(t(inputs[name]))
        m.out_proj.weight.copy_(t(inputs["out_proj_weight"]))
        m.out_proj.bias.copy_(t(inputs["out_proj_bias"]))
    sq, sk = query.shape[1], inputs["key"].shape[1]
    am = inputs.get("attn_mask")
    am = None if am is None else t(am)
    kpm = inputs.get("key_padding_mask")
    kpm = None if kpm is None else t(kpm)
    if attrs.get("causal"):
        future = torch.triu(torch.ones(sq, sk, dtype=torch.bool), diagonal=1)
        am = future if am is None else (am | future if am.dtype == torch.bool else am.masked_fill(future, float("-inf")))
    if am is not None and am.dtype != torch.bool and kpm is not None:  # one kind of mask, as torch prefers
        kpm = torch.zeros(kpm.shape, dtype=query.dtype).masked_fill(kpm, float("-inf"))
    with torch.no_grad():
        y, w = m(query, t(inputs["key"]), t(inputs["value"]), attn_mask=am, key_padding_mask=kpm,
                 need_weights="weights" in wanted, average_attn_weights=False)
    out = {"y": as_numpy(y)}
    if w is not None:
        out["weights"] = as_numpy(w)
    return out


def positional_encoding(inputs, attrs, wanted):
    d, base = int(attrs["dim"]), float(attrs.get("base", 10000))
    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}.get(attrs.get("dtype"), torch.float64)  # the request's precision
    pos = torch.tensor(attrs.get("positions", list(range(int(attrs["length"])))), dtype=dtype)
    i = torch.arange(0, d, 2, dtype=dtype)
    angle = pos[:, None] / base ** (i / d)
    pe = torch.zeros(pos.numel(), d, dtype=dtype)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d // 2])
    return {"pe": as_numpy(pe)}


def linear_attention(inputs, attrs, wanted):
    pq, pk, v = t(inputs["phi_q"]), t(inputs["phi_k"]), t(inputs["v"])
    n, form = pq.shape[0], attrs.get("form", "parallel")
    if form == "parallel":
        a = torch.tril(pq @ pk.T)
        return {"y": as_numpy((a @ v) / a.sum(dim=1, keepdim=True))}
    if form not in ("recurrent", "chunked"):
        raise Unsupported(f"form {form!r}")
    c = 1 if form == "recurrent" else int(attrs.get("chunk") or 0)
    if c <= 0:
        raise ValueError(f"chunk {c}: must be positive")
    state = torch.zeros(pk.shape[1], v.shape[1], dtype=v.dtype)
    z = torch.zeros(pk.shape[1], dtype=v.dtype)
    y = torch.zeros(n, v.shape[1], dtype=v.dtype)
    for s in range(0, n, c):
        e = min(s + c, n)
        a = torch.tril(pq[s:e] @ pk[s:e].T)
        y[s:e] = (pq[s:e] @ state + a @ v[s:e]) / (pq[s:e] @ z + a.sum(dim=1))[:, None]
        state += pk[s:e].T @ v[s:e]
        z += pk[s:e].sum(dim=0)
    return {"y": as_numpy(y)}


def linear_family(inputs, attrs, wanted):
    q, k, v = t(inputs["q"]), t(inputs["k"]), t(inputs["v"])
    rule = attrs["update_rule"]
    if rule not in ("linear", "gated", "delta", "gated_delta"):
        raise Unsupported(f"update rule {rule!r}")
    gated, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    b, hq, n, dk = q.shape
    hkv, dv = k.shape[1], v.shape[3]
    scale = attrs.get("scale") or dk ** -0.5
    state = t(inputs["past_state"]).clone() if "past_state" in inputs else torch.zeros(b, hkv, dk, dv, dtype=q.dtype)
    o = torch.zeros(b, hq, n, dv, dtype=q.dtype)
    group = hq // hkv  # query heads h·G … (h+1)·G − 1 read kv head h
    # One token at a time, as the recurrence is written; the slices are views made once, and each
    # product is one batched matmul over (B, Hkv): a loop of small tensors costs torch's dispatch
    # per operation more than its arithmetic.
    decays = torch.exp(t(inputs["log_decay"])).unsqueeze(-1).unbind(2) if gated else None  # (B, Hkv, d_k or 1, 1)
    betas = t(inputs["beta"]).unsqueeze(-1).unbind(2) if delta else None                   # (B, Hkv, 1)
    ks, vs = k.unbind(2), v.unbind(2)                                                        # (B, Hkv, d_k), (B, Hkv, d_v)
    qs = q.reshape(b, hkv, group, n, dk).unbind(3)                                           # (B, Hkv, G, d_k)
    for s in range(n):
        if gated:
            state = state * decays[s]
        u = vs[s]
        if delta:
            u = betas[s] * (u - (ks[s].unsqueeze(-2) @ state).squeeze(-2))
        state = state + ks[s].unsqueeze(-1) * u.unsqueeze(-2)
        o[:, :, s, :] = (scale * (qs[s] @ state)).reshape(b, hq, dv)
    return {"o": as_numpy(o), "state": as_numpy(state)}


def layer_norm(inputs, attrs, wanted):
    x = t(inputs["x"])
    m = torch.nn.LayerNorm(x.shape[-1], eps=float(attrs["eps"]), dtype=x.dtype)
    m.load_state_dict({"weight": t(inputs["weight"]), "bias": t(inputs["bias"])})
    with torch.no_grad():
        return {"y": as_numpy(m(x))}


def torch_layer(cls, inputs, attrs, dtype):
    """torch's layer of the request's attrs, eval mode, its state_dict() the request's arrays. A
    Linear or LayerNorm whose arrays have other shapes than the attrs imply is rebuilt at theirs, so
    that a layer whose sub-layer changes the width reaches torch's forward (which refuses it)."""
    m = cls(int(attrs["d_model"]), int(attrs["nhead"]), int(attrs["dim_feedforward"]), dropout=0.0,
            activation=attrs["activation"], layer_norm_eps=float(attrs["layer_norm_eps"]), batch_first=True,
            norm_first=bool(attrs["norm_first"]), dtype=dtype)
    for name, child in list(m.named_children()):
        w = inputs.get(name + ".weight")
        if w is None or tuple(w.shape) == tuple(child.weight.shape):
            continue
        if isinstance(child, torch.nn.Linear):
            setattr(m, name, torch.nn.Linear(w.shape[1], w.shape[0], dtype=dtype))
        elif isinstance(child, torch.nn.LayerNorm):
            setattr(m, name, torch.nn.LayerNorm(w.shape[0], eps=float(attrs["layer_norm_eps"]), dtype=dtype))
    m.load_state_dict({name: t(inputs[name]) for name in m.state_dict()})
    return m.eval()


def refused_by_torch(forward):
    """torch's forward; torch's refusal to add a sub-layer's output of another width to the residual
    ("The size of tensor a (11) must match the size of tensor b (8) ...") is the candidate refusing
    the input; any other error stays an error."""
    try:
        with torch.no_grad():
            return forward()
    except RuntimeError as e:
        if not re.search(r"size of tensor a \(\d+\) must match the size of tensor b \(\d+\)", str(e)):
            raise
        raise InvalidInput(f"torch refused it: {e}") from e


def optional(inputs, name):
    return t(inputs[name]) if name in inputs else None


def encoder_layer(inputs, attrs, wanted):
    src = t(inputs["src"])
    m = torch_layer(torch.nn.TransformerEncoderLayer, inputs, attrs, src.dtype)
    y = refused_by_torch(lambda: m(src, src_mask=optional(inputs, "src_mask"),
                                   src_key_padding_mask=optional(inputs, "src_key_padding_mask")))
    return {"y": as_numpy(y)}


def decoder_layer(inputs, attrs, wanted):
    tgt = t(inputs["tgt"])
    m = torch_layer(torch.nn.TransformerDecoderLayer, inputs, attrs, tgt.dtype)
    y = refused_by_torch(lambda: m(tgt, t(inputs["memory"]), tgt_mask=optional(inputs, "tgt_mask"),
                                   memory_mask=optional(inputs, "memory_mask"),
                                   tgt_key_padding_mask=optional(inputs, "tgt_key_padding_mask"),
                                   memory_key_padding_mask=optional(inputs, "memory_key_padding_mask")))
    return {"y": as_numpy(y)}


if __name__ == "__main__":
    serve("torch-" + torch.__version__, {op.__name__: in_request_dtype(op) for op in (
        attention, attention_backward, mha, positional_encoding, linear_attention, linear_family, layer_norm,
        encoder_layer, decoder_layer)},
        attrs=["kv_lengths", "window", "first_query", "positions", "float_attn_mask", "qk_matmul_output"],
        dtypes=["float64", "float32", "bfloat16"])
