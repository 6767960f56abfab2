// A dataset is never half-updated: an export killed (SIGKILL) after any of its changes to the
// folder leaves every step of every table of every trial as the old export had it or as the new
// one has it (never twice, never a partial file: DuckDB reads every file), and the next export
// completes it into a dataset equal to a fresh export. Each kill point is also a moment a
// reader listing the folder during an export could see.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "common/temp_dir.h"
#include "duckdb_query.h"
#include "export/exporter.h"
#include "export_compare.h"
#include "export_steps.h"

namespace trialdb::exporter {
namespace {

namespace fs = std::filesystem;
using test::Cell;
using test::Row;

constexpr int kMostKillPoints = 60;

bool has_parts(const std::string& out, const std::string& table) {
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(out) / table, ec))
    if (e.path().extension() == ".parquet") return true;
  return false;
}

// Per table, trial and step (tables replaced whole: per table and trial), the row count and a
// hash of the rows' multiset.
std::string signatures(const std::string& out, const PublicTable& t, const std::string& like) {
  std::string cols;
  for (const parquet::Column& c : t.columns) cols += (cols.empty() ? "" : ", ") + ("\"" + c.name + "\"");
  const std::string step = t.global_step.empty() ? "NULL::BIGINT" : "step";
  const std::string from = test::export_dataset_sql(has_parts(out, t.name) ? out : like, t.name) +
                           (has_parts(out, t.name) ? "" : " WHERE false");
  return "(SELECT trial, " + step + " AS step, count(*) AS n, sum(hash(" + cols + ")) AS h FROM " + from +
         " GROUP BY ALL)";
}

// How many (table, trial, step) groups of `got` equal neither `old_out`'s nor `new_out`'s.
int64_t mixed_groups(const std::string& got, const std::string& old_out, const std::string& new_out,
                     ValuesExport values, std::string* which) {
  std::string sql;
  for (const PublicTable& t : public_tables()) {
    if (!wanted(t, values)) continue;
    const std::string like = has_parts(new_out, t.name) ? new_out : old_out;
    if (!has_parts(like, t.name)) continue;
    const std::string g = signatures(got, t, like), o = signatures(old_out, t, like), n = signatures(new_out, t, like);
    sql += std::string(sql.empty() ? "" : " UNION ALL ") + "SELECT '" + t.name +
           "' AS t, k.trial, k.step FROM (SELECT trial, step FROM " + g + " UNION SELECT trial, step FROM " + o +
           " UNION SELECT trial, step FROM " + n + ") k LEFT JOIN " + g +
           " g ON g.trial IS NOT DISTINCT FROM k.trial AND g.step IS NOT DISTINCT FROM k.step LEFT JOIN " + o +
           " o ON o.trial IS NOT DISTINCT FROM k.trial AND o.step IS NOT DISTINCT FROM k.step LEFT JOIN " + n +
           " n ON n.trial IS NOT DISTINCT FROM k.trial AND n.step IS NOT DISTINCT FROM k.step WHERE NOT ("
           "(g.n IS NOT DISTINCT FROM o.n AND g.h IS NOT DISTINCT FROM o.h) OR "
           "(g.n IS NOT DISTINCT FROM n.n AND g.h IS NOT DISTINCT FROM n.h))";
  }
  const std::vector<Row> rows = test::duckdb_rows({"SELECT t, trial, step FROM (" + sql + ") ORDER BY ALL"});
  for (const Row& r : rows) *which += *r[0] + " trial " + r[1].value_or("NULL") + " step " + r[2].value_or("-") + "\n";
  return static_cast<int64_t>(rows.size());
}

class ExportKill : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = test::duckdb_unavailable(); !why.empty()) {
      if (why == "node is not installed") GTEST_SKIP() << why;
      FAIL() << why;
    }
  }
  void TearDown() override { unsetenv(kKillAfterEnv); }

  // Kills the export from `old_out` to the database's state after the Nth change, for every N
  // until it finishes: each time the dataset is old or new per step, and a plain export then
  // equals a fresh one.
  void kill_everywhere(const std::string& db, const std::string& old_out, const std::string& values) {
    const std::string new_out = dir_ / "new";
    ASSERT_EQ(test::trialdb({"export", "--db", db, "--out", new_out, "--values", values}), 0);
    const ValuesExport v = values == "inline" ? ValuesExport::kInline : ValuesExport::kPointers;
    ASSERT_NE(test::export_difference(old_out, new_out, v), "") << "the test needs a change to export";
    int kills = 0;
    for (int n = 1; n <= kMostKillPoints; ++n) {
      const std::string got = dir_ / ("killed" + std::to_string(n));
      fs::copy(old_out, got, fs::copy_options::recursive);
      setenv(kKillAfterEnv, std::to_string(n).c_str(), 1);
      const int rc = test::trialdb({"export", "--db", db, "--out", got, "--values", values});
      unsetenv(kKillAfterEnv);
      if (rc == 0) break;
      ASSERT_EQ(rc, -1) << "export neither finished nor was killed at change " << n;
      ++kills;
      std::string which;
      EXPECT_EQ(mixed_groups(got, old_out, new_out, v, &which), 0) << "killed after change " << n << ":\n" << which;
      // Killed twice: the second export is killed too, at its first change.
      if (n % 3 == 0) {
        setenv(kKillAfterEnv, "1", 1);
        test::trialdb({"export", "--db", db, "--out", got, "--values", values});
        unsetenv(kKillAfterEnv);
      }
      ASSERT_EQ(test::trialdb({"export", "--db", db, "--out", got, "--values", values}), 0);
      EXPECT_EQ(test::export_difference(got, new_out, v), "") << "after a kill at change " << n;
      fs::remove_all(got);
    }
    EXPECT_GT(kills, 5);
  }

  test::TempDir dir_{"trialdb_export_kill"};
};

TEST_F(ExportKill, AGrownTrialsExportKilledAnywhere) {
  const std::string full = dir_ / "full", job = dir_ / "job", db = dir_ / "t.db", old_out = dir_ / "old";
  ASSERT_EQ(test::trialdb({"synth", full, "--steps", "12", "--tensors", "2", "--elements", "20", "--workers", "2"}), 0);
  ASSERT_EQ(test::trialdb({"synth", dir_ / "other", "--steps", "3", "--tensors", "1", "--elements", "5"}), 0);
  test::copy_trial(
      full, job, [](int64_t step, const std::string& w) { return step < 6 && !(step == 1 && w == "worker_1"); }, false);
  test::copy_index_file(full, job, 1, "worker_1");  // its events land late
  ASSERT_EQ(test::trialdb({"ingest", job, "--db", db}), 0);
  ASSERT_EQ(test::trialdb({"ingest", dir_ / "other", "--db", db}), 0);
  ASSERT_EQ(test::trialdb({"export", "--db", db, "--out", old_out, "--values", "inline"}), 0);
  // The trial grows, a late file lands in an exported step, the other trial is removed.
  test::copy_trial(full, job, [](int64_t, const std::string&) { return true; });
  ASSERT_EQ(test::trialdb({"ingest", job, "--db", db}), 0);
  ASSERT_EQ(test::trialdb({"rm", "--db", db, "--trial", "other"}), 0);
  kill_everywhere(db, old_out, "inline");
}

TEST_F(ExportKill, ATrialReplacedByAShorterJobKilledAnywhere) {
  const std::string one = dir_ / "one", two = dir_ / "two", db = dir_ / "t.db", old_out = dir_ / "old";
  ASSERT_EQ(test::trialdb({"synth", one, "--steps", "10", "--tensors", "2", "--elements", "20"}), 0);
  ASSERT_EQ(test::trialdb({"synth", two, "--steps", "4", "--tensors", "3", "--elements", "20", "--seed", "5"}), 0);
  test::copy_trial(
      one, dir_ / "live", [](int64_t step, const std::string&) { return step < 5; }, false);
  ASSERT_EQ(test::trialdb({"ingest", dir_ / "live", "--db", db, "--name", "t"}), 0);
  ASSERT_EQ(test::trialdb({"export", "--db", db, "--out", old_out}), 0);
  test::copy_trial(one, dir_ / "live", [](int64_t, const std::string&) { return true; });
  ASSERT_EQ(test::trialdb({"ingest", dir_ / "live", "--db", db, "--name", "t"}), 0);
  ASSERT_EQ(test::trialdb({"export", "--db", db, "--out", old_out}), 0);
  ASSERT_EQ(test::trialdb({"rm", "--db", db, "--trial", "t"}), 0);
  ASSERT_EQ(test::trialdb({"ingest", two, "--db", db, "--name", "t"}), 0);
  kill_everywhere(db, old_out, "pointers");
}

}  // namespace
}  // namespace trialdb::exporter
