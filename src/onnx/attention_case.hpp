#pragma once
// ONNX backend node tests of the Attention and LinearAttention operators, run through any backend
// (backends/backend.hpp: ours, plain by default, or anyone's): ONNX's rules for the node are
// applied once (onnx/attention_node.hpp, onnx/linear_attention_node.hpp), and the backend's
// attention or linear_family computes it.
//
// A case is a folder in ONNX's layout:  <case>/model.onnx (one Attention node) and
// <case>/test_data_set_0/input_N.pb, output_N.pb (TensorProtos, N in the order of the graph's
// inputs/outputs; absent optional node inputs have no file). We load the inputs, run the node
// as ONNX's reference computes it (onnx/attention_node.hpp says in which precision), and
// compare each output the case expects: |actual − expected| ≤ atol + rtol·|expected|.
//
// Tolerances. float and double outputs: ONNX's runner's, rtol 1e-3, atol 1e-7. float16
// outputs: derived from float16's unit round-off u = 2^-11 (|round(x) − x| ≤ u·|x|). We follow
// the reference's steps and round each stored value to float16 as it does, but evaluate each
// step in double rather than float32 (and with our exp, tanh and summation order), so a stored
// value can land one unit in the last place (ulp) from the reference's; one ulp of x is at
// most 2u·|x|. At the output y that is ≤ 2u·|y|; an ulp in an intermediate (a weight w_j)
// reaches y = Σ_j w_j v_j weighted by coefficients that sum to 1, so by at most 2u times the
// output's scale, which we take as max|expected|. Hence rtol = 2u ≈ 9.8e-4 and
// atol = 2u·max|expected| (specs/masking.md; `lessons onnx -v` prints both per output).
//
// A case PASSes only when every expected output was compared within its tolerance; an output
// we cannot compute makes the case SKIP (with the reason), never PASS.
#include <filesystem>
#include <string>
#include <vector>

#include "numeric/compare.hpp"

namespace vl::backends {
class Backend;
}

namespace vl::onnx {

struct Tolerance {
  double rtol = 1e-3;  ///< onnx/backend/test/runner: rtol 1e-3, atol 1e-7
  double atol = 1e-7;
};

enum class CaseStatus { passed, failed, skipped };

/// One output of the node: 0 Y, 1 present_key, 2 present_value, 3 qk_matmul_output.
struct OutputResult {
  std::size_t slot = 0;
  std::string name;
  std::string type;  ///< the expected tensor's type ("float", "float16", ...)
  bool compared = false;
  std::string note;  ///< why it was not compared, or how it failed
  std::vector<std::size_t> shape;
  double rtol = 0, atol = 0;  ///< the tolerance it was compared with
  Closeness closeness;
};

struct CaseResult {
  std::string name;          ///< the case folder's name
  CaseStatus status = CaseStatus::skipped;
  std::string reason;        ///< why skipped, or the first failure
  double max_abs_error = 0;  ///< over the compared outputs
  std::vector<OutputResult> outputs;
  std::string precision;     ///< how the node was computed
};

/// The cases under `dir`: `dir` itself if it holds model.onnx, else its sub-folders that do,
/// sorted by name. InputError if `dir` does not exist or holds no case.
std::vector<std::filesystem::path> find_cases(const std::filesystem::path& dir);

/// Runs one case through `backend`. Unsupported attributes, inputs or types, an operation or
/// option the backend lacks (the fused kernel forms no scores), or an expected output we cannot
/// compute, give `skipped` with the reason; unreadable files, inputs ONNX refuses and a backend
/// that fails give `failed` with the error. `tol` applies to float and double outputs (float16:
/// derived).
CaseResult run_case(const std::filesystem::path& case_dir, const backends::Backend& backend, const Tolerance& tol = {});

/// The case's report line: "PASS name (max abs err 3.1e-08)", "FAIL name: output 0: ...",
/// "SKIP name: reason".
std::string report_line(const CaseResult& r);

/// `lessons onnx -v`: the precision, then per output its type, shape, errors and tolerance.
std::vector<std::string> report_details(const CaseResult& r);

}  // namespace vl::onnx
