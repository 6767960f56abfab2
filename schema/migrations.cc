#include "schema/migrations.h"

#include <charconv>
#include <string>

#include "schema/database.h"
#include "schema/histogram_blob.h"
#include "schema/tensor_summary.h"

namespace trialdb {

namespace {

struct Migration {
  int64_t from;          // upgrades from this version to from + 1
  bool read_compatible;  // readers read the older shape correctly
  void (*apply)(Database& db);
};

bool has_table(Database& db, const char* name) {
  Statement q(db.handle(), "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1");
  return q.bind(1, std::string_view(name)).step();
}

bool has_column(Database& db, const char* table, const char* column) {
  Statement q(db.handle(), "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2");
  return q.bind(1, std::string_view(table)).bind(2, std::string_view(column)).step();
}

// 7 -> 8: trial_follower (schema.sql creates it), and the rule runner's tables take the shape
// rules_base.sql gives them, whatever runner wrote them before they were versioned:
// - the stored parameters were a table rule_params, the name of today's view of the parameters
//   in effect: it becomes rule_param with its rows (the old view rule_param goes first, its
//   indexes go; rules_base.sql creates them under the new names and recreates every view);
// - rule_progress had no count of evaluated steps, and runners before rule_evaluated kept only
//   the last evaluated step: its complete steps up to there become rule_evaluated rows, counted.
void upgrade_7(Database& db) {
  if (has_table(db, "rule_params")) {
    db.exec("DROP VIEW IF EXISTS rule_param");
    db.exec("PRAGMA legacy_alter_table = ON");
    db.exec("ALTER TABLE rule_params RENAME TO rule_param");
    db.exec("PRAGMA legacy_alter_table = OFF");
    db.exec("DROP INDEX IF EXISTS rule_params_key");
    db.exec("DROP INDEX IF EXISTS rule_params_by_name");
  }
  if (!has_table(db, "rule_progress")) return;
  // The shape of rule_evaluated at version 8 (rules_base.sql).
  db.exec(R"sql(
    CREATE TABLE IF NOT EXISTS rule_evaluated (
      trial TEXT NOT NULL,
      rule  TEXT NOT NULL,
      step  INTEGER NOT NULL,
      PRIMARY KEY (trial, rule, step)
    ) WITHOUT ROWID)sql");
  const bool counted = has_column(db, "rule_progress", "evaluated");
  if (!counted) db.exec("ALTER TABLE rule_progress ADD COLUMN evaluated INTEGER NOT NULL DEFAULT 0");
  db.exec(R"sql(
    INSERT OR IGNORE INTO rule_evaluated(trial, rule, step)
    SELECT p.trial, p.rule, s.step
    FROM rule_progress p JOIN steps s ON s.trial = p.trial AND s.complete
    WHERE p.step IS NOT NULL AND s.step <= p.step
      AND NOT EXISTS (SELECT 1 FROM rule_evaluated e WHERE e.trial = p.trial AND e.rule = p.rule))sql");
  if (!counted || sqlite3_changes(db.handle()) > 0)
    db.exec(R"sql(
      UPDATE rule_progress
      SET evaluated = (SELECT count(*) FROM rule_evaluated e
                       WHERE e.trial = rule_progress.trial AND e.rule = rule_progress.rule))sql");
}

// 8 -> 9: the identities and change record the export reconciles against (schema.sql): the
// database's identity (schema.sql inserts it), a random uid per trial (ALTER TABLE cannot add a
// column whose default is random: the catalog gives every new trial its uid), and change_seq on
// trial and step, 0 for what was written before.
void upgrade_8(Database& db) {
  db.exec("CREATE TABLE IF NOT EXISTS database_identity (uid TEXT NOT NULL)");
  db.exec(
      "INSERT INTO database_identity(uid) SELECT lower(hex(randomblob(16))) "
      "WHERE NOT EXISTS (SELECT 1 FROM database_identity)");
  if (!has_column(db, "trial", "uid")) {
    db.exec("ALTER TABLE trial ADD COLUMN uid TEXT NOT NULL DEFAULT ''");
    db.exec("UPDATE trial SET uid = lower(hex(randomblob(16)))");
  }
  if (!has_column(db, "trial", "change_seq"))
    db.exec("ALTER TABLE trial ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0");
  if (!has_column(db, "step", "change_seq"))
    db.exec("ALTER TABLE step ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0");
}

// 9 -> 10: value.red_computed, 0 (not known) for every row written before: rules then read
// those values' blobs, as before. The reductions view gains its column `computed`: schema.sql
// creates views only where they do not exist, so the old one goes and schema.sql is applied again.
void upgrade_9(Database& db) {
  if (!has_column(db, "value", "red_computed"))
    db.exec("ALTER TABLE value ADD COLUMN red_computed INTEGER NOT NULL DEFAULT 0");
  db.exec("DROP VIEW IF EXISTS reductions");
  db.exec(schema_sql());
}

// 10 -> 11: value_histogram.buckets is a histogram blob (histogram_blob.h) instead of the JSON
// text {"<first bucket>": [count, ...], ...} the histograms view still shows. The text's runs are
// taken apart by SQLite's json_each, in the text's order, and written again run for run (zeros
// inside a run included), so histogram_json gives back the same text. A row that is not such text
// (malformed JSON, a key that is not a bucket number, a count that is not a non-negative integer,
// runs out of order) fails the upgrade, which then changes nothing; a row that is a blob already
// is kept. The table is rebuilt for its column type, and the views over it are made again by
// schema.sql.
void upgrade_10(Database& db) {
  // Keyed by distribution_id: version 13's table, blobs already (a file of a later shape whose
  // version number was set back).
  if (has_column(db, "value_histogram", "distribution_id")) return;
  db.exec("CREATE TABLE value_histogram_blob (histogram_id INTEGER PRIMARY KEY, buckets BLOB NOT NULL)");
  {
    Statement objects(db.handle(), R"sql(
      SELECT histogram_id FROM value_histogram
      WHERE CASE WHEN typeof(buckets) = 'blob' THEN 0 ELSE json_type(buckets) IS NOT 'object' END)sql");
    if (objects.step())
      throw Error(Status::database("value_histogram row " + std::to_string(objects.int64(0)) +
                                   ": the buckets are not a JSON object of bucket runs"));
    // One histogram at a time, so that only its counts are sorted into the text's order.
    Statement histograms(db.handle(),
                         "SELECT histogram_id, typeof(buckets) = 'blob', buckets FROM value_histogram "
                         "ORDER BY histogram_id");
    Statement counts(db.handle(), R"sql(
      SELECT r.key, r.type, c.value, c.type
      FROM value_histogram h, json_each(h.buckets) r, json_each(r.value) c
      WHERE h.histogram_id = ?1
      ORDER BY r.id, c.id)sql");
    Statement insert(db.handle(), "INSERT INTO value_histogram_blob(histogram_id, buckets) VALUES (?1, ?2)");
    HistogramBlobWriter blob;
    std::string key;
    while (histograms.step()) {
      const int64_t id = histograms.int64(0);
      if (histograms.int64(1)) {  // already a blob (written by this version under an older number)
        const std::string_view b = histograms.blob(2);
        insert.bind(1, id).bind_blob(2, b.data(), b.size()).run();
        continue;
      }
      auto refuse = [&](const std::string& what) {
        return Error(Status::database("value_histogram row " + std::to_string(id) + ": " + what));
      };
      counts.bind(1, id);
      int64_t next = 0;
      bool first_run = true;
      while (counts.step()) {
        if (first_run || counts.text(0) != key) {  // a run begins
          key = counts.text(0);
          int64_t first = 0;
          const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), first);
          if (ec != std::errc() || end != key.data() + key.size() || first < -kHistogramBucketLimit ||
              first > kHistogramBucketLimit)
            throw refuse("bucket run key '" + key + "' is not a bucket number");
          if (counts.text(1) != "array") throw refuse("bucket run '" + key + "' is not an array of counts");
          if (!first_run && first < next) throw refuse("bucket run '" + key + "' overlaps the run before it");
          blob.begin_run(next = first);
          first_run = false;
        }
        if (counts.text(3) != "integer" || counts.int64(2) < 0)
          throw refuse("bucket run '" + key + "' holds a count that is not a non-negative integer");
        blob.add_count(static_cast<uint64_t>(counts.int64(2)));
        ++next;
      }
      counts.reset();
      const std::string b = blob.finish();  // '{}': the blob of no runs
      insert.bind(1, id).bind_blob(2, b.data(), b.size()).run();
    }
  }
  db.exec("DROP VIEW IF EXISTS histogram_buckets");
  db.exec("DROP VIEW IF EXISTS histograms");
  db.exec("DROP VIEW IF EXISTS histogram_blobs");
  db.exec("DROP TABLE value_histogram");
  db.exec("PRAGMA legacy_alter_table = ON");  // the rename checks no view (the rule views' functions are not here)
  db.exec("ALTER TABLE value_histogram_blob RENAME TO value_histogram");
  db.exec("PRAGMA legacy_alter_table = OFF");
  db.exec(schema_sql());
}

// 11 -> 12: what `trialdb info --tensors` reads instead of the values (tensor_summary.h):
// tensor.visible_steps, and tensor_variant (schema.sql creates it), both built from the value rows.
void upgrade_11(Database& db) {
  if (!has_column(db, "tensor", "visible_steps"))
    db.exec("ALTER TABLE tensor ADD COLUMN visible_steps INTEGER NOT NULL DEFAULT 0");
  build_tensor_summaries(db);
}

// 12 -> 13: value_distribution and value_histogram keyed by distribution_id, which the value row
// names (value.distribution_id), instead of by the value's key: the ingest then appends a trial's
// rows instead of inserting them among other tensors' (bench/README.md, "Distribution rows by id").
// The rows are numbered in their old key's order, and keep every column but the key.
void upgrade_12(Database& db) {
  // Keyed by id already (a file of this shape whose version number was set back).
  if (has_column(db, "value_distribution", "distribution_id")) return;
  for (const char* view : {"histogram_buckets", "histograms", "histogram_blobs", "distributions"})
    db.exec(std::string("DROP VIEW IF EXISTS ") + view);
  db.exec("ALTER TABLE value ADD COLUMN distribution_id INTEGER");
  db.exec(R"sql(
    CREATE TEMP TABLE distribution_number AS
    SELECT row_number() OVER (ORDER BY tensor_id, tensor_step, step_offset, worker_id) AS distribution_id,
           tensor_id, tensor_step, step_offset, worker_id, histogram_id
    FROM value_distribution)sql");
  db.exec(R"sql(
    CREATE TABLE value_distribution_by_id (
      distribution_id INTEGER PRIMARY KEY,
      nan INTEGER NOT NULL, pos_inf INTEGER NOT NULL, neg_inf INTEGER NOT NULL,
      zero INTEGER NOT NULL, negative INTEGER NOT NULL, positive INTEGER NOT NULL,
      p0 REAL, p1 REAL, p5 REAL, p10 REAL, p25 REAL, p50 REAL, p75 REAL, p90 REAL, p95 REAL, p99 REAL, p100 REAL
    ))sql");
  db.exec(R"sql(
    INSERT INTO value_distribution_by_id
    SELECT n.distribution_id, d.nan, d.pos_inf, d.neg_inf, d.zero, d.negative, d.positive,
           d.p0, d.p1, d.p5, d.p10, d.p25, d.p50, d.p75, d.p90, d.p95, d.p99, d.p100
    FROM temp.distribution_number n
    JOIN value_distribution d
      ON d.tensor_id = n.tensor_id AND d.tensor_step = n.tensor_step
     AND d.step_offset = n.step_offset AND d.worker_id = n.worker_id
    ORDER BY n.distribution_id)sql");
  db.exec("CREATE TABLE value_histogram_by_id (distribution_id INTEGER PRIMARY KEY, buckets BLOB NOT NULL)");
  db.exec(R"sql(
    INSERT INTO value_histogram_by_id
    SELECT n.distribution_id, h.buckets
    FROM temp.distribution_number n JOIN value_histogram h ON h.histogram_id = n.histogram_id
    ORDER BY n.distribution_id)sql");
  db.exec(R"sql(
    UPDATE value SET distribution_id = n.distribution_id
    FROM temp.distribution_number n
    WHERE n.tensor_id = value.tensor_id AND n.tensor_step = value.tensor_step
      AND n.step_offset = value.step_offset AND n.worker_id = value.worker_id)sql");
  db.exec("DROP TABLE temp.distribution_number");
  db.exec("DROP TABLE value_distribution");
  db.exec("DROP TABLE value_histogram");
  db.exec("PRAGMA legacy_alter_table = ON");  // the rename checks no view (the rule views' functions are not here)
  db.exec("ALTER TABLE value_distribution_by_id RENAME TO value_distribution");
  db.exec("ALTER TABLE value_histogram_by_id RENAME TO value_histogram");
  db.exec("PRAGMA legacy_alter_table = OFF");
  db.exec(schema_sql());
}

constexpr Migration kMigrations[] = {
    {7, true, upgrade_7},
    {8, true, upgrade_8},     // the views read none of it; export needs it (a writing command upgrades)
    {9, true, upgrade_9},     // the views' older shape lacks only reductions.computed, which rules read (they write)
    {10, false, upgrade_10},  // the readers decode histogram blobs, not the older text
    {11, true, upgrade_11},   // the views read none of it; info --tensors asks for the upgrade
    {12, true, upgrade_12},   // an older file's views read its older tables
};

static_assert(kMigrations[std::size(kMigrations) - 1].from + 1 == kSchemaVersion,
              "a schema version without its migration");

}  // namespace

bool can_upgrade(int64_t version) { return version >= kOldestUpgradableVersion && version < kSchemaVersion; }

bool readable_without_upgrade(int64_t version) {
  if (!can_upgrade(version)) return version == kSchemaVersion;
  for (const Migration& m : kMigrations)
    if (m.from >= version && !m.read_compatible) return false;
  return true;
}

void upgrade(Database& db, int64_t from) {
  for (const Migration& m : kMigrations)
    if (m.from >= from) m.apply(db);
  db.exec("UPDATE schema_version SET version = " + std::to_string(kSchemaVersion));
}

}  // namespace trialdb
