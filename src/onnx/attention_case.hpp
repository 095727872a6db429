#pragma once
// ONNX backend node tests of the Attention operator, run against our kernel (kernels/attention.hpp).
//
// A case is a folder in ONNX's layout:  <case>/model.onnx (one Attention node) and
// <case>/test_data_set_0/input_N.pb, output_N.pb (TensorProtos, N in the order of the graph's
// inputs/outputs; absent optional node inputs have no file). We load the inputs, run the kernel
// in their precision (float or double), and compare each output the node declares with ONNX's
// own rule: |actual − expected| ≤ atol + rtol·|expected|, rtol 1e-3, atol 1e-7.
#include <filesystem>
#include <string>
#include <vector>

#include "numeric/allclose.hpp"

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
  bool compared = false;
  std::string note;  ///< why it was not compared, or how it failed
  std::vector<std::size_t> shape;
  Closeness closeness;
};

struct CaseResult {
  std::string name;          ///< the case folder's name
  CaseStatus status = CaseStatus::skipped;
  std::string reason;        ///< why skipped, or the first failure
  double max_abs_error = 0;  ///< over the compared outputs
  std::vector<OutputResult> outputs;
};

/// The cases under `dir`: `dir` itself if it holds model.onnx, else its sub-folders that do,
/// sorted by name. InputError if `dir` does not exist or holds no case.
std::vector<std::filesystem::path> find_cases(const std::filesystem::path& dir);

/// Runs one case. Unsupported attributes, inputs or types give `skipped` with the reason;
/// unreadable files give `failed` with the error.
CaseResult run_case(const std::filesystem::path& case_dir, const Tolerance& tol = {});

/// The case's report line: "PASS name (max abs err 3.1e-08)", "FAIL name: output 0: ...",
/// "SKIP name: reason".
std::string report_line(const CaseResult& r);

}  // namespace vl::onnx
