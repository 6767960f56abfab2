// trialdb rm and trialdb rename: a trial removed from a database, or given another name, in one
// transaction; other trials untouched. The rule runner's tables (rules_sql/rules_base.sql: the
// findings, evaluated steps, parameters, ...) and every rule's state table name trials by their
// name; they are found as the tables named rule_* with a column `trial`.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "schema/database.h"
#include "src/commands.h"
#include "src/open_db.h"
#include "src/output.h"

namespace trialdb::cli {

namespace {

struct TrialArgs {
  std::string db, trial, to;
};

// The rule tables that name trials, found by what they hold rather than listed here.
std::vector<std::string> rule_tables(Database& db) {
  std::vector<std::string> tables;
  Statement q(db.handle(),
              "SELECT m.name FROM sqlite_schema m WHERE m.type = 'table' AND m.name LIKE 'rule\\_%' ESCAPE '\\' "
              "AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = 'trial') ORDER BY m.name");
  while (q.step()) tables.push_back(q.text(0));
  return tables;
}

std::string quoted_identifier(const std::string& name) {
  std::string q = "\"";
  for (char c : name) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

int64_t trial_id(Database& db, const std::string& name) {
  require_trials(db, {name});
  Statement q(db.handle(), "SELECT trial_id FROM trial WHERE name = ?1");
  q.bind(1, name).step();
  return q.int64(0);
}

void remove_trial(const TrialArgs& a) {
  auto db = open_db(a.db, OpenMode::kExisting);
  Transaction tx(*db);
  const int64_t id = trial_id(*db, a.trial);
  // Values first (blobs and statistics hang off them), then what describes the trial.
  const char* const by_id[] = {
      "DELETE FROM value_blob WHERE value_id IN (SELECT value_id FROM value WHERE trial_id = ?1 AND value_id IS NOT NULL)",
      "DELETE FROM value_histogram WHERE histogram_id IN (SELECT d.histogram_id FROM value_distribution d "
      "JOIN tensor t ON t.tensor_id = d.tensor_id WHERE t.trial_id = ?1)",
      "DELETE FROM value_distribution WHERE tensor_id IN (SELECT tensor_id FROM tensor WHERE trial_id = ?1)",
      "DELETE FROM value WHERE trial_id = ?1",
      "DELETE FROM collection_member WHERE collection_id IN (SELECT collection_id FROM collection WHERE trial_id = ?1)",
      "DELETE FROM collection WHERE trial_id = ?1",
      "DELETE FROM tensor WHERE trial_id = ?1",
      "DELETE FROM worker WHERE trial_id = ?1",
      "DELETE FROM step_worker WHERE trial_id = ?1",
      "DELETE FROM step WHERE trial_id = ?1",
      "DELETE FROM ingested_file WHERE trial_id = ?1",
      "DELETE FROM waiting_file WHERE trial_id = ?1",
      "DELETE FROM partial_file WHERE trial_id = ?1",
      "DELETE FROM event_file WHERE trial_id = ?1",
      "DELETE FROM ingest_error WHERE trial_id = ?1",
      "DELETE FROM trial WHERE trial_id = ?1",
  };
  for (const char* sql : by_id) {
    Statement q(db->handle(), sql);
    q.bind(1, id).run();
  }
  for (const std::string& t : rule_tables(*db)) {
    if (t == "rule_finding") {
      // queued deliveries of the trial's findings go with them
      Statement d(db->handle(),
                  "DELETE FROM rule_delivery WHERE finding_id IN (SELECT finding_id FROM rule_finding WHERE trial = ?1)");
      d.bind(1, a.trial).run();
    }
    Statement q(db->handle(), "DELETE FROM " + quoted_identifier(t) + " WHERE trial = ?1");
    q.bind(1, a.trial).run();
  }
  tx.commit();
  std::cerr << "trialdb rm: removed trial " << printable(a.trial) << " from " << printable(a.db) << "\n";
}

void rename_trial(const TrialArgs& a) {
  if (a.to.empty()) throw Error(ErrorKind::kUsage, "--to: the new name is empty");
  auto db = open_db(a.db, OpenMode::kExisting);
  Transaction tx(*db);
  const int64_t id = trial_id(*db, a.trial);
  Statement taken(db->handle(), "SELECT 1 FROM trial WHERE name = ?1");
  if (taken.bind(1, a.to).step()) throw Error(ErrorKind::kUsage, "--to: a trial named '" + a.to + "' exists already");
  Statement u(db->handle(), "UPDATE trial SET name = ?1 WHERE trial_id = ?2");
  u.bind(1, a.to).bind(2, id).run();
  for (const std::string& t : rule_tables(*db)) {
    Statement q(db->handle(), "UPDATE " + quoted_identifier(t) + " SET trial = ?1 WHERE trial = ?2");
    q.bind(1, a.to).bind(2, a.trial).run();
  }
  tx.commit();
  std::cerr << "trialdb rename: " << printable(a.trial) << " is now " << printable(a.to) << "\n";
}

}  // namespace

void add_trial_commands(CLI::App& app) {
  auto rm = std::make_shared<TrialArgs>();
  CLI::App* r = app.add_subcommand("rm", "Remove a trial and everything of it (values, statistics, findings) from a database");
  r->footer("Example:\n  trialdb rm --db trials.db --trial old_run");
  r->add_option("--db", rm->db, "Database file")->required();
  r->add_option("--trial", rm->trial, "The trial to remove")->required();
  r->callback([rm] { remove_trial(*rm); });

  auto rn = std::make_shared<TrialArgs>();
  CLI::App* n = app.add_subcommand("rename", "Give a trial another name (its findings and rule state follow)");
  n->footer("Example:\n  trialdb rename --db trials.db --trial run1 --to baseline");
  n->add_option("--db", rn->db, "Database file")->required();
  n->add_option("--trial", rn->trial, "The trial's name")->required();
  n->add_option("--to", rn->to, "Its new name")->required();
  n->callback([rn] { rename_trial(*rn); });
}

}  // namespace trialdb::cli
