// trialdb rules: evaluate the built-in and custom rules on every complete step not evaluated
// before, record the findings (view rule_findings) and print the new ones.
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
  bool json = false, csv = false, exit_code = false, rerun = false, list = false, summary = false, all = false;
  std::string on_finding;
  double timeout = kDefaultRuleTimeout;
  double on_finding_timeout = kDefaultOnFindingTimeout;
};


// An SQL string literal.
std::string literal(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

// "column IN ('a', 'b')", or "1" when the list is empty (everything).
std::string in_list(const char* column, const std::vector<std::string>& values) {
  if (values.empty()) return "1";
  std::string s = std::string(column) + " IN (";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + literal(values[i]);
  return s + ")";
}

std::string rule_list_sql(const std::vector<std::string>& rules) {
  return "SELECT c.rule, d.param, d.value AS \"default\",\n"
         "       (SELECT p.value FROM rule_param p WHERE p.trial IS NULL AND p.rule = d.rule AND p.param = d.param) AS value,\n"
         "       (SELECT group_concat(p.trial || '=' || p.value, ', ') FROM rule_param p\n"
         "        WHERE p.trial IS NOT NULL AND p.rule = d.rule AND p.param = d.param) AS per_trial\n"
         "FROM rule_catalog c LEFT JOIN rule_param_default d ON d.rule = c.rule\n"
         "WHERE " + in_list("c.rule", rules) + "\nORDER BY c.source <> 'builtin', c.rule, d.param";
}

std::string summary_sql(const std::vector<std::string>& trials, const std::vector<std::string>& rules) {
  return "SELECT trial, rule, tensor, count(*) AS findings, min(step) AS first_step, max(step) AS last_step\n"
         "FROM rule_findings WHERE " + in_list("trial", trials) + " AND " + in_list("rule", rules) +
         "\nGROUP BY trial, rule, tensor ORDER BY trial, rule, tensor";
}

std::string all_findings_sql(const std::vector<std::string>& trials, const std::vector<std::string>& rules) {
  return "SELECT trial, rule, step, mode, mode_step, tensor, worker, value, message\n"
         "FROM rule_findings WHERE " + in_list("trial", trials) + " AND " + in_list("rule", rules) +
         "\nORDER BY trial, rule, step, tensor, worker";
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
      "  trialdb rules --db trials.db --trial run1 --rule similar_across_runs --param similar_across_runs.other_trial=run0\n"
      "  trialdb rules --db trials.db --rule-file my_rule.sql --exit-code --on-finding 'echo $TRIALDB_RULE at $TRIALDB_STEP'");
  cmd->add_option("--db", a->db, "Database file")->required();
  cmd->add_option("--trial", a->trials, "Only this trial (repeatable; default: every trial)");
  cmd->add_option("--rule", a->rules, "Only this rule (repeatable; default: every rule)");
  cmd->add_option("--param", a->params,
                  "RULE.KEY=VALUE: set a rule parameter (stored in rule_param; for the --trial trials, else for all)");
  cmd->add_option("--rule-file", a->rule_files, "A custom rule: an SQL file creating view rule_<name> (repeatable)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--rerun", a->rerun,
                "Evaluate the --rule rules (default: all) on the --trial trials (default: all) again from the first "
                "step, replacing their findings (a changed --param does this by itself)");
  cmd->add_flag("--list", a->list,
                "Print every rule with its parameters: default, value for every trial, values for single trials "
                "(evaluates nothing)");
  cmd->add_flag("--summary", a->summary, "After evaluating, print per trial, rule and tensor: findings, first and last step");
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
                     "exit 1 (default " + format_real(kDefaultRuleTimeout) + "; 0: no limit)");
  add_timeout_option(cmd, &a->on_finding_timeout,
                     "Seconds an --on-finding command may run before it is killed and reported (default " +
                         format_real(kDefaultOnFindingTimeout) + "; 0: no limit)",
                     "--on-finding-timeout");
  cmd->callback([a] {
    // Arguments before the database is opened for writing: a bad one changes nothing.
    if (a->json && a->csv) throw Error(ErrorKind::kUsage, "--json and --csv: choose one");
    for (const std::string& f : a->rule_files) read_sql_file(f, "--rule-file");
    std::unique_ptr<Database> db = open_db(a->db, OpenMode::kExisting);
    rules::RuleOptions options;
    options.trials = a->trials;
    options.rules = a->rules;
    options.params = a->params;
    options.rerun = a->rerun;
    options.rule_files = a->rule_files;
    options.queue_deliveries = !a->on_finding.empty();
    options.time_limit = a->timeout;
    const Format format = a->json ? Format::kJson : a->csv ? Format::kCsv : Format::kTable;
    if (a->list) {
      // The runner installs the rules (and their defaults) and stores --param values first.
      rules::RuleRunner runner(*db, options);
      print_query(db->handle(), rule_list_sql(runner.rules()), format, std::cout);
      return;
    }
    rules::RuleRunner runner(*db, options);
    std::vector<rules::Finding> found = runner.evaluate_new_steps();
    for (const std::string& failure : runner.failures()) std::cerr << "trialdb rules: " << printable(failure) << "\n";
    for (const std::string& note : runner.notes()) std::cerr << "trialdb rules: note: " << printable(note) << "\n";
    if (a->summary || a->all) {
      print_query(db->handle(), a->summary ? summary_sql(a->trials, runner.rules()) : all_findings_sql(a->trials, runner.rules()),
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
      t.rows.push_back({f.trial, f.rule, std::to_string(f.step), f.mode, std::to_string(f.mode_step), f.tensor, f.worker,
                        f.value ? finding_value_text(*f.value) : kNullCell, f.message});
    if (a->json || a->csv || !found.empty()) print_table(t, format, std::cout);
    if (!a->json) std::cerr << counted(found.size(), "new finding") << "\n";

    std::set<int64_t> failed_ids;
    const bool failed = !a->on_finding.empty() && !deliver_findings(runner, a->on_finding, a->db, "rules", a->on_finding_timeout,
                                                                     &failed_ids);
    if (!runner.failures().empty()) exit_code() = kExitError;
    else if (a->exit_code && !found.empty()) exit_code() = kExitFindings;
    else if (failed) exit_code() = kExitPartial;
  });
}

}  // namespace trialdb::cli
