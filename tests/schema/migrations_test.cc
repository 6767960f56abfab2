// Schema versions (schema/migrations.h): a version-7 database, with the rule runner's tables in
// the shapes older runners left, is upgraded by an open for writing (rows kept, shapes as
// rules_base.sql has them, version 8), refused by a read-only open (the histograms' upgrade to
// version 11 is not read-compatible), and versions without a path are refused unchanged; a
// version-9 database gets value.red_computed (0: not known); a version-10 database's histogram
// texts become histogram blobs that read back as the same text, and a text that is not one fails
// the upgrade, which changes nothing; a version-11 database gets the tensors' summary, built from
// its values; a version-12 database's distributions and histograms are numbered in their values'
// key order and read back through the views as before.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "schema/database.h"
#include "schema/histogram_blob.h"
#include "schema/migrations.h"
#include "schema/tensor_summary.h"
#include "tests/common/tensor_listing.h"
#include "tests/common/rows_text.h"
#include "tests/common/temp_dir.h"

using namespace trialdb;
using trialdb::test::listing_from_summary;
using trialdb::test::listing_from_views;
using trialdb::test::rows_text;
using trialdb::test::TempDir;

namespace {

int64_t count(Database& db, const std::string& sql) {
  Statement q(db.handle(), sql);
  q.step();
  return q.int64(0);
}

// The first cell of sql's answer as text, read without trialdb (nothing is upgraded).
std::string raw_text(const std::string& path, const std::string& sql) {
  sqlite3* raw = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(raw, sql.c_str(), -1, &q, nullptr);
  std::string text;
  if (sqlite3_step(q) == SQLITE_ROW) text = reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
  sqlite3_finalize(q);
  sqlite3_close(raw);
  return text;
}

// The distribution tables as version 12 had them: value_distribution keyed by its value's key and
// naming its histogram (value_histogram.histogram_id), no value.distribution_id. Rows are kept;
// a histogram's id is its distribution's plus 100, so that an upgrade that kept the old ids would
// be seen. The views over them go (every upgrade from 12 makes them again).
void to_version_12_distributions(Database& db) {
  for (const char* view : {"histogram_buckets", "histograms", "histogram_blobs", "distributions"})
    db.exec(std::string("DROP VIEW IF EXISTS ") + view);
  db.exec(R"sql(
    CREATE TABLE v12_distribution (
      tensor_id INTEGER NOT NULL, tensor_step INTEGER NOT NULL, step_offset INTEGER NOT NULL,
      worker_id INTEGER NOT NULL,
      nan INTEGER NOT NULL, pos_inf INTEGER NOT NULL, neg_inf INTEGER NOT NULL,
      zero INTEGER NOT NULL, negative INTEGER NOT NULL, positive INTEGER NOT NULL,
      p0 REAL, p1 REAL, p5 REAL, p10 REAL, p25 REAL, p50 REAL, p75 REAL, p90 REAL, p95 REAL, p99 REAL, p100 REAL,
      histogram_id INTEGER,
      PRIMARY KEY (tensor_id, tensor_step, step_offset, worker_id)
    ) WITHOUT ROWID)sql");
  db.exec(R"sql(
    INSERT INTO v12_distribution
    SELECT v.tensor_id, v.tensor_step, v.step_offset, v.worker_id, d.nan, d.pos_inf, d.neg_inf, d.zero,
           d.negative, d.positive, d.p0, d.p1, d.p5, d.p10, d.p25, d.p50, d.p75, d.p90, d.p95, d.p99, d.p100,
           h.distribution_id + 100
    FROM value v JOIN value_distribution d USING (distribution_id)
    LEFT JOIN value_histogram h USING (distribution_id))sql");
  db.exec("CREATE TABLE v12_histogram (histogram_id INTEGER PRIMARY KEY, buckets BLOB NOT NULL)");
  db.exec("INSERT INTO v12_histogram SELECT distribution_id + 100, buckets FROM value_histogram");
  db.exec("DROP TABLE value_distribution");
  db.exec("DROP TABLE value_histogram");
  db.exec("ALTER TABLE value DROP COLUMN distribution_id");
  db.exec("PRAGMA legacy_alter_table = ON");
  db.exec("ALTER TABLE v12_distribution RENAME TO value_distribution");
  db.exec("ALTER TABLE v12_histogram RENAME TO value_histogram");
  db.exec("PRAGMA legacy_alter_table = OFF");
}

// A database as trialdb 7 left it: no trial_follower; the stored parameters in a table
// rule_params (with the old indexes), rule_progress without its count, no rule_evaluated.
void make_version_7(const std::string& path) {
  Database db(path);
  to_version_12_distributions(db);
  db.exec("INSERT INTO trial(trial_id, name, path, complete_through) VALUES (1, 't', '/x', 2)");
  for (int s = 0; s < 4; ++s)
    db.exec("INSERT INTO step(trial_id, step, mode, mode_step, tensor_step, complete) VALUES (1, " + std::to_string(s) +
            ", 'TRAIN', " + std::to_string(s) + ", " + std::to_string(s) + ", " + (s <= 2 ? "1" : "0") + ")");
  db.exec("DROP TABLE trial_follower");
  db.exec("CREATE TABLE rule_params (trial TEXT, rule TEXT NOT NULL, param TEXT NOT NULL, value TEXT)");
  db.exec("CREATE UNIQUE INDEX rule_params_key ON rule_params(ifnull(trial, ''), rule, param)");
  db.exec("INSERT INTO rule_params VALUES (NULL, 'overfit', 'patience', '3')");
  db.exec("CREATE VIEW rule_param AS SELECT * FROM rule_params");
  db.exec(
      "CREATE TABLE rule_progress (trial TEXT NOT NULL, rule TEXT NOT NULL, step INTEGER, PRIMARY KEY (trial, rule)) "
      "WITHOUT ROWID");
  db.exec("INSERT INTO rule_progress VALUES ('t', 'overfit', 1)");
  db.exec("UPDATE schema_version SET version = 7");
}

TEST(Migrations, AnOpenForWritingUpgradesVersion7WithItsRows) {
  TempDir dir;
  const std::string path = dir / "v7.db";
  make_version_7(path);
  Database db(path, OpenMode::kExisting);
  EXPECT_EQ(count(db, "SELECT version FROM schema_version"), kSchemaVersion);
  EXPECT_EQ(count(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'trial_follower'"), 1);
  // The parameters' table under its name, with its row; the old name and indexes gone.
  EXPECT_EQ(count(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'rule_param' AND type = 'table'"), 1);
  EXPECT_EQ(count(db, "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'rule_params%'"), 0);
  EXPECT_EQ(count(db, "SELECT count(*) FROM rule_param WHERE rule = 'overfit' AND value = '3'"), 1);
  // The cursor's complete steps through step 1 became evaluated steps, counted.
  EXPECT_EQ(count(db, "SELECT count(*) FROM rule_evaluated WHERE trial = 't' AND rule = 'overfit'"), 2);
  EXPECT_EQ(count(db, "SELECT evaluated FROM rule_progress WHERE trial = 't' AND rule = 'overfit'"), 2);
}

// An older database is read-only readable only when every step of its upgrade is: version 10's
// histogram texts are not what the readers decode.
TEST(Migrations, AReadOnlyOpenAsksForACommandThatWritesBeforeVersion11) {
  TempDir dir;
  const std::string path = dir / "v7.db";
  make_version_7(path);
  EXPECT_FALSE(readable_without_upgrade(7));
  EXPECT_FALSE(readable_without_upgrade(10));
  EXPECT_TRUE(readable_without_upgrade(kSchemaVersion));
  try {
    Database db(path, OpenMode::kReadOnly);
    ADD_FAILURE() << "read version 7";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a command that writes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(raw_text(path, "SELECT version FROM schema_version"), "7");
}

// A database as trialdb 9 left it: value without red_computed, the reductions view without its
// column computed, a value whose 18 reductions are stored.
void make_version_9(const std::string& path) {
  Database db(path);
  to_version_12_distributions(db);
  db.exec("INSERT INTO trial(trial_id, name, path, complete_through) VALUES (1, 't', '/x', 0)");
  db.exec("INSERT INTO step(trial_id, step, mode, mode_step, tensor_step, complete) VALUES (1, 0, 'TRAIN', 0, 0, 1)");
  db.exec("INSERT INTO tensor(tensor_id, trial_id, name) VALUES (1, 1, 'w')");
  db.exec("INSERT INTO worker(worker_id, trial_id, name) VALUES (1, 1, 'worker_0')");
  db.exec(
      "INSERT INTO value(trial_id, tensor_id, tensor_step, step_offset, worker_id, red_src, red_mask, r_mean) "
      "VALUES (1, 1, 0, 0, 1, 1, 262143, 0.5)");
  db.exec("DROP VIEW reductions");
  // SQLite checks every view when a column goes, and the histogram views call the trialdb
  // extension's functions, which a bare connection lacks: the upgrade makes them again.
  for (const char* view : {"histogram_buckets", "histograms", "histogram_blobs"})
    db.exec(std::string("DROP VIEW IF EXISTS ") + view);
  db.exec("ALTER TABLE value DROP COLUMN red_computed");
  Statement view(db.handle(),
                 "SELECT replace(replace(?1, ', (v.red_computed >> k.idx) & 1 AS computed', ''), "
                 "'CREATE VIEW IF NOT EXISTS', 'CREATE VIEW')");
  // The view as version 9 defined it: today's without the column.
  const std::string sql = schema_sql();
  const size_t from = sql.find("CREATE VIEW IF NOT EXISTS reductions");
  const size_t to = sql.find(";", sql.find("WHERE v.red_src = 2 OR", from));
  ASSERT_NE(from, std::string::npos);
  view.bind(1, sql.substr(from, to - from));
  ASSERT_TRUE(view.step());
  db.exec(view.text(0));
  db.exec("UPDATE schema_version SET version = 9");
}

// The upgrade marks no reduction of an older database computed (rules read those values' blobs).
TEST(Migrations, Version9GetsRedComputedUnknownAndReductionsComputed) {
  TempDir dir;
  const std::string path = dir / "v9.db";
  make_version_9(path);
  Database db(path, OpenMode::kExisting);
  EXPECT_EQ(count(db, "SELECT version FROM schema_version"), kSchemaVersion);
  EXPECT_EQ(count(db, "SELECT count(*) FROM value WHERE red_computed = 0"), 1);
  EXPECT_EQ(count(db, "SELECT count(*) FROM reductions WHERE NOT computed"), 18);
  EXPECT_EQ(count(db, "SELECT count(*) FROM reductions WHERE reduction = 'mean' AND NOT abs AND value = 0.5"), 1);
}

// A database as trialdb 10 left it: value_histogram.buckets as JSON text, the histogram views
// over it, one histogram per row of `texts` (histogram_id 1, 2, ...), each a distribution's, the
// distributions in the histograms' order.
void make_version_10(const std::string& path, const std::vector<std::string>& texts) {
  Database db(path);
  to_version_12_distributions(db);
  db.exec("DROP TABLE value_histogram");
  db.exec("CREATE TABLE value_histogram (histogram_id INTEGER PRIMARY KEY, buckets TEXT NOT NULL)");
  db.exec("CREATE VIEW histograms AS SELECT histogram_id, buckets FROM value_histogram");
  Statement insert(db.handle(), "INSERT INTO value_histogram(buckets) VALUES (?1)");
  Statement distribution(db.handle(),
                         "INSERT INTO value_distribution(tensor_id, tensor_step, step_offset, worker_id, nan, pos_inf, "
                         "neg_inf, zero, negative, positive, histogram_id) VALUES (1, ?1, 0, 1, 0, 0, 0, 0, 0, 1, ?1)");
  for (size_t i = 0; i < texts.size(); ++i) {
    insert.bind(1, texts[i]).run();
    distribution.bind(1, static_cast<int64_t>(i + 1)).run();
  }
  db.exec("UPDATE schema_version SET version = 10");
}

TEST(Migrations, Version10HistogramTextsBecomeBlobsThatReadBackAsTheSameText) {
  TempDir dir;
  const std::string path = dir / "v10.db";
  const std::vector<std::string> texts = {R"({"-3":[1,0,2],"0":[7],"16001":[4]})", "{}",
                                          R"({"130816":[300,0,0,0,1],"130821":[1],"262016":[2]})"};
  make_version_10(path, texts);
  Database db(path, OpenMode::kExisting);
  EXPECT_EQ(count(db, "SELECT version FROM schema_version"), kSchemaVersion);
  EXPECT_EQ(count(db, "SELECT count(*) FROM value_histogram WHERE typeof(buckets) = 'blob'"), 3);
  EXPECT_EQ(count(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'histograms' AND sql LIKE '%histogram_json%'"),
            1);
  EXPECT_EQ(count(db, "SELECT count(*) FROM sqlite_schema WHERE name IN ('histogram_blobs', 'histogram_buckets')"), 2);
  Statement rows(db.handle(), "SELECT distribution_id, buckets FROM value_histogram ORDER BY distribution_id");
  for (size_t i = 0; i < texts.size(); ++i) {
    ASSERT_TRUE(rows.step());
    EXPECT_EQ(rows.int64(0), static_cast<int64_t>(i + 1));
    std::string text;
    ASSERT_TRUE(histogram_blob_json(rows.blob(1), &text).is_ok()) << i;
    EXPECT_EQ(text, texts[i]);
  }
  EXPECT_FALSE(rows.step());
}

TEST(Migrations, AVersion10HistogramThatIsNotBucketRunsFailsTheUpgradeUnchanged) {
  TempDir dir;
  for (const std::string bad :
       {R"({"x":[1]})", R"({"5":[1],"3":[1]})", R"({"5":[1.5]})", R"({"5":[-1]})", R"({"5":7})", "[1]", "{"}) {
    const std::string path = dir / "v10.db";
    std::filesystem::remove(path);
    make_version_10(path, {R"({"1":[1]})", bad});
    try {
      Database db(path, OpenMode::kExisting);
      ADD_FAILURE() << "upgraded " << bad;
    } catch (const Error& e) {
      EXPECT_TRUE(std::string(e.what()).find("value_histogram row 2") != std::string::npos ||
                  std::string(e.what()).find("malformed JSON") != std::string::npos)
          << bad << ": " << e.what();
    }
    EXPECT_EQ(raw_text(path, "SELECT version FROM schema_version"), "10") << bad;
    EXPECT_EQ(raw_text(path, "SELECT buckets FROM value_histogram WHERE histogram_id = 2"), bad);
    EXPECT_EQ(raw_text(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'value_histogram_blob'"), "0");
  }
}

// A database as trialdb 11 left it: no tensor summary (tensor.visible_steps, tensor_variant).
// Trial t shows steps 0..3 (complete_through 3; step 3 is GLOBAL, its values numbered by its mode
// step 1); step 4 is not complete, and a value at step 5 has no step row. Tensor w changes dtype
// and shape and has two workers (and a row of step 4, not visible); r has reductions only, from a
// worker without a worker row; none has no values; late has none visible. Trial u shows nothing.
void make_version_11(const std::string& path) {
  Database db(path);
  to_version_12_distributions(db);
  db.exec("INSERT INTO trial(trial_id, name, path, complete_through) VALUES (1, 't', '/t', 3), (2, 'u', '/u', -1)");
  db.exec(R"sql(INSERT INTO step(trial_id, step, mode, mode_step, tensor_step) VALUES
                (1, 0, 'TRAIN', 0, 0), (1, 1, 'TRAIN', 1, 1), (1, 2, 'TRAIN', 2, 2), (1, 3, 'GLOBAL', 1, 1),
                (1, 4, 'TRAIN', 4, 4), (2, 0, 'TRAIN', 0, 0))sql");
  db.exec("INSERT INTO worker(worker_id, trial_id, name) VALUES (1, 1, 'worker_0'), (2, 1, 'worker_1'), (4, 2, 'w')");
  db.exec(
      "INSERT INTO tensor(tensor_id, trial_id, name) VALUES (1, 1, 'w'), (2, 1, 'r'), (3, 1, 'none'), (4, 1, 'late'), "
      "(5, 2, 'w')");
  db.exec(R"sql(INSERT INTO value(trial_id, tensor_id, tensor_step, step_offset, worker_id, dtype, shape) VALUES
                (1, 1, 0, 0, 1, 11, '[2]'), (1, 1, 0, 0, 2, 11, '[2]'), (1, 1, 1, 0, 1, 12, '[2]'),
                (1, 1, 1, 2, 1, 11, '[3]'), (1, 1, 4, 0, 1, 5, '[5]'),
                (1, 2, 2, 0, 3, NULL, NULL),
                (1, 4, 4, 0, 1, 11, '[1]'), (1, 4, 5, 0, 1, 11, '[1]'),
                (2, 5, 0, 0, 4, 11, '[1]'))sql");
  db.exec("DROP TABLE tensor_variant");
  for (const char* view : {"histogram_buckets", "histograms", "histogram_blobs"})  // see make_version_9
    db.exec(std::string("DROP VIEW IF EXISTS ") + view);
  db.exec("ALTER TABLE tensor DROP COLUMN visible_steps");
  db.exec("UPDATE schema_version SET version = 11");
}

// Readers read version 11 (the views are unchanged), except info --tensors, which asks for a
// command that writes; that upgrades it, building the summary from the values: what an aggregate
// over the views says.
TEST(Migrations, Version11GetsTheTensorSummaryOfItsValues) {
  TempDir dir;
  const std::string path = dir / "v11.db";
  make_version_11(path);
  EXPECT_TRUE(readable_without_upgrade(11));
  {
    Database reader(path, OpenMode::kReadOnly);
    try {
      read_tensor_summaries(reader.handle(), "");
      ADD_FAILURE() << "read a summary from version 11";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("trialdb compact --db"), std::string::npos) << e.what();
    }
  }
  Database db(path, OpenMode::kExisting);
  EXPECT_EQ(count(db, "SELECT version FROM schema_version"), kSchemaVersion);
  const std::vector<std::string> listing = listing_from_summary(db.handle());
  EXPECT_EQ(listing, listing_from_views(db.handle()));
  EXPECT_EQ(listing, (std::vector<std::string>{"t|late|NULL|NULL|0|0|", "t|none|NULL|NULL|0|0|", "t|r|NULL|NULL|1|0|",
                                               "t|w|float32,float64|[2],[3]|3|2|", "u|w|NULL|NULL|0|0|"}));
}

// A stand-in for the trialdb extension's histogram_of_element, which the histogram_blobs view calls
// for a one-element value: the element itself, the same before and after an upgrade.
void add_histogram_of_element(Database& db) {
  sqlite3_create_function(
      db.handle(), "histogram_of_element", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr,
      [](sqlite3_context* c, int, sqlite3_value** v) { sqlite3_result_value(c, v[0]); }, nullptr, nullptr);
}

// Version 12 kept a distribution under its value's key: the upgrade numbers them in that order and
// names each number in its value row, histograms included. Here the rows were stored out of that
// order (ids 3, 1, 4, 2: a@0, a@1, b@0, b@1), b@0 has no histogram (no finite element) and the
// scalar s none of either; the views read the same before and after.
TEST(Migrations, Version12DistributionsAreNumberedInTheirValuesKeyOrder) {
  TempDir dir;
  const std::string path = dir / "v12.db";
  const std::vector<std::string> views = {
      "SELECT * FROM distributions ORDER BY tensor, step",
      "SELECT tensor, step, hex(buckets) FROM histogram_blobs ORDER BY tensor, step"};

  std::string before;
  {
    Database db(path);
    db.exec("INSERT INTO trial(trial_id, name, path, complete_through) VALUES (1, 't', '/x', 1)");
    db.exec(
        "INSERT INTO step(trial_id, step, mode, mode_step, tensor_step) VALUES (1, 0, 'TRAIN', 0, 0), "
        "(1, 1, 'TRAIN', 1, 1)");
    db.exec("INSERT INTO worker(worker_id, trial_id, name) VALUES (1, 1, 'worker_0')");
    db.exec("INSERT INTO tensor(tensor_id, trial_id, name) VALUES (1, 1, 'a'), (2, 1, 'b'), (3, 1, 's')");
    db.exec(R"sql(INSERT INTO value(trial_id, tensor_id, tensor_step, step_offset, worker_id, red_src, r_min,
                                    distribution_id) VALUES
                  (1, 1, 0, 0, 1, 0, NULL, 3), (1, 1, 1, 0, 1, 0, NULL, 1), (1, 2, 0, 0, 1, 0, NULL, 4),
                  (1, 2, 1, 0, 1, 0, NULL, 2), (1, 3, 0, 0, 1, 2, 1.5, NULL))sql");
    db.exec(R"sql(INSERT INTO value_distribution(distribution_id, nan, pos_inf, neg_inf, zero, negative, positive,
                                                 p0, p50, p100) VALUES
                  (1, 0, 0, 0, 0, 0, 2, 0.25, 0.5, 0.75), (2, 0, 0, 0, 1, 1, 0, -2.0, -1.0, 0.0),
                  (3, 0, 1, 0, 0, 0, 3, 1.0, 2.0, NULL), (4, 2, 0, 0, 0, 0, 0, NULL, NULL, NULL))sql");
    db.exec("INSERT INTO value_histogram(distribution_id, buckets) VALUES (1, x'0101'), (2, x'0202'), (3, x'0303')");
    add_histogram_of_element(db);
    before = rows_text(db.handle(), views);
    to_version_12_distributions(db);
    db.exec("UPDATE schema_version SET version = 12");
  }
  EXPECT_TRUE(readable_without_upgrade(12));
  Database db(path, OpenMode::kExisting);
  EXPECT_EQ(count(db, "SELECT version FROM schema_version"), kSchemaVersion);
  add_histogram_of_element(db);
  EXPECT_EQ(rows_text(db.handle(), views), before);
  EXPECT_EQ(
      rows_text(db.handle(), {"SELECT tn.name, v.tensor_step, v.distribution_id, h.distribution_id FROM value v "
                              "JOIN tensor tn USING (tensor_id) LEFT JOIN value_histogram h USING (distribution_id) "
                              "ORDER BY 1, 2"}),
      "a|0|1|1|\na|1|2|2|\nb|0|3|NULL|\nb|1|4|4|\ns|0|NULL|NULL|\n");
  EXPECT_EQ(count(db, "SELECT count(*) FROM value_distribution"), 4);
  EXPECT_EQ(count(db, "SELECT count(*) FROM value_histogram"), 3);
}

TEST(Migrations, VersionsWithoutAPathAreRefusedUnchanged) {
  TempDir dir;
  for (int64_t version : {kOldestUpgradableVersion - 1, static_cast<int64_t>(kSchemaVersion) + 1}) {
    const std::string path = dir / ("v" + std::to_string(version) + ".db");
    {
      Database db(path);
      db.exec("UPDATE schema_version SET version = " + std::to_string(version));
    }
    for (OpenMode mode : {OpenMode::kCreate, OpenMode::kExisting, OpenMode::kReadOnly}) {
      try {
        Database db(path, mode);
        ADD_FAILURE() << "opened version " << version;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("schema version " + std::to_string(version)), std::string::npos)
            << e.what();
      }
    }
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* q = nullptr;
    sqlite3_prepare_v2(raw, "SELECT version FROM schema_version", -1, &q, nullptr);
    ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int64(q, 0), version);
    sqlite3_finalize(q);
    sqlite3_close(raw);
  }
}

}  // namespace
