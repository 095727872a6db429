// lessons report merge: join the JSON reports of an audit's shards (lessons audit --shard K/N)
// into one report, written and judged as the unsharded audit's would be.
#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/report_output.hpp"
#include "core/errors.hpp"
#include "engine/report.hpp"

namespace vl::cli {

namespace {

struct MergeArgs {
  std::vector<std::string> inputs;
  ReportFiles files;
};

void merge(const MergeArgs& args) {
  check_report_paths(args.files);
  for (const auto& out : {args.files.json, args.files.junit})
    for (const auto& in : args.inputs)
      if (!out.empty() && std::filesystem::exists(out) && std::filesystem::equivalent(out, in))
        throw InputError(fmt::format("{}: it is one of the reports to merge; write the merged report elsewhere", out));
  std::vector<ShardReport> shards;
  for (const auto& file : args.inputs) shards.push_back({file, read_report_json(file)});
  const AuditReport report = merge_reports(shards);
  print_summary(report, args.files);
  fmt::print("-- merged {} shard report(s) of commit {}\n", shards.size(), report.provenance.commit);
  write_reports(report, args.files);
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto* report = app.add_subcommand("report", "Work with audit reports");
  report->require_subcommand(1);
  auto args = std::make_shared<MergeArgs>();
  auto* cmd = report->add_subcommand("merge", "Join the --json reports of every shard of one audit (lessons audit --shard K/N) "
                                              "into the report the audit gives unsharded");
  cmd->add_option("reports", args->inputs, "The shards' JSON reports, one per shard, in any order")->required()->check(CLI::ExistingFile);
  cmd->add_option("--json", args->files.json, "Write the merged report as JSON to this file (the docs' input)");
  cmd->add_option("--junit", args->files.junit, "Write the merged report as JUnit XML to this file");
  cmd->add_flag("-v,--verbose", args->files.verbose, "Show every check, control and line, not only failures");
  cmd->callback([args] { merge(*args); });
}

}  // namespace vl::cli
