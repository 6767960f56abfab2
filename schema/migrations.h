// Upgrades of a database written by an older trialdb: one explicit step per schema version.
//
// One policy for every table of a trialdb database, the schema's (schema.sql) and the rule
// runner's (rules_sql/rules_base.sql, created when rules first run) alike: schema_version says
// the shape of all of them, and nothing else changes a table's shape. A database of an older
// version with a path of steps to this one is upgraded when a command opens it for writing, in
// the transaction that applies the schema (all steps or none); a read-only open accepts it as
// it is when every step on the path is read-compatible (what readers read is unchanged), and
// otherwise asks for a command that writes. Newer versions, and older ones without a path, are
// refused unchanged (database.h).
#pragma once
#include <cstdint>

namespace trialdb {

class Database;

// The oldest schema version an upgrade path starts from.
inline constexpr int64_t kOldestUpgradableVersion = 7;

// Whether a database of `version` can be upgraded to kSchemaVersion.
bool can_upgrade(int64_t version);
// Whether a reader of this trialdb reads a database of `version` correctly without upgrading it.
bool readable_without_upgrade(int64_t version);
// Upgrades a database of `from` (can_upgrade) to kSchemaVersion, schema_version included. Runs
// in the caller's transaction, after schema.sql has created the tables that are new. A step that
// drops or renames a column must drop the histogram views first (or use legacy_alter_table):
// SQLite then checks every view, and those call the trialdb extension's functions, which the
// connection here does not have.
void upgrade(Database& db, int64_t from);

}  // namespace trialdb
