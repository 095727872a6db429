// lessons audit: the conformance audit; lessons accept: the review step for generated goldens.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include <fmt/ranges.h>

#include "backends/candidate_backend.hpp"
#include "backends/candidate_signals.hpp"
#include "backends/registry.hpp"
#include "cli/backend_option.hpp"
#include "cli/commands.hpp"
#include "cli/report_output.hpp"
#include "core/errors.hpp"
#include "engine/audit.hpp"
#include "engine/golden_manifest.hpp"
#include "numeric/npy.hpp"

namespace vl::cli {

namespace {

std::filesystem::path resolve_root(const std::string& root) {
  if (root.empty()) return default_root();
  if (!std::filesystem::is_directory(root)) throw InputError(fmt::format("--root {}: not a directory", root));
  return std::filesystem::absolute(root);
}

struct AuditArgs {
  std::vector<std::string> select;
  std::string root, backend = "plain", candidate, shard;
  ReportFiles files;
  std::vector<std::string> dtypes;
  double candidate_timeout = 60;
  int cases = kDefaultCases;
  std::uint64_t seed = kDefaultSeed;
  bool update = false, computation_only = false;
};

void audit(const AuditArgs& args) {
  AuditOptions options;
  options.root = resolve_root(args.root);
  options.select = args.select;
  options.update = args.update;
  options.computation_only = args.computation_only;
  if (!args.shard.empty()) options.shard = shard_named(args.shard, "--shard");
  options.cases = args.cases;
  options.seed = args.seed;
  if (!args.dtypes.empty()) {
    options.precisions.clear();
    for (const auto& name : args.dtypes) {
      const auto p = precision_named(name);
      if (!p) throw InputError(fmt::format("--dtype {}: not a precision (float64, float32, bfloat16, float16)", name));
      if (std::find(options.precisions.begin(), options.precisions.end(), *p) == options.precisions.end()) options.precisions.push_back(*p);
    }
  }
  if (!args.candidate.empty()) {
    if (args.backend != "plain") throw InputError("--candidate and --backend: judge one implementation at a time");
    options.backend = candidate_named(args.candidate, args.candidate_timeout);
  } else {
    options.backend = backend_named(args.backend);
  }
  // No --dtype: every precision the judged implementation computes in (float64 first), so a
  // candidate whose hello lists no "dtypes" is judged in float64 alone, as it always was.
  if (args.dtypes.empty()) {
    options.precisions.clear();
    const auto has = options.backend->precisions();
    for (Precision p : kAllPrecisions)
      if (std::find(has.begin(), has.end(), p) != has.end()) options.precisions.push_back(p);
  }
  check_report_paths(args.files);  // before spending time on the audit
  const AuditReport report = run_audit(all_lessons(), options);
  print_summary(report, args.files);
  if (const auto* c = dynamic_cast<const backends::CandidateBackend*>(options.backend.get())) {
    const int requests = c->requests();
    options.backend.reset();  // the last owner: stops the candidate and removes its temporary folder
    fmt::print("-- candidate: {} requests sent; stopped\n", requests);
  }
  write_reports(report, args.files);
}

// Print how an accepted .npy golden differs from the one it replaces.
void print_npy_diff(const std::filesystem::path& old_file, const std::filesystem::path& new_file) {
  if (!std::filesystem::exists(old_file)) {
    fmt::print("  new golden (there was none)\n");
    return;
  }
  const auto a = npy::load_double(old_file), b = npy::load_double(new_file);
  if (a.shape() != b.shape()) {
    fmt::print("  shape ({}) -> ({})\n", fmt::join(a.shape(), ", "), fmt::join(b.shape(), ", "));
    return;
  }
  double worst = 0;
  std::size_t at = 0, changed = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(a.flat(i) - b.flat(i));
    changed += !(a.flat(i) == b.flat(i));
    if (d > worst || std::isnan(d)) { worst = d; at = i; }
  }
  fmt::print("  {} of {} values changed; max |old − new| = {:.3e} at flat index {} ({} -> {})\n", changed, a.size(), worst, at,
             a.flat(at), b.flat(at));
}

void accept(const std::string& listing, bool all, const std::string& root_arg) {
  if (const char* ci = std::getenv("CI"); ci && std::string(ci) == "true")
    throw InputError("accept: refused under CI (CI=true): goldens are reviewed by a person, never written by CI");
  if (listing.empty() == !all) throw InputError("accept: name one LISTING id (e.g. linear-rnn.main) or --all");
  const auto root = resolve_root(root_arg);
  GoldenManifest manifest(root);
  const std::string prefix = all ? "" : fmt::format("{}/{}.", listing.substr(0, listing.find('.')), listing_name(listing));
  const Provenance p = current_provenance(root);
  int accepted = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(manifest.dir())) {
    if (f.path().extension() != ".received") continue;
    const auto golden = f.path().parent_path() / f.path().stem();
    const std::string rel = std::filesystem::relative(golden, manifest.dir()).generic_string();
    if (!all && rel.rfind(prefix, 0) != 0) continue;
    if (manifest.is_documented(rel))
      throw InputError(fmt::format("accept: {} is a documented output copied from a lesson; it cannot be replaced by our output", rel));
    fmt::print("accepting {}\n", rel);
    if (golden.extension() == ".npy") print_npy_diff(golden, f.path());
    std::filesystem::rename(f.path(), golden);
    manifest.record_accepted(rel, fmt::format("lessons accept (reviewed), commit {}, {}, {}", p.commit, p.compiler, p.date));
    ++accepted;
  }
  manifest.save();
  fmt::print("{} golden(s) accepted; manifest updated: {}\n", accepted, (manifest.dir() / "manifest.json").string());
  if (accepted == 0) fmt::print("nothing to accept{} (run `lessons audit --update` first)\n", all ? "" : " for " + listing);
}

}  // namespace

void add_audit_command(CLI::App& app) {
  auto args = std::make_shared<AuditArgs>();
  auto* cmd = app.add_subcommand("audit", "Check every claim and documented output of the lessons");
  cmd->add_option("select", args->select, "Lesson, listing or claim ids to audit (default: all)");
  cmd->add_option("--root", args->root, "Checkout holding specs/ and reference_outputs/ (default: this repository)");
  cmd->add_option("--backend", args->backend, "The implementation to judge: every claim it can run (see lessons backends)")
      ->capture_default_str();
  cmd->add_option("--dtype", args->dtypes,
                  "Judge each claim about the computation in these precisions (float64, float32, bfloat16, float16; "
                  "default: every precision the backend computes in, see lessons backends): the backend computes in "
                  "each, with the spec's tolerance there (tolerance-float32: ...)");
  cmd->add_flag("--computation-only", args->computation_only,
                "Only what differs between implementations: the claims about the computation and the listings computed "
                "by backend operations (the claims about our own code run the same on any backend)");
  cmd->add_option("--candidate", args->candidate,
                  "Judge an external implementation: a command speaking vl-candidate/1 (docs/candidates.md), "
                  "e.g. 'python3 adapters/numpy_reference.py'");
  cmd->add_option("--candidate-timeout", args->candidate_timeout, "Seconds the candidate may take per request")->capture_default_str();
  cmd->add_option("--json", args->files.json, "Write the full results as JSON to this file");
  cmd->add_option("--junit", args->files.junit, "Write JUnit XML (one test case per claim and listing) to this file");
  cmd->add_option("--cases", args->cases,
                  "Drawn cases per check that draws them, after its anchor cases (their inputs drawn over the claim's terms; "
                  "a failing case is shrunk to the smallest that still fails); 0: the anchors alone; 1000 for a nightly-style run")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--seed", args->seed, "The generated cases' seed (the report prints it: rerun with it to replay a case)")
      ->capture_default_str();
  cmd->add_option("--shard", args->shard,
                  "Judge a deterministic 1/N of the items (each claim in each precision, each listing), K of N; "
                  "run K = 1 ... N on N machines and join their --json reports with lessons report merge");
  cmd->add_flag("--update", args->update, "Write <golden>.received beside each generated golden that differs");
  cmd->add_flag("-v,--verbose", args->files.verbose, "Show every check, control and line, not only failures");
  cmd->callback([args] {
    try {
      audit(*args);
    } catch (const backends::candidate_signals::Interrupted& i) {
      // audit() has unwound: the candidate is stopped and its folder gone. End as the signal would.
      std::cerr << fmt::format("lessons audit: interrupted by signal {}; the candidate was stopped\n", i.signal);
      backends::candidate_signals::die(i.signal);
    }
  });

  auto listing = std::make_shared<std::string>();
  auto all = std::make_shared<bool>(false);
  auto root = std::make_shared<std::string>();
  auto* acc = app.add_subcommand("accept", "Accept reviewed .received goldens (never documented outputs)");
  acc->add_option("listing", *listing, "Listing id, e.g. linear-rnn.main");
  acc->add_flag("--all", *all, "Accept every .received file");
  acc->add_option("--root", *root, "Checkout holding reference_outputs/");
  acc->callback([listing, all, root] { accept(*listing, *all, *root); });
}

}  // namespace vl::cli
