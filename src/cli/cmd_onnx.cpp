// lessons onnx DIR [--backend NAME]: run ONNX's Attention and LinearAttention backend cases through
// a backend (plain, our reference kernels, by default; fused: the kernels `lessons eval` runs).
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "backends/shape_checked.hpp"
#include "cli/backend_option.hpp"
#include "cli/commands.hpp"
#include "onnx/attention_case.hpp"

namespace vl::cli {

void add_onnx_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "onnx", "Run ONNX Attention and LinearAttention backend cases (model.onnx + test_data_set_0/) through a backend");
  auto dir = std::make_shared<std::string>();
  auto verbose = std::make_shared<bool>(false);
  auto backend = std::make_shared<std::string>("plain");
  cmd->add_option("DIR", *dir, "A folder of cases (e.g. ../shared/external/onnx-attention) or one case folder")
      ->required();
  cmd->add_flag("-v,--verbose", *verbose, "Per case: the precision computed in, and per output its errors and tolerance");
  cmd->add_option("--backend", *backend,
                  "The implementation that computes each node: plain (our reference kernels, the default) or fused; an "
                  "operation or option it lacks makes the case SKIP with the reason (see lessons backends)");
  cmd->callback([dir, verbose, backend] {
    // The backend's every result is shape-checked, as the audit's is.
    const backends::ShapeChecked checked(backend_named(*backend));
    // One line per case (-v: and its details), then "N passed, N failed[, N skipped]"; a
    // SKIP is never counted as passed; exit 1 if any failed.
    int passed = 0, failed = 0, skipped = 0;
    for (const auto& case_dir : onnx::find_cases(*dir)) {
      const onnx::CaseResult r = onnx::run_case(case_dir, checked);
      fmt::print("{}\n", onnx::report_line(r));
      if (*verbose)
        for (const std::string& line : onnx::report_details(r)) fmt::print("{}\n", line);
      std::fflush(stdout);
      passed += r.status == onnx::CaseStatus::passed;
      failed += r.status == onnx::CaseStatus::failed;
      skipped += r.status == onnx::CaseStatus::skipped;
    }
    fmt::print("{} passed, {} failed{}\n", passed, failed, skipped ? fmt::format(", {} skipped", skipped) : "");
    if (failed > 0) throw Exit{1};
  });
}

}  // namespace vl::cli
