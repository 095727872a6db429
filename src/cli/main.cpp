// lessons: the Verified Lessons command line (list, run, audit, accept, spec, rng, eval, compare, onnx, export).
#include <array>
#include <cstdio>
#include <exception>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/errors.hpp"

namespace {

// CLI11 answers an unknown verb with "A subcommand is required"; name it and the known ones.
std::string unknown_verb(CLI::App& app, int argc, char** argv) {
  CLI::App* cur = &app;
  std::string path = "lessons";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') return "";
    const auto subs = cur->get_subcommands([](CLI::App*) { return true; });
    if (subs.empty()) return "";
    std::vector<std::string> names;
    CLI::App* next = nullptr;
    for (CLI::App* s : subs) {
      names.push_back(s->get_name());
      if (s->check_name(word)) next = s;
    }
    if (!next) return fmt::format("{}: unknown verb '{}' (known: {})", path, word, fmt::join(names, ", "));
    cur = next;
    path += " " + word;
  }
  return "";
}

// Each verb lives in its own cmd_*.cpp; one line each here.
struct Verb {
  std::array<std::string_view, 2> names;  // the verbs its add_*_command adds ("" : none)
  void (*add)(CLI::App&);
};
constexpr Verb kVerbs[] = {
    {{"list"}, vl::cli::add_list_command},         {{"run"}, vl::cli::add_run_command},
    {{"audit", "accept"}, vl::cli::add_audit_command}, {{"report"}, vl::cli::add_report_command},
    {{"spec"}, vl::cli::add_spec_command},         {{"backends"}, vl::cli::add_backends_command},
    {{"rng"}, vl::cli::add_rng_command},           {{"onnx"}, vl::cli::add_onnx_command},
    {{"compare"}, vl::cli::add_compare_command},   {{"eval"}, vl::cli::add_eval_command},
    {{"export"}, vl::cli::add_export_command},
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Verified Lessons: spec-driven verification of lessons on attention"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every verb");
  // Only the verb asked for is built (its options are most of a short command's time: 1 of the
  // 4 ms of `lessons eval attention` on a 16-row input); every verb for anything else (--help,
  // no verb, an unknown one), so that CLI11 lists them all.
  const Verb* asked = nullptr;
  for (const Verb& v : kVerbs)
    for (std::string_view name : v.names)
      if (argc > 1 && !name.empty() && argv[1] == name) asked = &v;
  if (asked) {
    asked->add(app);
  } else {
    for (const Verb& v : kVerbs) v.add(app);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (const std::string unknown = unknown_verb(app, argc, argv); !unknown.empty()) {
      fmt::print(stderr, "lessons: error: {}\n", unknown);
      return 2;
    }
    // --help prints and exits 0; a bad command line prints CLI11's message and exits 2, like
    // every other input error.
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const vl::cli::Exit& e) {
    return e.code;
  } catch (const vl::InputError& e) {
    fmt::print(stderr, "lessons: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "lessons: internal error: {}\n", e.what());
    return 3;
  }
  return 0;
}
