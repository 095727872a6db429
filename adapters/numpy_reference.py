#!/usr/bin/python3
"""A NumPy implementation of every vl-candidate/1 operation, written from the equations
(docs/candidates.md), not from the suite's C++:

    lessons audit --candidate 'python3 adapters/numpy_reference.py'

attention            O = softmax(softcap(scale · Q Kᵀ) + M) V; query head h reads kv head h // (Hq/Hkv);
                     a query with no visible key gets zero weights and a zero output (ONNX opset 24);
                     the scores at each of ONNX's qk_matmul_output stages when asked
mha                  torch.nn.MultiheadAttention(batch_first=True): project, split heads, attention
                     with scale 1/√(d/H), merge, project out
positional_encoding  PE[p, 2i] = sin(p / base^(2i/d)), PE[p, 2i+1] = cos(p / base^(2i/d))
linear_attention     o_t = Σ_{j≤t} (φq_t·φk_j) v_j / Σ_{j≤t} φq_t·φk_j, as a table, a recurrence or chunks
attention_backward   dV = Wᵀ dO, dW = dO Vᵀ, dS = W ⊙ (dW − rowsum(dW ⊙ W)), dQ = scale dS K, dK = scale dSᵀ Q
                     (through the softcap's derivative), dK, dV summed over the query heads of a group
linear_family        ONNX LinearAttention's recurrence, token by token, for every form asked (the forms
                     are one function: the recurrence is its definition): S ← diag(e^g) S (gated rules),
                     u = β (v − Sᵀk) (delta rules) or v, S ← S + k uᵀ, o = scale · Sᵀ q
layer_norm           γ ⊙ (x − μ) / √(σ² + ε) + β over the last axis, σ² biased
encoder_layer        torch's TransformerEncoderLayer (eval): x ← LN(x + f(x)) for f = self-attention (mha
                     above), then FFN(x) = act(x W₁ᵀ + b₁) W₂ᵀ + b₂; norm_first: x ← x + f(LN(x));
                     a sub-layer that returns another width than x is refused (InvalidInput)
decoder_layer        the same with three blocks: masked self-attention, attention to the memory, FFN

Arithmetic is in the inputs' dtype (float32 stays float32), with NumPy's own exceptions: a float16
mean (LayerNorm's μ and σ²) accumulates in float32 and is rounded back; LayerNorm's ε is rounded to
the dtype (1e-5 becomes a float16 subnormal, 3u off); GELU's erf is math.erf (double) per element,
rounded to the dtype (NumPy has no erf).
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vl_candidate import InvalidInput, Unsupported, serve  # noqa: E402


def visible(attrs, sq, sk, mask):
    """Boolean (…, Sq, Sk): which keys each query may see; None = all. Query i of batch b sits at
    position p = first_query + i, or i + offset (offset 0 top-left, L_b − Sq bottom-right, L_b the
    batch's key length, Sk without kv_lengths); it sees key j iff j < L_b, j ≤ p (causal),
    p − left_window ≤ j and j ≤ p + right_window (a window < 0 is unbounded), and the bool mask."""
    allowed = None
    lengths, first = attrs.get("kv_lengths"), attrs.get("first_query")
    left, right = attrs.get("left_window", -1), attrs.get("right_window", -1)
    if attrs.get("causal") or lengths is not None or left >= 0 or right >= 0:
        L = np.asarray([sk] if lengths is None else lengths, dtype=np.int64)[:, None, None]  # (B or 1, 1, 1)
        if first is not None:
            offset = np.full_like(L, first)
        else:
            offset = L - sq if attrs.get("alignment", "top_left") == "bottom_right" else np.zeros_like(L)
        p, j = np.arange(sq)[None, :, None] + offset, np.arange(sk)[None, None, :]
        ok = j < L
        if attrs.get("causal"):
            ok = ok & (j <= p)
        if left >= 0:
            ok = ok & (j >= p - left)
        if right >= 0:
            ok = ok & (j <= p + right)
        allowed = ok[:, None]  # (B or 1, 1, Sq, Sk)
    if mask is not None and mask.dtype == np.bool_:
        allowed = mask if allowed is None else (allowed & mask)
    return allowed


def scores(q, k, attrs, mask, stages=None):
    """S = softcap(scale · Q Kᵀ) + M with hidden keys at −∞, and the softcap's tanh (for the backward);
    `stages`, a dict, receives S at ONNX's qk_matmul_output stages 0 (scale·QKᵀ), 1 (softcapped) and 2."""
    stages = {} if stages is None else stages
    d = q.shape[-1]
    scale = attrs.get("scale")
    scale = q.dtype.type(1 / np.sqrt(d) if scale is None else scale)
    s = stages[0] = scale * (q @ np.swapaxes(k, -1, -2))
    cap = attrs.get("softcap", 0) or 0
    t = None
    if cap > 0:
        t = np.tanh(s / q.dtype.type(cap))
        s = q.dtype.type(cap) * t
    stages[1] = s
    if mask is not None and mask.dtype != np.bool_:
        s = s + mask.astype(q.dtype)
    allowed = visible(attrs, q.shape[-2], k.shape[-2], mask)
    if allowed is not None:
        s = np.where(allowed, s, q.dtype.type(-np.inf))
    stages[2] = s
    return s, scale, t


def softmax_rows(s):
    """Row softmax; a row with every score −∞ gets zero weights (no key to attend)."""
    m = np.max(s, axis=-1, keepdims=True)
    empty = np.isneginf(m)
    e = np.exp(s - np.where(empty, 0, m))
    e = np.where(empty, 0, e)
    z = np.sum(e, axis=-1, keepdims=True)
    return e / np.where(z == 0, 1, z)


def repeat_groups(x, hq):
    hkv = x.shape[1]
    if hq % hkv:
        raise ValueError(f"{hq} query heads are not a multiple of {hkv} kv heads")
    return np.repeat(x, hq // hkv, axis=1)


def attention(inputs, attrs, wanted):
    q, mask = inputs["q"], inputs.get("mask")
    k, v = repeat_groups(inputs["k"], q.shape[1]), repeat_groups(inputs["v"], q.shape[1])
    stages = {}
    w = stages[3] = softmax_rows(scores(q, k, attrs, mask, stages)[0])
    out = {"y": w @ v, "weights": w}
    if "scores" in wanted:  # ONNX's qk_matmul_output_mode
        out["scores"] = stages[int(attrs["qk_matmul_output_mode"])]
    return out


def attention_backward(inputs, attrs, wanted):
    q, d_out, mask = inputs["q"], inputs["d_out"], inputs.get("mask")
    hq, hkv = q.shape[1], inputs["k"].shape[1]
    k, v = repeat_groups(inputs["k"], hq), repeat_groups(inputs["v"], hq)
    s, scale, t = scores(q, k, attrs, mask)
    w = softmax_rows(s)
    dv = np.swapaxes(w, -1, -2) @ d_out
    dw = d_out @ np.swapaxes(v, -1, -2)
    ds = w * (dw - np.sum(dw * w, axis=-1, keepdims=True))
    if t is not None:
        ds = ds * (1 - t * t)  # d/dx cap·tanh(x/cap) = 1 − tanh²
    dq = scale * (ds @ k)
    dk = scale * (np.swapaxes(ds, -1, -2) @ q)
    b, g = q.shape[0], hq // hkv
    fold = lambda x: x.reshape(b, hkv, g, *x.shape[2:]).sum(axis=2)  # a kv head serves g query heads
    return {"dq": dq, "dk": fold(dk), "dv": fold(dv)}


def mha(inputs, attrs, wanted):
    x_q, x_k, x_v = inputs["query"], inputs["key"], inputs["value"]
    w_in, b_in = inputs["in_proj_weight"], inputs["in_proj_bias"]
    b, sq, d = x_q.shape
    sk, h = x_k.shape[1], int(attrs["num_heads"])
    if d % h:
        raise ValueError(f"embed dim {d} is not divisible by {h} heads")
    dh = d // h

    def heads(x, i, s):  # (B, S, d) → (B, H, S, d/H) of projection i (0 q, 1 k, 2 v)
        y = x @ w_in[i * d:(i + 1) * d].T + b_in[i * d:(i + 1) * d]
        return y.reshape(b, s, h, dh).transpose(0, 2, 1, 3)

    q, k, v = heads(x_q, 0, sq), heads(x_k, 1, sk), heads(x_v, 2, sk)
    s = (q @ np.swapaxes(k, -1, -2)) / np.sqrt(dh)
    blocked = np.zeros((b, 1, sq, sk), dtype=bool)
    am = inputs.get("attn_mask")
    if am is not None:
        am = am.reshape(b, h, sq, sk) if am.ndim == 3 else am
        if am.dtype == np.bool_:
            blocked = blocked | am
        else:
            s = s + am
    kpm = inputs.get("key_padding_mask")
    if kpm is not None:
        blocked = blocked | kpm.astype(bool)[:, None, None, :]
    if attrs.get("causal"):
        blocked = blocked | (np.arange(sk)[None, :] > np.arange(sq)[:, None])
    w = softmax_rows(np.where(blocked, -np.inf, s))
    o = (w @ v).transpose(0, 2, 1, 3).reshape(b, sq, d)
    return {"y": o @ inputs["out_proj_weight"].T + inputs["out_proj_bias"], "weights": w}


def positional_encoding(inputs, attrs, wanted):
    d, base = int(attrs["dim"]), float(attrs.get("base", 10000))
    dtype = {"float32": np.float32, "float16": np.float16}.get(attrs.get("dtype"), np.float64)  # computed in the request's precision
    pos = np.asarray(attrs.get("positions", range(int(attrs["length"]))), dtype=dtype)
    pe = np.zeros((pos.size, d), dtype=dtype)
    i = np.arange(0, d, 2, dtype=dtype)
    angle = pos[:, None] / dtype(base) ** (i / dtype(d))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d // 2])
    return {"pe": pe}


def linear_attention(inputs, attrs, wanted):
    pq, pk, v = inputs["phi_q"], inputs["phi_k"], inputs["v"]
    n = pq.shape[0]
    form = attrs.get("form", "parallel")
    if form == "parallel":
        a = np.tril(pq @ pk.T)
        return {"y": (a @ v) / a.sum(axis=1, keepdims=True)}
    if form == "recurrent":
        state, z, y = (np.zeros((pk.shape[1], v.shape[1]), v.dtype), np.zeros(pk.shape[1], v.dtype),
                       np.zeros((n, v.shape[1]), v.dtype))
        for t in range(n):
            state += np.outer(pk[t], v[t])
            z += pk[t]
            y[t] = (pq[t] @ state) / (pq[t] @ z)
        return {"y": y}
    if form == "chunked":
        c = int(attrs.get("chunk") or 0)
        if c <= 0:
            raise ValueError(f"chunk {c}: must be positive")
        state, z, y = (np.zeros((pk.shape[1], v.shape[1]), v.dtype), np.zeros(pk.shape[1], v.dtype),
                       np.zeros((n, v.shape[1]), v.dtype))
        for s in range(0, n, c):
            e = min(s + c, n)
            a = np.tril(pq[s:e] @ pk[s:e].T)
            y[s:e] = (pq[s:e] @ state + a @ v[s:e]) / (pq[s:e] @ z + a.sum(axis=1))[:, None]
            state += pk[s:e].T @ v[s:e]
            z += pk[s:e].sum(axis=0)
        return {"y": y}
    raise Unsupported(f"form {form!r}")


def linear_family(inputs, attrs, wanted):
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    rule = attrs["update_rule"]
    gated, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    if rule not in ("linear", "gated", "delta", "gated_delta"):
        raise Unsupported(f"update rule {rule!r}")
    b, hq, n, dk = q.shape
    hkv, dv = k.shape[1], v.shape[3]
    scale = q.dtype.type(attrs.get("scale") or 1 / np.sqrt(dk))
    state = inputs["past_state"].copy() if "past_state" in inputs else np.zeros((b, hkv, dk, dv), q.dtype)
    o = np.zeros((b, hq, n, dv), q.dtype)
    group = hq // hkv
    for t in range(n):
        if gated:
            state *= np.exp(inputs["log_decay"][:, :, t, :])[..., None]  # (B, Hkv, d_k or 1, 1)
        u = v[:, :, t, :]
        if delta:
            u = inputs["beta"][:, :, t, None] * (u - np.einsum("bhkv,bhk->bhv", state, k[:, :, t, :]))
        state += k[:, :, t, :, None] * u[:, :, None, :]
        for h in range(hq):
            o[:, h, t, :] = scale * np.einsum("bkv,bk->bv", state[:, h // group], q[:, h, t, :])
    return {"o": o, "state": state}


def layer_norm_rows(x, weight, bias, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + x.dtype.type(eps)) * weight + bias


def layer_norm(inputs, attrs, wanted):
    return {"y": layer_norm_rows(inputs["x"], inputs["weight"], inputs["bias"], attrs["eps"])}


def attend(inputs, prefix, x, memory, heads, mask, padding):
    """The layer's sub-layer `prefix` (self_attn. or multihead_attn.): queries x, keys and values memory."""
    parts = {"query": x, "key": memory, "value": memory, "in_proj_weight": inputs[prefix + "in_proj_weight"],
             "in_proj_bias": inputs[prefix + "in_proj_bias"], "out_proj_weight": inputs[prefix + "out_proj.weight"],
             "out_proj_bias": inputs[prefix + "out_proj.bias"]}
    if mask is not None:
        parts["attn_mask"] = mask
    if padding is not None:
        parts["key_padding_mask"] = padding
    return mha(parts, {"num_heads": heads}, {"y"})["y"]


_erf = np.frompyfunc(math.erf, 1, 1)


def feed_forward(inputs, x, activation):
    z = x @ inputs["linear1.weight"].T + inputs["linear1.bias"]
    if activation == "relu":
        z = np.maximum(z, z.dtype.type(0))
    elif activation == "gelu":  # torch's exact GELU: z Φ(z)
        z = z * (1 + _erf(z / np.sqrt(z.dtype.type(2))).astype(z.dtype)) / z.dtype.type(2)
    else:
        raise Unsupported(f"activation {activation!r}")
    return z @ inputs["linear2.weight"].T + inputs["linear2.bias"]


def residual_blocks(x, blocks, inputs, attrs):
    """Each (f, norm) in turn: x ← LN(x + f(x)) (post-norm), or x ← x + f(LN(x)) (norm_first)."""
    for f, norm in blocks:
        def ln(y):
            return layer_norm_rows(y, inputs[norm + ".weight"], inputs[norm + ".bias"], attrs["layer_norm_eps"])
        fx = f(ln(x)) if attrs["norm_first"] else f(x)
        if fx.shape != x.shape:
            raise InvalidInput(f"the residual x + f(x) needs f to return the width it was given: {x.shape[-1]} in, "
                               f"{fx.shape[-1]} out of the block normalised by {norm}")
        x = x + fx if attrs["norm_first"] else ln(x + fx)
    return x


def encoder_layer(inputs, attrs, wanted):
    h, mask, pad = int(attrs["nhead"]), inputs.get("src_mask"), inputs.get("src_key_padding_mask")
    return {"y": residual_blocks(inputs["src"], [
        (lambda x: attend(inputs, "self_attn.", x, x, h, mask, pad), "norm1"),
        (lambda x: feed_forward(inputs, x, attrs["activation"]), "norm2")], inputs, attrs)}


def decoder_layer(inputs, attrs, wanted):
    h, memory = int(attrs["nhead"]), inputs["memory"]
    return {"y": residual_blocks(inputs["tgt"], [
        (lambda x: attend(inputs, "self_attn.", x, x, h, inputs.get("tgt_mask"), inputs.get("tgt_key_padding_mask")), "norm1"),
        (lambda x: attend(inputs, "multihead_attn.", x, memory, h, inputs.get("memory_mask"),
                          inputs.get("memory_key_padding_mask")), "norm2"),
        (lambda x: feed_forward(inputs, x, attrs["activation"]), "norm3")], inputs, attrs)}


if __name__ == "__main__":
    serve("numpy-reference", {
        "attention": attention,
        "attention_backward": attention_backward,
        "mha": mha,
        "positional_encoding": positional_encoding,
        "linear_attention": linear_attention,
        "linear_family": linear_family,
        "layer_norm": layer_norm,
        "encoder_layer": encoder_layer,
        "decoder_layer": decoder_layer,
    }, attrs=["kv_lengths", "window", "first_query", "positions", "float_attn_mask", "qk_matmul_output"], dtypes=["float64", "float32", "float16"])
