// trialdb rules: evaluate the built-in and custom rules on every complete step not evaluated
// before, record the findings (view rule_findings) and print the new ones.
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "rules_sql/rule_runner.h"
#include "schema/database.h"
#include "src/commands.h"
#include "src/on_finding.h"
#include "src/open_db.h"
#include "src/output.h"
#include "src/sql_file.h"
#include "src/timeout_option.h"

namespace trialdb::cli {

namespace {

struct RulesArgs {
  std::string db;
  std::vector<std::string> trials, rules, params, rule_files;
  bool json = false, csv = false, exit_code = false, rerun = false, list = false, summary = false, all = false,
       print_sql = false;
  std::string on_finding;
  double timeout = kDefaultRuleTimeout;
  double on_finding_timeout = kDefaultOnFindingTimeout;
};

// "column IN ('a', 'b')", or "1" when the list is empty (everything).
std::string in_list(const char* column, const std::vector<std::string>& values) {
  if (values.empty()) return "1";
  std::string s = std::string(column) + " IN (";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + rules::sql_literal(values[i]);
  return s + ")";
}

// `rules --list`: every rule's declared parameters (the built-in rules', the --rule-file
// rules', and with a database the custom rules registered in it) with type, default and
// meaning; with a database also the value in effect for every trial without its own (`value`)
// and the trials' own values (`per_trial`). Reads only.
Table parameter_listing(Database* db, const std::vector<std::string>& only,
                        const std::vector<std::string>& rule_files) {
  std::vector<std::pair<rules::RuleDeclaration, std::string>> declared;  // (declaration, source)
  for (const rules::RuleDeclaration& d : rules::builtin_declarations()) declared.emplace_back(d, "builtin");
  for (const std::string& path : rule_files) declared.emplace_back(rules::read_rule_file(path).declaration, path);
  auto has_table = [&](const char* name) {
    Statement q(db->handle(), "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1");
    return q.bind(1, name).step();
  };
  const bool installed = db && has_table("rule_catalog") && has_table("rule_param_declared") && has_table("rule_param");
  if (installed) {
    Statement q(db->handle(), "SELECT rule, kind, source FROM rule_catalog WHERE source <> 'builtin' ORDER BY rule");
    while (q.step()) {
      const std::string rule = q.text(0);
      if (std::any_of(declared.begin(), declared.end(), [&](const auto& d) { return d.first.name == rule; })) continue;
      rules::RuleDeclaration d;
      d.name = rule;
      d.kind = q.text(1);
      Statement p(db->handle(),
                  "SELECT param, type, value, meaning FROM rule_param_declared WHERE rule = ?1 ORDER BY position");
      p.bind(1, rule);
      while (p.step()) d.params.push_back(rules::param_declaration(p.text(0), p.text(1), p.text(2), p.text(3)));
      declared.emplace_back(std::move(d), q.text(2));
    }
  }
  Table t;
  t.columns = {"rule", "kind", "param", "type", "default", "meaning"};
  if (db) t.columns.insert(t.columns.end(), {"value", "per_trial"});
  t.numeric.assign(t.columns.size(), false);
  for (const auto& [d, source] : declared) {
    if (!only.empty() && std::find(only.begin(), only.end(), d.name) == only.end()) continue;
    if (d.params.empty()) {
      t.rows.push_back({d.name, d.kind, "", "", "", "(no parameters)"});
      if (db) t.rows.back().insert(t.rows.back().end(), {"", ""});
    }
    for (const rules::ParamDeclaration& p : d.params) {
      t.rows.push_back({d.name, d.kind, p.name, rules::type_text(p), p.default_value, p.meaning});
      if (!db) continue;
      std::string value = p.default_value, per_trial;
      if (installed) {
        Statement q(
            db->handle(),
            "SELECT trial, value FROM rule_param WHERE rule = ?1 AND param = ?2 ORDER BY trial IS NOT NULL, trial");
        q.bind(1, d.name).bind(2, p.name);
        while (q.step()) {
          if (q.is_null(0)) value = q.text(1);
          else per_trial += (per_trial.empty() ? "" : ", ") + q.text(0) + "=" + q.text(1);
        }
      }
      t.rows.back().insert(t.rows.back().end(), {value, per_trial});
    }
  }
  return t;
}

std::string summary_sql(const std::vector<std::string>& trials, const std::vector<std::string>& rules) {
  return "SELECT trial, rule, tensor, count(*) AS findings, min(step) AS first_step, max(step) AS last_step\n"
         "FROM rule_findings WHERE " +
         in_list("trial", trials) + " AND " + in_list("rule", rules) +
         "\nGROUP BY trial, rule, tensor ORDER BY trial, rule, tensor";
}

std::string all_findings_sql(const std::vector<std::string>& trials, const std::vector<std::string>& rules) {
  return "SELECT trial, rule, step, mode, mode_step, tensor, worker, value, message\n"
         "FROM rule_findings WHERE " +
         in_list("trial", trials) + " AND " + in_list("rule", rules) + "\nORDER BY trial, rule, step, tensor, worker";
}

}  // namespace

void add_rules(CLI::App& app) {
  auto a = std::make_shared<RulesArgs>();
  CLI::App* cmd = app.add_subcommand("rules", "Evaluate the rules on every new complete step and record the findings");
  cmd->footer(
      "Each rule is an SQL view rule_<name> (docs/RULES.md); findings go to the view rule_findings.\n"
      "Re-running evaluates only steps completed since, and records nothing twice.\n"
      "Examples:\n"
      "  trialdb rules --db trials.db\n"
      "  trialdb rules --db trials.db --trial run1 --rule similar_across_runs --param "
      "similar_across_runs.other_trial=run0\n"
      "  trialdb rules --db trials.db --rule-file my_rule.sql --exit-code --on-finding 'echo $TRIALDB_RULE at "
      "$TRIALDB_STEP'");
  cmd->add_option("--db", a->db, "Database file (required but for --list and --print-sql)");
  cmd->add_option("--trial", a->trials, "Only this trial (repeatable; default: every trial)");
  cmd->add_option("--rule", a->rules, "Only this rule (repeatable; default: every rule)");
  cmd->add_option("--param", a->params,
                  "RULE.KEY=VALUE: set a rule parameter (stored in rule_param; for the --trial trials, else for all)");
  cmd->add_option(
      "--rule-file", a->rule_files,
      "A custom rule: an SQL file that declares it and creates view rule_<name> (repeatable; docs/RULES.md)");
  cmd->add_flag("--rerun", a->rerun,
                "Evaluate the --rule rules (default: all) on the --trial trials (default: all) again from the first "
                "step, replacing their findings (a changed --param does this by itself)");
  cmd->add_flag("--list", a->list,
                "Print every rule with its kind and parameters: type, default, meaning; with --db also the value "
                "for every trial and the values set for single trials (reads only)");
  cmd->add_flag("--print-sql", a->print_sql,
                "Print the SQL that installs the built-in rules, for evaluating them by hand in a sqlite3 shell "
                "with build/lib/trialdb.so loaded (docs/RULES.md)");
  cmd->add_flag("--summary", a->summary,
                "After evaluating, print per trial, rule and tensor: findings, first and last step");
  cmd->add_flag("--all", a->all, "After evaluating, print every finding recorded (not only the new ones)");
  cmd->add_flag("--json", a->json, "Print as JSON");
  cmd->add_flag("--csv", a->csv, "Print as CSV");
  cmd->add_flag("--exit-code", a->exit_code, "Exit with 3 when a new finding was recorded, else 0");
  cmd->add_option("--on-finding", a->on_finding,
                  "Shell command run per new finding (at least once: one whose command failed or never "
                  "ran is retried by the next run with --on-finding), with TRIALDB_TRIAL, TRIALDB_RULE, TRIALDB_STEP, "
                  "TRIALDB_MODE, TRIALDB_MODE_STEP, TRIALDB_TENSOR, TRIALDB_WORKER, TRIALDB_VALUE, "
                  "TRIALDB_MESSAGE, TRIALDB_DB set");
  add_timeout_option(cmd, &a->timeout,
                     "Seconds a rule may take on one batch of steps; past it the rule is stopped and reported, "
                     "exit 1 (default " +
                         format_real(kDefaultRuleTimeout) + "; 0: no limit)");
  add_timeout_option(cmd, &a->on_finding_timeout,
                     "Seconds an --on-finding command may run before it is killed and reported (default " +
                         format_real(kDefaultOnFindingTimeout) + "; 0: no limit)",
                     "--on-finding-timeout");
  cmd->callback([a] {
    // Arguments before the database is opened for writing: a bad one changes nothing.
    if (a->json && a->csv) throw Error(ErrorKind::kUsage, "--json and --csv: choose one");
    for (const std::string& f : a->rule_files) read_sql_file(f, "--rule-file");
    const Format format = a->json ? Format::kJson : a->csv ? Format::kCsv : Format::kTable;
    if (a->print_sql) {
      std::cout << rules::install_sql();
      return;
    }
    if (a->list) {
      if (!a->params.empty() || a->rerun || !a->on_finding.empty())
        throw Error(ErrorKind::kUsage, "--list reads only: give --param, --rerun and --on-finding without it");
      std::unique_ptr<Database> db = a->db.empty() ? nullptr : open_db(a->db, OpenMode::kReadOnly);
      print_table(parameter_listing(db.get(), a->rules, a->rule_files), format, std::cout);
      return;
    }
    if (a->db.empty()) throw Error(ErrorKind::kUsage, "--db is required (but for --list and --print-sql)");
    std::unique_ptr<Database> db = open_db(a->db, OpenMode::kExisting, nullptr, rules::kRuleTablesGlob);
    rules::RuleOptions options;
    options.trials = a->trials;
    options.rules = a->rules;
    options.params = a->params;
    options.rerun = a->rerun;
    options.rule_files = a->rule_files;
    options.queue_deliveries = !a->on_finding.empty();
    options.time_limit = a->timeout;
    rules::RuleRunner runner(*db, options);
    std::vector<rules::Finding> found = runner.evaluate_new_steps();
    for (const std::string& failure : runner.failures()) std::cerr << "trialdb rules: " << printable(failure) << "\n";
    for (const std::string& note : runner.notes()) std::cerr << "trialdb rules: note: " << printable(note) << "\n";
    if (a->summary || a->all) {
      print_query(db->handle(),
                  a->summary ? summary_sql(a->trials, runner.rules()) : all_findings_sql(a->trials, runner.rules()),
                  format, std::cout);
      std::cerr << counted(found.size(), "new finding") << "\n";
      if (!runner.failures().empty()) exit_code() = kExitError;
      else if (a->exit_code && !found.empty()) exit_code() = kExitFindings;
      return;
    }

    Table t;
    t.columns = {"trial", "rule", "step", "mode", "mode_step", "tensor", "worker", "value", "message"};
    t.numeric = {false, false, true, false, true, false, false, true, false};
    for (const auto& f : found)
      t.rows.push_back({f.trial, f.rule, std::to_string(f.step), f.mode, std::to_string(f.mode_step), f.tensor,
                        f.worker, f.value ? finding_value_text(*f.value) : kNullCell, f.message});
    if (a->json || a->csv || !found.empty()) print_table(t, format, std::cout);
    if (!a->json) std::cerr << counted(found.size(), "new finding") << "\n";

    std::set<int64_t> failed_ids;
    const bool failed = !a->on_finding.empty() &&
                        !deliver_findings(runner, a->on_finding, a->db, "rules", a->on_finding_timeout, &failed_ids);
    if (!runner.failures().empty()) exit_code() = kExitError;
    else if (a->exit_code && !found.empty()) exit_code() = kExitFindings;
    else if (failed) exit_code() = kExitPartial;
  });
}

}  // namespace trialdb::cli
