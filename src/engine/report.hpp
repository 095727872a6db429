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

/// Write text to a file atomically (temp + rename); throws vl::InputError naming the path.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace vl
