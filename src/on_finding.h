// --on-finding: running the user's command once per finding, at least once. Findings are queued
// in the database in the transaction that records them (RuleOptions::queue_deliveries); a
// finding leaves the queue only when the command exited 0 for it, so one whose command failed,
// or never ran because trialdb was killed, is delivered again by the next run with --on-finding.
#pragma once
#include <cstdint>
#include <set>
#include <string>

#include "rules_sql/rule_runner.h"

namespace trialdb::cli {

// A finding's value as trialdb prints it and passes it in TRIALDB_VALUE (%.9g).
std::string finding_value_text(double v);

// --on-finding-timeout's default: a notification (a webhook, a mail) takes seconds; a command
// still running after a minute is stuck, and would hold up a --follow for ever.
inline constexpr double kDefaultOnFindingTimeout = 60;

// Runs `cmd` (sh -c) for every queued finding of the runner's trials, oldest first, with
// TRIALDB_* variables describing it (docs/RULES.md), except those in *failed (they failed
// earlier in this process: a long --follow does not rerun a failing command at every poll).
// A command still running after timeout_seconds (0: no limit) is killed with everything it
// started (its process group) and counts as failed. Returns whether every command exited 0;
// each failure is added to *failed and reported on stderr as "trialdb <who>: ...".
bool deliver_findings(rules::RuleRunner& runner, const std::string& cmd, const std::string& db_path,
                      const std::string& who, double timeout_seconds, std::set<int64_t>* failed);

}  // namespace trialdb::cli
