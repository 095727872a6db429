#include "engine/audit.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "backends/registry.hpp"
#include "backends/in_precision.hpp"
#include "backends/shape_checked.hpp"
#include "core/errors.hpp"
#include "engine/golden_manifest.hpp"
#include "engine/verdict.hpp"
#include "kernels/platform/cpu_info.hpp"
#include "numeric/npy.hpp"
#include "numeric/compare.hpp"
#include "numeric/sha256.hpp"

namespace vl {

std::string Shard::str() const { return fmt::format("{}/{}", index, count); }

Shard shard_named(const std::string& text, const std::string& what) {
  Shard s;
  const char *first = text.data(), *last = first + text.size();
  const auto k = std::from_chars(first, last, s.index);
  const bool slash = k.ec == std::errc() && k.ptr != last && *k.ptr == '/';
  const auto n = slash ? std::from_chars(k.ptr + 1, last, s.count) : k;
  if (!slash || n.ec != std::errc() || n.ptr != last || s.count < 1 || s.index < 1 || s.index > s.count)
    throw InputError(fmt::format("{} {}: not a shard K/N with 1 <= K <= N (e.g. 2/4)", what, text));
  return s;
}

std::string ClaimResult::label() const {
  return precision == Precision::float64 ? claim.id : fmt::format("{} [{}]", claim.id, to_string(precision));
}

std::string to_string(Status status) {
  switch (status) {
    case Status::passed: return "passed";
    case Status::failed: return "failed";
    case Status::vacuous: return "vacuous";
    case Status::untested: return "untested";
    case Status::error: return "error";
    case Status::not_applicable: return "not applicable";
  }
  return "?";
}

int AuditReport::passed() const {
  int n = 0;
  for (const auto& l : lessons) {
    for (const auto& c : l.claims) n += c.status == Status::passed;
    for (const auto& li : l.listings) n += li.status == Status::passed;
  }
  return n;
}

int AuditReport::failed() const {
  int n = int(problems.size());
  for (const auto& l : lessons) {
    n += int(l.problems.size());
    for (const auto& c : l.claims) n += c.status != Status::passed && c.status != Status::not_applicable;
    for (const auto& li : l.listings) n += li.status != Status::passed && li.status != Status::not_applicable;
  }
  return n;
}

int AuditReport::refuted() const {
  // Distinct claims: one judged in several precisions refutes one sentence.
  std::set<std::string> ids;
  for (const auto& l : lessons)
    for (const auto& c : l.claims)
      if (c.status == Status::passed && !c.claim.refutes.empty()) ids.insert(c.claim.id);
  return int(ids.size());
}

int AuditReport::not_applicable() const {
  int n = 0;
  for (const auto& l : lessons) {
    for (const auto& c : l.claims) n += c.status == Status::not_applicable;
    for (const auto& li : l.listings) n += li.status == Status::not_applicable;
  }
  return n;
}

const backends::Backend& ListingContext::implementation() const { return backend ? *backend : *backends::plain(); }

std::filesystem::path default_root() {
  if (std::filesystem::is_directory("specs")) return std::filesystem::current_path();
  return VL_SOURCE_DIR;
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string run_command(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return {};
  std::array<char, 256> buf{};
  std::string out;
  while (fgets(buf.data(), int(buf.size()), pipe.get())) out += buf.data();
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::vector<std::string> read_lines(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// A spec's sha256 for RunScope::specs_sha256 ("missing" for a spec that is not there: its lesson
// reports that as a problem).
std::string file_sha256_or_missing(const std::filesystem::path& file) {
  try {
    return sha256_file(file);
  } catch (const InputError&) {
    return "missing";
  }
}

bool selected(const std::vector<std::string>& select, const std::string& lesson, const std::string& id) {
  if (select.empty()) return true;
  for (const auto& s : select)
    if (s == lesson || s == id) return true;
  return false;
}

// One negative control: the claim's check against the broken backend, or (a claim about our
// code) the control's own run, judged by the engine as the claim is. A control is rejected only
// by its claim's measure: one that throws (an operation missing, a result of the wrong shape,
// anything) did not run, and is an error of the audit, never a rejection. A claim that is about
// refusing bad input counts the refusals in its check (attention.config-checked,
// encoder-decoder.residual-keeps-width), so nothing it expects escapes as an exception.
ControlResult run_control(const Claim& claim, const ClaimCheck& check, const NegativeControl& control, const CheckContext& audited) {
  ControlResult cr;
  cr.name = control.name;
  try {
    // In another precision the broken backend computes in it too (its float32 operations broken alike).
    const auto broken = backends::computing_in(audited.precision, std::make_shared<backends::ShapeChecked>(
                                                                      control.backend ? control.backend : backends::plain()));
    if (!broken) throw std::runtime_error(fmt::format("it does not compute in {}", to_string(audited.precision)));
    const CheckContext ctx = audited.judging(control.backend ? *broken : audited.backend);
    const Measurement m = control.backend ? check.run(ctx) : control.run(ctx);
    cr.rejected = !passes(claim, m);
    cr.value = m.value;
    cr.detail = m.detail;
    cr.series = m.series;
    cr.unmet = m.unmet;
  } catch (const backends::Unsupported& e) {
    cr.error = fmt::format("the control could not run: {}", e.what());
    cr.detail = cr.error;
  } catch (const std::exception& e) {
    cr.error = fmt::format("the control threw, so its claim's measure never judged it: {}", e.what());
    cr.detail = cr.error;
  }
  return cr;
}

ClaimResult run_claim(const Claim& claim, const std::vector<const ClaimCheck*>& checks, const backends::Backend& backend,
                      const std::filesystem::path& goldens, const AuditOptions& options, Precision precision = Precision::float64) {
  ClaimResult r;
  r.claim = claim;
  r.precision = precision;
  if (checks.empty()) {
    r.status = Status::untested;
    r.why = "no check verifies this claim";
    return r;
  }
  // The engine's comparison, for a check that may end a sweep once a partial value fails.
  const CheckContext ctx{backend, goldens, [&claim](double v) { return !passes(claim, Measurement{v, {}}); }, precision,
                         options.cases, options.seed};
  // A claim about our code is not applicable to another backend, and neither are its controls:
  // they break our code, whatever backend is audited, and the audit of one of ours runs them.
  const bool our_code_on_another_backend = claim.subject == ClaimSubject::our_code && !backend.ours();
  r.status = Status::passed;
  // A claim may have several checks (one that reads the weights, one that reads them from the
  // outputs): it is judged by those that ran, and not applicable only when none could.
  std::string first_not_applicable;
  bool any_ran = false;
  for (const ClaimCheck* check : checks) {
    CheckResult c;
    c.name = check->name;
    std::string not_applicable;
    if (our_code_on_another_backend) {
      not_applicable = fmt::format("the claim is about our own code (subject: our-code); '{}' is not one of our backends", backend.name());
    } else {
      try {
        c.measured = check->run(ctx);
        c.passed = passes(claim, c.measured);
      } catch (const backends::Unsupported& e) {
        // A candidate that has the operation may still lack an option of it, in its own words
        // ("unsupported: ...") or because vl-candidate/1 cannot carry it: not applicable.
        if (backend.supports(e.need) && !dynamic_cast<const backends::UnsupportedOption*>(&e))
          c.error = fmt::format("backend '{}' says it has {} but refused it: {}", backend.name(), backends::to_string(e.need), e.what());
        else
          not_applicable = e.what();
      } catch (const std::exception& e) {
        c.error = e.what();
      }
    }
    const bool ran = c.error.empty() && not_applicable.empty();
    any_ran = any_ran || ran;
    if (!c.error.empty()) {
      const std::string threw = fmt::format("check '{}' threw: {}", c.name, c.error);
      r.why = r.status == Status::error ? r.why + "; " + threw : threw;  // every check's error, in order
      r.status = Status::error;
    } else if (!not_applicable.empty()) {
      c.not_applicable = not_applicable;  // the claim is N/A only if no check of it ran (below)
      if (first_not_applicable.empty()) first_not_applicable = not_applicable;
    } else if (!c.passed && (r.status == Status::passed || r.status == Status::not_applicable)) {
      r.status = Status::failed;
      r.why = fmt::format("check '{}' failed ({}): {}", c.name, judged(claim, c.measured), c.measured.detail);
    }
    if (check->controls.empty() && (r.status == Status::passed || r.status == Status::not_applicable)) {
      r.status = Status::vacuous;
      r.why = fmt::format("check '{}' has no negative control", c.name);
    }
    static const std::vector<NegativeControl> kNoControls;
    // In another precision, a check that could not run runs no controls either (they need the
    // same operation in that precision); in float64 they run, to show the check can fail.
    const bool skip_controls = our_code_on_another_backend || (precision != Precision::float64 && !ran);
    for (const auto& control : skip_controls ? kNoControls : check->controls) {
      ControlResult cr = run_control(claim, *check, control, ctx);
      if (!cr.error.empty() && r.status != Status::error) {
        r.status = Status::error;
        r.why = fmt::format("control '{}': {}", cr.name, cr.error);
      } else if (!cr.rejected && (r.status == Status::passed || r.status == Status::not_applicable)) {
        r.status = Status::vacuous;
        r.why = fmt::format("check '{}' passes the broken variant '{}': it cannot tell", c.name, cr.name);
      }
      c.controls.push_back(cr);
    }
    r.checks.push_back(c);
  }
  if (!any_ran && r.status == Status::passed && !first_not_applicable.empty()) {
    r.status = Status::not_applicable;
    r.why = first_not_applicable;
  }
  return r;
}

// A claim judged in precision p: its tolerance there, the backend computing in p; not judged
// (untested, which fails) where the spec states no tolerance for p, N/A where it says the claim
// cannot hold in p or the backend does not compute in p.
ClaimResult claim_in(const Claim& claim, const std::vector<const ClaimCheck*>& checks, const backends::Backend& backend,
                     const std::filesystem::path& goldens, const AuditOptions& options, Precision p) {
  ClaimResult r;
  r.claim = claim;
  r.precision = p;
  const auto in_p = backends::computing_in(p, backends::unowned(backend));  // the audit holds it for the whole run
  if (!in_p) {  // first: a float64 candidate keeps its verdicts, N/A in float32 whatever the spec states
    r.status = Status::not_applicable;
    r.why = fmt::format("backend '{}' does not compute in {}", backend.name(), to_string(p));
    return r;
  }
  if (p == Precision::float64) return run_claim(claim, checks, backend, goldens, options);
  const auto t = claim.tolerance_in(p);
  if (!t) {
    r.status = Status::untested;
    r.why = fmt::format("the spec states no {} tolerance for it (tolerance-{}: a bound derived from u = {}, or n/a: why)",
                        to_string(p), to_string(p), unit_roundoff(p));
    return r;
  }
  if (!t->not_applicable.empty()) {
    r.claim = claim.in(p);
    r.status = Status::not_applicable;
    r.why = fmt::format("not in {}: {}", to_string(p), t->not_applicable);
    return r;
  }
  return run_claim(claim.in(p), checks, *in_p, goldens, options, p);
}

ArrayResult compare_array(const std::filesystem::path& golden_dir, const ArrayGolden& golden,
                          const xt::xarray<double>& produced, bool update) {
  ArrayResult r;
  r.name = golden.name;
  r.golden = golden.golden;
  r.tolerance = golden.abs_tolerance;
  const auto path = golden_dir / golden.golden;
  xt::xarray<double> expected;
  try {
    expected = npy::load_double(path);
  } catch (const InputError& e) {
    r.detail = e.what();
    r.max_abs_error = INFINITY;
    return r;
  }
  if (expected.shape() != produced.shape()) {
    r.detail = fmt::format("shape ({}) produced, ({}) in the golden", fmt::join(produced.shape(), ", "),
                           fmt::join(expected.shape(), ", "));
    r.max_abs_error = INFINITY;
  } else {
    const double worst = max_abs_diff(produced, expected);  // ∞ where either side is not finite (numeric/compare.hpp)
    r.max_abs_error = worst;
    r.passed = worst <= golden.abs_tolerance;
    r.detail = fmt::format("max |produced − golden| = {:.2e} (tolerance {:.0e})", worst, golden.abs_tolerance);
  }
  if (!r.passed && update) {
    const auto received = path.string() + ".received";
    npy::save(received, produced);
    r.detail += fmt::format("; wrote {} for review (lessons accept)", received);
  }
  return r;
}

// A listing whose computation is backend operations (Listing::ops) runs them on the audited
// backend, and its printed lines and arrays judge that backend with the spec's rules and
// tolerances; one that is our own code throughout runs for our backends only.
ListingResult run_listing(const ListingSpec& spec, const Listing* code, const Spec& lesson_spec,
                          const std::filesystem::path& golden_dir, bool update, const backends::Backend& backend) {
  ListingResult r;
  r.id = spec.id;
  r.function = spec.function;
  if (code)
    for (const backends::Need& need : code->ops) r.operations.push_back(backends::to_string(need));
  if (!code) {
    r.status = Status::untested;
    r.why = fmt::format("no C++ listing '{}' is registered", spec.id);
    return r;
  }
  if (!backend.ours() && code->ops.empty()) {
    r.status = Status::not_applicable;
    r.why = fmt::format("the listing is our own code throughout (no backend operation); '{}' is not one of our backends",
                        backend.name());
    return r;
  }
  ListingOutput out;
  try {
    out = code->run(ListingContext{golden_dir, &backend});
  } catch (const backends::Unsupported& e) {
    // As for a claim: a backend that lacks one of the listing's operations (or an option of it)
    // is not judged by it; one that has it and refuses it is an error.
    if (backend.supports(e.need) && !dynamic_cast<const backends::UnsupportedOption*>(&e)) {
      r.status = Status::error;
      r.why = fmt::format("backend '{}' says it has {} but refused it: {}", backend.name(), backends::to_string(e.need), e.what());
    } else {
      r.status = Status::not_applicable;
      r.why = e.what();
    }
    return r;
  } catch (const std::exception& e) {
    r.status = Status::error;
    r.why = fmt::format("the listing threw: {}", e.what());
    return r;
  }
  r.produced = out.lines;
  r.status = Status::passed;
  if (const OutputSpec* doc = lesson_spec.find_output(spec.id)) {
    const auto golden = golden_dir / doc->golden;
    if (!std::filesystem::is_regular_file(golden)) {
      r.status = Status::failed;
      r.why = fmt::format("documented output {} is missing", golden.string());
      return r;
    }
    const auto documented = read_lines(golden);
    if (documented != doc->lines) {
      r.status = Status::failed;
      r.why = fmt::format("the spec's output block ({}) and the golden {} differ", doc->where.str(), golden.string());
    }
    r.lines = compare_output(documented, out.lines, doc->rules, out.derived_bounds);
    for (const auto& v : r.lines)
      if (!v.passed && r.status == Status::passed) {
        r.status = Status::failed;
        r.why = fmt::format("line {} does not match its documented output", v.line);
      }
  }
  for (const auto& a : spec.arrays) {
    const auto it = out.arrays.find(a.name);
    if (it == out.arrays.end()) {
      r.arrays.push_back({a.name, a.golden, a.abs_tolerance, INFINITY, false, "the listing produced no such array"});
    } else {
      r.arrays.push_back(compare_array(golden_dir, a, it->second, update && backend.ours()));  // never a golden from a candidate
    }
    if (!r.arrays.back().passed && r.status == Status::passed) {
      r.status = Status::failed;
      r.why = fmt::format("array {} does not match its golden {}", a.name, a.golden);
    }
  }
  return r;
}

// `item` numbers the selected items across lessons (Shard); this run judges those its shard takes.
LessonResult audit_lesson(const Lesson& lesson, const AuditOptions& options, const backends::Backend& backend,
                          const std::vector<std::string>& golden_problems, int& item) {
  LessonResult r;
  r.id = lesson.id;
  r.spec_file = options.root / lesson.spec_file;
  try {
    r.spec = parse_spec(r.spec_file);
  } catch (const InputError& e) {
    r.problems.push_back(fmt::format("spec: {}", e.what()));
    return r;
  }
  const Spec& spec = *r.spec;
  r.title = spec.title;
  if (spec.lesson != lesson.id)
    r.problems.push_back(fmt::format("{}: lesson id '{}' but the code registers '{}'", r.spec_file.string(), spec.lesson, lesson.id));

  // Traceability, both ways; and a claim about the computation is judged through backends only.
  for (const auto& check : lesson.checks) {
    const Claim* claim = spec.find_claim(check.claim_id);
    if (!claim) {
      r.problems.push_back(fmt::format("check '{}' names claim '{}', which {} does not state", check.name,
                                       check.claim_id, r.spec_file.string()));
      continue;
    }
    for (const auto& control : check.controls)
      if (claim->subject == ClaimSubject::computation && !control.backend)
        r.problems.push_back(fmt::format("{}: control '{}' of '{}', a claim about the computation, must be a broken backend "
                                         "(only a claim with subject: our-code may break our code directly)",
                                         claim->where.str(), control.name, claim->id));
  }
  for (const auto& listing : lesson.listings) {
    const auto it = std::find_if(spec.listings.begin(), spec.listings.end(), [&](auto& l) { return l.id == listing.id; });
    if (it == spec.listings.end())
      r.problems.push_back(fmt::format("C++ listing '{}' is not in {}", listing.id, r.spec_file.string()));
    else if (it->function != listing.function)
      r.problems.push_back(fmt::format("{}: listing '{}' names function '{}', the code registers '{}'", it->where.str(),
                                       listing.id, it->function, listing.function));
  }

  for (const auto& claim : spec.claims) {
    if (!selected(options.select, lesson.id, claim.id)) continue;
    if (options.computation_only && claim.subject == ClaimSubject::our_code) continue;
    std::vector<const ClaimCheck*> checks;
    for (const auto& c : lesson.checks)
      if (c.claim_id == claim.id) checks.push_back(&c);
    for (Precision p : options.precisions) {
      if (p != Precision::float64 && claim.subject == ClaimSubject::our_code) continue;  // our code is judged as it runs
      if (!options.shard.takes(item++)) continue;
      const auto start = std::chrono::steady_clock::now();
      r.claims.push_back(claim_in(claim, checks, backend, options.root / "reference_outputs", options, p));
      r.claims.back().seconds = seconds_since(start);
      r.claims.back().item = item - 1;
    }
  }
  const bool float64 = std::find(options.precisions.begin(), options.precisions.end(), Precision::float64) != options.precisions.end();
  for (const auto& ls : spec.listings) {
    if (!float64 || !selected(options.select, lesson.id, ls.id)) continue;  // a listing prints what the lesson's program did
    const auto it = std::find_if(lesson.listings.begin(), lesson.listings.end(), [&](auto& l) { return l.id == ls.id; });
    if (options.computation_only && it != lesson.listings.end() && it->ops.empty()) continue;  // our code throughout
    if (!options.shard.takes(item++)) continue;
    const auto start = std::chrono::steady_clock::now();
    r.listings.push_back(run_listing(ls, it == lesson.listings.end() ? nullptr : &*it, spec,
                                     options.root / "reference_outputs", options.update, backend));
    r.listings.back().seconds = seconds_since(start);
    r.listings.back().item = item - 1;
  }
  const std::string prefix = (options.root / "reference_outputs" / lesson.id).string() + "/";
  for (const auto& p : golden_problems)
    if (p.find(prefix) != std::string::npos) r.problems.push_back(p);
  return r;
}

}  // namespace

Provenance current_provenance(const std::filesystem::path& root) {
  Provenance p;
  p.commit = run_command(fmt::format("git -C '{}' rev-parse --short=12 HEAD 2>/dev/null", root.string()));
  if (p.commit.empty()) p.commit = "unknown (not a git checkout)";
  else if (!run_command(fmt::format("git -C '{}' status --porcelain --untracked-files=no 2>/dev/null", root.string())).empty())
    p.commit += "+modified";
  p.compiler = VL_COMPILER;
  p.build = VL_BUILD_TYPE;
  const MachineInfo& m = machine_info();
  p.blas = m.blas_config;
  p.cpu = m.cpu_model;
  p.cpu_vector = fmt::format("{} ({}-bit)", m.cpu_vector, m.cpu_vector_bits);
  p.kernel_path = m.kernel_path;
  if (!m.blas_core.empty())
    p.blas_core = m.blas_core_bits ? fmt::format("{} ({}-bit)", m.blas_core, m.blas_core_bits) : fmt::format("{} (width not known)", m.blas_core);
  p.blas_narrower = m.blas_narrower.value_or("");
  p.date = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
  return p;
}

AuditReport run_audit(const std::vector<Lesson>& lessons, const AuditOptions& options) {
  if (!std::filesystem::is_directory(options.root / "specs"))
    throw InputError(fmt::format("--root {}: no specs/ folder there", options.root.string()));
  // Every selector must name something.
  for (const auto& s : options.select) {
    bool known = false;
    for (const auto& l : lessons) {
      known = known || s == l.id;
      for (const auto& c : l.checks) known = known || s == c.claim_id;
      for (const auto& li : l.listings) known = known || s == li.id;
      if (!known && s.rfind(l.id + ".", 0) == 0) {
        // A claim stated in the spec but without a check is still selectable.
        try {
          known = parse_spec(options.root / l.spec_file).find_claim(s) != nullptr;
        } catch (const InputError&) {
        }
      }
    }
    if (!known) throw InputError(fmt::format("'{}' is not a lesson, listing or claim id (see: lessons list)", s));
  }

  const auto backend = std::make_shared<backends::ShapeChecked>(options.backend ? options.backend : backends::plain());
  AuditReport report;
  report.root = options.root;
  report.provenance = current_provenance(options.root);
  report.provenance.backend = fmt::format("{} ({})", backend->name(), backend->summary());
  std::vector<std::string> golden_problems;
  try {
    golden_problems = GoldenManifest(options.root).verify();
  } catch (const InputError& e) {
    report.problems.push_back(e.what());
  }
  report.scope.select = options.select;
  for (Precision p : options.precisions) report.scope.precisions.push_back(to_string(p));
  report.scope.computation_only = options.computation_only;
  report.scope.shard = options.shard;
  report.scope.cases = options.cases;
  report.scope.seed = options.seed;
  Sha256 specs;
  std::set<std::string> claimed;
  int item = 0;
  for (const auto& lesson : lessons) {
    bool any = options.select.empty();
    for (const auto& s : options.select) any = any || s == lesson.id || s.rfind(lesson.id + ".", 0) == 0;
    if (!any) continue;
    const std::string spec_line = fmt::format("{} {}\n", lesson.spec_file, file_sha256_or_missing(options.root / lesson.spec_file));
    specs.update(spec_line.data(), spec_line.size());
    report.lessons.push_back(audit_lesson(lesson, options, *backend, golden_problems, item));
    for (const auto& p : report.lessons.back().problems) claimed.insert(p);
  }
  // Golden problems outside the audited lessons' folders (numpy/, torch/, ...) when auditing all.
  if (options.select.empty())
    for (const auto& p : golden_problems)
      if (!claimed.count(p)) report.problems.push_back(p);
  report.scope.specs_sha256 = specs.hex_digest();
  report.scope.items = item;
  return report;
}

}  // namespace vl
