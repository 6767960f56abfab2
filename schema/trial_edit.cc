#include "schema/trial_edit.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "schema/database.h"
#include "schema/follower_claim.h"

namespace trialdb {

namespace {

int64_t trial_id(Database& db, const std::string& name) {
  Statement q(db.handle(), "SELECT trial_id FROM trial WHERE name = ?1");
  if (!q.bind(1, name).step()) throw Error(ErrorKind::kUsage, "no trial named '" + name + "'");
  return q.int64(0);
}

// Refuses a trial a live follower holds, naming it.
void refuse_if_followed(Database& db, int64_t id, const std::string& name, const char* what) {
  const std::vector<FollowerClaim> followers = live_followers(db, id);
  if (followers.empty()) return;
  std::string who;
  for (const FollowerClaim& c : followers) who += (who.empty() ? "" : "; ") + describe(c);
  throw Error(ErrorKind::kUsage, "cannot " + std::string(what) + " trial '" + name + "': it is being followed (" + who +
                                     "); stop that ingest first");
}

std::string quoted_identifier(const std::string& name) {
  std::string q = "\"";
  for (char c : name) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// The tables named rule_* with a column `trial` (the rule runner's and the rules' state).
std::vector<std::string> tables_naming_trials(Database& db) {
  std::vector<std::string> tables;
  Statement q(db.handle(), R"sql(
    SELECT m.name FROM sqlite_schema m
    WHERE m.type = 'table' AND m.name LIKE 'rule\_%' ESCAPE '\'
      AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = 'trial')
    ORDER BY m.name)sql");
  while (q.step()) tables.push_back(q.text(0));
  return tables;
}

// The tables with a trial_id column, trial itself last.
std::vector<std::string> tables_by_trial_id(Database& db) {
  std::vector<std::string> tables;
  Statement q(db.handle(), R"sql(
    SELECT m.name FROM sqlite_schema m
    WHERE m.type = 'table' AND m.name <> 'trial'
      AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = 'trial_id')
    ORDER BY m.name)sql");
  while (q.step()) tables.push_back(q.text(0));
  tables.push_back("trial");
  return tables;
}

}  // namespace

void remove_trial(Database& db, const std::string& name) {
  const int64_t id = trial_id(db, name);
  refuse_if_followed(db, id, name, "remove");
  // A database's only trial is all of its rows: DELETE without WHERE lets SQLite free a table's
  // pages without visiting its rows (576,300 scalar values: 70 ms instead of 0.9 s).
  const bool only_trial = [&] {
    Statement n(db.handle(), "SELECT count(*) FROM trial");
    return n.step() && n.int64(0) == 1;
  }();
  auto delete_rows = [&](const std::string& table, const std::string& of_trial) {
    Statement q(db.handle(), "DELETE FROM " + quoted_identifier(table) + (only_trial ? std::string() : of_trial));
    if (!only_trial) q.bind(1, id);
    q.run();
  };
  // What hangs off the trial's values, tensors and collections first: those rows are found
  // through the rows deleted after them. value is read and deleted tensor by tensor, in its key's
  // order: through value_by_step (trial_id, step) every row would be a seek into value's pages
  // in another order, 5x slower on a trial of many small values.
  // The rows a column of the trial's value rows names (value_id, distribution_id).
  auto named_by_values = [](const std::string& id) {
    return " WHERE " + id + " IN (SELECT " + id + " FROM value WHERE " + id +
           " IS NOT NULL AND tensor_id IN (SELECT tensor_id FROM tensor WHERE trial_id = ?1))";
  };
  const std::pair<std::string, std::string> hanging[] = {
      {"value_blob", named_by_values("value_id")},
      {"value_histogram", named_by_values("distribution_id")},
      {"value_distribution", named_by_values("distribution_id")},
      {"value", " WHERE tensor_id IN (SELECT tensor_id FROM tensor WHERE trial_id = ?1)"},
      {"collection_member", " WHERE collection_id IN (SELECT collection_id FROM collection WHERE trial_id = ?1)"},
  };
  for (const auto& [table, of_trial] : hanging) delete_rows(table, of_trial);
  for (const std::string& t : tables_by_trial_id(db)) delete_rows(t, " WHERE trial_id = ?1");
  for (const std::string& t : tables_naming_trials(db)) {
    if (t == "rule_finding") {  // queued deliveries of the trial's findings go with them
      Statement d(
          db.handle(),
          "DELETE FROM rule_delivery WHERE finding_id IN (SELECT finding_id FROM rule_finding WHERE trial = ?1)");
      d.bind(1, name).run();
    }
    Statement q(db.handle(), "DELETE FROM " + quoted_identifier(t) + " WHERE trial = ?1");
    q.bind(1, name).run();
  }
}

void rename_trial(Database& db, const std::string& from, const std::string& to) {
  const int64_t id = trial_id(db, from);
  if (to.empty()) throw Error(ErrorKind::kUsage, "the new name is empty");
  Statement taken(db.handle(), "SELECT 1 FROM trial WHERE name = ?1");
  if (taken.bind(1, to).step()) throw Error(ErrorKind::kUsage, "a trial named '" + to + "' exists already");
  refuse_if_followed(db, id, from, "rename");
  Statement u(db.handle(), "UPDATE trial SET name = ?1 WHERE trial_id = ?2");
  u.bind(1, to).bind(2, id).run();
  for (const std::string& t : tables_naming_trials(db)) {
    Statement q(db.handle(), "UPDATE " + quoted_identifier(t) + " SET trial = ?1 WHERE trial = ?2");
    q.bind(1, to).bind(2, from).run();
  }
}

}  // namespace trialdb
