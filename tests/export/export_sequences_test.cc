// trialdb export after sequences of operations: whatever happened to the database since the last
// export (a selection widened, values added, a late step, a trial removed, renamed or replaced
// by another job under its name), an export leaves a dataset equal, table by table and row for
// row, to a fresh export of the database into an empty folder, and a grown trial still gets
// files for its new steps only. Read back by DuckDB (export_compare.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "common/run_process.h"
#include "common/temp_dir.h"
#include "duckdb_query.h"
#include "export_compare.h"
#include "export_steps.h"
#include "schema/database.h"

namespace trialdb::exporter {
namespace {

namespace fs = std::filesystem;
using test::Cell;
using test::Row;

class ExportSequences : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = test::duckdb_unavailable(); !why.empty()) {
      if (why == "node is not installed") GTEST_SKIP() << why;
      FAIL() << why;
    }
  }

  std::string db() const { return dir_ / "t.db"; }
  std::string out() const { return dir_ / "out"; }

  int export_to(const std::string& folder, const std::string& values = "pointers") {
    return test::trialdb({"export", "--db", db(), "--out", folder, "--values", values});
  }

  // The export in out() equals a fresh export of the database, and (so that both are not wrong
  // alike) holds as many reductions as the database's view.
  void expect_equals_fresh(const std::string& values = "pointers") {
    const std::string fresh = dir_ / ("fresh" + std::to_string(++fresh_exports_));
    ASSERT_EQ(export_to(fresh, values), 0);
    const ValuesExport v = values == "inline" ? ValuesExport::kInline
                           : values == "none" ? ValuesExport::kNone
                                              : ValuesExport::kPointers;
    EXPECT_EQ(test::export_difference(out(), fresh, v), "");
    Database d(db(), OpenMode::kReadOnly);
    Statement q(d.handle(), "SELECT count(*) FROM reductions");
    ASSERT_TRUE(q.step());
    const auto rows = test::duckdb_rows({"SELECT count(*) FROM " + test::export_dataset_sql(out(), "reductions")});
    EXPECT_EQ(rows.at(0).at(0), Cell(std::to_string(q.int64(0))));
  }

  test::TempDir dir_{"trialdb_export_seq"};
  int fresh_exports_ = 0;
};

TEST_F(ExportSequences, AWidenedSelectionIsExportedWhole) {
  const std::string job = dir_ / "job";
  ASSERT_EQ(test::trialdb({"synth", job, "--steps", "6", "--tensors", "3", "--elements", "20"}), 0);
  ASSERT_EQ(test::trialdb({"ingest", job, "--db", db(), "--tensors", "Loss", "--steps", ":3"}), 0);
  ASSERT_EQ(export_to(out()), 0);
  ASSERT_EQ(test::trialdb({"ingest", job, "--db", db(), "--steps", ":5"}), 0);
  ASSERT_EQ(export_to(out()), 0);
  expect_equals_fresh();
  ASSERT_EQ(test::trialdb({"ingest", job, "--db", db()}), 0);
  ASSERT_EQ(export_to(out()), 0);
  expect_equals_fresh();
}

TEST_F(ExportSequences, ValuesAddedLaterReplaceTheHeadersExported) {
  const std::string job = dir_ / "job";
  ASSERT_EQ(test::trialdb({"synth", job, "--steps", "4", "--tensors", "2", "--elements", "30"}), 0);
  ASSERT_EQ(test::trialdb({"ingest", job, "--db", db(), "--values", "none"}), 0);
  ASSERT_EQ(export_to(out(), "inline"), 0);
  ASSERT_EQ(test::trialdb({"ingest", job, "--db", db(), "--values", "all"}), 0);
  ASSERT_EQ(export_to(out(), "inline"), 0);
  expect_equals_fresh("inline");
  // Exported with fewer datasets, the ones left out go: a reader never sees stale raw values.
  ASSERT_EQ(export_to(out()), 0);
  expect_equals_fresh();
  EXPECT_FALSE(fs::exists(out() + "/tensor_values/trial=job/part-0.parquet"));
}

TEST_F(ExportSequences, ALateStepIsRewrittenAndTheRestKept) {
  const std::string full = dir_ / "full", job = dir_ / "job";
  ASSERT_EQ(test::trialdb({"synth", full, "--steps", "8", "--tensors", "2", "--elements", "20", "--workers", "2"}), 0);
  // Every file but worker 1's events of step 2: steps after it complete, so step 2 does too.
  test::copy_trial(
      full, job, [](int64_t step, const std::string& worker) { return !(step == 2 && worker == "worker_1"); }, false);
  test::copy_index_file(full, job, 2, "worker_1");
  ASSERT_EQ(test::trialdb({"ingest", job, "--db", db()}), 0);
  ASSERT_EQ(export_to(out()), 0);
  const std::set<std::string> before = test::files_under(out());
  test::copy_trial(full, job, [](int64_t, const std::string&) { return true; });
  ASSERT_EQ(test::trialdb({"ingest", job, "--db", db()}), 0);
  ASSERT_EQ(export_to(out()), 0);
  expect_equals_fresh();
  // The step was rewritten in place: no new part file of a table that grows by step.
  for (const std::string& f : test::files_under(out())) {
    if (f.rfind("reductions/", 0) == 0) {
      EXPECT_TRUE(before.count(f)) << f;
    }
  }
}

TEST_F(ExportSequences, RemovedAndRenamedTrialsLeaveTheDataset) {
  const std::string a = dir_ / "a", b = dir_ / "b";
  ASSERT_EQ(test::trialdb({"synth", a, "--steps", "3", "--tensors", "2", "--elements", "10"}), 0);
  ASSERT_EQ(test::trialdb({"synth", b, "--steps", "4", "--tensors", "2", "--elements", "10", "--seed", "2"}), 0);
  ASSERT_EQ(test::trialdb({"ingest", a, "--db", db()}), 0);
  ASSERT_EQ(test::trialdb({"ingest", b, "--db", db()}), 0);
  ASSERT_EQ(export_to(out()), 0);
  ASSERT_EQ(test::trialdb({"rm", "--db", db(), "--trial", "b"}), 0);
  ASSERT_EQ(test::trialdb({"rename", "--db", db(), "--trial", "a", "--to", "c"}), 0);
  ASSERT_EQ(export_to(out()), 0);
  expect_equals_fresh();
  for (const std::string& f : test::files_under(out())) {
    EXPECT_EQ(f.find("trial=a"), std::string::npos) << f;
    EXPECT_EQ(f.find("trial=b"), std::string::npos) << f;
  }
}

TEST_F(ExportSequences, AnotherJobUnderAReusedNameReplacesTheFirstWhole) {
  const std::string one = dir_ / "one", two = dir_ / "two";
  ASSERT_EQ(test::trialdb({"synth", one, "--steps", "9", "--tensors", "3", "--elements", "10"}), 0);
  ASSERT_EQ(test::trialdb({"synth", two, "--steps", "3", "--tensors", "2", "--elements", "10", "--seed", "7"}), 0);
  test::copy_trial(
      one, dir_ / "live", [](int64_t step, const std::string&) { return step < 4; }, false);
  ASSERT_EQ(test::trialdb({"ingest", dir_ / "live", "--db", db(), "--name", "t"}), 0);
  ASSERT_EQ(export_to(out()), 0);
  test::copy_trial(one, dir_ / "live", [](int64_t, const std::string&) { return true; });
  ASSERT_EQ(test::trialdb({"ingest", dir_ / "live", "--db", db(), "--name", "t"}), 0);
  ASSERT_EQ(export_to(out()), 0);  // two files per table that grows by step
  ASSERT_EQ(test::trialdb({"rm", "--db", db(), "--trial", "t"}), 0);
  ASSERT_EQ(test::trialdb({"ingest", two, "--db", db(), "--name", "t"}), 0);
  ASSERT_EQ(export_to(out()), 0);
  expect_equals_fresh();
}

}  // namespace
}  // namespace trialdb::exporter
