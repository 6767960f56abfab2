// A custom rule file (`--rule-file F.sql`): a rule, not a script.
//
// The file opens with its declaration (rule_declaration.h) and may then create only what a
// built-in rule creates: its view rule_<name>, helper views and state tables (and their indexes)
// named rule_<name>_*, and fold triggers named rule_<name>_* on rule_progress, whose bodies write
// only the rule's own tables. An SQLite authorizer refuses everything else while the file runs
// (writes to other tables, ALTER TABLE, PRAGMA, ATTACH, transaction control, load_extension,
// temporary objects, triggers on other tables); the views and triggers it created are then compiled under
// the same rules, since SQLite checks a trigger's body only where it fires. A refusal names the
// file, the statement and what it would have done.
#pragma once
#include <cstddef>
#include <string>

#include "rules_sql/rule_declaration.h"
#include "schema/database.h"

namespace trialdb::rules {

// A rule file is read whole, up to this size.
inline constexpr size_t kMaxRuleFileBytes = 1 << 20;

struct RuleFile {
  std::string path, sql;
  RuleDeclaration declaration;
};

// Reads and declares `path`: a regular file of at most kMaxRuleFileBytes (a FIFO or a device is
// refused before it is read) that opens with a declaration. Throws Error (kUsage) naming it.
RuleFile read_rule_file(const std::string& path);

// Runs the file's statements one by one under the authorizer, then checks that it created the
// view rule_<name> with the finding columns and that its views and triggers touch only what is
// the rule's. Inside the caller's transaction; throws Error (kUsage) naming the file.
void run_rule_file(Database& db, const RuleFile& file);

}  // namespace trialdb::rules
