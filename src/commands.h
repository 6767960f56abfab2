// The trialdb subcommands. Each add_* registers one subcommand on the CLI11 app; its callback
// sets the process exit code through exit_code() (see README "Exit codes").
#pragma once
#include <CLI/CLI.hpp>

namespace trialdb::cli {

// Exit codes, documented in README.md.
enum Exit : int {
  kExitOk = 0,
  kExitError = 1,     // failed: nothing (more) was done
  kExitUsage = 2,     // bad command line
  kExitFindings = 3,  // rules --exit-code: a new finding was recorded
  kExitPartial = 4,   // finished with errors: bad input was reported and skipped
};
int& exit_code();

void add_ingest(CLI::App& app);
void add_info(CLI::App& app);
void add_sql(CLI::App& app);
void add_synth(CLI::App& app);
void add_compare(CLI::App& app);
void add_plot(CLI::App& app);
void add_shell(CLI::App& app);
void add_rules(CLI::App& app);
void add_trial_commands(CLI::App& app);  // rm, rename
void add_compact(CLI::App& app);
void add_export(CLI::App& app);
void add_serve(CLI::App& app);

}  // namespace trialdb::cli
