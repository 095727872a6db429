#include <boost/test/unit_test.hpp>

// ONNX's own Attention backend cases (../shared/external/onnx-attention, 41 opset-23 cases,
// and ../shared/external/onnx-node-attention, 101 cases of opsets 23–27) run against our
// kernel; altered expectations that must fail; outputs we cannot compute that must SKIP, never
// PASS; and the protobuf reader on well-formed, truncated and corrupt bytes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "core/errors.hpp"
#include "onnx/attention_case.hpp"
#include "onnx/attention_node.hpp"
#include "onnx/model.hpp"
#include "onnx/protobuf_reader.hpp"
#include "onnx/tensor_proto.hpp"
#include "scratch_dir.hpp"

// This file's cases, one suite of its program (CMakeLists.txt: verify_<group>, ctest test_onnx_cases).
BOOST_AUTO_TEST_SUITE(test_onnx_cases)

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

namespace {

const fs::path kCases = fs::path(VL_SOURCE_DIR) / "../shared/external/onnx-attention";
constexpr std::size_t kExpectedCases = 41;
const fs::path kNodeCases = fs::path(VL_SOURCE_DIR) / "../shared/external/onnx-node-attention";

// `f()` throws vl::InputError whose message contains `what`.
template <class F>
void check_input_error(F f, const std::string& what) {
  try {
    f();
    BOOST_ERROR("no error; expected one saying '" << what << "'");
  } catch (const vl::InputError& e) {
    BOOST_TEST_MESSAGE(e.what());
    BOOST_TEST(std::string(e.what()).find(what) != std::string::npos, "'" << e.what() << "' says '" << what << "'");
  }
}

// A writable copy of an ONNX case in a scratch folder (the originals are read-only).
fs::path copy_case(const std::string& name, const fs::path& from = kCases) {
  const fs::path src = from / name;
  if (!fs::is_directory(src)) BOOST_FAIL("missing " << src.string());
  static const ScratchDir copies("vl_test_onnx_cases_");  // removed when the program ends
  const fs::path dir = copies.path / name;
  if (fs::exists(dir)) {
    for (const auto& e : fs::recursive_directory_iterator(dir)) fs::permissions(e.path(), fs::perms::owner_all, fs::perm_options::add);
    fs::remove_all(dir);
  }
  fs::create_directories(dir);
  fs::copy(src, dir, fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(dir)) fs::permissions(e.path(), fs::perms::owner_all, fs::perm_options::add);
  return dir;
}

// A TensorProto by hand: dims (2, 2), float, name "x", raw_data 1, 2, 3, 4.
Bytes small_tensor() {
  return {0x08, 0x02, 0x08, 0x02,  // field 1 (dims) varint 2, twice
          0x10, 0x01,              // field 2 (data_type) = 1 (float)
          0x42, 0x01, 'x',         // field 8 (name) "x"
          0x4a, 16,                // field 9 (raw_data), 16 bytes: 1.0f, 2.0f, 3.0f, 4.0f (LE)
          0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x40, 0x00, 0x00, 0x80, 0x40};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(backend_cases)

BOOST_AUTO_TEST_CASE(all_41_onnx_attention_cases_pass) {
  if (!fs::is_directory(kCases)) {
    BOOST_FAIL("the ONNX cases are missing: expected them in " << kCases.string()
                                                                << " (see DESIGN.md, External data)");
  }
  const auto cases = vl::onnx::find_cases(kCases);
  BOOST_TEST(cases.size() == kExpectedCases);
  std::size_t passed = 0;
  for (const fs::path& dir : cases) {
    const vl::onnx::CaseResult r = vl::onnx::run_case(dir, *vl::backends::plain());
    BOOST_TEST_MESSAGE(vl::onnx::report_line(r));
    BOOST_TEST_CONTEXT(vl::onnx::report_line(r)) { BOOST_TEST((r.status == vl::onnx::CaseStatus::passed)); }
    passed += r.status == vl::onnx::CaseStatus::passed;
  }
  BOOST_TEST(passed == kExpectedCases);
}

BOOST_AUTO_TEST_CASE(all_101_node_cases_pass) {
  // Every case passes with every expected output compared: the 87 Attention cases and the 14
  // LinearAttention cases (opset 27, our chunked linear-family kernel).
  if (!fs::is_directory(kNodeCases)) BOOST_FAIL("the ONNX node cases are missing: expected them in " << kNodeCases.string());
  const auto cases = vl::onnx::find_cases(kNodeCases);
  BOOST_TEST(cases.size() == 101u);
  std::size_t passed = 0, skipped = 0, outputs = 0;
  for (const fs::path& dir : cases) {
    const vl::onnx::CaseResult r = vl::onnx::run_case(dir, *vl::backends::plain());
    BOOST_TEST_MESSAGE(vl::onnx::report_line(r));
    const bool linear = dir.filename().string().rfind("test_linear_attention", 0) == 0;
    BOOST_TEST_CONTEXT(vl::onnx::report_line(r)) {
      BOOST_TEST((r.status == vl::onnx::CaseStatus::passed));
      BOOST_TEST(!r.outputs.empty());
      for (const auto& o : r.outputs) BOOST_TEST(o.compared, "output " << o.slot << " compared");
      if (linear) BOOST_TEST(r.outputs.size() == 2u);  // output and present_state
    }
    passed += r.status == vl::onnx::CaseStatus::passed;
    skipped += r.status == vl::onnx::CaseStatus::skipped;
    outputs += r.outputs.size();
  }
  BOOST_TEST(passed == 101u);
  BOOST_TEST(skipped == 0u);
  BOOST_TEST(outputs > 87u);  // the KV-cache and qk_matmul_output cases check more than Y
}

BOOST_AUTO_TEST_CASE(float16_cases_are_compared_as_float16) {
  // The float16 cases are computed (not skipped) and compared with the float16 tolerance
  // rtol = 2u, atol = 2u·max|expected|, u = 2^-11.
  for (const char* name : {"test_attention_4d_fp16", "test_attention_4d_gqa_with_past_and_present_fp16",
                           "test_attention_4d_gqa_causal_nonpad_decode_fp16", "test_attention_local_window_ext_cache_float16_mask",
                           "test_attention_24_qk_matmul_output_mode3_softmax_precision"}) {
    const auto r = vl::onnx::run_case(kNodeCases / name, *vl::backends::plain());
    BOOST_TEST_CONTEXT(vl::onnx::report_line(r)) {
      BOOST_TEST((r.status == vl::onnx::CaseStatus::passed));
      for (const auto& o : r.outputs) {
        BOOST_TEST(o.type == "float16");
        BOOST_TEST(o.rtol == std::ldexp(1.0, -10));
        BOOST_TEST(o.atol > 0.0);
        BOOST_TEST(o.atol <= std::ldexp(1.0, -10) * 65504);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(an_altered_qk_matmul_output_fails) {
  // test_attention_4d_with_qk_matmul (mode 0, raw scores) and _bias (mode 2, after the mask)
  // share their inputs and shapes: given the other mode's scores, each must FAIL on output 3.
  const fs::path raw = copy_case("test_attention_4d_with_qk_matmul", kNodeCases);
  fs::copy_file(kNodeCases / "test_attention_4d_with_qk_matmul_bias/test_data_set_0/output_1.pb", raw / "test_data_set_0/output_1.pb",
                fs::copy_options::overwrite_existing);
  const auto r = vl::onnx::run_case(raw, *vl::backends::plain());
  BOOST_TEST_MESSAGE(vl::onnx::report_line(r));
  BOOST_TEST((r.status == vl::onnx::CaseStatus::failed));
  BOOST_TEST(r.reason.find("output 3 (qk_matmul_output)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_altered_float16_output_fails) {
  // One element of the float16 Y flipped in its exponent (the last two bytes of raw_data).
  const fs::path dir = copy_case("test_attention_4d_fp16", kNodeCases);
  const fs::path out = dir / "test_data_set_0/output_0.pb";
  Bytes b = vl::onnx::read_bytes(out);
  b.back() ^= 0x40;
  std::ofstream(out, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  const auto r = vl::onnx::run_case(dir, *vl::backends::plain());
  BOOST_TEST_MESSAGE(vl::onnx::report_line(r));
  BOOST_TEST((r.status == vl::onnx::CaseStatus::failed));
  BOOST_TEST(r.reason.find("1 of 192 elements out of tolerance") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_output_we_cannot_compute_makes_the_case_skip) {
  // qk_matmul_output_mode 2 → 7 (no such mode) in the model: Y still matches, but the case
  // cannot compare qk_matmul_output, so it is SKIPPED with the reason, never PASSED.
  const fs::path dir = copy_case("test_attention_4d_with_qk_matmul_bias", kNodeCases);
  Bytes m = vl::onnx::read_bytes(dir / "model.onnx");
  const std::string name = "qk_matmul_output_mode";
  const auto at = std::search(m.begin(), m.end(), name.begin(), name.end());
  BOOST_TEST_REQUIRE((at != m.end()));
  bool patched = false;
  const std::size_t from = static_cast<std::size_t>(at - m.begin()) + name.size();
  for (std::size_t i = from; i + 1 < m.size() && i < from + 40; ++i) {
    if (m[i] == 0x18 && m[i + 1] == 0x02) {  // AttributeProto field 3 (i) = 2
      m[i + 1] = 0x07;
      patched = true;
      break;
    }
  }
  BOOST_TEST_REQUIRE(patched);
  std::ofstream(dir / "model.onnx", std::ios::binary).write(reinterpret_cast<const char*>(m.data()), static_cast<std::streamsize>(m.size()));
  const auto r = vl::onnx::run_case(dir, *vl::backends::plain());
  BOOST_TEST_MESSAGE(vl::onnx::report_line(r));
  BOOST_TEST((r.status == vl::onnx::CaseStatus::skipped));
  BOOST_TEST(r.reason.find("output 3 (qk_matmul_output) not computed: qk_matmul_output_mode 7") != std::string::npos);
  BOOST_TEST(vl::onnx::report_line(r).rfind("SKIP ", 0) == 0u);
}

BOOST_AUTO_TEST_CASE(inputs_onnx_refuses_are_input_errors) {
  // A cache together with nonpad_kv_seqlen, a length beyond the keys, a past of the wrong shape.
  auto tensor = [](std::vector<std::size_t> dims, vl::onnx::DataType type = vl::onnx::DataType::float32) {
    vl::onnx::Tensor t;
    t.data_type = type;
    t.dims = dims;
    std::size_t n = 1;
    for (auto d : dims) n *= d;
    t.values.assign(n, 0.5);
    return t;
  };
  const vl::onnx::Tensor q = tensor({1, 1, 2, 4}), k = tensor({1, 1, 2, 4}), past = tensor({1, 1, 3, 4}),
                         bad_past = tensor({1, 1, 3, 5});
  vl::onnx::Tensor lengths = tensor({1}, vl::onnx::DataType::int64);
  const vl::onnx::AttentionAttributes attr;
  using In = std::vector<const vl::onnx::Tensor*>;
  check_input_error([&] { vl::onnx::run_attention_node(In{&q, &k, &k, nullptr, &past, &past, &lengths}, attr, {0}, *vl::backends::plain()); },
                    "past_key/past_value and nonpad_kv_seqlen cannot be given together");
  check_input_error([&] { vl::onnx::run_attention_node(In{&q, &k, &k, nullptr, &bad_past, &past, nullptr}, attr, {0}, *vl::backends::plain()); },
                    "past_key has shape (1, 1, 3, 5)");
  lengths.values = {3};
  check_input_error([&] { vl::onnx::run_attention_node(In{&q, &k, &k, nullptr, nullptr, nullptr, &lengths}, attr, {0}, *vl::backends::plain()); },
                    "nonpad_kv_seqlen holds 3; each length must be an integer in [0, 2]");
  lengths.values = {1};
  BOOST_TEST(vl::onnx::run_attention_node(In{&q, &k, &k, nullptr, nullptr, nullptr, &lengths}, attr, {0}, *vl::backends::plain()).outputs.count(0) == 1u);
}

BOOST_AUTO_TEST_CASE(swapped_expectations_fail) {
  // Negative control: test_attention_4d and test_attention_4d_causal share their inputs. Given
  // the other case's expected output (what a kernel that ignored, or invented, the causal mask
  // would produce), each case must FAIL and say where.
  const fs::path plain = copy_case("test_attention_4d"), causal = copy_case("test_attention_4d_causal");
  fs::copy_file(kCases / "test_attention_4d/test_data_set_0/output_0.pb", causal / "test_data_set_0/output_0.pb",
                fs::copy_options::overwrite_existing);
  fs::copy_file(kCases / "test_attention_4d_causal/test_data_set_0/output_0.pb", plain / "test_data_set_0/output_0.pb",
                fs::copy_options::overwrite_existing);
  for (const fs::path& dir : {plain, causal}) {
    const auto r = vl::onnx::run_case(dir, *vl::backends::plain());
    BOOST_TEST_MESSAGE(vl::onnx::report_line(r));
    BOOST_TEST((r.status == vl::onnx::CaseStatus::failed));
    BOOST_TEST(vl::onnx::report_line(r).find("output 0 (Y): max abs err") != std::string::npos);
    BOOST_TEST(vl::onnx::report_line(r).find("at index (") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(a_zero_tolerance_reports_float_rounding) {
  // With rtol = atol = 0 only bit-exact output passes: the report names the worst element.
  const auto r = vl::onnx::run_case(kCases / "test_attention_4d_causal", *vl::backends::plain(), {.rtol = 0, .atol = 0});
  BOOST_TEST_MESSAGE(vl::onnx::report_line(r));
  if (r.status == vl::onnx::CaseStatus::failed) {
    BOOST_TEST(vl::onnx::report_line(r).find("(rtol 0, atol 0)") != std::string::npos);
  } else {
    BOOST_TEST(r.max_abs_error == 0.0);
  }
}

BOOST_AUTO_TEST_CASE(find_cases_errors) {
  check_input_error([] { vl::onnx::find_cases(kCases / "no_such_dir"); }, "no such directory");
  check_input_error([] { vl::onnx::find_cases(fs::path(VL_SOURCE_DIR) / "src"); }, "no ONNX test case");
  // A folder that is itself a case.
  BOOST_TEST(vl::onnx::find_cases(kCases / "test_attention_4d").size() == 1u);
}

BOOST_AUTO_TEST_CASE(model_of_a_case) {
  const vl::onnx::Model m = vl::onnx::load_model(kCases / "test_attention_4d_gqa_softcap/model.onnx");
  BOOST_TEST(m.onnx_opset().value_or(0) >= 23);
  BOOST_TEST_REQUIRE(m.graph.nodes.size() == 1u);
  const vl::onnx::Node& n = m.graph.nodes[0];
  BOOST_TEST(n.op_type == "Attention");
  BOOST_TEST(n.inputs.size() >= 3u);
  BOOST_TEST(n.inputs[0] == "Q");
  const vl::onnx::Attribute* softcap = n.attribute("softcap");
  BOOST_TEST_REQUIRE(softcap != nullptr);
  BOOST_TEST(softcap->f > 0.0f);
  BOOST_TEST(m.graph.inputs.size() == 3u);
  BOOST_TEST(m.graph.outputs.size() >= 1u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(protobuf)

BOOST_AUTO_TEST_CASE(varints_and_fixed) {
  const Bytes b = {0x96, 0x01,                          // varint 150
                   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,  // varint 2^64 − 1
                   0x00, 0x00, 0x80, 0x3f,              // fixed32 1.0f
                   0x03, 'a', 'b', 'c'};                // length-delimited "abc"
  vl::onnx::ProtobufReader r(b, "bytes");
  BOOST_TEST(r.varint() == 150u);
  BOOST_TEST(r.varint() == ~std::uint64_t{0});
  BOOST_TEST(r.float32() == 1.0f);
  BOOST_TEST(r.string() == "abc");
  BOOST_TEST(r.at_end());
}

BOOST_AUTO_TEST_CASE(packed_and_unpacked_repeated) {
  // field 1 packed: varints 1, 300; then field 1 unpacked: 5
  const Bytes b = {0x0a, 0x03, 0x01, 0xac, 0x02, 0x08, 0x05};
  vl::onnx::ProtobufReader r(b, "bytes");
  std::vector<std::int64_t> v;
  while (!r.at_end()) r.repeated_varint(r.next_field(), v);
  BOOST_TEST(v == (std::vector<std::int64_t>{1, 300, 5}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(tensor_proto_raw_and_typed_fields) {
  const vl::onnx::Tensor t = vl::onnx::parse_tensor(small_tensor(), "t.pb");
  BOOST_TEST(t.name == "x");
  BOOST_TEST(t.dims == (std::vector<std::size_t>{2, 2}), boost::test_tools::per_element());
  BOOST_TEST(t.values == (std::vector<double>{1, 2, 3, 4}), boost::test_tools::per_element());
  // int64_data (field 7, packed) and bool through int32_data (field 5, unpacked)
  const Bytes i64 = {0x08, 0x03, 0x10, 0x07, 0x3a, 0x03, 0x7f, 0x00, 0x02};
  BOOST_TEST(vl::onnx::parse_tensor(i64, "i.pb").values == (std::vector<double>{-1 + 0x80, 0, 2}),
             boost::test_tools::per_element());
  const Bytes b = {0x08, 0x02, 0x10, 0x09, 0x28, 0x01, 0x28, 0x00};
  const vl::onnx::Tensor tb = vl::onnx::parse_tensor(b, "b.pb");
  BOOST_TEST((tb.data_type == vl::onnx::DataType::boolean));
  BOOST_TEST(tb.values == (std::vector<double>{1, 0}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(every_truncation_is_an_error) {
  // Cutting a valid TensorProto anywhere inside a field must give an InputError, never a
  // crash or a silently shorter tensor.
  const Bytes full = small_tensor();
  for (std::size_t n = 1; n < full.size(); ++n) {
    BOOST_TEST_CONTEXT("cut at " << n) {
      const Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
      BOOST_CHECK_THROW(vl::onnx::parse_tensor(cut, "cut.pb"), vl::InputError);
    }
  }
}

BOOST_AUTO_TEST_CASE(corrupt_bytes) {
  check_input_error([] { vl::onnx::parse_tensor(Bytes{0x08}, "a.pb"); }, "a.pb: corrupt protobuf at byte 1: truncated varint");
  check_input_error([] { vl::onnx::parse_tensor(Bytes{0x4a, 0x7f, 0x00}, "b.pb"); }, "truncated length-delimited field");
  check_input_error([] { vl::onnx::parse_tensor(Bytes{0x0b}, "c.pb"); }, "unsupported wire type 3");
  check_input_error([] { vl::onnx::parse_tensor(Bytes{0x00}, "d.pb"); }, "invalid field number 0");
  check_input_error([] { vl::onnx::parse_tensor(Bytes(11, 0xff), "e.pb"); }, "varint longer than 10 bytes");
  check_input_error([] { vl::onnx::parse_tensor(Bytes{0x10, 0x08}, "f.pb"); }, "unsupported tensor data type 8 (string)");
  // dims (3) but raw_data of 2 floats
  check_input_error([] { vl::onnx::parse_tensor(Bytes{0x08, 0x03, 0x10, 0x01, 0x4a, 0x08, 0, 0, 0, 0, 0, 0, 0, 0}, "g.pb"); },
                    "raw_data has 8 bytes but dims [3] of float need 12");
  check_input_error([] { vl::onnx::parse_model(Bytes{0x08, 0x07}, "m.onnx"); }, "no graph");
  check_input_error([] { vl::onnx::load_tensor(kCases / "nope.pb"); }, "no such file");
}

BOOST_AUTO_TEST_CASE(a_truncated_case_file_fails_that_case) {
  // A copy of a case whose output file is cut short: the case FAILs with the file's name.
  const fs::path dir = copy_case("test_attention_4d");
  fs::resize_file(dir / "test_data_set_0" / "output_0.pb", 50);
  const auto r = vl::onnx::run_case(dir, *vl::backends::plain());
  BOOST_TEST_MESSAGE(vl::onnx::report_line(r));
  BOOST_TEST((r.status == vl::onnx::CaseStatus::failed));
  BOOST_TEST(r.reason.find("output_0.pb") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()  // test_onnx_cases
