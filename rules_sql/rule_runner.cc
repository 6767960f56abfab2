// RuleRunner (rule_runner.h): installs the rule SQL and walks each trial's new complete steps.
#include "rules_sql/rule_runner.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "rules_sql/rule_settings.h"
#include "schema/status.h"
#include "sqlext/register.h"

namespace trialdb::rules {

namespace {

struct RuleSource {
  const char* name;
  const char* sql;   // a rule of another kind than 'batch' (rule_catalog) says so itself
};

// rule_catalog.kind (rules_base.sql).
const std::string kStepKind = "step", kClockKind = "clock";

const char* const kBaseSql =
#include "rules_base.sql.inc"
    ;

// One entry per rules_sql/<name>.sql, in the order of docs/RULES.md (rules_sql/CMakeLists.txt).
const RuleSource kBuiltins[] = {
#include "builtin_rules.inc"
};

// While rule files run: the defaults each inserts (INSERT OR IGNORE INTO rule_param ... trial
// NULL) are kept in rule_param_default as given, whether or not rule_param already had the row.
const char* const kCaptureDefaults =
    "CREATE TEMP TRIGGER rule_param_default_capture BEFORE INSERT ON rule_param WHEN new.trial IS NULL "
    "BEGIN INSERT OR REPLACE INTO rule_param_default(rule, param, value) VALUES (new.rule, new.param, new.value); END";

// Names of the runner's own objects: a custom rule may not take them.
const std::set<std::string> kReservedNames = {"now", "now_primary", "now_distribution", "primary_worker", "param", "params", "findings", "finding",
                                              "batch", "catalog", "progress", "trial_clock", "evaluated", "delivery",
                                              "rerun", "param_default"};

bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

double system_clock_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// Thrown out of a rule's evaluation whose statement was interrupted (the time limit): SQLite has
// rolled back the whole transaction, so nothing after it may run in it.
struct TransactionRolledBack {};

// How a rule's time limit is named in its failure: "60 s per rule and batch of steps".
std::string time_limit_text(double seconds) {
  char text[64];
  std::snprintf(text, sizeof text, "%g s per rule and batch of steps", seconds);
  return text;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

const std::vector<std::string>& builtin_rule_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const RuleSource& r : kBuiltins) v.push_back(r.name);
    return v;
  }();
  return names;
}

RuleRunner::RuleRunner(Database& db, RuleOptions options) : db_(db), options_(std::move(options)) {
  if (!options_.clock) options_.clock = system_clock_now;
  if (trialdb_register_sql_functions(db_.handle()) != SQLITE_OK)
    throw Error(Status::database(std::string("cannot register the SQL functions: ") + sqlite3_errmsg(db_.handle())).at(db_.path()));
  install();
  ledger_ = std::make_unique<RuleLedger>(db_);
  for (const std::string& file : options_.rule_files) load_rule_file(file);

  // Trials and rules named on the command line must exist.
  for (const std::string& trial : options_.trials) {
    Statement q(db_.handle(), "SELECT 1 FROM trials WHERE trial = ?1");
    if (!q.bind(1, trial).step()) throw Error(ErrorKind::kUsage, "--trial " + trial + ": no such trial in " + db_.path());
  }
  std::vector<std::string> all;
  std::map<std::string, std::string> kind;
  {
    Statement q(db_.handle(), "SELECT rule, kind FROM rule_catalog ORDER BY rule");
    while (q.step()) {
      all.push_back(q.text(0));
      kind[q.text(0)] = q.text(1);
    }
  }
  if (options_.rules.empty()) {
    rules_ = all;
  } else {
    for (const std::string& r : options_.rules) {
      if (!kind.count(r)) throw Error(ErrorKind::kUsage, "--rule " + r + ": no such rule (known: " + join(all) + ")");
      if (std::find(rules_.begin(), rules_.end(), r) == rules_.end()) rules_.push_back(r);
    }
  }
  for (const std::string& r : rules_) kinds_[r] = kind[r];
  // Parameters are all checked before any is stored; a changed value, and --rerun, leave the
  // rule to be evaluated again from the start (rule_rerun), in the transaction that stores them.
  const std::vector<RuleSetting> settings = check_settings(db_, options_.params);
  Transaction tx(db_);
  Statement rerun(db_.handle(), "INSERT OR IGNORE INTO rule_rerun(trial, rule) VALUES (?1, ?2)");
  for (const auto& [trial, rule] : store_settings(db_, settings, options_.trials)) rerun.bind(1, trial).bind(2, rule).run();
  if (options_.rerun) {
    std::vector<std::string> trials = options_.trials;
    if (trials.empty()) {
      Statement q(db_.handle(), "SELECT trial FROM trials ORDER BY trial");
      while (q.step()) trials.push_back(q.text(0));
    }
    for (const std::string& trial : trials)
      for (const std::string& rule : rules_) rerun.bind(1, trial).bind(2, rule).run();
  }
  tx.commit();
}

void RuleRunner::install() {
  Transaction tx(db_);
  rename_parameter_table();
  db_.exec(kBaseSql);
  db_.exec("DELETE FROM rule_param_default WHERE rule IN (SELECT rule FROM rule_catalog WHERE source = 'builtin')");
  db_.exec(kCaptureDefaults);
  for (const RuleSource& r : kBuiltins) {
    // 'batch' unless the file declares another kind.
    Statement q(db_.handle(), "INSERT OR REPLACE INTO rule_catalog(rule, kind, source) VALUES (?1, 'batch', 'builtin')");
    q.bind(1, r.name).run();
    try {
      db_.exec(r.sql);
    } catch (const std::exception& e) {
      throw Error(ErrorKind::kUsage, std::string("built-in rule ") + r.name + ": " + e.what());
    }

  }
  db_.exec("DROP TRIGGER temp.rule_param_default_capture");
  RuleLedger(db_).adopt_progress_cursors();
  tx.commit();
}

// Databases whose rules were installed by an older runner hold the stored parameters in a table
// rule_params, the name rules_base.sql now gives the view of the parameters in effect: the table
// becomes rule_param (with its rows), its indexes go (rules_base.sql creates them under the new
// names) and the old view rule_param goes first, as its name is taken. Legacy renaming leaves the
// rule views alone: rules_base.sql and the rule files recreate them.
void RuleRunner::rename_parameter_table() {
  const bool old_shape = [&] {
    Statement q(db_.handle(), "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'rule_params'");
    return q.step();
  }();
  if (!old_shape) return;
  db_.exec("DROP VIEW IF EXISTS rule_param");
  db_.exec("PRAGMA legacy_alter_table = ON");
  db_.exec("ALTER TABLE rule_params RENAME TO rule_param");
  db_.exec("PRAGMA legacy_alter_table = OFF");
  db_.exec("DROP INDEX IF EXISTS rule_params_key");
  db_.exec("DROP INDEX IF EXISTS rule_params_by_name");
}

void RuleRunner::load_rule_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kUsage, "--rule-file " + path + ": cannot read the file");
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string sql = buf.str();

  // The rules a file defines are the views named rule_<name> it creates, found by comparing the
  // schema before and after it ran (a view created anew has a new schema row); a view
  // rule_<name>_cfg holds a rule's typed parameters and is no rule. The views of an earlier load
  // of the same file go first, so that it may create them again.
  auto rule_views = [&] {
    std::set<std::pair<int64_t, std::string>> views;
    Statement q(db_.handle(),
                "SELECT rowid, substr(name, 6) FROM sqlite_schema "
                "WHERE type = 'view' AND name LIKE 'rule\\_%' ESCAPE '\\' AND name NOT LIKE '%\\_cfg' ESCAPE '\\'");
    while (q.step()) views.emplace(q.int64(0), q.text(1));
    return views;
  };
  Transaction tx(db_);
  {
    std::vector<std::string> earlier;
    Statement q(db_.handle(), "SELECT rule FROM rule_catalog WHERE source = ?1");
    q.bind(1, path);
    while (q.step()) earlier.push_back(q.text(0));
    for (const std::string& name : earlier)
      if (is_identifier(name)) db_.exec("DROP VIEW IF EXISTS rule_" + name);
    Statement forget(db_.handle(), "DELETE FROM rule_catalog WHERE source = ?1");
    forget.bind(1, path).run();
  }
  const auto before = rule_views();
  db_.exec(kCaptureDefaults);
  try {
    db_.exec(sql);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::kUsage, "--rule-file " + path + ": " + e.what());
  }
  db_.exec("DROP TRIGGER temp.rule_param_default_capture");
  std::vector<std::string> names;
  for (const auto& view : rule_views()) {
    if (before.count(view)) continue;
    const std::string& name = view.second;
    if (kReservedNames.count(name))
      throw Error(ErrorKind::kUsage, "--rule-file " + path + ": view rule_" + name + " is reserved by the rule runner");
    for (const RuleSource& r : kBuiltins)
      if (name == r.name)
        throw Error(ErrorKind::kUsage, "--rule-file " + path + ": rule_" + name + " is a built-in rule; give yours another name");
    names.push_back(name);
  }
  if (names.empty())
    throw Error(ErrorKind::kUsage, "--rule-file " + path +
                             ": creates no view named rule_<name> (columns trial, step, tensor, worker, value, message)");
  for (const std::string& name : names) {
    sqlite3_stmt* probe = nullptr;
    std::string check = "SELECT trial, step, tensor, worker, value, message FROM rule_" + name + " LIMIT 0";
    int rc = sqlite3_prepare_v2(db_.handle(), check.c_str(), -1, &probe, nullptr);
    std::string err = rc == SQLITE_OK ? "" : sqlite3_errmsg(db_.handle());
    sqlite3_finalize(probe);
    if (rc != SQLITE_OK)
      throw Error(ErrorKind::kUsage, "--rule-file " + path + ": view rule_" + name +
                               " must have the columns trial, step, tensor, worker, value, message: " + err);
    // 'batch' unless the file declared another kind (INSERT OR REPLACE INTO rule_catalog).
    Statement q(db_.handle(),
                "INSERT INTO rule_catalog(rule, kind, source) VALUES (?1, 'batch', ?2) "
                "ON CONFLICT (rule) DO UPDATE SET source = excluded.source");
    q.bind(1, name).bind(2, path).run();
  }
  tx.commit();
}

std::vector<Finding> RuleRunner::evaluate_new_steps() {
  const double now = options_.clock();
  std::vector<std::string> trials = options_.trials;
  if (trials.empty()) {
    Statement q(db_.handle(), "SELECT trial FROM trials ORDER BY trial");
    while (q.step()) trials.push_back(q.text(0));
  }
  std::vector<int64_t> found;
  for (const std::string& trial : trials) {
    // A rule stopped at its time limit took the trial's transaction with it: once more without it.
    for (size_t stopped = stopped_.size();; stopped = stopped_.size()) {
      const size_t found_before = found.size();
      evaluate_trial(trial, now, &found);
      if (stopped_.size() == stopped) break;
      found.resize(found_before);
    }
  }
  return ledger_->findings(found);
}

void RuleRunner::evaluate_trial(const std::string& trial, double now, std::vector<int64_t>* found) try {
  sqlite3* h = db_.handle();
  Statement clear_batch(h, "DELETE FROM rule_batch");
  Statement add_to_batch(h,
                         "INSERT INTO rule_batch(trial, step, mode, mode_step, tensor_step, now) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  Statement ensure_progress(h, "INSERT OR IGNORE INTO rule_progress(trial, rule, step) VALUES (?1, ?2, NULL)");
  Statement advance(h, "UPDATE rule_progress SET step = ?3, evaluated = evaluated + ?4 WHERE trial = ?1 AND rule = ?2");
  Statement mark_evaluated(h, "INSERT OR IGNORE INTO rule_evaluated(trial, rule, step) SELECT trial, ?1, step FROM rule_batch");
  // The INSERT of each rule's findings for the batch, prepared once per runner (a rule view is a
  // large query). The view is materialized first: it is evaluated once for the whole batch, never
  // once per batch row.
  auto record_statement = [&](const std::string& rule) -> Statement& {
    auto& stmt = record_[rule];
    if (!stmt) {
      if (!is_identifier(rule)) throw Error(ErrorKind::kUsage, "rule_catalog: bad rule name '" + rule + "'");
      stmt = std::make_unique<Statement>(
          h, "WITH r AS MATERIALIZED (SELECT trial, step, tensor, worker, value, message FROM rule_" + rule + ") "
             "INSERT OR IGNORE INTO rule_finding(trial, rule, step, mode, mode_step, tensor, worker, value, message, found_at) "
             "SELECT b.trial, ?1, b.step, b.mode, b.mode_step, r.tensor, ifnull(r.worker, 'worker_0'), r.value, r.message, b.now "
             "FROM r JOIN rule_batch b ON b.trial = r.trial AND b.step = r.step");
    }
    return *stmt;
  };
  auto fill_batch = [&](std::vector<StepRow>::const_iterator first, std::vector<StepRow>::const_iterator last) {
    clear_batch.run();
    for (auto s = first; s != last; ++s)
      add_to_batch.bind(1, trial).bind(2, s->step).bind(3, s->mode).bind(4, s->mode_step)
          .bind(5, s->mode == "GLOBAL" ? s->mode_step : s->step).bind(6, now).run();
  };
  // A rule evaluated again (rule_rerun) reports only findings its earlier evaluation had not.
  std::map<std::string, std::set<std::tuple<int64_t, std::string, std::string>>> earlier;
  Statement finding_key(h, "SELECT step, tensor, worker FROM rule_finding WHERE finding_id = ?1");
  auto is_new = [&](const std::string& rule, int64_t id) {
    const auto it = earlier.find(rule);
    if (it == earlier.end()) return true;
    finding_key.bind(1, id).step();
    const bool seen = it->second.count({finding_key.int64(0), finding_key.text(1), finding_key.text(2)}) > 0;
    finding_key.reset();
    return !seen;
  };
  // Records the rule's findings in the batch; the rows one INSERT adds take consecutive ids.
  auto run_rule = [&](const std::string& rule) {
    record_statement(rule).bind(1, rule).run();
    const int64_t added = sqlite3_changes(h), last = sqlite3_last_insert_rowid(h);
    for (int64_t id = last - added + 1; added > 0 && id <= last; ++id) {
      if (!is_new(rule, id)) continue;
      found->push_back(id);
      if (options_.queue_deliveries) ledger_->queue_delivery(id);
    }
  };
  // Runs `body` for `rule` in a savepoint. A rule that fails is reported (`where` says on what)
  // and left where it was, its state and findings rolled back; the other rules and trials go on.
  // False when it failed.
  auto guarded = [&](const std::string& rule, const std::function<std::string()>& where,
                     const std::function<void()>& body) {
    db_.exec("SAVEPOINT rule_batch");
    const size_t found_size = found->size();
    try {
      {
        const Database::TimeLimit limit(db_, options_.time_limit, time_limit_text(options_.time_limit));
        body();
      }
      db_.exec("RELEASE rule_batch");
      return true;
    } catch (const std::exception& e) {
      if (sqlite3_get_autocommit(h)) {   // interrupted at the time limit: the transaction is gone
        stopped_.emplace(trial, rule);
        failures_.push_back("rule " + rule + " on trial " + trial + where() + ": " + e.what());
        throw TransactionRolledBack{};
      }
      db_.exec("ROLLBACK TO rule_batch");
      db_.exec("RELEASE rule_batch");
      found->resize(found_size);
      failures_.push_back("rule " + rule + " on trial " + trial + where() + ": " + e.what());
      return false;
    }
  };
  // Evaluates `rule` on the steps [first, last): folds them into its state and records its
  // findings.
  auto evaluate = [&](const std::string& rule, std::vector<StepRow>::const_iterator first,
                      std::vector<StepRow>::const_iterator last) {
    const auto steps = [&] {
      return last - first == 1 ? " at step " + std::to_string(first->step)
                               : " on steps " + std::to_string(first->step) + ".." + std::to_string((last - 1)->step);
    };
    return guarded(rule, steps, [&] {
      fill_batch(first, last);
      ensure_progress.bind(1, trial).bind(2, rule).run();
      advance.bind(1, trial).bind(2, rule).bind(3, (last - 1)->step).bind(4, static_cast<int64_t>(last - first)).run();
      run_rule(rule);
      mark_evaluated.bind(1, rule).run();
      clear_batch.run();
    });
  };

  // One write transaction per trial, begun before the owed steps are read, so a step another
  // runner evaluated meanwhile is not evaluated (folded into a rule's state) twice, and a rule
  // evaluated again (rule_rerun) has its old findings replaced in one transaction.
  Transaction tx(db_);
  const auto stopped = [&](const std::string& rule) { return stopped_.count({trial, rule}) > 0; };
  for (const std::string& rule : ledger_->pending_reruns(trial))
    if (std::find(rules_.begin(), rules_.end(), rule) != rules_.end()) earlier[rule] = ledger_->reset(trial, rule);
  std::vector<std::string> step_rules;
  for (const std::string& rule : rules_)
    if (kinds_.at(rule) != kClockKind && !stopped(rule)) step_rules.push_back(rule);
  for (auto& [rule, owed] : ledger_->owed_steps(trial, step_rules, options_.last_step)) {
    if (owed.empty()) continue;
    if (noted_.emplace(trial, rule).second)
      for (std::string& note : unmatched_selections(db_, trial, rule)) notes_.push_back(std::move(note));
    if (kinds_.at(rule) == kStepKind) {
      for (auto s = owed.begin(); s != owed.end(); ++s)
        if (!evaluate(rule, s, s + 1)) break;
    } else {
      evaluate(rule, owed.begin(), owed.end());
    }
  }

  // The clock: when the last complete step changed, progress was made now.
  const std::optional<StepRow> last = ledger_->last_complete_step(trial);
  if (last) {
    Statement clock(h,
                    "INSERT INTO rule_trial_clock(trial, last_step, progress_at) VALUES (?1, ?2, ?3) "
                    "ON CONFLICT (trial) DO UPDATE SET last_step = excluded.last_step, progress_at = excluded.progress_at "
                    "WHERE last_step <> excluded.last_step");
    clock.bind(1, trial).bind(2, last->step).bind(3, now).run();
    const std::vector<StepRow> at_last{*last};
    for (const std::string& rule : rules_) {
      if (kinds_.at(rule) != kClockKind || stopped(rule)) continue;
      guarded(rule, [] { return std::string(); }, [&] {
        fill_batch(at_last.begin(), at_last.end());
        run_rule(rule);
        clear_batch.run();
      });
    }
  }
  tx.commit();
} catch (const TransactionRolledBack&) {
  // evaluate_new_steps evaluates the trial again without the stopped rule.
}

}  // namespace trialdb::rules
