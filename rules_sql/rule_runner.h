// RuleRunner: evaluates the rules (built-in SQL views of rules_sql/*.sql plus custom rule
// files) on every complete step not evaluated before, and records the findings. A rule of kind
// 'batch' evaluates all the steps it owes in one statement (rules_base.sql).
//
// Used by `trialdb rules` and by `trialdb ingest --rules`:
//
//   trialdb::Database db(path);
//   trialdb::rules::RuleRunner runner(db, {});      // installs the rule views and tables
//   ... ingest a batch of steps ...
//   for (const Finding& f : runner.evaluate_new_steps()) ...   // the new findings
//
// Call evaluate_new_steps() after every ingest batch, also when the batch added no complete
// step: stalled_training (a time-based rule) only fires when it is asked, and a step owed from an
// earlier run (a crash after the ingest's commit) is evaluated then. The runner needs the
// connection to itself while evaluating.
//
// Exactly once per (trial, rule, complete step), also with several runners on one database
// (`trialdb rules` beside `ingest --rules`): each trial's evaluation is one write transaction,
// begun (BEGIN IMMEDIATE) before the runner reads which steps are owed (rule_ledger.h), so two
// runners never fold one step into a rule's state twice. Findings are unique per (trial, rule, step,
// tensor, worker): re-running records nothing twice.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rules_sql/rule_declaration.h"
#include "rules_sql/rule_file.h"
#include "rules_sql/lazy_statement.h"
#include "rules_sql/rule_ledger.h"
#include "rules_sql/rule_settings.h"
#include "schema/database.h"

namespace trialdb::rules {

// The tables the runner and the rules write, rules_base.sql's and each rule's own (a rule file may
// create only tables named rule_<name>...), as a GLOB: `trialdb rules` checks only these and
// sqlite_schema before it writes (Database's written_tables), not every page of the file.
inline constexpr const char* kRuleTablesGlob = "rule_*";

struct RuleOptions {
  std::vector<std::string> trials;      // empty: every trial of the database
  std::vector<std::string> rules;       // empty: every rule of rule_catalog
  std::vector<std::string> rule_files;  // custom rules to load (each creates view rule_<name>)
  // RULE.KEY=VALUE settings stored in rule_param before evaluating: for each of `trials`
  // when given, else as the default of every trial.
  std::vector<std::string> params;
  // Evaluate the selected rules again from the first step on the selected trials (their
  // findings replaced), as a changed parameter does.
  bool rerun = false;
  std::function<double()> clock;     // unix seconds; default: the system clock
  std::optional<int64_t> last_step;  // evaluate no step after this one (replays, benchmarks)
  // Queue every finding recorded for delivery (rule_delivery), in the transaction that records
  // it: for an --on-finding command, which confirms each with confirm_delivery().
  bool queue_deliveries = false;
  // Seconds one rule may take on one batch of steps before it is stopped and reported as failed
  // (Database::set_time_limit; the other rules go on); 0: no limit.
  double time_limit = 0;
};

// The built-in rules, in the order of docs/RULES.md.
const std::vector<std::string>& builtin_rule_names();
// Their declarations (rule_declaration.h), in the same order.
const std::vector<RuleDeclaration>& builtin_declarations();
// The names rule_<name> of the tables, views, indexes and triggers rules_base.sql creates, as
// <name>: a custom rule's objects (rule_<name>, rule_<name>_*) may not be named like them.
const std::set<std::string>& reserved_names();
// The SQL that installs rules_base.sql and the built-in rules (their declarations and views) in
// a database: what the runner runs on opening one, and what a stock sqlite3 shell runs to
// evaluate the rules by hand (`trialdb rules --print-sql`).
std::string install_sql();

class RuleRunner {
 public:
  // Registers the SQL functions (sqlext's, the rule_* helpers included) on db's connection,
  // reads the rule files (rule_file.h), checks that every named trial and rule exists, and in
  // one transaction installs the rule tables and views, loads the rule files and checks and
  // stores params (rule_settings.h). Throws Error naming the bad argument or file; then nothing
  // of the call is stored.
  RuleRunner(Database& db, RuleOptions options);

  // Evaluates every selected rule on every complete step it has not evaluated, in step order,
  // trial by trial; returns the findings recorded by this call.
  std::vector<Finding> evaluate_new_steps();

  // Findings queued for delivery and not confirmed yet (of the runner's trials), in id order:
  // those of this run and those a failed or interrupted earlier run left.
  std::vector<Finding> queued_deliveries() { return ledger_->queued_deliveries(options_.trials); }
  void confirm_delivery(int64_t finding_id) { ledger_->confirm_delivery(finding_id); }

  // Changes RuleOptions::last_step for later calls.
  void set_last_step(std::optional<int64_t> last_step) { options_.last_step = last_step; }

  // The rules this runner evaluates.
  const std::vector<std::string>& rules() const { return rules_; }

  // What failed in evaluate_new_steps calls so far: a rule that fails on a trial (an error in
  // its SQL, a value it cannot read) is left at the step before, reported here, and the other
  // rules and trials are evaluated.
  const std::vector<std::string>& failures() const { return failures_; }
  // Notes, each once per trial and run: selections that match no tensor (rule_settings.h,
  // unmatched_selections) of the rules that evaluated a step, and what a rule's view
  // rule_<name>_note(trial, note) says about the batches it evaluated.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  // Installs rules_base.sql and the built-in rules unless rule_installed says they are in as
  // install_sql() makes them; record_installed() says so once the rule files are loaded too.
  void install();
  void record_installed();
  int64_t schema_version();
  void load_rule_file(const RuleFile& file);
  void add_note(const std::string& trial, const std::string& rule, const std::string& text);
  void note_unmatched_selections(const std::string& trial, const std::string& rule, const TrialTensorNames& names);
  void note_from_rule(const std::string& trial, const std::string& rule);  // while its batch is filled
  // Appends the ids of the findings recorded to *found.
  void evaluate_trial(const std::string& trial, double now, std::vector<int64_t>* found);

  Database& db_;
  RuleOptions options_;
  std::vector<std::string> rules_;                            // selected rules
  std::map<std::string, std::string> kinds_;                  // of each selected rule (rule_catalog.kind)
  std::map<std::string, std::unique_ptr<Statement>> record_;  // per rule: INSERT its findings
  // evaluate_trial's statements, prepared once per runner: the UPDATE of rule_progress compiles
  // every fold trigger, and ingest --rules evaluates after every ingest batch.
  struct Statements {
    explicit Statements(sqlite3* h)
        : clear_batch(h, "DELETE FROM rule_batch"),
          add_to_batch(h,
                       "INSERT INTO rule_batch(trial, step, mode, mode_step, tensor_step, now) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6)"),
          ensure_progress(h, "INSERT OR IGNORE INTO rule_progress(trial, rule, step) VALUES (?1, ?2, NULL)"),
          advance(h, "UPDATE rule_progress SET step = ?3, evaluated = evaluated + ?4 WHERE trial = ?1 AND rule = ?2"),
          mark_evaluated(
              h, "INSERT OR IGNORE INTO rule_evaluated(trial, rule, step) SELECT trial, ?1, step FROM rule_batch"),
          finding_key(h, "SELECT step, tensor, worker FROM rule_finding WHERE finding_id = ?1") {}
    LazyStatement clear_batch, add_to_batch, ensure_progress, advance, mark_evaluated, finding_key;
  } statements_;
  std::unique_ptr<RuleLedger> ledger_;
  std::vector<std::string> failures_;
  // (trial, rule) stopped at the time limit in this run: an interrupted statement rolls back the
  // trial's whole transaction (SQLite's rule), so the trial is evaluated again without them.
  std::set<std::pair<std::string, std::string>> stopped_;
  std::vector<std::string> notes_;
  std::set<std::pair<std::string, std::string>> looked_at_;           // (trial, rule): selections checked
  std::set<std::string> noted_;                                       // notes given
  std::set<std::pair<std::string, std::string>> noted_by_rule_;       // (trial, rule): its _note view spoke
  std::map<std::string, std::unique_ptr<Statement>> note_statement_;  // per rule: its _note view, if any
};

}  // namespace trialdb::rules
