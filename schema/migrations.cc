#include "schema/migrations.h"

#include <string>

#include "schema/database.h"

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

constexpr Migration kMigrations[] = {
    {7, true, upgrade_7},
    {8, true, upgrade_8},  // the views read none of it; export needs it (a writing command upgrades)
    {9, true, upgrade_9},  // the views' older shape lacks only reductions.computed, which rules read (they write)
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
