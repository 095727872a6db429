// The console report of an audit.
#include <cmath>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "engine/report.hpp"

namespace vl {

namespace {

// The first check that ran (a claim judged through its outputs-only check has a first that did not).
const CheckResult* first_run(const ClaimResult& c) {
  for (const auto& ch : c.checks)
    if (ch.not_applicable.empty() && ch.error.empty()) return &ch;
  return nullptr;
}

// The worst value among the checks that ran (a claim with a fixed sweep and generated cases shows
// the one nearer its tolerance): the smallest for `>=`/`>`, else the largest; NaN is worst.
std::string measured(const ClaimResult& c) {
  const bool smaller_worse = c.claim.compare && (*c.claim.compare == Comparison::at_least || *c.claim.compare == Comparison::above);
  const CheckResult* worst = nullptr;
  for (const auto& ch : c.checks) {
    if (!ch.not_applicable.empty() || !ch.error.empty()) continue;
    const double v = ch.measured.value, w = worst ? worst->measured.value : 0;
    if (!worst || std::isnan(v) || (!std::isnan(w) && (smaller_worse ? v < w : v > w))) worst = &ch;
  }
  return worst ? fmt::format("{:.3g}", worst->measured.value) : "-";
}

}  // namespace

void print_report(std::ostream& out, const AuditReport& report, bool verbose) {
  int claims = 0, with_control = 0, controls = 0, rejected = 0;
  for (const auto& lesson : report.lessons) {
    fmt::print(out, "== {}{}{}\n", lesson.id, lesson.title.empty() ? "" : ": ", lesson.title);
    for (const auto& p : lesson.problems) fmt::print(out, "  PROBLEM {}\n", p);
    for (const auto& c : lesson.claims) {
      ++claims;
      int n_controls = 0, n_rejected = 0;
      for (const auto& ch : c.checks)
        for (const auto& ctl : ch.controls) {
          ++n_controls;
          n_rejected += ctl.rejected;
        }
      with_control += n_controls > 0;
      controls += n_controls;
      rejected += n_rejected;
      // A claim that refutes a sentence of the lesson passes as the suite's demonstration; its
      // tag says what it found about the lesson.
      const std::string tag = c.status == Status::passed && !c.claim.refutes.empty() ? "REFUTED"
                              : c.status == Status::passed ? "PASS"
                              : c.status == Status::vacuous        ? "VACUOUS"
                              : c.status == Status::not_applicable ? "N/A"
                              : c.status == Status::error          ? "ERROR"
                                                                   : "FAIL";
      // The direction is the spec's (compare:): "tolerance <= 1e-12", ">= 0.001", "none".
      // A claim about our code judged on another backend runs no control (engine/audit.cpp).
      const std::string controls_text = n_controls == 0 && c.status == Status::not_applicable
                                            ? "controls not run (N/A)"
                                            : fmt::format("controls rejected {}/{}", n_rejected, n_controls);
      fmt::print(out, "  {:<7} claim {:<40} measured {:>9}  tolerance {:<9} {}\n", tag, c.label(), measured(c),
                 c.claim.stated_bound(), controls_text);
      if (c.status != Status::passed) fmt::print(out, "          {}: {}\n", to_string(c.status), c.why);
      if (c.status == Status::passed && !c.claim.refutes.empty())
        fmt::print(out, "          the lesson says {} — measured: {}\n", c.claim.refutes, first_run(c)->measured.detail);
      if (c.status == Status::passed)  // judged by the checks that ran: say which could not
        for (const auto& ch : c.checks)
          if (!ch.not_applicable.empty())
            fmt::print(out, "          judged by '{}'; '{}' not applicable: {}\n", first_run(c)->name, ch.name, ch.not_applicable);
      if (verbose)
        for (const auto& ch : c.checks) {
          fmt::print(out, "          check: {}: {}\n", ch.name, ch.not_applicable.empty() ? ch.measured.detail : "not applicable");
          for (const auto& ctl : ch.controls)
            fmt::print(out, "          control {:<45} {}: {}\n", ctl.name,
                       !ctl.error.empty() ? "COULD NOT RUN" : ctl.rejected ? "rejected" : "PASSED (vacuous)", ctl.detail);
        }
    }
    for (const auto& l : lesson.listings) {
      const std::string tag = l.status == Status::passed ? "PASS" : l.status == Status::not_applicable ? "N/A" : "FAIL";
      int ok = 0;
      for (const auto& v : l.lines) ok += v.passed;
      fmt::print(out, "  {:<7} listing {:<38} {}/{} documented lines match", tag, l.id, ok, l.lines.size());
      for (const auto& a : l.arrays) fmt::print(out, "; {} vs golden {:.1e}", a.name, a.max_abs_error);
      fmt::print(out, "\n");
      if (l.status != Status::passed) fmt::print(out, "          {}: {}\n", to_string(l.status), l.why);
      for (const auto& v : l.lines) {
        if (v.passed && !verbose) continue;
        fmt::print(out, "          line {} [{}] {}\n", v.line, v.rule,
                   !v.passed ? "MISMATCH: " + v.detail : v.bound ? fmt::format("ok, below {:.3g}", *v.bound) : std::string("ok"));
        if (!v.passed) {
          fmt::print(out, "            documented: {}\n", v.documented);
          fmt::print(out, "            produced:   {}\n", v.produced);
        }
      }
      for (const auto& a : l.arrays)
        if (!a.passed || verbose) fmt::print(out, "          array {} ({}): {}\n", a.name, a.golden, a.detail);
    }
  }
  for (const auto& p : report.problems) fmt::print(out, "PROBLEM {}\n", p);
  fmt::print(out, "-- claims: {}, with a negative control: {}, controls rejected: {}/{}\n", claims, with_control, rejected, controls);
  // Claims about our own code and listings that are our code throughout run on our code whatever
  // the backend judged; a listing computed by backend operations ran through the judged backend.
  int ours = 0;
  for (const auto& lesson : report.lessons) {
    for (const auto& c : lesson.claims) ours += c.status == Status::passed && c.claim.subject == ClaimSubject::our_code;
    for (const auto& l : lesson.listings) ours += l.status == Status::passed && l.operations.empty();
  }
  fmt::print(out, "-- backend: {}; {} of the passes are claims about our own code or listings that are our code throughout, "
             "which run on our code whatever the backend\n",
             report.provenance.backend, ours);
  fmt::print(out, "-- provenance: commit {}, {}, {} build, {}, {}\n", report.provenance.commit, report.provenance.compiler,
             report.provenance.build, report.provenance.blas, report.provenance.date);
  fmt::print(out, "-- machine: {}, {}; our kernels' vector path: {}; BLAS core: {}\n", report.provenance.cpu,
             report.provenance.cpu_vector, report.provenance.kernel_path,
             report.provenance.blas_core.empty() ? std::string("not OpenBLAS (unknown)") : report.provenance.blas_core);
  if (!report.provenance.blas_narrower.empty()) fmt::print(out, "-- {}\n", report.provenance.blas_narrower);
  fmt::print(out, "-- generated cases: {} per check that draws them, seed {} (lessons audit --cases N --seed S){}\n", report.scope.cases,
             report.scope.seed, report.scope.shard.count > 1 ? fmt::format("; shard {} of the items", report.scope.shard.str()) : "");
  // Every claim not applicable: say so (a failure, by contrast, was checked).
  if (report.passed() == 0 && report.failed() == 0)
    fmt::print(out, "-- nothing was checked: no claim or listing ran on backend {}\n", report.provenance.backend);
  // A claim not applicable is neither passed nor failed; the closing line counts it apart.
  if (const int refuted = report.refuted())
    fmt::print(out, "-- {} claim(s) refute a sentence of a lesson: the check shows it wrong (REFUTED above)\n", refuted);
  if (const int na = report.not_applicable())
    fmt::print(out, "{} passed, {} failed, {} not applicable\n", report.passed(), report.failed(), na);
  else
    fmt::print(out, "{} passed, {} failed\n", report.passed(), report.failed());
}

}  // namespace vl
