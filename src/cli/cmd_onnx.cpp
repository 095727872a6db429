// lessons onnx DIR [--backend NAME | --candidate 'CMD']: run ONNX's Attention and LinearAttention
// backend cases through a backend (plain, our reference kernels, by default; fused: the kernels
// `lessons eval` runs) or anyone's implementation over vl-candidate/1, with the same PASS / FAIL /
// SKIP rules: a node the implementation cannot run is a SKIP with its reason, never a PASS.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/core.h>

#include "backends/candidate_backend.hpp"
#include "backends/candidate_signals.hpp"
#include "backends/shape_checked.hpp"
#include "cli/backend_option.hpp"
#include "cli/commands.hpp"
#include "core/errors.hpp"
#include "onnx/attention_case.hpp"

namespace vl::cli {

namespace {

void run_cases(const std::string& dir, bool verbose, const std::string& backend_name, const std::string& candidate, double timeout,
               bool backend_given) {
  if (!candidate.empty() && backend_given) throw InputError("--candidate and --backend: run one implementation at a time");
  std::shared_ptr<const backends::Backend> chosen = candidate.empty() ? backend_named(backend_name) : candidate_named(candidate, timeout);
  int passed = 0, failed = 0, skipped = 0;
  {
    // The backend's every result is shape-checked, as the audit's is. One line per case (-v: and
    // its details), then "N passed, N failed[, N skipped]"; a SKIP is never counted as passed.
    const backends::ShapeChecked checked(chosen);
    for (const auto& case_dir : onnx::find_cases(dir)) {
      const onnx::CaseResult r = onnx::run_case(case_dir, checked);
      fmt::print("{}\n", onnx::report_line(r));
      if (verbose)
        for (const std::string& line : onnx::report_details(r)) fmt::print("{}\n", line);
      std::fflush(stdout);
      passed += r.status == onnx::CaseStatus::passed;
      failed += r.status == onnx::CaseStatus::failed;
      skipped += r.status == onnx::CaseStatus::skipped;
    }
  }
  fmt::print("{} passed, {} failed{}\n", passed, failed, skipped ? fmt::format(", {} skipped", skipped) : "");
  if (const auto* c = dynamic_cast<const backends::CandidateBackend*>(chosen.get())) {
    const int requests = c->requests();
    chosen.reset();  // the last owner: stops the candidate, removes its folder
    fmt::print("-- candidate: {} requests sent; stopped\n", requests);
  }
  if (failed > 0) throw Exit{1};  // exit 1 if any failed
}

}  // namespace

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
  auto candidate = std::make_shared<std::string>();
  auto timeout = std::make_shared<double>(60);
  cmd->add_option("--candidate", *candidate,
                  "Run the cases through an external implementation: a command speaking vl-candidate/1 (docs/candidates.md), "
                  "e.g. 'node adapters/onnxruntime/adapter.js'; float32 cases go in float32, float16 ones in float16 to a "
                  "candidate that lists it");
  cmd->add_option("--candidate-timeout", *timeout, "Seconds the candidate may take per request")->capture_default_str();
  cmd->callback([dir, verbose, backend, candidate, timeout, cmd] {
    try {
      run_cases(*dir, *verbose, *backend, *candidate, *timeout, cmd->count("--backend") > 0);
    } catch (const backends::candidate_signals::Interrupted& i) {
      std::cerr << fmt::format("lessons onnx: interrupted by signal {}; the candidate was stopped\n", i.signal);
      backends::candidate_signals::die(i.signal);
    }
  });
}

}  // namespace vl::cli
