#!/usr/bin/python3
"""Writes the bad-input corpus of verify/cli/test_bad_inputs.py into this folder.

Run with Debian's /usr/bin/python3 (NumPy). Every file is small (bytes to a few KB) and is
rewritten identically on each run (fixed seeds), so the corpus is committed as generated:

  npy/      .npy files that are corrupt, truncated, of a refused dtype, empty, of the wrong
            rank or shape, or hold NaN/Inf; plus the good inputs the cases combine them with
  specs/    malformed specs, each standing in for specs/linear_rnn.md in a temporary copy of
            the checkout (lessons audit --root)
  onnx/     corrupt ONNX files: a model.onnx or an input_N.pb that is garbage, truncated, or
            decodes to something impossible, each put into a copy of a real case

The table of cases (which command runs which file, and what its error must say) is in
verify/cli/test_bad_inputs.py; it also checks that every file here is used by a case.
"""
import os
import shutil
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def out(*parts):
    p = os.path.join(HERE, *parts)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    return p


def write(path, data):
    with open(out(path), "wb") as f:
        f.write(data)


def npy_header(descr, shape, fortran=False, version=(1, 0)):
    """The bytes np.save writes before the data, for any descr text (valid or not)."""
    d = "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (
        descr if descr.startswith("[") else repr(descr), fortran, shape)
    hlen_bytes = 2 if version[0] == 1 else 4
    pad = 64 - (6 + 2 + hlen_bytes + len(d) + 1) % 64
    d = d + " " * pad + "\n"
    size = struct.pack("<H" if hlen_bytes == 2 else "<I", len(d))
    return b"\x93NUMPY" + bytes(version) + size + d.encode("latin1")


def save(name, a):
    np.save(out("npy", name), a)


def make_npy():
    rng = np.random.default_rng(11)
    # Good inputs: (2, 4, 8) float64 q, k, v (two batches, 4 positions, d 8) and their float32
    # twins; a (4, 8) pair for linear attention; MHA parameters for d_model 6.
    q, k, v = (rng.standard_normal((2, 4, 8)) for _ in range(3))
    save("good_q.npy", q)
    save("good_k.npy", k)
    save("good_v.npy", v)
    save("good_k_f32.npy", k.astype(np.float32))
    save("good_q2d.npy", q[0])
    save("good_k2d.npy", k[0])
    save("good_v2d.npy", v[0])
    d = 6
    save("mha_x.npy", rng.standard_normal((1, 3, d)))
    save("mha_w_in.npy", rng.standard_normal((3 * d, d)))
    save("mha_b_in.npy", rng.standard_normal((3 * d,)))
    save("mha_w_out.npy", rng.standard_normal((d, d)))
    save("mha_b_out.npy", rng.standard_normal((d,)))

    # Corrupt or truncated files.
    good = open(out("npy", "good_q.npy"), "rb").read()
    write("npy/empty_file.npy", b"")
    write("npy/bad_magic.npy", b"\x93NUMPX" + good[6:])
    write("npy/text_file.npy", b"this is not a .npy file\n")
    write("npy/truncated_prefix.npy", good[:9])
    write("npy/truncated_header.npy", good[:40])
    write("npy/truncated_data.npy", good[:-8])
    write("npy/extra_data.npy", good + b"\0" * 8)
    write("npy/bad_version.npy", good[:6] + bytes([9, 0]) + good[8:])
    write("npy/header_len_huge.npy", good[:8] + b"\xff\xff" + good[10:])
    write("npy/malformed_header.npy", npy_header("<f8", "(2, 4, 8)").replace(b"'shape'", b"'shap'") + good[128:])
    write("npy/unclosed_header.npy", npy_header("<f8", "(2, 4, 8)").replace(b"}", b" ") + good[128:])
    write("npy/negative_dim.npy", npy_header("<f8", "(-2, 4)") + b"\0" * 64)
    write("npy/shape_mismatch_count.npy", npy_header("<f8", "(3, 3)") + b"\0" * 8 * 10)
    # Regressions of the fuzzers: an item size of 20 digits (std::stoul overflowed: "internal
    # error"), and a zero-length dimension beside a 2^60 one (xtensor's strides overflowed).
    write("npy/descr_huge_itemsize.npy", npy_header("<f99999999999999999999", "(1,)") + b"\0" * 8)
    write("npy/zero_and_huge_dims.npy", npy_header("<f8", "(0, %d)" % 2**60))
    # Refused dtypes.
    np.save(out("npy", "unicode.npy"), np.array(["ab", "cd"]))
    write("npy/object.npy", npy_header("|O", "(2,)") + b"\0" * 16)  # never unpickled
    np.save(out("npy", "complex.npy"), np.ones((2, 4, 8), dtype=np.complex128))
    np.save(out("npy", "structured.npy"), np.zeros(3, dtype=[("a", "<f8"), ("b", "<i4")]))
    np.save(out("npy", "datetime.npy"), np.array(["2024-01-01"], dtype="datetime64[D]"))
    np.save(out("npy", "int32.npy"), np.ones((2, 4, 8), dtype=np.int32))
    np.save(out("npy", "bool_q.npy"), np.ones((2, 4, 8), dtype=bool))
    np.save(out("npy", "float16.npy"), np.ones((2, 4, 8), dtype=np.float16))
    # Empty arrays and wrong ranks / shapes.
    save("empty_rows.npy", np.zeros((2, 0, 8)))
    save("empty_last.npy", np.zeros((2, 4, 0)))
    save("scalar.npy", np.float64(1.5))
    save("rank1.npy", np.ones(8))
    save("k_other_d.npy", rng.standard_normal((2, 4, 5)))       # d 5 against q's 8
    save("v_other_len.npy", rng.standard_normal((2, 3, 8)))     # 3 keys against k's 4
    save("k_other_batch.npy", rng.standard_normal((3, 4, 8)))   # batch 3 against 2
    save("mask_bad_shape.npy", np.ones((3, 5), dtype=bool))     # scores are (4, 4)
    save("mask_int.npy", np.ones((4, 4), dtype=np.int64))
    m = np.zeros((4, 4))
    m[1, 2] = np.nan
    save("mask_nan.npy", m)
    m = np.zeros((4, 4))
    m[2, 1] = np.inf  # +inf in an additive mask: softmax would give inf − inf = NaN
    save("mask_posinf.npy", m)
    save("packed_q.npy", rng.standard_normal((1, 4, 8)))        # H·D = 8: not divisible by 3
    save("mha_w_in_bad.npy", rng.standard_normal((3 * d, d + 1)))
    save("lin_k_other.npy", rng.standard_normal((4, 5)))
    save("lin_v_rows.npy", rng.standard_normal((3, 8)))
    # Non-finite inputs.
    bad = q.copy()
    bad[1, 2, 3] = np.nan
    save("q_nan.npy", bad)
    bad = k.copy()
    bad[0, 0, 0] = np.inf
    save("k_inf.npy", bad)
    bad = v.copy()
    bad[0, 3, 7] = -np.inf
    save("v_neginf.npy", bad)
    bad = q[0].copy()
    bad[0, 0] = np.nan
    save("lin_q_nan.npy", bad)
    x = np.load(out("npy", "mha_x.npy"))
    x[0, 1, 2] = np.inf
    save("mha_x_inf.npy", x)
    save("f32_nan.npy", np.array([[1.0, np.nan], [0.0, 1.0]], dtype=np.float32))
    save("f32_ok.npy", np.array([[1.0, 2.0], [0.0, 1.0]], dtype=np.float32))
    # Finite float32 inputs whose scores overflow float32 (1e20 · 1e20 > 3.4e38): the output
    # would be NaN. And finite float64 ones whose φ(q)·φ(k) sums overflow in linear attention.
    save("f32_huge.npy", np.array([[1e20, 1e20], [-1e20, 1e20]], dtype=np.float32))
    save("lin_huge.npy", np.full((4, 8), 1e300))
    # ONNX LinearAttention's layout (B, T, H·D) = (1, 3, 2·2): finite float32 and float16 inputs
    # whose read q·S overflows the type (1e19³ > 3.4e38; 6e4³ > 65504), computed in float64.
    save("family_f32_huge.npy", np.full((1, 3, 4), 1e19, dtype=np.float32))
    save("family_f16_huge.npy", np.full((1, 3, 4), 6e4, dtype=np.float16))


SPEC_HEAD = "---\nlesson: linear-rnn\ntitle: A malformed spec\nsources:\n  - the bad-input corpus\n---\n\n"
CLAIM = ("```claim\nid: linear-rnn.causal\nkind: invariant\ntolerance: 0\ncompare: ==\n"
         "statement: Something checkable.\nsource: here\n```\n")
LISTING = "```listing\nid: linear-rnn.main\nfunction: vl::lessons::linear_rnn::listing_main\n"


def spec(name, text):
    write("specs/" + name, text.encode("utf-8") if isinstance(text, str) else text)


def make_specs():
    spec("empty.md", "")
    spec("no_front_matter.md", "# A lesson\n\n" + CLAIM)
    spec("front_matter_unclosed.md", "---\nlesson: linear-rnn\ntitle: x\n")
    spec("bad_lesson_id.md", SPEC_HEAD.replace("linear-rnn", "Linear RNN") + CLAIM)
    spec("unknown_front_key.md", SPEC_HEAD.replace("title:", "author: me\ntitle:") + CLAIM)
    spec("no_sources.md", "---\nlesson: linear-rnn\ntitle: x\n---\n" + CLAIM)
    spec("block_unclosed.md", SPEC_HEAD + CLAIM[:-4])
    spec("unknown_claim_kind.md", SPEC_HEAD + CLAIM.replace("invariant", "obvious"))
    spec("negative_tolerance.md", SPEC_HEAD + CLAIM.replace("tolerance: 0", "tolerance: -1e-9"))
    spec("tolerance_word.md", SPEC_HEAD + CLAIM.replace("tolerance: 0", "tolerance: small"))
    # The comparison is the spec's: missing with a number, unknown, or given with none.
    spec("compare_missing.md", SPEC_HEAD + CLAIM.replace("compare: ==\n", ""))
    spec("compare_unknown.md", SPEC_HEAD + CLAIM.replace("compare: ==", "compare: ~"))
    spec("compare_with_none.md", SPEC_HEAD + CLAIM.replace("tolerance: 0", "tolerance: none"))
    spec("duplicate_claim.md", SPEC_HEAD + CLAIM + CLAIM)
    spec("claim_of_other_lesson.md", SPEC_HEAD + CLAIM.replace("linear-rnn.causal", "masking.causal"))
    spec("claim_no_id.md", SPEC_HEAD + CLAIM.replace("id: linear-rnn.causal\n", ""))
    spec("unknown_field.md", SPEC_HEAD + CLAIM.replace("source: here", "author: me"))
    spec("no_claim.md", SPEC_HEAD + "Only prose.\n")
    # Fences a Markdown renderer shows as a claim but the engine would not read: refused.
    spec("tilde_claim.md", SPEC_HEAD + CLAIM + CLAIM.replace("```", "~~~").replace("causal", "tilde"))
    spec("indented_claim.md", SPEC_HEAD + CLAIM + "  " + CLAIM.replace("causal", "indented").replace("\n", "\n  ", 6))
    spec("unknown_subject.md", SPEC_HEAD + CLAIM.replace("kind: invariant", "kind: invariant\nsubject: ours"))
    spec("output_unknown_listing.md", SPEC_HEAD + CLAIM + "```output linear-rnn.nowhere\n1\n```\n")
    spec("rules_before_output.md", SPEC_HEAD + CLAIM + "```rules linear-rnn.main\nline 1: ws — why\n```\n")
    # Regressions (the spec fuzzer): an 'abs' that is not a number, and a rule's line number
    # beyond int, escaped as std::invalid_argument / std::out_of_range ("internal error");
    # and a 5000-character id overflowed the stack inside std::regex.
    spec("array_tolerance_word.md", SPEC_HEAD + CLAIM + LISTING +
         "array: O = linear-rnn/main.O.npy, abs tiny\n```\n")
    spec("rule_line_huge.md", SPEC_HEAD + CLAIM + LISTING + "```\n\n```output linear-rnn.main\n1\n```\n\n"
         "```rules linear-rnn.main\nline 99999999999999999999: ws — why\n```\n")
    spec("long_id.md", SPEC_HEAD + CLAIM.replace("linear-rnn.causal", "linear-rnn." + "c" * 5000))
    # An output line of 30000 digits crashed the audit (stack overflow in std::regex while
    # comparing numbers); documented lines are now at most 2000 characters.
    spec("long_output_line.md", SPEC_HEAD + CLAIM + LISTING + "```\n\n```output linear-rnn.main\n" + "1" * 2500 +
         "\n```\n")
    spec("binary.md", bytes(range(256)) * 4)


def varint(n):
    b = bytearray()
    while True:
        x = n & 0x7F
        n >>= 7
        b.append(x | (0x80 if n else 0))
        if not n:
            return bytes(b)


def field(number, wire, payload):
    tag = varint(number << 3 | wire)
    if wire == 2:
        return tag + varint(len(payload)) + payload
    return tag + payload


def make_onnx():
    # Truncated copies of ONNX's own files are not stored here: the test cuts them from the case
    # in ../shared/external at run time (verify/cli/test_bad_inputs.py, TRUNCATED).
    write("onnx/model_garbage.onnx", b"\xff" * 64)
    write("onnx/model_empty.onnx", b"")
    write("onnx/model_no_graph.onnx", field(1, 0, varint(8)))          # ir_version only
    write("onnx/model_group_wire.onnx", b"\x0b\x0c")                   # wire type 3 (groups)
    write("onnx/input_garbage.pb", bytes(range(7, 64)))
    # dims [2, 3], float, raw_data of 4 bytes (needs 24)
    write("onnx/input_short_raw.pb", field(1, 0, varint(2)) + field(1, 0, varint(3)) +
          field(2, 0, varint(1)) + field(9, 2, b"\0" * 4))
    write("onnx/input_string_type.pb", field(1, 0, varint(1)) + field(2, 0, varint(8)))
    write("onnx/input_negative_dim.pb", field(1, 0, varint(2**64 - 2)) + field(2, 0, varint(1)))
    write("onnx/input_external.pb", field(1, 0, varint(1)) + field(2, 0, varint(1)) + field(14, 0, varint(1)))
    # Regression (the ONNX fuzzer): dims [0, 2^56 - 1, 91, 6] hold no element, but the
    # tensor's strides overflowed in xtensor (UBSan: signed integer overflow).
    write("onnx/input_zero_and_huge_dims.pb", b"".join(field(1, 0, varint(d)) for d in (0, 2**56 - 1, 91, 6)) +
          field(2, 0, varint(1)))


if __name__ == "__main__":
    for sub in ("npy", "specs", "onnx"):
        shutil.rmtree(os.path.join(HERE, sub), ignore_errors=True)
    make_npy()
    make_specs()
    make_onnx()
    n = sum(len(files) for _, _, files in os.walk(HERE)) - 1
    print(f"wrote {n} files under {HERE}")
