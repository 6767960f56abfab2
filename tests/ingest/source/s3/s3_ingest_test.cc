// End to end: `trialdb ingest s3://...` from a real S3 server (s3rver) must produce exactly the
// rows a local ingest of the same fixture produces, in every public view.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "s3rver_suite.h"
#include "schema/database.h"
#include "tests/common/temp_dir.h"

extern char** environ;
namespace fs = std::filesystem;

namespace trialdb {
namespace {

using test::fixture_dir;
using test::fixture_url;
using test::kFixtures;

struct RunResult {
  int exit_code = -1;
  std::string output;
};

RunResult run(const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv;
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  RunResult r;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&fa);
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  r.output = ss.str();
  return r;
}

// Every row of a view as one string (typed, byte-exact: blobs and REAL bits included), sorted,
// so the comparison does not depend on row order. skip_column drops e.g. trials.path.
std::vector<std::string> view_rows(Database& db, const std::string& view, const std::string& skip_column = "") {
  Statement st(db.handle(), "SELECT * FROM " + view);
  std::vector<std::string> rows;
  while (st.step()) {
    std::string row;
    sqlite3_stmt* s = st.handle();
    for (int c = 0; c < sqlite3_column_count(s); ++c) {
      if (sqlite3_column_name(s, c) == skip_column) continue;
      int type = sqlite3_column_type(s, c);
      row += std::to_string(type) + ":";
      if (type == SQLITE_INTEGER) {
        row += std::to_string(sqlite3_column_int64(s, c));
      } else if (type == SQLITE_FLOAT) {
        double d = sqlite3_column_double(s, c);
        uint64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        row += std::to_string(bits);
      } else if (type != SQLITE_NULL) {
        const void* p = sqlite3_column_blob(s, c);
        int n = sqlite3_column_bytes(s, c);
        row += std::to_string(n) + ":" + std::string(static_cast<const char*>(p), static_cast<size_t>(n));
      }
      row += "|";
    }
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

class S3Ingest : public test::S3rverSuite {};

TEST_F(S3Ingest, EveryViewEqualsALocalIngest) {
  test::TempDir tmp("trialdb-s3-ingest");
  const std::string dir = tmp.path.string();

  for (const std::string& name : kFixtures) {
    SCOPED_TRACE(name);
    const std::string local_db = dir + "/" + name + ".local.db", s3_db = dir + "/" + name + ".s3.db";
    RunResult local =
        run({TRIALDB_BIN, "ingest", fixture_dir(name), "--db", local_db, "--name", name, "-q"}, dir + "/local.log");
    RunResult remote =
        run({TRIALDB_BIN, "ingest", fixture_url(name), "--db", s3_db, "--name", name, "-q"}, dir + "/s3.log");
    ASSERT_EQ(local.exit_code, 0) << local.output;
    ASSERT_EQ(remote.exit_code, 0) << remote.output;

    Database a(local_db, OpenMode::kExisting), b(s3_db, OpenMode::kExisting);
    std::vector<std::string> trials_a = view_rows(a, "trials", "path"), trials_b = view_rows(b, "trials", "path");
    ASSERT_EQ(trials_a.size(), 1u);
    EXPECT_EQ(trials_a, trials_b);
    {
      Statement st(b.handle(), "SELECT path FROM trials");
      ASSERT_TRUE(st.step());
      EXPECT_EQ(st.text(0), fixture_url(name));
    }
    for (const char* view : {"steps", "tensors", "collections", "tensor_values", "reductions", "ingest_errors"}) {
      std::vector<std::string> ra = view_rows(a, view), rb = view_rows(b, view);
      if (std::string(view) != "ingest_errors") {
        EXPECT_FALSE(ra.empty()) << view;
      }
      EXPECT_EQ(ra.size(), rb.size()) << view;
      EXPECT_TRUE(ra == rb) << view << " differs between the local and the S3 ingest";
    }
  }
}

// A selective ingest from S3 transfers only the selected records (and the index files), not the
// trial: the loss curve of a trial of large tensors costs a small fraction of its bytes, and
// stores what the same selective ingest of the local folder stores.
TEST_F(S3Ingest, ASelectiveIngestTransfersOnlyTheSelectedRecords) {
  test::TempDir tmp("trialdb-s3-selective");
  const std::string dir = tmp.path.string(), trial = dir + "/big";
  RunResult synth =
      run({TRIALDB_BIN, "synth", trial, "--steps", "10", "--tensors", "4", "--elements", "65536"}, dir + "/synth.log");
  ASSERT_EQ(synth.exit_code, 0) << synth.output;
  uint64_t trial_bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(trial))
    if (e.is_regular_file()) trial_bytes += e.file_size();
  test::S3Uploader(server_->endpoint()).put_tree(trial, test::kTrialsBucket, "jobs/big/debug-output");
  const std::string url = std::string("s3://") + test::kTrialsBucket + "/jobs/big/debug-output";

  const uint64_t before = server_->bytes_sent();
  RunResult loss = run({TRIALDB_BIN, "ingest", url, "--db", dir + "/s3.db", "--tensors", "Loss", "--name", "big", "-q"},
                       dir + "/s3.log");
  ASSERT_EQ(loss.exit_code, 0) << loss.output;
  const uint64_t selective = server_->bytes_sent() - before;
  EXPECT_LT(selective * 20, trial_bytes) << selective << " of " << trial_bytes << " bytes sent";
  RunResult local =
      run({TRIALDB_BIN, "ingest", trial, "--db", dir + "/local.db", "--tensors", "Loss", "--name", "big", "-q"},
          dir + "/local.log");
  ASSERT_EQ(local.exit_code, 0) << local.output;
  Database a(dir + "/local.db", OpenMode::kExisting), b(dir + "/s3.db", OpenMode::kExisting);
  EXPECT_FALSE(view_rows(a, "tensor_values").empty());
  EXPECT_TRUE(view_rows(a, "tensor_values") == view_rows(b, "tensor_values"));
  EXPECT_TRUE(view_rows(a, "reductions") == view_rows(b, "reductions"));

  // Two records a large one apart (a weight and the loss): each is fetched on its own, the bytes
  // between them never are (a fifth of the trial, not the three fifths up to the loss).
  const uint64_t sparse_before = server_->bytes_sent();
  const std::string weight_and_loss = "^Net_fc0\\.weight$|Loss";
  RunResult sparse =
      run({TRIALDB_BIN, "ingest", url, "--db", dir + "/sparse.db", "--tensors", weight_and_loss, "--name", "big", "-q"},
          dir + "/sparse.log");
  ASSERT_EQ(sparse.exit_code, 0) << sparse.output;
  EXPECT_LT((server_->bytes_sent() - sparse_before) * 4, trial_bytes);
  RunResult sparse_local = run({TRIALDB_BIN, "ingest", trial, "--db", dir + "/sparse_local.db", "--tensors",
                                weight_and_loss, "--name", "big", "-q"},
                               dir + "/sparse_local.log");
  ASSERT_EQ(sparse_local.exit_code, 0) << sparse_local.output;
  Database c(dir + "/sparse_local.db", OpenMode::kExisting), d(dir + "/sparse.db", OpenMode::kExisting);
  EXPECT_EQ(view_rows(c, "tensor_values").size(), 2u * 10);  // both tensors, every step
  EXPECT_TRUE(view_rows(c, "tensor_values") == view_rows(d, "tensor_values"));

  // --values none, then --values all: the second run transfers the values' records (and the
  // listings and collections files every run reads), not the index files again, and ends equal
  // to a full local ingest.
  RunResult none =
      run({TRIALDB_BIN, "ingest", url, "--db", dir + "/none.db", "--values", "none", "--name", "big", "-q"},
          dir + "/none.log");
  ASSERT_EQ(none.exit_code, 0) << none.output;
  const uint64_t all_before = server_->bytes_sent();
  RunResult all = run({TRIALDB_BIN, "ingest", url, "--db", dir + "/none.db", "--values", "all", "--name", "big", "-q"},
                      dir + "/all.log");
  ASSERT_EQ(all.exit_code, 0) << all.output;
  const uint64_t added = server_->bytes_sent() - all_before;
  RunResult whole =
      run({TRIALDB_BIN, "ingest", trial, "--db", dir + "/whole.db", "--name", "big", "-q"}, dir + "/whole.log");
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  Database e(dir + "/whole.db", OpenMode::kExisting), f(dir + "/none.db", OpenMode::kExisting);
  uint64_t records = 0;
  {
    Statement q(e.handle(), "SELECT sum(length) FROM value_locations");
    ASSERT_TRUE(q.step());
    records = static_cast<uint64_t>(q.int64(0));
  }
  EXPECT_GE(added, records);
  EXPECT_LT(added, records + 100000) << added << " bytes sent for " << records << " bytes of records";
  EXPECT_TRUE(view_rows(e, "tensor_values") == view_rows(f, "tensor_values"));

  // A new database takes the page size of the same sample of index files over S3 as locally: a
  // larger one than 2 KiB, for 256 KiB tensors.
  RunResult full =
      run({TRIALDB_BIN, "ingest", url, "--db", dir + "/full.db", "--name", "big", "-q"}, dir + "/full.log");
  ASSERT_EQ(full.exit_code, 0) << full.output;
  Database g(dir + "/full.db", OpenMode::kExisting);
  auto page_size = [](Database& db) {
    Statement q(db.handle(), "PRAGMA page_size");
    return q.step() ? q.int64(0) : 0;
  };
  EXPECT_GT(page_size(e), kPageSize);
  EXPECT_EQ(page_size(g), page_size(e));

  // The counter counts: the rest of the trial costs at least its event files.
  const uint64_t middle = server_->bytes_sent();
  RunResult rest = run({TRIALDB_BIN, "ingest", url, "--db", dir + "/s3.db", "--name", "big", "-q"}, dir + "/rest.log");
  ASSERT_EQ(rest.exit_code, 0) << rest.output;
  EXPECT_GT((server_->bytes_sent() - middle) * 10, trial_bytes * 9);
}

// Credentials only in a shared credentials file, under a named profile (the environment has
// neither key): the ingest signs with them and stores what a local ingest stores; a profile
// the file lacks is a clear error naming it.
TEST_F(S3Ingest, CredentialsFromTheSharedCredentialsFile) {
  test::TempDir tmp("trialdb-s3-profile");
  const std::string dir = tmp.path.string();
  std::ofstream(dir + "/credentials") << "[other]\naws_access_key_id = wrong\naws_secret_access_key = wrong\n"
                                      << "[s3rver]\naws_access_key_id = " << test::kS3rverKey
                                      << "\naws_secret_access_key = " << test::kS3rverSecret << "\n";
  test::ScopedEnv env;
  env.set("AWS_ACCESS_KEY_ID", std::nullopt)
      .set("AWS_SECRET_ACCESS_KEY", std::nullopt)
      .set("AWS_SHARED_CREDENTIALS_FILE", dir + "/credentials")
      .set("AWS_PROFILE", "s3rver");
  const std::string name = kFixtures.front();
  RunResult ok =
      run({TRIALDB_BIN, "ingest", fixture_url(name), "--db", dir + "/s3.db", "--name", name, "-q"}, dir + "/s3.log");
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  RunResult local = run({TRIALDB_BIN, "ingest", fixture_dir(name), "--db", dir + "/local.db", "--name", name, "-q"},
                        dir + "/local.log");
  ASSERT_EQ(local.exit_code, 0) << local.output;
  Database a(dir + "/local.db", OpenMode::kExisting), b(dir + "/s3.db", OpenMode::kExisting);
  EXPECT_TRUE(view_rows(a, "tensor_values") == view_rows(b, "tensor_values"));

  // The server checks signatures: the other profile's keys are refused.
  env.set("AWS_PROFILE", "other");
  RunResult wrong =
      run({TRIALDB_BIN, "ingest", fixture_url(name), "--db", dir + "/wrong.db", "-q"}, dir + "/wrong.log");
  EXPECT_NE(wrong.exit_code, 0) << wrong.output;
  EXPECT_NE(wrong.output.find("access refused; check the keys of AWS profile 'other' (" + dir + "/credentials"),
            std::string::npos)
      << wrong.output;

  env.set("AWS_PROFILE", "missing");
  RunResult bad = run({TRIALDB_BIN, "ingest", fixture_url(name), "--db", dir + "/bad.db", "-q"}, dir + "/bad.log");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("AWS profile 'missing' (AWS_PROFILE) is not in " + dir + "/credentials"), std::string::npos)
      << bad.output;
}

}  // namespace
}  // namespace trialdb
