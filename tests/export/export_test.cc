// trialdb export read back by DuckDB: every fixture ingested (with rule findings) and exported
// with --values inline; every exported table, read by DuckDB over its Hive-partitioned files,
// equals the SQLite public view row for row and value for value; the files carry statistics
// and the row groups designed; a query across trials answers the same in both engines; and a
// re-export of a grown trial writes files for its new steps only, still equal to the views.
// Generic over export/public_tables.h: a table added there is checked here without a change.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "common/run_process.h"
#include "common/temp_dir.h"
#include "duckdb_query.h"
#include "export_steps.h"
#include "export/ddl.h"
#include "export/public_tables.h"
#include "schema/database.h"
#include "sqlext/register.h"

namespace trialdb::exporter {
namespace {

namespace fs = std::filesystem;
using test::Cell;
using test::Row;

const std::string kFixtures = std::string(TRIALDB_TEST_DATA_DIR) + "/fixtures";

using test::files_under;
using test::trialdb;

// A SQLite cell in duckdb_rows.js's canonical form, read as the column's export type.
Cell sqlite_cell(sqlite3_stmt* s, int col, parquet::ColumnType type) {
  if (sqlite3_column_type(s, col) == SQLITE_NULL) return Cell();
  switch (type) {
    case parquet::ColumnType::kBoolean: return Cell(sqlite3_column_int64(s, col) ? "1" : "0");
    case parquet::ColumnType::kInt64: return Cell(std::to_string(sqlite3_column_int64(s, col)));
    case parquet::ColumnType::kDouble: return Cell(test::double_cell(sqlite3_column_double(s, col)));
    case parquet::ColumnType::kString:
      return Cell(std::string(reinterpret_cast<const char*>(sqlite3_column_text(s, col)),
                              static_cast<size_t>(sqlite3_column_bytes(s, col))));
    case parquet::ColumnType::kBytes:
      return Cell(test::hex_cell(std::string_view(static_cast<const char*>(sqlite3_column_blob(s, col)),
                                                  static_cast<size_t>(sqlite3_column_bytes(s, col)))));
  }
  return Cell();
}

std::string column_list(const PublicTable& t) {
  std::string cols = kPartitionColumn;
  for (const parquet::Column& c : t.columns) cols += ", \"" + c.name + "\"";
  return cols;
}

bool has_view(Database& db, const std::string& name) {
  Statement q(db.handle(), "SELECT 1 FROM sqlite_schema WHERE type = 'view' AND name = ?1");
  q.bind(1, name);
  return q.step();
}

std::vector<Row> sqlite_rows(Database& db, const PublicTable& t) {
  std::vector<Row> rows;
  if (!has_view(db, t.name)) return rows;
  Statement q(db.handle(), "SELECT " + column_list(t) + " FROM \"" + t.name + "\"");
  while (q.step()) {
    Row row = {Cell(q.text(0))};
    for (size_t c = 0; c < t.columns.size(); ++c)
      row.push_back(sqlite_cell(q.handle(), static_cast<int>(c + 1), t.columns[c].type));
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::string dataset(const std::string& out, const std::string& table) {
  return "read_parquet('" + out + "/" + table +
         "/*/*.parquet', hive_partitioning = true, hive_types = {'trial': VARCHAR})";
}

std::vector<Row> parquet_rows(const std::string& out, const PublicTable& t) {
  std::vector<Row> rows = test::duckdb_rows({"SELECT " + column_list(t) + " FROM " + dataset(out, t.name)});
  std::sort(rows.begin(), rows.end());
  return rows;
}

// Every table exported with `values` equals its view, row for row.
void expect_tables_equal(const std::string& db_path, const std::string& out, ValuesExport values) {
  Database db(db_path, OpenMode::kReadOnly);
  ASSERT_EQ(trialdb_register_sql_functions(db.handle()), SQLITE_OK);  // the histogram views'
  for (const PublicTable& t : public_tables()) {
    if (!wanted(t, values)) continue;
    const std::vector<Row> expected = sqlite_rows(db, t);
    const std::vector<Row> got = parquet_rows(out, t);
    ASSERT_EQ(got.size(), expected.size()) << t.name << ": row count";
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << t.name << ": sorted row " << i;
  }
}

class ExportFixtures : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!test::duckdb_unavailable().empty()) return;
    dir_ = new test::TempDir("trialdb_export");
    db_ = *dir_ / "fixtures.db";
    out_ = *dir_ / "out";
    for (const auto& e : fs::directory_iterator(kFixtures))
      if (e.is_directory()) {
        const int rc = trialdb({"ingest", e.path().string(), "--db", db_});
        if (rc != 0 && rc != 4) setup_error_ += "ingest " + e.path().string() + " exited " + std::to_string(rc) + "\n";
        ++fixtures_;
      }
    if (trialdb({"rules", "--db", db_}) != 0) setup_error_ += "rules failed\n";
    if (trialdb({"export", "--db", db_, "--out", out_, "--values", "inline"}) != 0) setup_error_ += "export failed\n";
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (std::string why = test::duckdb_unavailable(); !why.empty()) {
      if (why == "node is not installed") GTEST_SKIP() << why;
      FAIL() << why;
    }
    ASSERT_TRUE(setup_error_.empty()) << setup_error_;
  }

  static inline test::TempDir* dir_ = nullptr;
  static inline std::string db_, out_, setup_error_;
  static inline int fixtures_ = 0;
};

TEST_F(ExportFixtures, TheListHoldsTheIssuesTablesWithTheirViewsColumns) {
  std::set<std::string> names;
  for (const PublicTable& t : public_tables()) names.insert(t.name);
  for (const char* required :
       {"trials", "steps", "tensors", "collections", "reductions", "distributions", "histogram_buckets",
        "rule_findings", "ingest_errors", "value_locations", "tensor_values"})
    EXPECT_TRUE(names.count(required)) << required;
  Database db(db_, OpenMode::kReadOnly);
  ASSERT_EQ(trialdb_register_sql_functions(db.handle()), SQLITE_OK);  // the histogram views'
  for (const PublicTable& t : public_tables()) {
    Statement q(db.handle(), "SELECT name FROM pragma_table_info(?1)");
    q.bind(1, t.name);
    std::vector<std::string> view = {}, listed = {kPartitionColumn};
    while (q.step()) view.push_back(q.text(0));
    for (const parquet::Column& c : t.columns) listed.push_back(c.name);
    EXPECT_EQ(listed, view) << t.name;
  }
}

TEST_F(ExportFixtures, EveryTableEqualsItsViewRowForRow) {
  expect_tables_equal(db_, out_, ValuesExport::kInline);
  // Every fixture is in, and the tables are not trivially empty.
  const auto trials = test::duckdb_rows({"SELECT count(*) FROM " + dataset(out_, "trials")});
  EXPECT_EQ(trials[0][0], Cell(std::to_string(fixtures_)));
  const auto values = test::duckdb_rows({"SELECT count(*) FROM " + dataset(out_, "tensor_values")});
  EXPECT_GT(std::stoll(*values[0][0]), 1000);
}

TEST_F(ExportFixtures, FilesCarryStatisticsAndOneRowGroupPerSmallFile) {
  const auto meta =
      test::duckdb_rows({"SELECT count(DISTINCT file_name), bool_and(stats_null_count IS NOT NULL), max(row_group_id), "
                         "bool_and(stats_min_value IS NOT NULL AND stats_max_value IS NOT NULL) FILTER "
                         "(WHERE type = 'INT64' AND row_group_num_rows > stats_null_count), "
                         "bool_and(compression = 'ZSTD') "
                         "FROM parquet_metadata('" +
                         out_ + "/*/*/*.parquet')"});
  ASSERT_EQ(meta.size(), 1u);
  EXPECT_GT(std::stoi(*meta[0][0]), fixtures_ * 10);
  EXPECT_EQ(meta[0][1], Cell("1")) << "every column chunk has its null count";
  EXPECT_EQ(meta[0][2], Cell("0")) << "files under 64 MiB are one row group";
  // (INT64 only: DuckDB shows no bound that is an infinity, which some DOUBLE columns hold.)
  EXPECT_EQ(meta[0][3], Cell("1")) << "integer chunks with values have min and max";
  EXPECT_EQ(meta[0][4], Cell("1"));
  // DuckDB prunes row groups by them: the bounds of a step column are the trial's steps.
  const auto bounds =
      test::duckdb_rows({"SELECT min(TRY_CAST(stats_min_value AS BIGINT)), max(TRY_CAST(stats_max_value AS BIGINT)) "
                         "FROM parquet_metadata('" +
                         out_ + "/steps/trial=zoo/*.parquet') WHERE path_in_schema = 'step'"});
  Database db(db_, OpenMode::kReadOnly);
  Statement q(db.handle(), "SELECT min(step), max(step) FROM steps WHERE trial = 'zoo'");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(bounds[0][0], Cell(std::to_string(q.int64(0))));
  EXPECT_EQ(bounds[0][1], Cell(std::to_string(q.int64(1))));
}

// A team-wide question over every trial, in DuckDB through the views of `export --ddl duckdb`:
// per trial, how many gradients' mean |g| fell below a threshold, and their smallest and largest
// mean, plus the finite elements of all histograms.
TEST_F(ExportFixtures, ATeamWideQueryAnswersTheSameInDuckDb) {
  const std::string query =
      "SELECT r.trial, count(*) AS small, min(r.value) AS lo, max(r.value) AS hi\n"
      "FROM reductions r JOIN collections c ON c.trial = r.trial AND c.tensor = r.tensor\n"
      "WHERE c.collection = 'gradients' AND r.reduction = 'mean' AND r.abs AND r.value < 0.01\n"
      "GROUP BY r.trial ORDER BY r.trial";
  const std::string buckets = "SELECT trial, sum(count) FROM histogram_buckets GROUP BY trial ORDER BY trial";
  // The views are those `trialdb export --ddl duckdb` prints.
  std::vector<std::string> views;
  const std::string ddl = engine_ddl(Engine::kDuckDb, out_, ValuesExport::kInline, {});
  for (size_t at = 0, end; (end = ddl.find(";\n", at)) != std::string::npos; at = end + 2)
    views.push_back(ddl.substr(at, end - at));
  EXPECT_EQ(views.size(), public_tables().size());
  Database db(db_, OpenMode::kReadOnly);
  ASSERT_EQ(trialdb_register_sql_functions(db.handle()), SQLITE_OK);  // the histogram views'
  for (const std::string& sql : {query, buckets}) {
    std::vector<std::string> statements = views;
    statements.push_back(sql);
    const std::vector<Row> got = test::duckdb_rows(statements);
    std::vector<Row> expected;
    Statement q(db.handle(), sql);
    while (q.step()) {
      Row row;
      for (int c = 0; c < sqlite3_column_count(q.handle()); ++c)
        row.push_back(sqlite3_column_type(q.handle(), c) == SQLITE_FLOAT ? Cell(test::double_cell(q.real(c)))
                                                                         : Cell(q.text(c)));
      expected.push_back(std::move(row));
    }
    EXPECT_GT(expected.size(), 1u) << "the question spans several trials";
    EXPECT_EQ(got, expected) << sql;
  }
}

TEST_F(ExportFixtures, AGrownTrialGetsFilesForItsNewStepsOnly) {
  test::TempDir dir("trialdb_export_grow");
  const std::string full = dir / "full", job = dir / "job", db = dir / "t.db", out = dir / "out";
  ASSERT_EQ(trialdb({"synth", full, "--steps", "8", "--tensors", "3", "--elements", "50"}), 0);
  test::copy_trial(
      full, job, [](int64_t step, const std::string&) { return step < 3; }, false);
  ASSERT_EQ(trialdb({"ingest", job, "--db", db}), 0);
  ASSERT_EQ(trialdb({"export", "--db", db, "--out", out}), 0);
  expect_tables_equal(db, out, ValuesExport::kPointers);
  const std::set<std::string> first = files_under(out);

  // Nothing new: nothing written.
  ASSERT_EQ(trialdb({"export", "--db", db, "--out", out}), 0);
  EXPECT_EQ(files_under(out), first);

  test::copy_trial(full, job, [](int64_t, const std::string&) { return true; });
  ASSERT_EQ(trialdb({"ingest", job, "--db", db}), 0);
  ASSERT_EQ(trialdb({"export", "--db", db, "--out", out}), 0);
  expect_tables_equal(db, out, ValuesExport::kPointers);
  // Every earlier file of a table that grows by step is still there, and its new file holds only
  // steps after the ones exported before.
  const std::set<std::string> second = files_under(out);
  for (const char* table : {"reductions", "distributions", "histogram_buckets"}) {
    const std::string p0 = std::string(table) + "/trial=job/part-0.parquet";
    const std::string p1 = std::string(table) + "/trial=job/part-1.parquet";
    EXPECT_TRUE(second.count(p0) && second.count(p1)) << table;
    const auto steps = test::duckdb_rows(
        {"SELECT (SELECT max(step) FROM '" + out + "/" + p0 + "'), (SELECT min(step) FROM '" + out + "/" + p1 + "')"});
    EXPECT_LT(std::stoll(*steps[0][0]), std::stoll(*steps[0][1])) << table;
  }
  // A table replaced whole keeps one file, replaced in place.
  EXPECT_TRUE(second.count("trials/trial=job/part-0.parquet"));
  EXPECT_FALSE(second.count("trials/trial=job/part-1.parquet"));
}

// The engines DuckDB cannot stand in for: every exported view is a table with all its columns,
// partitioned by trial, at its dataset's location.
TEST_F(ExportFixtures, EngineDdlNamesEveryViewColumnAndLocation) {
  const std::vector<std::string> trials = {"run-1", "run-2"};
  for (Engine engine : {Engine::kAthena, Engine::kTrino, Engine::kSpark}) {
    const std::string ddl = engine_ddl(engine, "s3://b/p", ValuesExport::kInline, trials);
    for (const PublicTable& t : public_tables()) {
      const size_t at = ddl.find(t.name + (engine == Engine::kTrino ? "\" (" : "` ("));
      ASSERT_NE(at, std::string::npos) << t.name << " in\n" << ddl;
      const std::string statement = ddl.substr(at, ddl.find(";\n", at) - at);
      for (const parquet::Column& c : t.columns)
        EXPECT_NE(statement.find(c.name), std::string::npos) << t.name << "." << c.name;
      EXPECT_NE(ddl.find("s3://b/p/" + t.name), std::string::npos) << t.name;
    }
  }
  const std::string athena = engine_ddl(Engine::kAthena, "s3://b/p", ValuesExport::kNone, trials);
  EXPECT_NE(athena.find("'projection.trial.values' = 'run-1,run-2'"), std::string::npos) << athena;
  EXPECT_NE(athena.find("'storage.location.template' = 's3://b/p/reductions/trial=${trial}/'"), std::string::npos);
  EXPECT_EQ(athena.find("tensor_values"), std::string::npos) << "--values none leaves the raw values out";
  EXPECT_NE(
      engine_ddl(Engine::kAthena, "s3://b/p", ValuesExport::kNone, {}).find("'projection.trial.type' = 'injected'"),
      std::string::npos);
}

TEST_F(ExportFixtures, ADamagedManifestIsAnErrorNamingIt) {
  test::TempDir dir("trialdb_export_bad");
  const std::string out = dir / "out", err = dir / "err";
  ASSERT_EQ(trialdb({"export", "--db", db_, "--out", out, "--trial", "dist2"}), 0);
  const std::string manifest = out + "/_manifests/trial=dist2.json";
  std::ofstream(manifest, std::ios::trunc) << "{\"trial\": \"dist2\", \"tables\": ";
  EXPECT_EQ(test::run_process({TRIALDB_BIN, "export", "--db", db_, "--out", out, "--trial", "dist2"}, "", err), 1);
  std::ifstream in(err);
  const std::string message((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(message.find(manifest), std::string::npos) << message;
  EXPECT_NE(message.find("not an export manifest"), std::string::npos) << message;
}

}  // namespace
}  // namespace trialdb::exporter
