#pragma once
// The audit's reports: the console summary, JSON (everything, for the docs and tools) and
// JUnit XML (one test case per claim and per listing, for CI dashboards).
#include <filesystem>
#include <ostream>

#include <nlohmann/json.hpp>

#include "engine/audit.hpp"

namespace vl {

/// Per lesson: each claim (status, measured value, tolerance, controls rejected), each listing
/// (each failing line: documented vs produced and the rule), then totals and the last line
/// "N passed, N failed".
void print_report(std::ostream& out, const AuditReport& report, bool verbose);

nlohmann::json report_json(const AuditReport& report);
std::string report_junit(const AuditReport& report);

/// A report written by report_json, read back (engine/report_read.cpp); throws vl::InputError
/// naming the file when it cannot be read or is not such a report.
AuditReport read_report_json(const std::filesystem::path& file);

/// One shard's report and the file it came from (for messages).
struct ShardReport {
  std::string file;
  AuditReport report;
};

/// The reports of every shard of one run (lessons audit --shard K/N for K = 1 … N) joined into
/// the report the run gives unsharded: each lesson's claims and listings in the run's item order,
/// problems once, the latest date, and each provenance field that differs between the shards'
/// machines with its distinct values joined by "; ". Refuses (vl::InputError naming the files)
/// reports of different commits, specs, backends, selections, precisions, seeds or shard counts, a
/// shard missing or given twice, an item that is not its shard's, and a run's item in no report.
AuditReport merge_reports(const std::vector<ShardReport>& shards);

/// Write text to a file atomically (temp + rename); throws vl::InputError naming the path.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace vl
