#pragma once
// The audit: every selected lesson's spec against its code and goldens.
//
//   spec parses           → claims, listings, documented outputs, rules (file:line errors)
//   traceability          → every claim has a check, every check names a claim, every check
//                           has a negative control; spec listings and code listings match
//   claims                → each check run on the audited backend (must pass; a claim whose
//                           operation the backend lacks, or about our own code on a backend not
//                           ours, is not applicable) and on each of its broken variants (must be
//                           rejected; one that passes = vacuous check)
//   listings              → produced lines vs documented lines under the rules; produced arrays
//                           vs numeric goldens from the independent reference
//   goldens               → every file under reference_outputs/ matches its manifest sha256
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/comparison_rule.hpp"
#include "engine/lesson.hpp"
#include "engine/spec.hpp"

namespace vl {

/// A deterministic 1/N of the audit's items (`lessons audit --shard K/N`), the way test runners
/// shard (Playwright's and Jest's --shard): the selected items (each claim in each precision, each
/// listing), numbered in the audit's own order from 0, go round-robin, item i to shard i mod N + 1.
/// N runs on N machines, joined by `lessons report merge`, judge exactly what one run judges.
struct Shard {
  int index = 1;  // K, 1-based
  int count = 1;  // N; 1: the whole audit
  bool takes(int item) const { return item % count == index - 1; }
  std::string str() const;  // "K/N"
};
/// "K/N" with 1 ≤ K ≤ N; throws vl::InputError naming `what` (the argument) otherwise.
Shard shard_named(const std::string& text, const std::string& what);

struct AuditOptions {
  std::filesystem::path root;          // holds specs/ and reference_outputs/
  std::shared_ptr<const backends::Backend> backend;  // the implementation judged; null = plain
  std::vector<std::string> select;     // lesson, listing or claim ids; empty = everything
  bool update = false;                 // write <golden>.received for generated goldens that differ
  /// The precisions each claim about the computation is judged in (`--dtype`); the listings and
  /// the claims about our own code run when float64 is among them.
  std::vector<Precision> precisions = {Precision::float64};
  /// Only what differs between implementations: the claims about the computation and the listings
  /// computed by backend operations (`--computation-only`); the claims about our own code and the
  /// listings that are our code throughout are left out of the report (the default audit has them).
  bool computation_only = false;
  Shard shard;                         // --shard K/N: this run judges items i with i mod N = K − 1
  int cases = kDefaultCases;           // --cases N: generated cases per check that draws them
  std::uint64_t seed = kDefaultSeed;   // --seed S: their seed (engine/generated_cases.hpp)
};

struct ControlResult {
  std::string name;
  bool rejected = false;               // the engine's verdict on its measurement was a fail
  std::string error;                   // the control could not run (it lacks an operation, or threw)
  double value = 0;
  std::string detail;
  std::vector<Series> series;
  std::vector<std::string> unmet;      // the claim's conditions besides its value that failed (Measurement::unmet)
};

struct CheckResult {
  std::string name;
  Measurement measured;
  bool passed = false;                 // the engine's verdict on `measured` (engine/verdict.hpp)
  std::string not_applicable;          // why the audited backend could not run it (else empty)
  std::vector<ControlResult> controls;
  std::string error;                   // the check threw: the message
};

enum class Status { passed, failed, vacuous, untested, error, not_applicable };
std::string to_string(Status status);

struct ClaimResult {
  Claim claim;                         // as judged in `precision` (its tolerance there)
  Precision precision = Precision::float64;
  Status status = Status::untested;
  std::vector<CheckResult> checks;
  std::string why;                     // for a status other than passed
  double seconds = 0;                  // wall time of its checks and controls (where an audit's time goes)
  int item = 0;                        // its number among the run's items (Shard), the order a merge restores
  /// Its id as the reports name it: "masking.alignment", or "masking.alignment [float32]" in another precision.
  std::string label() const;
};

struct ArrayResult {
  std::string name;
  std::string golden;                  // relative to reference_outputs/
  double tolerance = 0;
  double max_abs_error = 0;
  bool passed = false;
  std::string detail;
};

struct ListingResult {
  std::string id;
  std::string function;
  Status status = Status::untested;
  std::vector<LineVerdict> lines;
  std::vector<std::string> produced;
  std::vector<ArrayResult> arrays;
  std::string why;
  std::vector<std::string> operations;  // the backend operations it computes through; empty: our code throughout
  double seconds = 0;                   // wall time of its run and comparisons
  int item = 0;                         // its number among the run's items (Shard)
};

struct LessonResult {
  std::string id;
  std::string title;
  std::filesystem::path spec_file;
  std::optional<Spec> spec;            // absent when the spec did not parse
  std::vector<ClaimResult> claims;
  std::vector<ListingResult> listings;
  std::vector<std::string> problems;   // spec errors, traceability, goldens: each fails the audit
};

struct Provenance {
  std::string backend;                 // the backend judged, and what it is
  std::string commit;
  std::string compiler;
  std::string build;
  std::string blas;
  std::string date;
  // What ran (kernels/platform/cpu_info.hpp): the CPU and its widest vector unit, the vector path our
  // kernels took, OpenBLAS's core and its width, and the plain line when that core is narrower.
  std::string cpu;                     // "AMD EPYC"
  std::string cpu_vector;              // "AVX2+FMA (256-bit)"
  std::string kernel_path;             // "AVX2"
  std::string blas_core;               // "Zen (256-bit)"; "" for a BLAS other than OpenBLAS
  std::string blas_narrower;           // "" unless the BLAS core is narrower than the CPU
};

/// What a run was asked to judge, so that shard reports join only with reports of the same run
/// (lessons report merge): the selection, precisions and computation-only flag as given, its
/// shard, and a sha256 over the specs it read (each audited spec's path and its file's sha256).
struct RunScope {
  std::vector<std::string> select;
  std::vector<std::string> precisions;
  bool computation_only = false;
  Shard shard;
  std::string specs_sha256;
  int cases = kDefaultCases;
  std::uint64_t seed = kDefaultSeed;
  int items = 0;                       // the run's items, all shards together (a merge must have each)
};

struct AuditReport {
  std::vector<LessonResult> lessons;
  std::vector<std::string> problems;   // goldens outside any lesson, manifest problems
  Provenance provenance;
  std::filesystem::path root;
  RunScope scope;

  int passed() const;                  // claims + listings that passed
  int failed() const;                  // claims + listings that did not (not applicable aside), + problems
  int not_applicable() const;          // claims the backend could not run (never counted as passed)
  int refuted() const;                 // distinct passed claims whose check shows a lesson's sentence wrong
  /// Nothing failed, and something was checked: an audit where every claim was not applicable
  /// is not a pass.
  bool ok() const { return failed() == 0 && passed() > 0; }
};

/// Run the audit. Throws vl::InputError only for a bad selection or root; everything the audit
/// finds wrong is in the report.
AuditReport run_audit(const std::vector<Lesson>& lessons, const AuditOptions& options);

/// Where specs/ and reference_outputs/ are: --root if given; else the current directory if it
/// holds specs/; else the source tree the binary was built from.
std::filesystem::path default_root();

Provenance current_provenance(const std::filesystem::path& root);

}  // namespace vl
