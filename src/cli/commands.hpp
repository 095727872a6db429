#pragma once
// Each verb of the `lessons` CLI registers itself on the CLI11 app from its own file.
#include <CLI/CLI.hpp>

namespace vl::cli {

/// Thrown by a verb to end the program with this status after it has printed its result
/// (e.g. `audit` exits 1 when a check failed). Errors in the input throw vl::InputError (exit 2).
struct Exit {
  int code;
};

void add_list_command(CLI::App& app);       // cmd_list.cpp
void add_run_command(CLI::App& app);        // cmd_run.cpp
void add_audit_command(CLI::App& app);      // cmd_audit.cpp   (audit, accept)
void add_report_command(CLI::App& app);     // cmd_report.cpp  (report merge: shard reports joined)
void add_spec_command(CLI::App& app);       // cmd_spec.cpp    (the parsed specs as JSON)
void add_rng_command(CLI::App& app);        // cmd_rng.cpp     (rng numpy ...; calls add_rng_torch)
void add_rng_torch(CLI::App& rng);          // cmd_rng_torch.cpp (rng torch ...)
void add_eval_command(CLI::App& app);       // cmd_eval.cpp
void add_eval_layers(CLI::App& eval);       // cmd_eval_layers.cpp (eval encoder-layer, decoder-layer)
void add_compare_command(CLI::App& app);    // cmd_compare.cpp
void add_onnx_command(CLI::App& app);       // cmd_onnx.cpp
void add_backends_command(CLI::App& app);   // cmd_backends.cpp
void add_export_command(CLI::App& app);     // cmd_export.cpp  (the listings' arrays as JSON, for the docs)

}  // namespace vl::cli
