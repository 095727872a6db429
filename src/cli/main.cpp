// lessons: the Verified Lessons command line (list, run, audit, accept, rng, eval, compare, onnx).
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cli/commands.hpp"
#include "engine/errors.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Verified Lessons: spec-driven verification of lessons on attention"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every verb");
  // Each verb lives in its own cmd_*.cpp; one line each here.
  // VERBS-BEGIN
  vl::cli::add_list_command(app);
  vl::cli::add_run_command(app);
  vl::cli::add_audit_command(app);
  vl::cli::add_rng_command(app);
  vl::cli::add_onnx_command(app);
  vl::cli::add_compare_command(app);
  vl::cli::add_eval_command(app);
  // VERBS-END
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
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
