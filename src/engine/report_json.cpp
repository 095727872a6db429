// The audit as JSON (read by docs/generate.py) and as JUnit XML.
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "engine/report.hpp"

namespace vl {

namespace {

// JSON has no infinity or NaN: write them as strings.
nlohmann::json number(double x) {
  if (std::isfinite(x)) return x;
  return std::isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf");
}

nlohmann::json series_json(const std::vector<Series>& series) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& s : series) {
    nlohmann::json values = nlohmann::json::array();
    for (double v : s.values) values.push_back(number(v));
    nlohmann::json e = {{"name", s.name}, {"values", values}};
    if (!s.formula_of.empty()) e["formula_of"] = s.formula_of;
    j.push_back(e);
  }
  return j;
}

nlohmann::json claim_json(const ClaimResult& c) {
  nlohmann::json j = {{"id", c.claim.id},
                      {"precision", to_string(c.precision)},
                      {"kind", to_string(c.claim.kind)},
                      {"statement", c.claim.statement},
                      {"source", c.claim.source},
                      {"measure", c.claim.measure},
                      {"unit", c.claim.unit},
                      {"refutes", c.claim.refutes},
                      {"tolerance", c.claim.tolerance_text},
                      {"compare", c.claim.compare ? nlohmann::json(to_string(*c.claim.compare)) : nlohmann::json()},
                      {"subject", to_string(c.claim.subject)},
                      {"status", to_string(c.status)},
                      {"why", c.why},
                      {"spec_line", c.claim.where.line},
                      {"seconds", c.seconds},
                      {"item", c.item},
                      {"checks", nlohmann::json::array()}};
  for (const auto& ch : c.checks) {
    const bool ran = ch.not_applicable.empty() && ch.error.empty();
    nlohmann::json cj = {{"name", ch.name},
                         {"measured", ran ? number(ch.measured.value) : nlohmann::json()},
                         {"passed", ran && ch.passed},
                         {"detail", ch.measured.detail},
                         {"unmet", ch.measured.unmet},
                         {"series", series_json(ch.measured.series)},
                         {"error", ch.error},
                         {"not_applicable", ch.not_applicable},
                         {"controls", nlohmann::json::array()}};
    for (const auto& ctl : ch.controls)
      cj["controls"].push_back({{"name", ctl.name}, {"rejected", ctl.rejected}, {"measured", number(ctl.value)}, {"detail", ctl.detail},
                                {"error", ctl.error}, {"unmet", ctl.unmet}, {"series", series_json(ctl.series)}});
    j["checks"].push_back(cj);
  }
  return j;
}

nlohmann::json listing_json(const ListingResult& l) {
  nlohmann::json j = {{"id", l.id}, {"function", l.function}, {"status", to_string(l.status)}, {"why", l.why}, {"seconds", l.seconds},
                      {"item", l.item}, {"operations", l.operations}, {"produced", l.produced}, {"lines", nlohmann::json::array()}, {"arrays", nlohmann::json::array()}};
  for (const auto& v : l.lines) {
    nlohmann::json vj = {{"line", v.line}, {"documented", v.documented}, {"produced", v.produced},
                         {"rule", v.rule}, {"passed", v.passed}, {"detail", v.detail}};
    if (v.abs_error) vj["abs_error"] = number(*v.abs_error);
    if (v.rel_error) vj["rel_error"] = number(*v.rel_error);
    if (v.bound) vj["bound"] = number(*v.bound);
    j["lines"].push_back(vj);
  }
  for (const auto& a : l.arrays)
    j["arrays"].push_back({{"name", a.name}, {"golden", a.golden}, {"tolerance", a.tolerance},
                           {"max_abs_error", number(a.max_abs_error)}, {"passed", a.passed}, {"detail", a.detail}});
  return j;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

nlohmann::json report_json(const AuditReport& report) {
  nlohmann::json j;
  j["provenance"] = {{"backend", report.provenance.backend}, {"commit", report.provenance.commit}, {"compiler", report.provenance.compiler},
                     {"build", report.provenance.build}, {"blas", report.provenance.blas}, {"date", report.provenance.date},
                     {"cpu", report.provenance.cpu}, {"cpu_vector", report.provenance.cpu_vector},
                     {"kernel_path", report.provenance.kernel_path}, {"blas_core", report.provenance.blas_core}};
  // null unless the BLAS core is narrower than the CPU; then the one plain line saying so.
  j["provenance"]["blas_narrower"] =
      report.provenance.blas_narrower.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.provenance.blas_narrower);
  j["root"] = report.root.string();
  j["scope"] = {{"select", report.scope.select}, {"precisions", report.scope.precisions},
                {"computation_only", report.scope.computation_only}, {"shard", report.scope.shard.str()},
                {"specs_sha256", report.scope.specs_sha256}, {"cases", report.scope.cases},
                {"seed", report.scope.seed}, {"items", report.scope.items}};
  j["passed"] = report.passed();
  j["failed"] = report.failed();
  j["refuted"] = report.refuted();
  j["not_applicable"] = report.not_applicable();
  j["problems"] = report.problems;
  j["lessons"] = nlohmann::json::array();
  for (const auto& l : report.lessons) {
    nlohmann::json lj = {{"id", l.id}, {"title", l.title}, {"spec", l.spec_file.string()}, {"problems", l.problems},
                         {"claims", nlohmann::json::array()}, {"listings", nlohmann::json::array()}};
    for (const auto& c : l.claims) lj["claims"].push_back(claim_json(c));
    for (const auto& li : l.listings) lj["listings"].push_back(listing_json(li));
    j["lessons"].push_back(lj);
  }
  return j;
}

std::string report_junit(const AuditReport& report) {
  std::string cases;
  int tests = 0, failures = 0, skipped = 0;
  auto add = [&](const std::string& suite, const std::string& name, Status status, const std::string& message, const std::string& body) {
    ++tests;
    cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\">\n", xml_escape(suite), xml_escape(name));
    if (status == Status::not_applicable) {
      ++skipped;
      cases += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(message));
    } else if (status != Status::passed) {
      ++failures;
      cases += fmt::format("      <failure message=\"{}\">{}</failure>\n", xml_escape(message), xml_escape(body));
    }
    cases += "    </testcase>\n";
  };
  for (const auto& l : report.lessons) {
    for (const auto& p : l.problems) add(l.id, "problem", Status::error, p, p);
    for (const auto& c : l.claims) {
      std::string body;
      for (const auto& ch : c.checks) body += ch.name + ": " + ch.measured.detail + "\n";
      add(l.id, "claim " + c.label(), c.status, to_string(c.status) + ": " + c.why, body);
    }
    for (const auto& li : l.listings) {
      std::string body;
      for (const auto& v : li.lines)
        if (!v.passed) body += fmt::format("line {} [{}]: {}\n  documented: {}\n  produced:   {}\n", v.line, v.rule, v.detail, v.documented, v.produced);
      add(l.id, "listing " + li.id, li.status, to_string(li.status) + ": " + li.why, body);
    }
  }
  for (const auto& p : report.problems) add("goldens", "problem", Status::error, p, p);
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"lessons audit\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n"
      "  <testsuite name=\"lessons audit\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" timestamp=\"{}\">\n{}  </testsuite>\n</testsuites>\n",
      tests, failures, skipped, tests, failures, skipped, report.provenance.date, cases);
}

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  const auto tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw InputError(fmt::format("{}: cannot write (does its folder exist and is it writable?)", path.string()));
    out << text;
    out.flush();
    if (!out) {
      std::filesystem::remove(tmp);
      throw InputError(fmt::format("{}: write failed", path.string()));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw InputError(fmt::format("{}: cannot write: {}", path.string(), ec.message()));
  }
}

}  // namespace vl
