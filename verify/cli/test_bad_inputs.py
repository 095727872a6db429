"""Every entry of the bad-input corpus (verify/bad_inputs/, made by make_corpus.py) run through
the `lessons` command: each must be refused with a message naming the file or argument and what
is wrong, an exit status in 1..123 (never a signal), and no output file left behind (neither
the --out path nor a stray temporary in its folder).

Run by ctest with LESSONS=<binary> and VL_SOURCE_DIR=<checkout>; /usr/bin/python3. The table
CASES below is the test: one row per case. `audit` and `onnx` report a malformed spec or a
corrupt case in their report on stdout (exit 1, as verify/cli/test_audit_cli.py and
test_onnx_cli.py require); for those rows the message is looked for in stdout and stderr.
"""
import os
import re
import shutil
import stat
import subprocess
import tempfile
import unittest

LESSONS = os.environ.get("LESSONS")
SOURCE = os.environ.get("VL_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.path.join(SOURCE, "verify", "bad_inputs")
CASES_DIR = os.path.join(SOURCE, "..", "shared", "external", "onnx-attention")
ONNX_CASE = "test_attention_4d"


def N(name):
    return os.path.join(CORPUS, "npy", name)


GOOD = ["--q", N("good_q.npy"), "--k", N("good_k.npy"), "--v", N("good_v.npy")]
GOOD2D = ["--q", N("good_q2d.npy"), "--k", N("good_k2d.npy"), "--v", N("good_v2d.npy")]
MHA = ["--in-proj-weight", N("mha_w_in.npy"), "--in-proj-bias", N("mha_b_in.npy"),
       "--out-proj-weight", N("mha_w_out.npy"), "--out-proj-bias", N("mha_b_out.npy")]


def att(q="good_q.npy", k="good_k.npy", v="good_v.npy", *extra):
    return ["eval", "attention", "--q", N(q), "--k", N(k), "--v", N(v), "--out", "{out}", *extra]


def lin(q="good_q2d.npy", k="good_k2d.npy", v="good_v2d.npy", *extra, form="parallel"):
    return ["eval", "linear-attention", "--q", N(q), "--k", N(k), "--v", N(v), "--form", form,
            "--out", "{out}", *extra]


def mha(x="mha_x.npy", *extra):
    return ["eval", "mha", "--x", N(x), *MHA, "--heads", "2", "--out", "{out}", *extra]


# An unreadable or refused .npy as each command's input: (file, what the error says).
BAD_NPY = [
    ("empty_file.npy", r"bad magic|not a \.npy"),
    ("bad_magic.npy", r"bad magic"),
    ("text_file.npy", r"bad magic"),
    ("truncated_prefix.npy", r"truncated"),
    ("truncated_header.npy", r"truncated header"),
    ("truncated_data.npy", r"truncated data"),
    ("extra_data.npy", r"does not match the shape"),
    ("bad_version.npy", r"format version 9\.0"),
    ("header_len_huge.npy", r"truncated header"),
    ("malformed_header.npy", r"malformed header"),
    ("unclosed_header.npy", r"malformed header"),
    ("negative_dim.npy", r"malformed header.*shape"),
    ("shape_mismatch_count.npy", r"does not match the shape"),
    ("descr_huge_itemsize.npy", r"unsupported dtype"),
    ("zero_and_huge_dims.npy", r"too large"),
    ("unicode.npy", r"unsupported dtype.*strings"),
    ("object.npy", r"unsupported dtype.*objects"),
    ("complex.npy", r"unsupported dtype.*complex"),
    ("structured.npy", r"unsupported dtype.*structured"),
    ("datetime.npy", r"unsupported dtype.*dates"),
]

# (name, argv with {out} {out2} {tmp} {ro} {file} placeholders, regex the message must match,
#  must the message name a corpus file, report verb?)
CASES = []


def case(name, argv, pattern, names=None, report=False):
    CASES.append((name, argv, pattern, names, report))


for f, why in BAD_NPY:
    stem = f[:-4]
    case(f"attention_q_{stem}", att(q=f), why, f)
    case(f"attention_k_{stem}", att(k=f), why, f)
    case(f"compare_{stem}", ["compare", N(f), N("good_q.npy")], why, f)
case("linear_v_truncated", lin(v="truncated_data.npy"), "truncated data", "truncated_data.npy")
case("mha_x_bad_magic", mha("bad_magic.npy"), "bad magic", "bad_magic.npy")
case("mha_weight_unicode", ["eval", "mha", "--x", N("mha_x.npy"), "--in-proj-weight", N("unicode.npy"),
                            *MHA[2:], "--heads", "2", "--out", "{out}"], "strings", "unicode.npy")

# Wrong dtypes, empty arrays, ranks and shapes.
case("attention_q_int32", att(q="int32.npy"), r"--q .*dtype int32 is not supported", "int32.npy")
case("attention_q_bool", att(q="bool_q.npy"), r"--q .*dtype bool is not supported", "bool_q.npy")
# float16 is computed by eval attention (as ONNX's reference does) but not mixed with float64,
# and not by mha
case("attention_k_float16_with_float64_q", att(k="float16.npy"), r"--k .*dtype float16, but the inputs are float64", "float16.npy")
case("mha_x_float16", mha("float16.npy"), r"--x .*dtype float16 is not supported", "float16.npy")
case("attention_k_other_precision", att(k="good_k_f32.npy"), r"--k .*dtype float32, but the inputs are float64",
     "good_k_f32.npy")
case("attention_q_empty_rows", att(q="empty_rows.npy"), r"--q .*dimension 1 is empty", "empty_rows.npy")
case("attention_k_empty_last", att(k="empty_last.npy"), r"--k .*dimension 2 is empty", "empty_last.npy")
case("attention_q_scalar", att(q="scalar.npy"), r"--q .*0 dimensions, at least 2", "scalar.npy")
case("attention_q_rank1", att(q="rank1.npy"), r"--q .*1 dimensions, at least 2", "rank1.npy")
case("attention_k_other_d", att(k="k_other_d.npy"), r"eval attention: .*(dim|shape|D)")
case("attention_v_other_len", att(v="v_other_len.npy"), r"eval attention: .*(key|length|shape|S)")
case("attention_k_other_batch", att(k="k_other_batch.npy"), r"--k: leading \(batch\) shape")
case("attention_mask_shape", att("good_q.npy", "good_k.npy", "good_v.npy", "--mask", N("mask_bad_shape.npy")),
     r"--mask .*does not broadcast", "mask_bad_shape.npy")
case("attention_mask_int", att("good_q.npy", "good_k.npy", "good_v.npy", "--mask", N("mask_int.npy")),
     r"--mask .*dtype int64", "mask_int.npy")
case("attention_mask_nan", att("good_q.npy", "good_k.npy", "good_v.npy", "--mask", N("mask_nan.npy")),
     r"--mask .*NaN", "mask_nan.npy")
case("attention_mask_posinf", att("good_q.npy", "good_k.npy", "good_v.npy", "--mask", N("mask_posinf.npy")),
     r"--mask .*\+inf", "mask_posinf.npy")
case("attention_packed_heads_not_divisible",
     ["eval", "attention", "--q", N("packed_q.npy"), "--k", N("packed_q.npy"), "--v", N("packed_q.npy"),
      "--q-heads", "3", "--kv-heads", "3", "--out", "{out}"], r"not divisible by 3 heads", "packed_q.npy")
case("attention_q_heads_negative", att("good_q.npy", "good_k.npy", "good_v.npy", "--q-heads", "-2", "--kv-heads", "1"),
     r"--q-heads")
case("attention_q_heads_alone", att("good_q.npy", "good_k.npy", "good_v.npy", "--q-heads", "2"),
     r"--q-heads and --kv-heads")
case("attention_softcap_negative", att("good_q.npy", "good_k.npy", "good_v.npy", "--softcap", "-1"), r"--softcap")
case("attention_scale_word", att("good_q.npy", "good_k.npy", "good_v.npy", "--scale", "big"), r"--scale")
case("attention_scale_nan", att("good_q.npy", "good_k.npy", "good_v.npy", "--scale", "nan"), r"--scale")
case("attention_scale_inf", att("good_q.npy", "good_k.npy", "good_v.npy", "--scale", "inf"), r"--scale")
case("mha_heads_not_dividing", ["eval", "mha", "--x", N("mha_x.npy"), *MHA, "--heads", "4", "--out", "{out}"],
     r"--heads 4: d_model 6 is not divisible")
case("mha_heads_zero", ["eval", "mha", "--x", N("mha_x.npy"), *MHA, "--heads", "0", "--out", "{out}"],
     r"--heads 0")
case("mha_heads_negative", ["eval", "mha", "--x", N("mha_x.npy"), *MHA, "--heads", "-2", "--out", "{out}"],
     r"--heads")
case("mha_weight_shape", ["eval", "mha", "--x", N("mha_x.npy"), "--in-proj-weight", N("mha_w_in_bad.npy"),
                          *MHA[2:], "--heads", "2", "--out", "{out}"],
     r"--in-proj-weight .*shape \(18, 7\), expected \(18, 6\)", "mha_w_in_bad.npy")
case("mha_x_int", mha("int32.npy"), r"--x .*dtype int32", "int32.npy")
case("linear_chunk_zero", lin("good_q2d.npy", "good_k2d.npy", "good_v2d.npy", "--chunk", "0", form="chunked"),
     r"--chunk")
case("linear_chunk_negative", lin("good_q2d.npy", "good_k2d.npy", "good_v2d.npy", "--chunk", "-3", form="chunked"),
     r"--chunk")
case("linear_chunk_missing", lin(form="chunked"), r"--chunk")
case("linear_form_unknown", lin(form="magic"), r"--form")
case("linear_k_other", lin(k="lin_k_other.npy"), r"--k .*shape \(4, 5\) differs", "lin_k_other.npy")
case("linear_v_rows", lin(v="lin_v_rows.npy"), r"--v .*3 rows", "lin_v_rows.npy")
case("linear_q_3d", lin(q="good_q.npy", k="good_k.npy", v="good_v.npy"), r"--q .*expected \(n, d\)", "good_q.npy")
case("compare_shape_mismatch", ["compare", N("good_q.npy"), N("good_q2d.npy")], r"cannot compare", "good_q2d.npy")
case("compare_rtol_negative", ["compare", N("good_q.npy"), N("good_q.npy"), "--rtol", "-1"], r"--rtol")

# NaN and Inf inputs: refused by eval, never propagated silently.
case("attention_q_nan", att(q="q_nan.npy"), r"--q .*flat index 51 is nan", "q_nan.npy")
case("attention_k_inf", att(k="k_inf.npy"), r"--k .*flat index 0 is inf", "k_inf.npy")
case("attention_v_neginf", att(v="v_neginf.npy"), r"--v .*is -inf", "v_neginf.npy")
case("attention_f32_nan", ["eval", "attention", "--q", N("f32_nan.npy"), "--k", N("f32_ok.npy"),
                           "--v", N("f32_ok.npy"), "--out", "{out}"], r"--q .*is nan", "f32_nan.npy")
case("attention_f32_scores_overflow", ["eval", "attention", "--q", N("f32_huge.npy"), "--k", N("f32_huge.npy"),
                                      "--v", N("f32_ok.npy"), "--out", "{out}"],
     r"f32_huge\.npy: the scores may overflow float32")
case("attention_scale_overflow", att("good_q.npy", "good_k.npy", "good_v.npy", "--scale", "1e308"),
     r"the scores may overflow float64")
case("linear_sums_overflow", lin(q="lin_huge.npy", k="lin_huge.npy"), r"the output for .* holds -?(nan|inf) .*overflow float64")
for dtype in ("f32", "f16"):
    family = ["eval", "linear-attention", "--update-rule", "linear", *(x for o in ("--q", "--k", "--v")
              for x in (o, N(f"family_{dtype}_huge.npy"))), "--q-heads", "2", "--kv-heads", "2", "--form", "chunked",
              "--out", "{out}", "--present-state", "{out2}"]
    case(f"linear_family_{dtype}_overflow", family,
         r"the output for .* holds inf at flat index 0: the inputs overflow " + {"f32": "float32", "f16": "float16"}[dtype])
case("linear_q_nan", lin(q="lin_q_nan.npy"), r"--q .*is nan", "lin_q_nan.npy")
case("mha_x_inf", mha("mha_x_inf.npy"), r"--x .*is inf", "mha_x_inf.npy")

# Missing paths and unwritable outputs. {ro}: a folder nobody may write into; {file}: a regular
# file used as a folder.
for verb, argv in [("attention", att()), ("linear", lin()), ("mha", mha())]:
    case(f"{verb}_out_missing_folder", [a if a != "{out}" else "{tmp}/no/such/dir/o.npy" for a in argv],
         r"--out .*does not exist")
    case(f"{verb}_out_in_regular_file", [a if a != "{out}" else "{file}/o.npy" for a in argv], r"--out .*o\.npy")
    case(f"{verb}_out_read_only", [a if a != "{out}" else "{ro}/o.npy" for a in argv], r"o\.npy.*cannot write")
    case(f"{verb}_out_is_folder", [a if a != "{out}" else "{tmp}" for a in argv], r"--out .*is a folder")
case("attention_q_missing", att(q="no_such.npy"), r"no_such\.npy: no such file")
case("attention_q_is_folder", ["eval", "attention", "--q", CORPUS, "--k", N("good_k.npy"), "--v", N("good_v.npy"),
                               "--out", "{out}"], r"bad_inputs: is a directory")
case("attention_weights_read_only", att("good_q.npy", "good_k.npy", "good_v.npy", "--weights", "{ro}/w.npy"),
     r"w\.npy.*cannot write")
case("attention_weights_in_regular_file", att("good_q.npy", "good_k.npy", "good_v.npy", "--weights", "{file}/w.npy"),
     r"--weights .*w\.npy")
case("mha_weights_read_only", mha("mha_x.npy", "--weights", "{ro}/w.npy"), r"w\.npy.*cannot write")
case("compare_missing", ["compare", N("good_q.npy"), "{tmp}/absent.npy"], r"absent\.npy: no such file")
case("rng_numpy_out_read_only", ["rng", "numpy", "normal", "--seed", "1", "--shape", "2,3", "--out", "{ro}/o.npy"],
     r"--out: .*o\.npy.*cannot write")
case("rng_numpy_out_in_regular_file", ["rng", "numpy", "normal", "--seed", "1", "--shape", "2,3",
                                       "--out", "{file}/o.npy"], r"o\.npy")
case("rng_torch_out_read_only", ["rng", "torch", "normal", "--seed", "1", "--shape", "2,3", "--out", "{ro}/o.npy"],
     r"o\.npy.*cannot write")
case("rng_torch_mha_out_dir_in_file", ["rng", "torch", "mha-init", "--seed", "1", "--embed-dim", "4", "--heads", "2",
                                       "--out-dir", "{file}/d"], r"--out-dir")
case("rng_torch_mha_out_dir_read_only", ["rng", "torch", "mha-init", "--seed", "1", "--embed-dim", "4",
                                         "--heads", "2", "--out-dir", "{ro}"], r"in_proj_weight\.npy.*cannot write")
case("audit_json_missing_folder", ["audit", "linear-rnn.causal", "--json", "{tmp}/no/such/a.json"],
     r"a\.json: its folder does not exist")
case("audit_json_in_regular_file", ["audit", "linear-rnn.causal", "--json", "{file}/a.json"], r"a\.json")
case("audit_junit_read_only", ["audit", "linear-rnn.causal", "--junit", "{ro}/a.xml"], r"a\.xml")
case("audit_json_is_folder", ["audit", "linear-rnn.causal", "--json", "{tmp}"], r"out: cannot write: Is a directory")
case("audit_root_missing", ["audit", "--root", "{tmp}/nowhere"], r"--root .*nowhere: not a directory")
case("audit_root_is_file", ["audit", "--root", "{file}"], r"--root .*good_q\.npy: not a directory")
case("list_root_missing", ["list", "--root", "{tmp}/nowhere"], r"nowhere")

# Unknown lessons, listings and claim ids.
case("run_unknown_lesson", ["run", "no-such-lesson"], r"unknown lesson 'no-such-lesson'")
case("run_unknown_listing", ["run", "linear-rnn/nowhere"], r"no listing 'nowhere'")
case("audit_unknown_claim", ["audit", "linear-rnn.no-such-claim"], r"linear-rnn\.no-such-claim")
case("audit_unknown_lesson", ["audit", "no-such-lesson"], r"no-such-lesson")
case("accept_nothing_named", ["accept"], r"accept: name one LISTING")
case("unknown_verb", ["frobnicate"], r"unknown verb 'frobnicate' \(known: list, run, audit")
case("eval_unknown_kernel", ["eval", "softmax", "--q", "x"], r"lessons eval: unknown verb 'softmax' \(known: attention")

# Bad seeds and shapes for rng (the rng tests check the rest of the arguments).
for gen, big in [("numpy", str(2**128)), ("torch", str(2**64))]:
    base = ["rng", gen, "normal", "--out", "{out}"]
    case(f"rng_{gen}_seed_negative", base + ["--seed", "-1", "--shape", "2"], r"--seed")
    case(f"rng_{gen}_seed_word", base + ["--seed", "abc", "--shape", "2"], r"--seed")
    case(f"rng_{gen}_seed_too_big", base + ["--seed", big, "--shape", "2"], r"--seed")
    case(f"rng_{gen}_shape_words", base + ["--seed", "1", "--shape", "a,b"], r"--shape")
    case(f"rng_{gen}_shape_empty_dim", base + ["--seed", "1", "--shape", "2,,3"], r"--shape")
    case(f"rng_{gen}_shape_huge", base + ["--seed", "1", "--shape", "100000,100000,100000"], r"--shape")
    case(f"rng_{gen}_shape_overflow", base + ["--seed", "1", "--shape", "99999999999999999999999"], r"--shape")
    case(f"rng_{gen}_dtype", base + ["--seed", "1", "--shape", "2", "--dtype", "float16"], r"--dtype")
case("rng_numpy_shape_zero", ["rng", "numpy", "normal", "--seed", "1", "--shape", "0", "--out", "{out}"], r"--shape")
case("rng_torch_low_above_high", ["rng", "torch", "uniform", "--seed", "1", "--shape", "2", "--low", "2",
                                  "--high", "1", "--out", "{out}"], r"--low 2 is greater than --high 1")
case("rng_torch_mha_heads_not_dividing", ["rng", "torch", "mha-init", "--seed", "1", "--embed-dim", "6",
                                          "--heads", "4", "--out-dir", "{tmp}/mha"], r"not divisible by --heads 4")

# Malformed specs: each replaces specs/linear_rnn.md in a temporary copy of the checkout.
SPEC_CASES = {
    "empty.md": r"front matter",
    "no_front_matter.md": r"a spec starts with front matter",
    "front_matter_unclosed.md": r"front matter is not closed",
    "bad_lesson_id.md": r"lesson id 'Linear RNN' is not lower-case",
    "unknown_front_key.md": r"unknown front matter key 'author'",
    "no_sources.md": r"no 'sources:'",
    "block_unclosed.md": r"is not closed by a line",
    "unknown_claim_kind.md": r"unknown claim kind 'obvious'",
    "negative_tolerance.md": r"tolerance '-1e-9' is not a non-negative number",
    "tolerance_word.md": r"tolerance 'small' is not a non-negative number",
    "compare_missing.md": r"claim 'linear-rnn\.causal' has a tolerance but no 'compare:'",
    "compare_unknown.md": r"unknown comparison '~' \(known: <=, <, >=, >, ==\)",
    "compare_with_none.md": r"has 'tolerance: none' and a 'compare:'",
    "duplicate_claim.md": r"duplicate claim id 'linear-rnn\.causal'",
    "claim_of_other_lesson.md": r"does not start with the lesson id",
    "claim_no_id.md": r"claim block has no 'id:'",
    "unknown_field.md": r"unknown field 'author'",
    "no_claim.md": r"the spec states no claim",
    "tilde_claim.md": r"'~~~claim': the engine reads only fences of three backticks",
    "indented_claim.md": r"fence '```claim' is indented by 2 space",
    "unknown_subject.md": r"unknown claim subject 'ours'",
    "output_unknown_listing.md": r"output block for unknown listing 'linear-rnn\.nowhere'",
    "rules_before_output.md": r"rules block for 'linear-rnn\.main' comes before",
    "array_tolerance_word.md": r"tolerance 'tiny' is not a non-negative number",
    "rule_line_huge.md": r"index is too large",
    "long_id.md": r"id is 5011 characters long",
    "long_output_line.md": r"output line is 2500 characters long",
    "binary.md": r"front matter",
}
for f, why in SPEC_CASES.items():
    case(f"spec_{f[:-3]}", ["audit", "linear-rnn", "--root", "{root}"],
         r"linear_rnn\.md:\d+: .*" + why, None, report=True)
    case(f"spec_list_{f[:-3]}", ["list", "--root", "{root}"], r"linear_rnn\.md:\d+: .*" + why)

# Corrupt ONNX files: each replaces one file of a copy of a real case.
ONNX_CASES = {
    "model_garbage.onnx": ("model.onnx", r"model\.onnx: corrupt protobuf at byte \d+"),
    "model_truncated.onnx": ("model.onnx", r"model\.onnx: corrupt protobuf at byte \d+: truncated"),
    "model_empty.onnx": ("model.onnx", r"model\.onnx: .*no graph"),
    "model_no_graph.onnx": ("model.onnx", r"model\.onnx: .*no graph"),
    "model_group_wire.onnx": ("model.onnx", r"model\.onnx: corrupt protobuf .*wire type 3"),
    "input_truncated.pb": ("test_data_set_0/input_0.pb", r"input_0\.pb: corrupt protobuf .*truncated"),
    "input_garbage.pb": ("test_data_set_0/input_0.pb", r"input_0\.pb: "),
    "input_short_raw.pb": ("test_data_set_0/input_0.pb", r"input_0\.pb: raw_data has 4 bytes"),
    "input_string_type.pb": ("test_data_set_0/input_0.pb", r"input_0\.pb: unsupported tensor data type 8"),
    "input_negative_dim.pb": ("test_data_set_0/input_0.pb", r"input_0\.pb: negative dimension"),
    "input_external.pb": ("test_data_set_0/input_0.pb", r"input_0\.pb: tensor data stored externally"),
    "input_zero_and_huge_dims.pb": ("test_data_set_0/input_0.pb", r"input_0\.pb: dims too large"),
}
# These two are the real case's own file cut short, made at run time from ../shared (ONNX's
# data is read from there, never copied into the repository): name -> bytes kept.
TRUNCATED = {
    "model_truncated.onnx": lambda data: data[:30],
    "input_truncated.pb": lambda data: data[: len(data) // 2],
}
for f, (target, why) in ONNX_CASES.items():
    case(f"onnx_{f.replace('.', '_')}", ["onnx", "{case}"], why, None, report=True)


def read_only_dir(tmp):
    """A folder this process cannot create files in: a chmod 555 folder, or (as root, who
    ignores permissions) a folder of sysfs."""
    d = os.path.join(tmp, "ro")
    os.mkdir(d)
    os.chmod(d, stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    try:
        with open(os.path.join(d, "probe"), "wb"):
            pass
        os.remove(os.path.join(d, "probe"))
    except OSError:
        return d
    return "/sys"


@unittest.skipUnless(LESSONS, "set LESSONS to the lessons binary (ctest does)")
class BadInputs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = tempfile.mkdtemp(prefix="vl_bad_")
        # A checkout copy per malformed spec is made lazily; one shared pristine copy to copy from.
        cls.pristine = os.path.join(cls.base, "pristine")
        os.mkdir(cls.pristine)
        shutil.copytree(os.path.join(SOURCE, "specs"), os.path.join(cls.pristine, "specs"))
        shutil.copytree(os.path.join(SOURCE, "reference_outputs"), os.path.join(cls.pristine, "reference_outputs"))

    @classmethod
    def tearDownClass(cls):
        for root, dirs, _ in os.walk(cls.base):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
        shutil.rmtree(cls.base, ignore_errors=True)

    def run_case(self, name, argv, pattern, names, report):
        tmp = tempfile.mkdtemp(dir=self.base)
        outdir = os.path.join(tmp, "out")
        os.mkdir(outdir)
        ro = read_only_dir(tmp)
        subs = {"{out}": os.path.join(outdir, "o.npy"), "{out2}": os.path.join(outdir, "w.npy"), "{tmp}": outdir,
                "{ro}": ro, "{file}": N("good_q.npy")}
        if name.startswith("spec_"):
            root = os.path.join(tmp, "root")
            shutil.copytree(self.pristine, root)
            spec = [f for f in SPEC_CASES if name in (f"spec_{f[:-3]}", f"spec_list_{f[:-3]}")][0]
            shutil.copyfile(os.path.join(CORPUS, "specs", spec), os.path.join(root, "specs", "linear_rnn.md"))
            subs["{root}"] = root
        if name.startswith("onnx_"):
            f = [f for f in ONNX_CASES if name == f"onnx_{f.replace('.', '_')}"][0]
            case_dir = os.path.join(tmp, ONNX_CASE)
            shutil.copytree(os.path.join(CASES_DIR, ONNX_CASE), case_dir)
            target = os.path.join(case_dir, ONNX_CASES[f][0])
            if f in TRUNCATED:
                with open(target, "rb") as src:
                    data = src.read()
                with open(target, "wb") as dst:
                    dst.write(TRUNCATED[f](data))
            else:
                shutil.copyfile(os.path.join(CORPUS, "onnx", f), target)
            subs["{case}"] = case_dir
        args = []
        for a in argv:
            for k, v in subs.items():
                a = a.replace(k, v)
            args.append(a)
        ro_before = set(os.listdir(ro)) if os.path.isdir(ro) else set()
        r = subprocess.run([LESSONS, *args], capture_output=True, text=True, errors="replace", timeout=600,
                           env={k: v for k, v in os.environ.items() if k != "CI"})
        what = f"{name}: lessons {' '.join(args)}\nexit {r.returncode}\nstdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-2000:]}"
        self.assertGreaterEqual(r.returncode, 0, "killed by a signal: " + what)
        self.assertTrue(1 <= r.returncode <= 123, "exit status not in 1..123: " + what)
        message = (r.stdout + r.stderr) if report else r.stderr
        self.assertTrue(r.stderr.strip() or report, "nothing on stderr: " + what)
        self.assertNotIn("internal error", r.stderr, what)
        self.assertRegex(message, re.compile(pattern, re.S), what)
        if names:
            self.assertIn(names, message, "the message does not name the file: " + what)
        self.assertEqual(os.listdir(outdir), [], "output or temporary left behind: " + what)
        if os.path.isdir(ro):
            self.assertEqual(set(os.listdir(ro)), ro_before, "file left in the read-only folder: " + what)

    def test_every_case(self):
        for name, argv, pattern, names, report in CASES:
            with self.subTest(name):
                self.run_case(name, argv, pattern, names, report)

    def test_every_corpus_file_is_used(self):
        used = set()
        for _, argv, _, names, _ in CASES:
            used.update(os.path.basename(a) for a in argv)
        used.update(SPEC_CASES)
        used.update(ONNX_CASES)
        on_disk = {f for sub in ("npy", "specs", "onnx") for f in os.listdir(os.path.join(CORPUS, sub))}
        self.assertEqual(sorted(on_disk - used), [], "corpus files no case runs")

    def test_corpus_is_small(self):
        total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(CORPUS) for f in fs)
        self.assertLess(total, 256 * 1024)


if __name__ == "__main__":
    unittest.main()
