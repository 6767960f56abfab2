// on_finding.h: the --on-finding command, run per queued finding with /bin/sh.
#include "src/on_finding.h"

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "src/output.h"

namespace trialdb::cli {

namespace {

// The exit status sh gives for a command that could not be run.
constexpr int kCannotRun = 127;
// A command killed by a signal reports 128 + the signal's number, as shells do.
constexpr int kSignalBase = 128;

// Runs cmd with /bin/sh, the finding in TRIALDB_* variables. Returns the exit status, or -1
// when it could not run.
int run_on_finding(const std::string& cmd, const std::string& db, const rules::Finding& f) {
  std::cout.flush();
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    setenv("TRIALDB_DB", db.c_str(), 1);
    setenv("TRIALDB_TRIAL", f.trial.c_str(), 1);
    setenv("TRIALDB_RULE", f.rule.c_str(), 1);
    setenv("TRIALDB_STEP", std::to_string(f.step).c_str(), 1);
    setenv("TRIALDB_MODE", f.mode.c_str(), 1);
    setenv("TRIALDB_MODE_STEP", std::to_string(f.mode_step).c_str(), 1);
    setenv("TRIALDB_TENSOR", f.tensor.c_str(), 1);
    setenv("TRIALDB_WORKER", f.worker.c_str(), 1);
    setenv("TRIALDB_VALUE", f.value ? finding_value_text(*f.value).c_str() : "", 1);
    setenv("TRIALDB_MESSAGE", f.message.c_str(), 1);
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(kCannotRun);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : kSignalBase + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

std::string finding_value_text(double v) {
  char buf[40];
  snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

bool deliver_findings(rules::RuleRunner& runner, const std::string& cmd, const std::string& db_path,
                      const std::string& who, std::set<int64_t>* failed) {
  bool all = true;
  for (const rules::Finding& f : runner.queued_deliveries()) {
    if (failed->count(f.id)) continue;
    const int rc = run_on_finding(cmd, db_path, f);
    if (rc == 0) {
      runner.confirm_delivery(f.id);
      continue;
    }
    std::cerr << "trialdb " << who << ": --on-finding command exited with " << rc << " for " << printable(f.rule) << " at step "
              << f.step << " of " << printable(f.trial) << " (kept; retried by the next run with --on-finding)\n";
    failed->insert(f.id);
    all = false;
  }
  return all;
}

}  // namespace trialdb::cli
