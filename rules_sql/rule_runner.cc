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
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <utility>

#include "rules_sql/rule_file.h"
#include "rules_sql/rule_settings.h"
#include "schema/reduction_kinds.h"
#include "schema/status.h"
#include "sqlext/register.h"

namespace trialdb::rules {

namespace {

struct RuleSource {
  const char* name;
  const char* sql;  // opens with the rule's declaration (rule_declaration.h)
};

const char* const kBaseSql =
#include "rules_base.sql.inc"
    ;

// One entry per rules_sql/<name>.sql, in the order of docs/RULES.md (rules_sql/CMakeLists.txt).
const RuleSource kBuiltins[] = {
#include "builtin_rules.inc"
};

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

// Whether the objects of a rule named `a` (rule_a, rule_a_*) could be named like those of `b`.
bool namespaces_overlap(const std::string& a, const std::string& b) {
  return a == b || a.rfind(b + "_", 0) == 0 || b.rfind(a + "_", 0) == 0;
}

}  // namespace

const std::vector<RuleDeclaration>& builtin_declarations() {
  static const std::vector<RuleDeclaration> declarations = [] {
    std::vector<RuleDeclaration> v;
    for (const RuleSource& r : kBuiltins) {
      v.push_back(parse_declaration(r.sql, std::string("rules_sql/") + r.name + ".sql"));
      if (v.back().name != r.name)
        throw Error(ErrorKind::kUsage, std::string("rules_sql/") + r.name + ".sql declares rule " + v.back().name);
    }
    return v;
  }();
  return declarations;
}

const std::vector<std::string>& builtin_rule_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const RuleSource& r : kBuiltins) v.push_back(r.name);
    return v;
  }();
  return names;
}

const std::set<std::string>& reserved_names() {
  static const std::set<std::string> names = [] {
    static const std::regex kCreate(
        R"(CREATE\s+(?:UNIQUE\s+)?(?:TABLE|VIEW|INDEX|TRIGGER)\s+(?:IF\s+NOT\s+EXISTS\s+)?rule_(\w+))",
        std::regex::icase);
    std::set<std::string> v;
    const std::string base = kBaseSql;
    for (auto m = std::sregex_iterator(base.begin(), base.end(), kCreate); m != std::sregex_iterator(); ++m)
      v.insert((*m)[1].str());
    return v;
  }();
  return names;
}

namespace {

// rules_base.sql with the names in braces that stand for the reductions view's declaration
// (reduction_kinds.h) written in; any other name in braces is an error in the file.
std::string base_sql() {
  const std::pair<const char*, std::string> parts[] = {
      {"{reductions.filter}", reduction_filter_over_kind_sql()},
      {"{reductions.computed}", reduction_kind_column_sql("computed")},
      {"{reductions.value}", reduction_value_over_kind_sql()},
      {"{reductions.values}", reduction_values_sql()},
  };
  std::string sql = kBaseSql;
  for (const auto& [name, expression] : parts)
    for (size_t at = sql.find(name); at != std::string::npos; at = sql.find(name, at + expression.size()))
      sql.replace(at, std::string_view(name).size(), expression);
  if (const size_t at = sql.find("{reductions."); at != std::string::npos)
    throw Error(Status::database("rules_base.sql: unknown name " + sql.substr(at, sql.find('}', at) + 1 - at)));
  return sql;
}

}  // namespace

std::string install_sql() {
  std::string sql = base_sql();
  const std::vector<RuleDeclaration>& declared = builtin_declarations();
  for (size_t i = 0; i < declared.size(); ++i) {  // appended piece by piece: GCC 12's -Wrestrict at -O3
    sql += '\n';
    sql += declaration_sql(declared[i], "builtin");
    sql += '\n';
    sql += kBuiltins[i].sql;
  }
  // Rows for every trial that only repeat a declared default (older runners stored each default
  // there) say nothing: the declaration is where defaults live.
  sql +=
      "\nDELETE FROM rule_param\n"
      "WHERE trial IS NULL\n"
      "  AND value = (SELECT d.value FROM rule_param_declared d WHERE d.rule = rule_param.rule AND d.param = "
      "rule_param.param);\n";
  return sql;
}

namespace {

// install_sql() and its fingerprint, made once per process.
const std::string& installed_sql() {
  static const std::string sql = install_sql();
  return sql;
}
const std::string& installed_fingerprint() {
  static const std::string fingerprint = [] {
    char text[48];
    std::snprintf(text, sizeof text, "%zu-%016zx", installed_sql().size(), std::hash<std::string>{}(installed_sql()));
    return std::string(text);
  }();
  return fingerprint;
}

}  // namespace

RuleRunner::RuleRunner(Database& db, RuleOptions options)
    : db_(db), options_(std::move(options)), statements_(db.handle()) {
  if (!options_.clock) options_.clock = system_clock_now;
  if (trialdb_register_sql_functions(db_.handle()) != SQLITE_OK)
    throw Error(Status::database(std::string("cannot register the SQL functions: ") + sqlite3_errmsg(db_.handle()))
                    .at(db_.path()));
  // Everything that can be checked before writing is: the files, their rules' names, the trials.
  std::vector<RuleFile> files;
  for (const std::string& path : options_.rule_files) {
    files.push_back(read_rule_file(path));
    const std::string& name = files.back().declaration.name;
    for (const std::string& reserved : reserved_names())
      if (namespaces_overlap(name, reserved))
        throw Error(ErrorKind::kUsage, "--rule-file " + path + ": rule name " + name + " collides with rule_" +
                                           reserved + ", which the rule runner uses; give the rule another name");
    for (const std::string& builtin : builtin_rule_names())
      if (namespaces_overlap(name, builtin))
        throw Error(ErrorKind::kUsage, "--rule-file " + path + ": rule name " + name +
                                           " collides with the built-in rule " + builtin +
                                           "; give the rule another name");
    for (size_t i = 0; i + 1 < files.size(); ++i)
      if (namespaces_overlap(name, files[i].declaration.name))
        throw Error(ErrorKind::kUsage, "--rule-file " + path + ": rule name " + name + " collides with rule " +
                                           files[i].declaration.name + " of " + files[i].path);
  }
  for (const std::string& trial : options_.trials) {
    Statement q(db_.handle(), "SELECT 1 FROM trials WHERE trial = ?1");
    if (!q.bind(1, trial).step())
      throw Error(ErrorKind::kUsage, "--trial " + trial + ": no such trial in " + db_.path());
  }

  // One transaction: a bad rule file or parameter leaves the database as it was.
  Transaction tx(db_);
  install();
  ledger_ = std::make_unique<RuleLedger>(db_);
  for (const RuleFile& file : files) load_rule_file(file);
  record_installed();
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
  // rule to be evaluated again from the start (rule_rerun).
  const std::vector<RuleSetting> settings = check_settings(db_, options_.params);
  Statement rerun(db_.handle(), "INSERT OR IGNORE INTO rule_rerun(trial, rule) VALUES (?1, ?2)");
  for (const auto& [trial, rule] : store_settings(db_, settings, options_.trials))
    rerun.bind(1, trial).bind(2, rule).run();
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

int64_t RuleRunner::schema_version() {
  Statement q(db_.handle(), "PRAGMA schema_version");
  return q.step() ? q.int64(0) : -1;
}

void RuleRunner::install() {
  {
    Statement exists(db_.handle(), "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'rule_installed'");
    if (exists.step()) {
      Statement q(db_.handle(), "SELECT fingerprint, schema_version FROM rule_installed");
      if (q.step() && q.text(0) == installed_fingerprint() && q.int64(1) == schema_version()) return;
    }
  }
  try {
    db_.exec(installed_sql());
  } catch (const std::exception& e) {
    throw Error(ErrorKind::kUsage, std::string("installing the built-in rules: ") + e.what());
  }
}

void RuleRunner::record_installed() {
  const int64_t version = schema_version();
  {
    Statement q(db_.handle(), "SELECT fingerprint, schema_version FROM rule_installed");
    if (q.step() && q.text(0) == installed_fingerprint() && q.int64(1) == version) return;
  }
  db_.exec("DELETE FROM rule_installed");
  Statement q(db_.handle(), "INSERT INTO rule_installed(fingerprint, schema_version) VALUES (?1, ?2)");
  q.bind(1, installed_fingerprint()).bind(2, version).run();
}

void RuleRunner::load_rule_file(const RuleFile& file) {
  const std::string& name = file.declaration.name;
  // Another custom rule whose objects this one's could be named like (rule_a_b of rule a).
  {
    Statement q(db_.handle(),
                "SELECT rule, source FROM rule_catalog WHERE source NOT IN ('builtin', ?1) AND rule <> ?2");
    q.bind(1, file.path).bind(2, name);
    while (q.step())
      if (namespaces_overlap(name, q.text(0)))
        throw Error(ErrorKind::kUsage, "--rule-file " + file.path + ": rule name " + name + " collides with rule " +
                                           q.text(0) + " of " + q.text(1));
  }
  // What an earlier load of this file or of this rule created goes first, so that the file may
  // create it again: the rules it declared, their views and triggers (state tables stay).
  std::vector<std::string> earlier{name};
  {
    Statement q(db_.handle(), "SELECT rule FROM rule_catalog WHERE source = ?1 AND rule <> ?2");
    q.bind(1, file.path).bind(2, name);
    while (q.step()) earlier.push_back(q.text(0));
  }
  for (const std::string& rule : earlier) {
    if (!is_identifier(rule)) continue;
    std::vector<std::pair<std::string, std::string>> objects;  // (type, name)
    Statement q(db_.handle(),
                "SELECT type, name FROM sqlite_schema WHERE type IN ('view', 'trigger') "
                "AND (name = 'rule_' || ?1 OR substr(name, 1, length(?1) + 6) = 'rule_' || ?1 || '_')");
    q.bind(1, rule);
    while (q.step()) objects.emplace_back(q.text(0), q.text(1));
    for (const auto& [type, object] : objects)
      if (is_identifier(object))
        db_.exec((type == "view" ? "DROP VIEW IF EXISTS " : "DROP TRIGGER IF EXISTS ") + object);
    Statement forget(db_.handle(), "DELETE FROM rule_catalog WHERE rule = ?1");
    forget.bind(1, rule).run();
    Statement undeclare(db_.handle(), "DELETE FROM rule_param_declared WHERE rule = ?1");
    undeclare.bind(1, rule).run();
  }
  db_.exec(declaration_sql(file.declaration, file.path));
  run_rule_file(db_, file);
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
  LazyStatement& clear_batch = statements_.clear_batch;
  LazyStatement& add_to_batch = statements_.add_to_batch;
  LazyStatement& ensure_progress = statements_.ensure_progress;
  LazyStatement& advance = statements_.advance;
  LazyStatement& mark_evaluated = statements_.mark_evaluated;
  // The INSERT of each rule's findings for the batch, prepared once per runner (a rule view is a
  // large query). The view is materialized first: it is evaluated once for the whole batch, never
  // once per batch row.
  auto record_statement = [&](const std::string& rule) -> Statement& {
    auto& stmt = record_[rule];
    if (!stmt) {
      if (!is_identifier(rule)) throw Error(ErrorKind::kUsage, "rule_catalog: bad rule name '" + rule + "'");
      stmt = std::make_unique<Statement>(
          h, "WITH r AS MATERIALIZED (SELECT trial, step, tensor, worker, value, message FROM rule_" + rule +
                 ") "
                 "INSERT OR IGNORE INTO rule_finding(trial, rule, step, mode, mode_step, tensor, worker, value, "
                 "message, found_at) "
                 "SELECT b.trial, ?1, b.step, b.mode, b.mode_step, r.tensor, ifnull(r.worker, (SELECT worker FROM "
                 "rule_primary_worker)), r.value, r.message, b.now "
                 "FROM r JOIN rule_batch b ON b.trial = r.trial AND b.step = r.step");
    }
    return *stmt;
  };
  // The steps rule_batch holds (empty: none, or not known after a rollback). Rules that owe the
  // same steps, all of them on a trial's first evaluation, share one fill: filling it costs as
  // much as a light rule.
  std::vector<int64_t> batch_steps;
  auto fill_batch = [&](std::vector<StepRow>::const_iterator first, std::vector<StepRow>::const_iterator last) {
    std::vector<int64_t> steps;
    for (auto s = first; s != last; ++s) steps.push_back(s->step);
    if (!steps.empty() && steps == batch_steps) return;
    clear_batch->run();
    batch_steps.clear();
    for (auto s = first; s != last; ++s)
      add_to_batch->bind(1, trial)
          .bind(2, s->step)
          .bind(3, s->mode)
          .bind(4, s->mode_step)
          .bind(5, s->mode == "GLOBAL" ? s->mode_step : s->step)
          .bind(6, now)
          .run();
    batch_steps = std::move(steps);
  };
  auto rolled_back = [&] { batch_steps.clear(); };  // what rule_batch holds is not known then
  // A rule evaluated again (rule_rerun) reports only findings its earlier evaluation had not.
  std::map<std::string, std::set<std::tuple<int64_t, std::string, std::string>>> earlier;
  auto is_new = [&](const std::string& rule, int64_t id) {
    const auto it = earlier.find(rule);
    if (it == earlier.end()) return true;
    LazyStatement& finding_key = statements_.finding_key;
    finding_key->bind(1, id).step();
    const bool seen = it->second.count({finding_key->int64(0), finding_key->text(1), finding_key->text(2)}) > 0;
    finding_key->reset();
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
      if (sqlite3_get_autocommit(h)) {  // interrupted at the time limit: the transaction is gone
        stopped_.emplace(trial, rule);
        failures_.push_back("rule " + rule + " on trial " + trial + where() + ": " + e.what());
        throw TransactionRolledBack{};
      }
      db_.exec("ROLLBACK TO rule_batch");
      db_.exec("RELEASE rule_batch");
      rolled_back();
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
      ensure_progress->bind(1, trial).bind(2, rule).run();
      advance->bind(1, trial).bind(2, rule).bind(3, (last - 1)->step).bind(4, static_cast<int64_t>(last - first)).run();
      run_rule(rule);
      note_from_rule(trial, rule);
      mark_evaluated->bind(1, rule).run();
    });
  };

  // One write transaction per trial, begun before the owed steps are read, so a step another
  // runner evaluated meanwhile is not evaluated (folded into a rule's state) twice. A rule to be
  // evaluated again (rule_rerun) has its old findings and state replaced in a savepoint that holds
  // the whole new evaluation: when any of it fails, the old findings stay and so does the rerun.
  Transaction tx(db_);
  ledger_->begin_transaction();
  std::optional<TrialTensorNames> tensor_names;  // read when a rule's selections are first checked
  std::set<std::string> reruns;
  for (const std::string& rule : ledger_->pending_reruns(trial))
    if (std::find(rules_.begin(), rules_.end(), rule) != rules_.end()) reruns.insert(rule);
  auto evaluate_owed = [&](const std::string& rule) {
    if (stopped_.count({trial, rule})) return true;  // past its time limit in this run: left as it was
    if (reruns.count(rule)) earlier[rule] = ledger_->reset(trial, rule);
    if (kinds_.at(rule) == kClockKind) return true;
    std::vector<StepRow> owed = std::move(ledger_->owed_steps(trial, {rule}, options_.last_step)[rule]);
    if (owed.empty()) return true;
    if (!tensor_names) tensor_names.emplace(db_, trial);
    note_unmatched_selections(trial, rule, *tensor_names);
    if (kinds_.at(rule) == kStepKind) {
      for (auto s = owed.begin(); s != owed.end(); ++s)
        if (!evaluate(rule, s, s + 1)) return false;
      return true;
    }
    return evaluate(rule, owed.begin(), owed.end());
  };
  for (const std::string& rule : rules_) {
    if (!reruns.count(rule)) {
      evaluate_owed(rule);
      continue;
    }
    db_.exec("SAVEPOINT rule_rerun");
    const size_t found_size = found->size();
    if (evaluate_owed(rule)) {
      db_.exec("RELEASE rule_rerun");
    } else {
      db_.exec("ROLLBACK TO rule_rerun");
      db_.exec("RELEASE rule_rerun");
      rolled_back();
      found->resize(found_size);
      earlier.erase(rule);
      failures_.push_back("rule " + rule + " on trial " + trial + ": its findings from before are kept");
    }
  }

  // The clock: when the last complete step changed, progress was made now.
  const std::optional<StepRow> last = ledger_->last_complete_step(trial);
  if (last) {
    Statement clock(
        h,
        "INSERT INTO rule_trial_clock(trial, last_step, progress_at) VALUES (?1, ?2, ?3) "
        "ON CONFLICT (trial) DO UPDATE SET last_step = excluded.last_step, progress_at = excluded.progress_at "
        "WHERE last_step <> excluded.last_step");
    clock.bind(1, trial).bind(2, last->step).bind(3, now).run();
    const std::vector<StepRow> at_last{*last};
    for (const std::string& rule : rules_) {
      if (kinds_.at(rule) != kClockKind || stopped_.count({trial, rule})) continue;
      guarded(
          rule, [] { return std::string(); },
          [&] {
            fill_batch(at_last.begin(), at_last.end());
            run_rule(rule);
          });
    }
  }
  clear_batch->run();  // rule_batch is filled only while the runner evaluates
  tx.commit();
} catch (const TransactionRolledBack&) {
  // evaluate_new_steps evaluates the trial again without the stopped rule.
}

void RuleRunner::add_note(const std::string& trial, const std::string& rule, const std::string& text) {
  std::string note = rule + " on trial " + trial + ": " + text;
  if (noted_.insert(note).second) notes_.push_back(std::move(note));
}

void RuleRunner::note_unmatched_selections(const std::string& trial, const std::string& rule,
                                           const TrialTensorNames& names) {
  if (!looked_at_.emplace(trial, rule).second) return;
  for (const std::string& note : unmatched_selections(db_, trial, rule, names)) add_note(trial, rule, note);
}

void RuleRunner::note_from_rule(const std::string& trial, const std::string& rule) {
  if (noted_by_rule_.count({trial, rule})) return;  // once per trial and run: the view is not free
  auto it = note_statement_.find(rule);
  if (it == note_statement_.end()) {
    Statement q(db_.handle(), "SELECT 1 FROM sqlite_schema WHERE type = 'view' AND name = ?1");
    std::unique_ptr<Statement> note;
    if (q.bind(1, "rule_" + rule + "_note").step() && is_identifier(rule))
      note = std::make_unique<Statement>(db_.handle(), "SELECT note FROM rule_" + rule + "_note");
    it = note_statement_.emplace(rule, std::move(note)).first;
  }
  if (!it->second) return;
  Statement& q = *it->second;
  while (q.step())
    if (!q.is_null(0)) {
      add_note(trial, rule, q.text(0));
      noted_by_rule_.emplace(trial, rule);
    }
  q.reset();
}

}  // namespace trialdb::rules
