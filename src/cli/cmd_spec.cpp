// lessons spec: the specs as the engine parsed them, as JSON, for the tools that present them
// (docs/generate.py). The engine is the only parser of the spec format: what it refuses, no
// page shows; what a page shows, the audit read.
#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/errors.hpp"
#include "engine/audit.hpp"
#include "engine/report.hpp"
#include "engine/spec.hpp"

namespace vl::cli {

namespace {

struct SpecArgs {
  std::vector<std::string> files;
  std::string root, json;
};

// Every specs/*.md under the root, by name; specs/README.md describes the format and is none.
std::vector<std::filesystem::path> default_specs(const std::string& root_arg) {
  const std::filesystem::path root = root_arg.empty() ? default_root() : std::filesystem::path(root_arg);
  const auto dir = root / "specs";
  if (!std::filesystem::is_directory(dir)) throw InputError(fmt::format("{}: not a directory (give --root a checkout holding specs/)", dir.string()));
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".md" && entry.path().filename() != "README.md")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw InputError(fmt::format("{}: no spec (*.md)", dir.string()));
  return files;
}

nlohmann::ordered_json rule_json(const LineRule& r, int line, const std::string& written) {
  return {{"line", line}, {"written", written}, {"first_line", r.first_line}, {"last_line", r.last_line},
          {"number", r.number ? nlohmann::ordered_json(*r.number) : nlohmann::ordered_json(nullptr)}, {"kind", to_string(r.kind)},
          {"abs", r.abs_tol}, {"rel", r.rel_tol}, {"bound", r.bound}, {"rule", r.text}, {"reason", r.reason}};
}

// One block: kind, span and text; an engine block also has what the engine read from it, under
// its kind's name ("claim": {...}).
nlohmann::ordered_json block_json(const Spec& spec, const SpecBlock& b, const std::vector<std::string>& file_lines) {
  nlohmann::ordered_json j = {{"kind", to_string(b.kind)}, {"first_line", b.first_line}, {"last_line", b.last_line}, {"text", b.text}};
  switch (b.kind) {
    case BlockKind::prose: break;
    case BlockKind::claim: {
      const Claim& c = spec.claims[b.index];
      j["claim"] = {{"id", c.id}, {"kind", to_string(c.kind)}, {"tolerance", c.tolerance_text},
                    {"compare", c.compare ? nlohmann::ordered_json(to_string(*c.compare)) : nlohmann::ordered_json()}, {"statement", c.statement},
                    {"source", c.source}, {"measure", c.measure}, {"unit", c.unit}, {"refutes", c.refutes}, {"subject", to_string(c.subject)}, {"terms", c.terms}};
      nlohmann::ordered_json gaps = nlohmann::ordered_json::array();
      for (const auto& g : c.term_gaps) gaps.push_back({{"term", g.term}, {"why", g.note}});
      j["claim"]["term_gaps"] = gaps;
      break;
    }
    case BlockKind::listing: {
      const ListingSpec& l = spec.listings[b.index];
      nlohmann::ordered_json arrays = nlohmann::ordered_json::array();
      for (const auto& a : l.arrays) arrays.push_back({{"name", a.name}, {"golden", a.golden}, {"abs", a.abs_tolerance}});
      j["listing"] = {{"id", l.id}, {"function", l.function}, {"parameters", l.parameters}, {"source", l.source}, {"arrays", arrays}};
      break;
    }
    case BlockKind::output: {
      const OutputSpec& o = spec.outputs[b.index];
      j["output"] = {{"listing", o.listing}, {"lines", o.lines}, {"golden", o.golden}};
      break;
    }
    case BlockKind::rules: {
      const OutputSpec& o = spec.outputs[b.index];
      nlohmann::ordered_json rules = nlohmann::ordered_json::array();
      for (std::size_t k = 0; k < b.rule_lines.size(); ++k)
        rules.push_back(rule_json(o.rules[b.first_rule + k], b.rule_lines[k], file_lines[std::size_t(b.rule_lines[k] - 1)]));
      j["rules"] = {{"listing", o.listing}, {"rules", rules}};
      break;
    }
  }
  return j;
}

nlohmann::ordered_json spec_json(const Spec& spec) {
  std::vector<std::string> lines;  // the file's lines, for the rules as written
  for (std::size_t at = 0, end; at < spec.markdown.size(); at = end + 1) {
    end = spec.markdown.find('\n', at);
    lines.push_back(spec.markdown.substr(at, end - at));
  }
  nlohmann::ordered_json blocks = nlohmann::ordered_json::array();
  for (const auto& b : spec.blocks) blocks.push_back(block_json(spec, b, lines));
  return {{"file", spec.file.string()}, {"lesson", spec.lesson}, {"title", spec.title}, {"sources", spec.sources},
          {"blocks", blocks}};
}

void spec(const SpecArgs& args) {
  if (!args.json.empty() && !std::filesystem::is_directory(std::filesystem::absolute(args.json).parent_path()))
    throw InputError(fmt::format("{}: its folder does not exist", args.json));
  std::vector<std::filesystem::path> files(args.files.begin(), args.files.end());
  if (files.empty()) files = default_specs(args.root);
  // Every spec is parsed before anything is written: a malformed one leaves no (partial) JSON.
  nlohmann::ordered_json out = {{"specs", nlohmann::ordered_json::array()}};
  for (const auto& file : files) out["specs"].push_back(spec_json(parse_spec(file)));
  // A byte that is not UTF-8 (the specs are UTF-8 Markdown) is written as U+FFFD.
  const std::string text = out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  if (args.json.empty()) {
    std::cout << text;
  } else {
    write_file_atomically(args.json, text);
    fmt::print("spec JSON: {}\n", std::filesystem::absolute(args.json).string());
  }
}

}  // namespace

void add_spec_command(CLI::App& app) {
  auto args = std::make_shared<SpecArgs>();
  auto* cmd = app.add_subcommand("spec", "Export the specs as the engine parsed them (blocks, line spans, fields) as JSON");
  cmd->add_option("files", args->files, "Spec files (default: every specs/*.md of the root but README.md)");
  cmd->add_option("--root", args->root, "Checkout holding specs/ (default: this repository)");
  cmd->add_option("--json", args->json, "Write the JSON to this file (default: standard output)");
  cmd->callback([args] { spec(*args); });
}

}  // namespace vl::cli
