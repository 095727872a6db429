// lessons report merge: the reports of the N shards of one audit (lessons audit --shard K/N,
// engine/audit.hpp: Shard) joined into the report the run unsharded gives, item for item.
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.hpp"
#include "engine/report.hpp"

namespace vl {

namespace {

// A field of every shard's provenance that may differ between CI runners (the CPU, the compiler):
// each distinct value once, in shard order, joined with "; ", so the merged report says what ran.
std::string distinct(const std::vector<ShardReport>& shards, std::string Provenance::*field) {
  std::vector<std::string> seen;
  for (const auto& s : shards)
    if (const std::string& v = s.report.provenance.*field; !v.empty() && std::find(seen.begin(), seen.end(), v) == seen.end())
      seen.push_back(v);
  return fmt::format("{}", fmt::join(seen, "; "));
}

template <class T>
void same(const std::vector<ShardReport>& shards, const T& (*field)(const AuditReport&), const char* what) {
  for (const auto& s : shards)
    if (field(s.report) != field(shards.front().report))
      throw InputError(fmt::format("{} and {}: reports of different runs ({} differ); a merge joins the shards of one run",
                                   shards.front().file, s.file, what));
}

void add_unique(std::vector<std::string>& to, const std::vector<std::string>& from) {
  for (const auto& p : from)
    if (std::find(to.begin(), to.end(), p) == to.end()) to.push_back(p);
}

}  // namespace

AuditReport merge_reports(const std::vector<ShardReport>& shards) {
  if (shards.empty()) throw InputError("report merge: name the JSON report of every shard (lessons audit --shard K/N --json ...)");
  same<std::string>(shards, [](const AuditReport& r) -> const std::string& { return r.provenance.commit; }, "commits");
  same<std::string>(shards, [](const AuditReport& r) -> const std::string& { return r.scope.specs_sha256; }, "specs");
  same<std::string>(shards, [](const AuditReport& r) -> const std::string& { return r.provenance.backend; }, "backends");
  same<std::vector<std::string>>(shards, [](const AuditReport& r) -> const std::vector<std::string>& { return r.scope.select; },
                                 "selections");
  same<std::vector<std::string>>(shards, [](const AuditReport& r) -> const std::vector<std::string>& { return r.scope.precisions; },
                                 "precisions");
  for (const auto& s : shards)
    if (s.report.scope.items != shards.front().report.scope.items)
      throw InputError(fmt::format("{} and {}: reports of different runs (the number of items differs)", shards.front().file, s.file));
  for (const auto& s : shards)
    if (s.report.scope.cases != shards.front().report.scope.cases || s.report.scope.seed != shards.front().report.scope.seed)
      throw InputError(fmt::format("{} and {}: reports of different runs (generated cases: --cases or --seed differ)",
                                   shards.front().file, s.file));
  const int n = shards.front().report.scope.shard.count;
  std::vector<const ShardReport*> by_index(n, nullptr);
  for (const auto& s : shards) {
    const Shard& k = s.report.scope.shard;
    if (k.count != n || s.report.scope.computation_only != shards.front().report.scope.computation_only)
      throw InputError(fmt::format("{} and {}: reports of different runs ({})", shards.front().file, s.file,
                                   k.count != n ? fmt::format("shard {} and {}", shards.front().report.scope.shard.str(), k.str())
                                                : std::string("--computation-only in one only")));
    if (by_index[k.index - 1])
      throw InputError(fmt::format("{} and {}: both are shard {}", by_index[k.index - 1]->file, s.file, k.str()));
    by_index[k.index - 1] = &s;
  }
  for (int k = 0; k < n; ++k)
    if (!by_index[k]) throw InputError(fmt::format("report merge: shard {}/{} is missing; every shard of the run must be named", k + 1, n));

  AuditReport merged = by_index[0]->report;
  merged.scope.shard = Shard{};
  for (auto field : {&Provenance::compiler, &Provenance::build, &Provenance::blas, &Provenance::cpu, &Provenance::cpu_vector,
                     &Provenance::kernel_path, &Provenance::blas_core, &Provenance::blas_narrower})
    merged.provenance.*field = distinct(shards, field);
  for (const auto& s : shards) merged.provenance.date = std::max(merged.provenance.date, s.report.provenance.date);  // ISO 8601
  for (auto& l : merged.lessons) l.claims.clear(), l.listings.clear();
  std::set<int> items;
  for (const ShardReport* s : by_index) {
    const auto& lessons = s->report.lessons;
    if (lessons.size() != merged.lessons.size())
      throw InputError(fmt::format("{} and {}: different lessons audited", by_index[0]->file, s->file));
    add_unique(merged.problems, s->report.problems);
    for (std::size_t i = 0; i < lessons.size(); ++i) {
      LessonResult& to = merged.lessons[i];
      if (lessons[i].id != to.id) throw InputError(fmt::format("{} and {}: different lessons audited", by_index[0]->file, s->file));
      add_unique(to.problems, lessons[i].problems);
      auto mine = [&](int item) {
        if (!s->report.scope.shard.takes(item) || !items.insert(item).second)
          throw InputError(fmt::format("{}: item {} is not shard {}'s, or another report has it too", s->file, item,
                                       s->report.scope.shard.str()));
      };
      for (const auto& c : lessons[i].claims) mine(c.item), to.claims.push_back(c);
      for (const auto& l : lessons[i].listings) mine(l.item), to.listings.push_back(l);
    }
  }
  // Every item of the run, each once: a shard report with an item deleted is not the shard.
  const int total = merged.scope.items;
  if (int(items.size()) != total || (total > 0 && (*items.begin() != 0 || *items.rbegin() != total - 1))) {
    int missing = 0;
    while (items.count(missing)) ++missing;
    throw InputError(fmt::format("report merge: item {} of the run's {} is in no report ({} of them are): a shard report is "
                                 "incomplete or edited", missing, total, items.size()));
  }
  for (auto& l : merged.lessons) {
    std::sort(l.claims.begin(), l.claims.end(), [](const auto& a, const auto& b) { return a.item < b.item; });
    std::sort(l.listings.begin(), l.listings.end(), [](const auto& a, const auto& b) { return a.item < b.item; });
  }
  return merged;
}

}  // namespace vl
