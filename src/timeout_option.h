// Time limits given on the command line (sql --timeout, rules --timeout, --on-finding-timeout):
// one option shape, one check.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

namespace trialdb::cli {

// Adds option `name` (a number of seconds, 0 for no limit; no NaN, no negative, at most
// kMaxTimeoutSeconds) storing into *seconds, whose value is the default the help states.
CLI::Option* add_timeout_option(CLI::App* cmd, double* seconds, const std::string& help,
                                const std::string& name = "--timeout");

// rules --timeout and ingest --rule-timeout's default, per rule and batch of steps: the built-in
// rules take well under a second a batch on large trials; a rule past a minute is looping.
inline constexpr double kDefaultRuleTimeout = 60;

// A year: beyond it a limit is a typo, not a wish.
inline constexpr double kMaxTimeoutSeconds = 365.0 * 24 * 3600;

}  // namespace trialdb::cli
