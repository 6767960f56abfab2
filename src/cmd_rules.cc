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

namespace trialdb::cli {

namespace {

struct RulesArgs {
  std::string db;
  std::vector<std::string> trials, rules, params, rule_files;
  bool json = false, exit_code = false, rerun = false;
  std::string on_finding;
};

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
                  "RULE.KEY=VALUE: set a rule parameter (stored in rule_params; for the --trial trials, else for all)");
  cmd->add_option("--rule-file", a->rule_files, "A custom rule: an SQL file creating view rule_<name> (repeatable)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--rerun", a->rerun,
                "Evaluate the --rule rules (default: all) on the --trial trials (default: all) again from the first "
                "step, replacing their findings (a changed --param does this by itself)");
  cmd->add_flag("--json", a->json, "Print the new findings as JSON");
  cmd->add_flag("--exit-code", a->exit_code, "Exit with 3 when a new finding was recorded, else 0");
  cmd->add_option("--on-finding", a->on_finding,
                  "Shell command run per new finding (at least once: one whose command failed or never "
                  "ran is retried by the next run with --on-finding), with TRIALDB_TRIAL, TRIALDB_RULE, TRIALDB_STEP, "
                  "TRIALDB_MODE, TRIALDB_MODE_STEP, TRIALDB_TENSOR, TRIALDB_WORKER, TRIALDB_VALUE, "
                  "TRIALDB_MESSAGE, TRIALDB_DB set");
  cmd->callback([a] {
    std::unique_ptr<Database> db = open_db(a->db, OpenMode::kExisting);
    rules::RuleOptions options;
    options.trials = a->trials;
    options.rules = a->rules;
    options.params = a->params;
    options.rerun = a->rerun;
    options.rule_files = a->rule_files;
    options.queue_deliveries = !a->on_finding.empty();
    rules::RuleRunner runner(*db, options);
    std::vector<rules::Finding> found = runner.evaluate_new_steps();

    Table t;
    t.columns = {"trial", "rule", "step", "mode", "mode_step", "tensor", "worker", "value", "message"};
    t.numeric = {false, false, true, false, true, false, false, true, false};
    for (const auto& f : found)
      t.rows.push_back({f.trial, f.rule, std::to_string(f.step), f.mode, std::to_string(f.mode_step), f.tensor, f.worker,
                        f.value ? finding_value_text(*f.value) : kNullCell, f.message});
    if (a->json || !found.empty()) print_table(t, a->json ? Format::kJson : Format::kTable, std::cout);
    if (!a->json) std::cerr << found.size() << " new finding(s)\n";

    std::set<int64_t> failed_ids;
    const bool failed = !a->on_finding.empty() && !deliver_findings(runner, a->on_finding, a->db, "rules", &failed_ids);
    if (a->exit_code && !found.empty()) exit_code() = kExitFindings;
    else if (failed) exit_code() = kExitPartial;
  });
}

}  // namespace trialdb::cli
