"""A candidate written to vl-candidate/1 as its first version defined it must never be accused.

It implements exactly the first version's fields: `attention` (q, k, v, an optional mask;
causal, alignment, scale, softcap), `mha` with a bool `attn_mask` (true = blocked) and a
`key_padding_mask`, `positional_encoding` (length, dim, base: rows 0 … length − 1) and the three
forms of `linear_attention`; its hello lists no optional attr and no dtypes. Every field added
since (the attrs `positions`, `float_attn_mask`, `kv_lengths`, `window`, `first_query`, the
`dtypes`, the `linear_family` request) is sent only to a candidate that lists it, so on this one
every claim and listing is PASS or N/A — never FAIL, never ERROR (docs/candidates.md).
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", ".."))
LESSONS = os.environ.get("VL_LESSONS", os.path.join(SOURCE, "build", "bin", "lessons"))

CANDIDATE = """
import sys
sys.path.insert(0, {adapters!r})
import numpy as np
import numpy_reference as ref
from vl_candidate import serve

def mha(inputs, attrs, wanted):
    # The first version's mask is bool, true = blocked: a float one would be a protocol error here.
    if "attn_mask" in inputs:
        assert inputs["attn_mask"].dtype == np.bool_, "the first version's attn_mask is bool"
    return ref.mha(inputs, attrs, wanted)

def positional_encoding(inputs, attrs, wanted):
    # Rows 0 … length − 1, whatever else the request says (the first version has no positions).
    return ref.positional_encoding(inputs, {{k: attrs[k] for k in ("length", "dim", "base") if k in attrs}}, wanted)

serve("first-version", {{"attention": ref.attention, "mha": mha, "positional_encoding": positional_encoding,
                        "linear_attention": ref.linear_attention}})
"""


class FirstVersion(unittest.TestCase):
    def test_never_accused(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "candidate.py")
            with open(path, "w") as f:
                f.write(CANDIDATE.format(adapters=os.path.join(SOURCE, "adapters")))
            report = os.path.join(d, "audit.json")
            r = subprocess.run([LESSONS, "audit", "--root", SOURCE, "--candidate", f"/usr/bin/python3 {path}", "--json", report],
                               capture_output=True, text=True, timeout=900)
            with open(report) as f:
                audit = json.load(f)
        self.assertEqual(r.returncode, 0, r.stdout[-4000:] + r.stderr[-2000:])
        items = [(c["id"], c["status"], c.get("why", "")) for lesson in audit["lessons"] for c in lesson["claims"]]
        items += [(l["id"], l["status"], l.get("why", "")) for lesson in audit["lessons"] for l in lesson["listings"]]
        self.assertTrue(items)
        for item, status, why in items:
            with self.subTest(item=item):
                self.assertIn(status, ("passed", "not applicable"), why)
        passed = [i for i, s, _ in items if s == "passed"]
        # It is judged, not merely excused: the claims its four operations answer pass.
        self.assertGreaterEqual(len(passed), 20, passed)
        for refused in ("positions.rotation-error-growth", "masking.cache-decoding"):
            self.assertIn(refused, [i for i, s, _ in items if s == "not applicable"])
        # mha against torch: judged on what the first version defines (the bool masks), the
        # additive-mask case not asked, and said so.
        mha = next(c for lesson in audit["lessons"] for c in lesson["claims"] if c["id"] == "attention.mha-matches-torch")
        self.assertEqual(mha["status"], "passed", mha.get("why"))
        self.assertIn("the additive-mask case not asked", mha["checks"][0]["detail"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
