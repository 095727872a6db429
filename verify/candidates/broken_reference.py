#!/usr/bin/python3
"""The NumPy reference adapter with one deliberate fault: a candidate the audit must fail on
exactly that fault's claims and listings (FAULTS, below, says which).

    python3 verify/candidates/broken_reference.py FAULT
    python3 verify/candidates/broken_reference.py --table   the faults and what each must fail

causal-off-by-one     the causal mask lets query i see key i + 1
scale-1/d             attention's default scale is 1/D instead of 1/√D
heads-overlap         mha's heads read overlapping column blocks (head h starts at h·(d/H)/2)
chunk-state-dropped   the chunked linear attention forgets the state between chunks
backward-no-jacobian  the backward takes dS = dW: no softmax Jacobian
mha-biases-dropped    mha ignores in_proj_bias and out_proj_bias (torch initialises them to zero)
gqa-backward-unsummed with grouped-query heads, dK and dV come from the group's first query head only
scale-attr-ignored    attention ignores an explicit scale (uses 1/√D always)
float-mask-ignored    attention ignores an additive (float) mask
layer-norm-unbiased   the layers' LayerNorm divides the squared deviations by d − 1 (torch.var's
                      default), not by d as nn.LayerNorm does
"""
import os
import sys

# NumPy and the adapters are imported when a fault runs (below), not for --table: CMake reads the
# table when it configures, before anything else is needed.
np = ref = serve = None


def causal_off_by_one():
    visible = ref.visible

    def shifted(attrs, sq, sk, mask):
        allowed = visible(dict(attrs, causal=False), sq, sk, mask)
        if attrs.get("causal"):
            offset = sk - sq if attrs.get("alignment", "top_left") == "bottom_right" else 0
            causal = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + offset + 1
            allowed = causal if allowed is None else allowed & causal
        return allowed
    ref.visible = shifted


def scale_one_over_d():
    scores = ref.scores

    def wrong(q, k, attrs, mask, *stages):
        if attrs.get("scale") is None:
            attrs = dict(attrs, scale=1.0 / q.shape[-1])
        return scores(q, k, attrs, mask, *stages)
    ref.scores = wrong


def heads_overlap():
    mha = ref.mha

    def overlapping(inputs, attrs, wanted):
        d, h = inputs["query"].shape[-1], int(attrs["num_heads"])
        if h == 1:
            return mha(inputs, attrs, wanted)
        dh = d // h
        w, b = inputs["in_proj_weight"], inputs["in_proj_bias"]
        # Rows of each projection rearranged so that head i reads rows i·dh/2 … i·dh/2 + dh − 1.
        rows = np.concatenate([np.arange(i * (dh // 2 or 1), i * (dh // 2 or 1) + dh) for i in range(h)])
        w2, b2 = w.copy(), b.copy()
        for p in range(3):
            w2[p * d:(p + 1) * d] = w[p * d + rows]
            b2[p * d:(p + 1) * d] = b[p * d + rows]
        return mha(dict(inputs, in_proj_weight=w2, in_proj_bias=b2), attrs, wanted)
    ref.mha = overlapping


def chunk_state_dropped():
    linear = ref.linear_attention

    def forgetful(inputs, attrs, wanted):
        if attrs.get("form") != "chunked":
            return linear(inputs, attrs, wanted)
        c, n = int(attrs["chunk"]), inputs["phi_q"].shape[0]
        y = np.zeros((n, inputs["v"].shape[1]))
        for s in range(0, n, c):
            part = {k: v[s:s + c] for k, v in inputs.items()}
            y[s:s + c] = linear(part, dict(attrs, form="parallel"), wanted)["y"]
        return {"y": y}
    ref.linear_attention = forgetful


def backward_no_jacobian():
    def no_jacobian(inputs, attrs, wanted):
        q, d_out, mask = inputs["q"], inputs["d_out"], inputs.get("mask")
        hq, hkv = q.shape[1], inputs["k"].shape[1]
        k, v = ref.repeat_groups(inputs["k"], hq), ref.repeat_groups(inputs["v"], hq)
        s, scale, _ = ref.scores(q, k, attrs, mask)
        w = ref.softmax_rows(s)
        ds = d_out @ np.swapaxes(v, -1, -2)  # dW taken for dS
        fold = lambda x: x.reshape(q.shape[0], hkv, hq // hkv, *x.shape[2:]).sum(axis=2)
        return {"dq": scale * (ds @ k), "dk": fold(scale * (np.swapaxes(ds, -1, -2) @ q)),
                "dv": fold(np.swapaxes(w, -1, -2) @ d_out)}
    ref.attention_backward = no_jacobian


def mha_biases_dropped():
    mha = ref.mha

    def unbiased(inputs, attrs, wanted):
        zero = {n: np.zeros_like(inputs[n]) for n in ("in_proj_bias", "out_proj_bias")}
        return mha(dict(inputs, **zero), attrs, wanted)
    ref.mha = unbiased


def gqa_backward_unsummed():
    backward = ref.attention_backward

    def first_of_group(inputs, attrs, wanted):
        g = backward(inputs, attrs, wanted)
        hq, hkv = inputs["q"].shape[1], inputs["k"].shape[1]
        if hq == hkv:
            return g
        # Only the first query head of each group: the heads alone, then the group's first.
        k, v = ref.repeat_groups(inputs["k"], hq), ref.repeat_groups(inputs["v"], hq)
        each = backward(dict(inputs, k=k, v=v), attrs, wanted)
        return dict(g, dk=each["dk"][:, ::hq // hkv], dv=each["dv"][:, ::hq // hkv])
    ref.attention_backward = first_of_group


def scale_attr_ignored():
    scores = ref.scores
    ref.scores = lambda q, k, attrs, mask, *stages: scores(q, k, dict(attrs, scale=None), mask, *stages)


def float_mask_ignored():
    scores = ref.scores
    ref.scores = lambda q, k, attrs, mask, *stages: scores(q, k, attrs, None if mask is not None and mask.dtype != np.bool_ else mask,
                                                          *stages)


def layer_norm_unbiased():
    def unbiased(x, weight, bias, eps):
        mu = x.mean(axis=-1, keepdims=True)
        var = ((x - mu) ** 2).sum(axis=-1, keepdims=True) / x.dtype.type(x.shape[-1] - 1)
        return (x - mu) / np.sqrt(var + x.dtype.type(eps)) * weight + bias
    ref.layer_norm_rows = unbiased


# The layers' attention is the adapter's mha: a fault in mha is a fault in the encoder and decoder layers.
LAYERS = ["encoder-decoder.encoder-matches-torch", "encoder-decoder.decoder-matches-torch"]

# Each fault: its bug, and the audit items it must fail (claims, and listings whose computation goes
# through the candidate); every other item that runs must pass (check_candidate.py). ctest makes one
# test a fault from this table (CMakeLists.txt reads `broken_reference.py --table` when it configures).
FAULTS = {
    "causal-off-by-one": (causal_off_by_one, ["attention.convex-combination", "attention.matches-torch", "attention.backward-matches-torch", "attention.fixture-causal", "attention.fixture-try-it", "masking.masked-weights-zero", "masking.first-position-self", "masking.prefix-unchanged", "masking.one-pass-equals-decoding", "masking.fully-masked-row-zero"]),
    "scale-1/d": (scale_one_over_d, ["attention.matches-torch", "attention.backward-matches-torch", "attention.lookup"]),
    "heads-overlap": (heads_overlap, ["attention.mha-matches-torch", "masking.main", "positions.main", *LAYERS]),
    "chunk-state-dropped": (chunk_state_dropped, ["linear-rnn.forms-agree", "linear-rnn.main"]),
    "backward-no-jacobian": (backward_no_jacobian, ["attention.backward-fd", "attention.backward-matches-torch", "attention.fixture-gradient"]),
    "mha-biases-dropped": (mha_biases_dropped, ["attention.mha-matches-torch", "masking.mha-fully-masked-row", *LAYERS]),
    "gqa-backward-unsummed": (gqa_backward_unsummed, ["attention.backward-fd"]),
    "scale-attr-ignored": (scale_attr_ignored, ["attention.matches-torch", "attention.softmax-shift-invariant"]),
    "float-mask-ignored": (float_mask_ignored, ["attention.convex-combination", "attention.matches-torch", "masking.masked-weights-zero",
                                                "masking.padding-ignored"]),
    "layer-norm-unbiased": (layer_norm_unbiased, [*LAYERS, "encoder-decoder.layer-norm-standardises"]),
}

if __name__ == "__main__":
    if sys.argv[1:] == ["--table"]:  # for CMake: one line a fault, "FAULT|ITEM ITEM ..."
        for fault, (_, must_fail) in FAULTS.items():
            print(f"{fault}|{' '.join(must_fail)}")
        sys.exit(0)
    if len(sys.argv) != 2 or sys.argv[1] not in FAULTS:
        sys.exit(f"usage: broken_reference.py {{{'|'.join(FAULTS)}}} | --table")
    import numpy as np  # noqa: E402  (module globals: the faults read them when they run)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "adapters"))
    import numpy_reference as ref  # noqa: E402
    from vl_candidate import serve  # noqa: E402
    FAULTS[sys.argv[1]][0]()
    serve("numpy-reference, " + sys.argv[1], {
        "attention": lambda *a: ref.attention(*a),
        "attention_backward": lambda *a: ref.attention_backward(*a),
        "mha": lambda *a: ref.mha(*a),
        "positional_encoding": lambda *a: ref.positional_encoding(*a),
        "linear_attention": lambda *a: ref.linear_attention(*a),
        "layer_norm": lambda *a: ref.layer_norm(*a),
        "encoder_layer": lambda *a: ref.encoder_layer(*a),
        "decoder_layer": lambda *a: ref.decoder_layer(*a),
    }, attrs=["float_attn_mask"])  # mha's additive mask, as the NumPy reference; no other optional attr, no
    # linear_family (its claims are N/A, naming the request: each bug here is in another operation)
