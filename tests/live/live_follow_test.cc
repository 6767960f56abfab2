// `trialdb ingest --follow --rules` while a writer produces a trial step by step the way a live
// job does: index files before their event files, event files flushed in two halves, and two
// workers out of step. A reader polls the database meanwhile. Checks: every step becomes
// visible, each within 2 s of completing; no reader ever sees part of a step; findings appear
// as the steps arrive; follow exits by itself soon after the end marker; and the result equals
// a one-shot ingest of the finished trial.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "ingest/writer/trial_writer.h"
#include "schema/database.h"
#include "tests/common/rows_text.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;
using trialdb::test::rows_text;
using trialdb::test::TempDir;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

pid_t spawn(const std::vector<std::string>& args, const fs::path& out) {
  std::fflush(stdout);  // the child must not replay our buffered output
  pid_t pid = fork();
  if (pid == 0) {
    FILE* f = std::freopen(out.c_str(), "w", stdout);
    (void)f;
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int run(const std::vector<std::string>& args) {
  pid_t pid = spawn(args, "/dev/null");
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
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

std::string dump_views(const std::string& db_path) {
  Database db(db_path);
  return rows_text(
      db.handle(),
      {"SELECT workers, ended FROM trials", "SELECT step, mode, mode_step, complete FROM steps ORDER BY step",
       "SELECT tensor FROM tensors ORDER BY 1", "SELECT collection, tensor FROM collections ORDER BY 1, 2",
       "SELECT tensor, step, worker, mode, mode_step, dtype, shape, hex(value) FROM tensor_values ORDER BY 1, 2, 3",
       "SELECT tensor, step, worker, reduction, abs, value FROM reductions ORDER BY 1, 2, 3, 4, 5"});
}

constexpr int kSteps = 10;
constexpr int kTensorsPerWorker = 3;  // weight, gradient (all zero: vanishing_gradient fires), loss

// A collection of the tensors matching one include_regex, every other setting the default.
CollectionSpec collection(const std::string& name, const std::string& include_regex) {
  CollectionSpec c;
  c.name = name;
  c.include_regex = {include_regex};
  return c;
}

void write_worker_step(TrialWriter& w, int step, const std::string& worker) {
  std::vector<float> weight(64), grad(64, 0.0f);
  for (int i = 0; i < 64; ++i) weight[i] = static_cast<float>(std::sin(step * 64 + i));
  float loss = 1.0f / (1 + step);
  auto s = w.begin_step(step, worker, TrialMode::kTrain, step, /*staged=*/true);
  s->add_tensor("dense.weight", DType::Float32, {8, 8}, weight.data(), weight.size() * 4);
  s->add_tensor("gradient/dense.weight", DType::Float32, {8, 8}, grad.data(), grad.size() * 4);
  s->add_tensor("loss_output_0", DType::Float32, {}, &loss, 4);
  // As a live job may: the index lands first, then the event file in two flushes.
  s->write_index_file();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  s->write_event_prefix(s->event_bytes() / 2 + 3);  // cut inside a record
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  s->close();
}

}  // namespace

TEST(LiveFollow, StepsAndFindingsAppearWhileTheJobTrains) {
  TempDir tmp;
  fs::path trial = tmp.path / "live_trial";
  std::string db_path = (tmp.path / "live.db").string();
  TrialWriter w(trial.string());
  std::vector<CollectionSpec> colls = {collection("weights", "^(?!gradient).*weight"),
                                       collection("gradients", "^gradient"), collection("losses", "loss")};
  w.write_collections("worker_0", 2, colls);
  w.write_collections("worker_1", 2, colls);
  { Database init(db_path); }  // create it, so the reader can open it at once

  pid_t follower = spawn({TRIALDB_BIN, "ingest", trial.string(), "--db", db_path, "--name", "live", "--follow",
                          "--interval", "0.1", "--rules", "--quiet"},
                         tmp.path / "follow.out");

  std::mutex mu;
  std::map<int, Clock::time_point> completed_at, visible_at, finding_at;
  std::atomic<bool> stop{false};
  std::atomic<int> partial_seen{0}, reader_errors{0};
  std::thread reader([&] {
    Database db(db_path);
    while (!stop) {
      try {
        // One read transaction: the snapshot must hold whole steps only.
        db.exec("BEGIN");
        {
          Statement q(db.handle(), "SELECT step, count(*) FROM tensor_values WHERE trial = 'live' GROUP BY step");
          while (q.step()) {
            int step = static_cast<int>(q.int64(0));
            if (q.int64(1) != 2 * kTensorsPerWorker) ++partial_seen;
            std::lock_guard<std::mutex> l(mu);
            visible_at.emplace(step, Clock::now());
          }
        }
        {
          Statement has(db.handle(), "SELECT 1 FROM sqlite_master WHERE name = 'rule_findings'");
          if (has.step()) {
            Statement f(db.handle(), "SELECT DISTINCT step FROM rule_findings WHERE rule = 'vanishing_gradient'");
            while (f.step()) {
              std::lock_guard<std::mutex> l(mu);
              finding_at.emplace(static_cast<int>(f.int64(0)), Clock::now());
            }
          }
        }
        db.exec("COMMIT");
      } catch (const std::exception& e) {
        ++reader_errors;
        sqlite3_exec(db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });

  // worker_0 runs one step ahead of worker_1; a step completes when worker_1 writes it.
  for (int step = 0; step <= kSteps; ++step) {
    if (step < kSteps) write_worker_step(w, step, "worker_0");
    if (step > 0) {
      write_worker_step(w, step - 1, "worker_1");
      std::lock_guard<std::mutex> l(mu);
      completed_at[step - 1] = Clock::now();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  w.write_end_marker();
  auto ended = Clock::now();
  int code = wait_for(follower, 5.0);
  double exit_after = std::chrono::duration<double>(Clock::now() - ended).count();
  if (code < 0) kill(follower, SIGKILL), waitpid(follower, nullptr, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stop = true;
  reader.join();

  EXPECT_EQ(code, 0) << "follow did not exit within 5 s of the end marker";
  EXPECT_LT(exit_after, 5.0);
  EXPECT_EQ(partial_seen.load(), 0) << "a reader saw part of a step";
  EXPECT_EQ(reader_errors.load(), 0);
  double worst = 0;
  for (int step = 0; step < kSteps; ++step) {
    ASSERT_TRUE(visible_at.count(step)) << "step " << step << " never became visible";
    double delay = std::chrono::duration<double>(visible_at[step] - completed_at[step]).count();
    worst = std::max(worst, delay);
    EXPECT_LT(delay, 2.0) << "step " << step;
    ASSERT_TRUE(finding_at.count(step)) << "no vanishing_gradient finding for step " << step;
    // Findings arrive while the job trains, not only at the end.
    if (step < kSteps - 1) {
      EXPECT_LT(finding_at[step], ended) << "step " << step;
    }
  }
  std::cout << "worst completion-to-visible delay: " << worst << " s; follow exited " << exit_after
            << " s after the end marker\n";

  std::string once = (tmp.path / "once.db").string();
  ASSERT_EQ(run({TRIALDB_BIN, "ingest", trial.string(), "--db", once, "--name", "live", "--quiet"}), 0);
  EXPECT_EQ(dump_views(db_path), dump_views(once));
}

TEST(LiveFollow, SigtermExitsCleanlyKeepingCompleteSteps) {
  TempDir tmp;
  fs::path trial = tmp.path / "t";
  std::string db_path = (tmp.path / "t.db").string();
  TrialWriter w(trial.string());
  w.write_collections("worker_0", 1, {collection("losses", "loss")});
  for (int step = 0; step < 3; ++step) write_worker_step(w, step, "worker_0");
  pid_t follower =
      spawn({TRIALDB_BIN, "ingest", trial.string(), "--db", db_path, "--follow", "--interval", "0.1", "--quiet"},
            "/dev/null");
  // No end marker: follow keeps running until told to stop.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(wait_for(follower, 0.1), -1) << "follow exited without an end marker";
  kill(follower, SIGTERM);
  EXPECT_EQ(wait_for(follower, 5.0), 0);
  Database db(db_path);
  Statement q(db.handle(), "SELECT count(*) FROM steps WHERE complete");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 3);
}

TEST(LiveFollow, WaitsForTheTrialFolderToAppear) {
  TempDir tmp;
  fs::path trial = tmp.path / "not_yet";
  std::string db_path = (tmp.path / "t.db").string();
  pid_t follower =
      spawn({TRIALDB_BIN, "ingest", trial.string(), "--db", db_path, "--follow", "--interval", "0.1", "--quiet"},
            "/dev/null");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(wait_for(follower, 0.1), -1) << "follow gave up before the folder existed";
  TrialWriter w(trial.string());
  w.write_collections("worker_0", 1, {collection("losses", "loss")});
  for (int step = 0; step < 2; ++step) write_worker_step(w, step, "worker_0");
  w.write_end_marker();
  EXPECT_EQ(wait_for(follower, 5.0), 0);
  Database db(db_path);
  Statement q(db.handle(), "SELECT count(*) FROM steps WHERE complete");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64(0), 2);
}
