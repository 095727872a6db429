""""Try it" panels: the reader toggles the causal mask, picks a head and a row, and reads the
weights and the output, offline.

The numbers are this build's: the arrays the listing computed (`lessons export`, the same ones the
audit compares with torch's goldens), embedded in the page as JSON for every state the panel
offers; docs/tryit.js only looks them up. We chose exported tables over our kernels compiled to
WebAssembly: emscripten is not installed here, a second build of the kernels for the browser would
be a second thing to verify, and the whole table of states is a few kilobytes.

A panel is offered for a listing that exported weights (heads, n, n): with a mask toggle when it
exported both states, under either naming (W_unmasked and W_causal with the outputs Y_unmasked,
Y_causal: masking.main; weights and weights_causal with output and output_causal:
attention.heads), without one otherwise (weights and output alone). And for a claim whose check
measured on such arrays and reports them as its series (W_unmasked, W_causal, Y_unmasked,
Y_causal, flattened, with "shape (heads, seq, d_model)"): attention.fixture-try-it, seed 002's own
"try it" on its fixture, whose panel shows exactly the numbers that claim judged.
"""
from __future__ import annotations

import html
import json


def esc(s) -> str:
    return html.escape(str(s), quote=True)


def _plain(a):
    return {"shape": list(a.shape), "data": [float(x) for x in a.ravel()]}


def panel(listing_id: str, arrays: dict, output_is: str = "") -> str:
    """output_is: what the output row is, when not multi-head attention's (after the output projection)."""
    # (state, weights array, output array) under each naming
    namings = ((("unmasked", "W_unmasked", "Y_unmasked"), ("causal", "W_causal", "Y_causal")),
               (("unmasked", "weights", "output"), ("causal", "weights_causal", "output_causal")))
    states = {}
    for naming in namings:
        for tag, w, y in naming:
            if w in arrays and arrays[w].ndim == 3:
                states[tag] = {"weights": _plain(arrays[w])}
                if y in arrays:
                    states[tag]["output"] = _plain(arrays[y])
        if "unmasked" in states:
            break
        states = {}
    if not states:
        return ""
    heads, n, _ = states["unmasked"]["weights"]["shape"]
    pid = "tryit-" + listing_id.replace(".", "-")
    toggle = ('<label class="vl-try-toggle"><input type="checkbox" class="vl-try-mask"> causal mask</label>'
              if "causal" in states else "")
    head_opts = "".join(f'<option value="{h}">{h}</option>' for h in range(heads))
    row_opts = "".join(f'<option value="{r}">{r}</option>' for r in range(n))
    data = json.dumps({"listing": listing_id, "states": states, **({"output_is": output_is} if output_is else {})},
                      separators=(",", ":"))
    what = ("Turn the mask off and on and read row 0; then compare two heads in row 2"
            if "causal" in states else "Pick a row and compare the heads")
    return (
        f'<div class="vl-try" id="{pid}"><div class="vl-try-head"><span class="vl-card-kind">Try it</span> '
        f'{esc(what)} (this build\'s numbers from <code>{esc(listing_id)}</code>: the arrays the audit checked).</div>'
        f'<div class="vl-try-controls">{toggle}'
        f'<label>head <select class="vl-try-headsel">{head_opts}</select></label>'
        f'<label>compare with head <select class="vl-try-head2">{head_opts}</select></label>'
        f'<label>row (query) <select class="vl-try-row">{row_opts}</select></label></div>'
        '<div class="vl-try-out"><table class="vl-table vl-try-table"><thead></thead><tbody></tbody></table>'
        '<div class="vl-try-output"></div></div>'
        f'<script type="application/json" class="vl-try-data">{data}</script></div>'
        '<script src="tryit.js"></script>')


def claim_panel(claim_id: str, claim: dict | None) -> str:
    """The panel of a claim whose first check that ran reports the arrays it judged as series."""
    import numpy as np
    for check in (claim or {}).get("checks", []):
        series = {x["name"]: x["values"] for x in check.get("series", [])}
        shape = series.get("shape (heads, seq, d_model)")
        if not shape or "W_unmasked" not in series:
            continue
        heads, seq, width = (int(x) for x in shape)
        arrays = {}
        for name in ("W_unmasked", "W_causal"):
            if name in series:
                arrays[name] = np.array(series[name], dtype=float).reshape(heads, seq, seq)
        for name in ("Y_unmasked", "Y_causal"):
            if name in series:
                arrays[name] = np.array(series[name], dtype=float).reshape(seq, width)
        return panel(claim_id, arrays, "the heads side by side: seed 002's module has no projections")
    return ""
