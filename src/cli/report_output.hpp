#pragma once
// What `lessons audit` and `lessons report merge` do with a finished report: the console summary,
// the JSON and JUnit files asked for, and the exit status (1 when anything failed).
#include <string>

#include "engine/audit.hpp"

namespace vl::cli {

struct ReportFiles {
  std::string json, junit;  // empty: not asked for
  bool verbose = false;
};

/// Refuse report paths whose folder does not exist (before any time is spent).
void check_report_paths(const ReportFiles& files);

/// Print the console summary (engine/report.hpp: print_report).
void print_summary(const AuditReport& report, const ReportFiles& files);

/// Write the files asked for, then throw Exit{1} unless the report is ok.
void write_reports(const AuditReport& report, const ReportFiles& files);

}  // namespace vl::cli
