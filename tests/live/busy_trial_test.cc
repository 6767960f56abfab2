// A trial being followed is busy: while `trialdb ingest --follow` (a real process) follows a
// trial, `rm` and `rename` of it fail, change nothing and name the follower (its pid, host and
// since when); once the follower is killed, its claim has expired and both work. A follower
// whose trial is removed anyway (its claim gone, as after it was taken for expired) stops by
// itself and writes nothing more: no row of the trial comes back.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ingest/writer/trial_writer.h"
#include "schema/database.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;
using trialdb::test::TempDir;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

pid_t spawn(const std::vector<std::string>& args, const fs::path& err) {
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    FILE* o = std::freopen("/dev/null", "w", stdout);
    FILE* e = std::freopen(err.c_str(), "w", stderr);
    (void)o, (void)e;
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

struct Result {
  int code = -1;
  std::string err;
};

Result run(const std::vector<std::string>& args, const fs::path& err) {
  pid_t pid = spawn(args, err);
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream in(err);
  std::stringstream text;
  text << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

// Waits up to `seconds` for the child; -1 if it is still running.
int wait_for(pid_t pid, double seconds) {
  auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < until) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

void write_step(TrialWriter& w, int step) {
  std::vector<float> weight(16, static_cast<float>(step));
  auto s = w.begin_step(step, "worker_0", TrialMode::kTrain, step);
  s->add_tensor("dense.weight", DType::Float32, {4, 4}, weight.data(), weight.size() * 4);
  s->close();
}

int64_t count(const std::string& db_path, const std::string& sql) {
  Database db(db_path, OpenMode::kReadOnly);
  Statement q(db.handle(), sql);
  q.step();
  return q.int64(0);
}

// Waits until the follower holds its claim on a trial with steps in it.
bool wait_until_followed(const std::string& db_path, double seconds) {
  auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < until) {
    try {
      if (count(db_path, "SELECT count(*) FROM trial_follower") > 0 && count(db_path, "SELECT count(*) FROM steps") > 1)
        return true;
    } catch (const Error&) {  // not created yet
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

struct Followed {
  TempDir tmp;
  fs::path trial = tmp.path / "job";
  std::string db = (tmp.path / "t.db").string();
  TrialWriter writer{trial.string()};
  pid_t follower = -1;

  Followed() {
    for (int s = 0; s < 3; ++s) write_step(writer, s);
    follower =
        spawn({TRIALDB_BIN, "ingest", trial.string(), "--db", db, "--name", "job", "--follow", "--interval", "0.05"},
              tmp.path / "follow.err");
  }
  ~Followed() {
    if (follower > 0 && wait_for(follower, 0) == -1) {
      kill(follower, SIGKILL);
      waitpid(follower, nullptr, 0);
    }
  }
  std::string follower_stderr() const {
    std::ifstream in(tmp.path / "follow.err");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

TEST(BusyTrial, RmAndRenameOfAFollowedTrialAreRefusedNamingTheFollower) {
  Followed f;
  ASSERT_TRUE(wait_until_followed(f.db, 30)) << f.follower_stderr();
  const int64_t values = count(f.db, "SELECT count(*) FROM tensor_values");
  const std::string pid = "pid " + std::to_string(f.follower);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{TRIALDB_BIN, "rm", "--db", f.db, "--trial", "job"},
        std::vector<std::string>{TRIALDB_BIN, "rename", "--db", f.db, "--trial", "job", "--to", "other"}}) {
    const Result r = run(args, f.tmp.path / "cmd.err");
    EXPECT_EQ(r.code, 1) << args[1] << ": " << r.err;
    EXPECT_NE(r.err.find("being followed"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(pid), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(" on host "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(" since "), std::string::npos) << r.err;
  }
  EXPECT_EQ(count(f.db, "SELECT count(*) FROM trials WHERE trial = 'job'"), 1);
  EXPECT_GE(count(f.db, "SELECT count(*) FROM tensor_values"), values);
  EXPECT_EQ(wait_for(f.follower, 0), -1) << "the follower stopped: " << f.follower_stderr();

  // A follower that crashed holds nothing.
  kill(f.follower, SIGKILL);
  waitpid(f.follower, nullptr, 0);
  f.follower = -1;
  const Result renamed =
      run({TRIALDB_BIN, "rename", "--db", f.db, "--trial", "job", "--to", "other"}, f.tmp.path / "cmd.err");
  EXPECT_EQ(renamed.code, 0) << renamed.err;
  const Result removed = run({TRIALDB_BIN, "rm", "--db", f.db, "--trial", "other"}, f.tmp.path / "cmd.err");
  EXPECT_EQ(removed.code, 0) << removed.err;
  EXPECT_EQ(count(f.db, "SELECT count(*) FROM trial"), 0);
  EXPECT_EQ(count(f.db, "SELECT count(*) FROM trial_follower"), 0);
}

TEST(BusyTrial, AFollowerWhoseTrialIsRemovedAnywayStopsAndWritesNothingMore) {
  Followed f;
  ASSERT_TRUE(wait_until_followed(f.db, 30)) << f.follower_stderr();
  {
    // What an rm does after it found the claim expired: the claim and the trial go.
    Database db(f.db, OpenMode::kExisting);
    db.exec("DELETE FROM trial_follower");
    const Result removed = run({TRIALDB_BIN, "rm", "--db", f.db, "--trial", "job"}, f.tmp.path / "cmd.err");
    ASSERT_EQ(removed.code, 0) << removed.err;
  }
  for (int s = 3; s < 6; ++s) write_step(f.writer, s);  // the job goes on
  EXPECT_EQ(wait_for(f.follower, 10), 1) << "the follower did not stop: " << f.follower_stderr();
  f.follower = -1;
  EXPECT_NE(f.follower_stderr().find("was removed or renamed while it was followed"), std::string::npos)
      << f.follower_stderr();
  for (const char* table : {"trial", "value", "step", "tensor", "worker", "ingested_file", "trial_follower"})
    EXPECT_EQ(count(f.db, std::string("SELECT count(*) FROM ") + table), 0) << table;
}

}  // namespace
