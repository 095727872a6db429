#include "cli/report_output.hpp"

#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/errors.hpp"
#include "engine/report.hpp"

namespace vl::cli {

void check_report_paths(const ReportFiles& files) {
  for (const auto& path : {files.json, files.junit})
    if (!path.empty() && !std::filesystem::is_directory(std::filesystem::absolute(path).parent_path()))
      throw InputError(fmt::format("{}: its folder does not exist", path));
}

void print_summary(const AuditReport& report, const ReportFiles& files) { print_report(std::cout, report, files.verbose); }

void write_reports(const AuditReport& report, const ReportFiles& files) {
  if (!files.json.empty()) {
    write_file_atomically(files.json, report_json(report).dump(2) + "\n");
    fmt::print("JSON report: {}\n", std::filesystem::absolute(files.json).string());
  }
  if (!files.junit.empty()) {
    write_file_atomically(files.junit, report_junit(report));
    fmt::print("JUnit report: {}\n", std::filesystem::absolute(files.junit).string());
  }
  // A shard judges some of the items: one with nothing to judge (more shards than items, or only
  // N/A items) has not failed; whether the run checked anything is the merged report's to say.
  if (report.scope.shard.count > 1 ? report.failed() > 0 : !report.ok()) throw Exit{1};
}

}  // namespace vl::cli
