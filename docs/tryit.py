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
attention.heads), without one otherwise (weights and output alone).
"""
from __future__ import annotations

import html
import json


def esc(s) -> str:
    return html.escape(str(s), quote=True)


def _plain(a):
    return {"shape": list(a.shape), "data": [float(x) for x in a.ravel()]}


def panel(listing_id: str, arrays: dict) -> str:
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
    data = json.dumps({"listing": listing_id, "states": states}, separators=(",", ":"))
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
