// An audit's JSON report read back into an AuditReport (report_json's inverse), so that shard
// reports can be joined (engine/report_merge.cpp) and written again as JSON, JUnit and the
// console summary by the same writers as a run's own report.
#include <cmath>
#include <fstream>
#include <limits>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "engine/report.hpp"

namespace vl {

namespace {

using nlohmann::json;

// report_json writes a value JSON cannot hold as "nan", "inf" or "-inf"; null where nothing ran.
double number(const json& j) {
  if (j.is_null()) return 0;
  if (j.is_string()) {
    const auto s = j.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
    throw InputError(fmt::format("'{}' is not a number", s));
  }
  return j.get<double>();
}

// The enum value whose to_string is `name`, among `values`.
template <class E, std::size_t N>
E named(const json& j, const E (&values)[N], const char* what) {
  const auto name = j.get<std::string>();
  for (E e : values)
    if (to_string(e) == name) return e;
  throw InputError(fmt::format("'{}' is not a {}", name, what));
}

constexpr Status kStatuses[] = {Status::passed, Status::failed, Status::vacuous, Status::untested, Status::error, Status::not_applicable};
constexpr ClaimKind kKinds[] = {ClaimKind::identity, ClaimKind::invariant, ClaimKind::bound, ClaimKind::statistical, ClaimKind::complexity};
constexpr Comparison kComparisons[] = {Comparison::at_most, Comparison::below, Comparison::at_least, Comparison::above, Comparison::equal};
constexpr ClaimSubject kSubjects[] = {ClaimSubject::computation, ClaimSubject::our_code};

std::vector<Series> series_of(const json& j) {
  std::vector<Series> out;
  for (const auto& s : j) {
    Series series{s.at("name").get<std::string>(), {}, s.value("formula_of", std::string())};
    for (const auto& v : s.at("values")) series.values.push_back(number(v));
    out.push_back(std::move(series));
  }
  return out;
}

ClaimResult claim_of(const json& j) {
  ClaimResult c;
  c.claim.id = j.at("id").get<std::string>();
  c.precision = named(j.at("precision"), kAllPrecisions, "precision");
  c.claim.kind = named(j.at("kind"), kKinds, "claim kind");
  c.claim.statement = j.at("statement").get<std::string>();
  c.claim.source = j.at("source").get<std::string>();
  c.claim.measure = j.at("measure").get<std::string>();
  c.claim.unit = j.at("unit").get<std::string>();
  c.claim.refutes = j.at("refutes").get<std::string>();
  c.claim.tolerance_text = j.at("tolerance").get<std::string>();
  if (!j.at("compare").is_null()) c.claim.compare = named(j.at("compare"), kComparisons, "comparison");
  c.claim.subject = named(j.at("subject"), kSubjects, "claim subject");
  c.claim.where.line = j.at("spec_line").get<int>();
  c.status = named(j.at("status"), kStatuses, "status");
  c.why = j.at("why").get<std::string>();
  c.seconds = j.at("seconds").get<double>();
  c.item = j.at("item").get<int>();
  for (const auto& cj : j.at("checks")) {
    CheckResult ch;
    ch.name = cj.at("name").get<std::string>();
    ch.measured = {number(cj.at("measured")), cj.at("detail").get<std::string>(), series_of(cj.at("series")),
                   cj.at("unmet").get<std::vector<std::string>>()};
    ch.passed = cj.at("passed").get<bool>();
    ch.error = cj.at("error").get<std::string>();
    ch.not_applicable = cj.at("not_applicable").get<std::string>();
    for (const auto& k : cj.at("controls"))
      ch.controls.push_back({k.at("name").get<std::string>(), k.at("rejected").get<bool>(), k.at("error").get<std::string>(),
                             number(k.at("measured")), k.at("detail").get<std::string>(), series_of(k.at("series")),
                             k.at("unmet").get<std::vector<std::string>>()});
    c.checks.push_back(std::move(ch));
  }
  return c;
}

std::optional<double> optional_number(const json& j, const char* key) {
  if (!j.contains(key)) return std::nullopt;
  return number(j.at(key));
}

ListingResult listing_of(const json& j) {
  ListingResult l;
  l.id = j.at("id").get<std::string>();
  l.function = j.at("function").get<std::string>();
  l.status = named(j.at("status"), kStatuses, "status");
  l.why = j.at("why").get<std::string>();
  l.seconds = j.at("seconds").get<double>();
  l.item = j.at("item").get<int>();
  l.operations = j.at("operations").get<std::vector<std::string>>();
  l.produced = j.at("produced").get<std::vector<std::string>>();
  for (const auto& v : j.at("lines"))
    l.lines.push_back({v.at("line").get<int>(), v.at("documented").get<std::string>(), v.at("produced").get<std::string>(),
                       v.at("rule").get<std::string>(), v.at("passed").get<bool>(), v.at("detail").get<std::string>(),
                       optional_number(v, "abs_error"), optional_number(v, "rel_error"), optional_number(v, "bound")});
  for (const auto& a : j.at("arrays"))
    l.arrays.push_back({a.at("name").get<std::string>(), a.at("golden").get<std::string>(), a.at("tolerance").get<double>(),
                        number(a.at("max_abs_error")), a.at("passed").get<bool>(), a.at("detail").get<std::string>()});
  return l;
}

AuditReport report_of(const json& j) {
  AuditReport r;
  const auto& p = j.at("provenance");
  r.provenance = {p.at("backend").get<std::string>(), p.at("commit").get<std::string>(), p.at("compiler").get<std::string>(),
                  p.at("build").get<std::string>(), p.at("blas").get<std::string>(), p.at("date").get<std::string>(),
                  p.at("cpu").get<std::string>(), p.at("cpu_vector").get<std::string>(), p.at("kernel_path").get<std::string>(),
                  p.at("blas_core").get<std::string>(), p.at("blas_narrower").is_null() ? "" : p.at("blas_narrower").get<std::string>()};
  r.root = j.at("root").get<std::string>();
  const auto& s = j.at("scope");
  r.scope = {s.at("select").get<std::vector<std::string>>(), s.at("precisions").get<std::vector<std::string>>(),
             s.at("computation_only").get<bool>(), shard_named(s.at("shard").get<std::string>(), "scope.shard"),
             s.at("specs_sha256").get<std::string>(), s.at("cases").get<int>(), s.at("seed").get<std::uint64_t>(),
             s.at("items").get<int>()};
  r.problems = j.at("problems").get<std::vector<std::string>>();
  for (const auto& lj : j.at("lessons")) {
    LessonResult l;
    l.id = lj.at("id").get<std::string>();
    l.title = lj.at("title").get<std::string>();
    l.spec_file = lj.at("spec").get<std::string>();
    l.problems = lj.at("problems").get<std::vector<std::string>>();
    for (const auto& c : lj.at("claims")) l.claims.push_back(claim_of(c));
    for (const auto& li : lj.at("listings")) l.listings.push_back(listing_of(li));
    r.lessons.push_back(std::move(l));
  }
  return r;
}

}  // namespace

AuditReport read_report_json(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read", file.string()));
  try {
    return report_of(json::parse(in));
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: not an audit report of lessons audit --json: {}", file.string(), e.what()));
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: not an audit report of lessons audit --json: {}", file.string(), e.what()));
  }
}

}  // namespace vl
