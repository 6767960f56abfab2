// on_finding.h: the --on-finding command, run per queued finding with /bin/sh.
#include "src/on_finding.h"

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "src/output.h"

namespace trialdb::cli {

namespace {

// The exit status sh gives for a command that could not be run.
constexpr int kCannotRun = 127;
// A command killed by a signal reports 128 + the signal's number, as shells do.
constexpr int kSignalBase = 128;
// run_on_finding's answer for a command killed at its time limit.
constexpr int kTimedOut = -2;
// How often a running command is looked at.
constexpr auto kPollInterval = std::chrono::milliseconds(10);

// Runs cmd with /bin/sh, the finding in TRIALDB_* variables, in a process group of its own (so
// that a time limit kills what it started too). Returns the exit status, -1 when it could not
// run, kTimedOut when it was killed after timeout_seconds.
int run_on_finding(const std::string& cmd, const std::string& db, const rules::Finding& f, double timeout_seconds) {
  std::cout.flush();
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    setpgid(0, 0);
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
  setpgid(pid, pid);  // also here: whichever runs first, the group exists before a kill
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, timeout_seconds > 0 ? WNOHANG : 0);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return -1;
    if (timeout_seconds > 0 && std::chrono::steady_clock::now() >= deadline) {
      kill(-pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return kTimedOut;
    }
    if (done == 0) std::this_thread::sleep_for(kPollInterval);
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
                      const std::string& who, double timeout_seconds, std::set<int64_t>* failed) {
  bool all = true;
  for (const rules::Finding& f : runner.queued_deliveries()) {
    if (failed->count(f.id)) continue;
    const int rc = run_on_finding(cmd, db_path, f, timeout_seconds);
    if (rc == 0) {
      runner.confirm_delivery(f.id);
      continue;
    }
    const std::string what = rc == kTimedOut ? "was still running after --on-finding-timeout " +
                                                   finding_value_text(timeout_seconds) + " s and was killed"
                                             : "exited with " + std::to_string(rc);
    std::cerr << "trialdb " << who << ": --on-finding command " << what << " for " << printable(f.rule) << " at step "
              << f.step << " of " << printable(f.trial) << " (kept; retried by the next run with --on-finding)\n";
    failed->insert(f.id);
    all = false;
  }
  return all;
}

}  // namespace trialdb::cli
