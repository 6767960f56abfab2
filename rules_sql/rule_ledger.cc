// RuleLedger (rule_ledger.h): which steps each rule evaluated, which are owed, and the queue of
// findings to deliver.
#include "rules_sql/rule_ledger.h"

#include <cstdint>
#include <map>
#include <set>

namespace trialdb::rules {

namespace {

const char* const kFindingColumns =
    "SELECT finding_id, trial, rule, step, mode, mode_step, tensor, worker, value, message FROM rule_finding ";

Finding read_finding(const Statement& q) {
  Finding f;
  f.id = q.int64(0);
  f.trial = q.text(1);
  f.rule = q.text(2);
  f.step = q.int64(3);
  f.mode = q.text(4);
  f.mode_step = q.int64(5);
  f.tensor = q.text(6);
  f.worker = q.text(7);
  if (!q.is_null(8)) f.value = q.real(8);
  f.message = q.text(9);
  return f;
}

}  // namespace

RuleLedger::RuleLedger(Database& db)
    : db_(db),
      evaluated_(db.handle(),
                 "SELECT (SELECT evaluated FROM rule_progress WHERE trial = ?1 AND rule = ?2), "
                 "       (SELECT max(step) FROM rule_evaluated WHERE trial = ?1 AND rule = ?2)"),
      complete_between_(db.handle(),
                        "SELECT count(*) FROM steps WHERE trial = ?1 AND complete AND step > ?2 AND step <= ?3"),
      later_(db.handle(),
             "SELECT step, mode, mode_step FROM steps WHERE trial = ?1 AND complete AND step > ?2 ORDER BY step"),
      unevaluated_(db.handle(),
                   "SELECT s.step, s.mode, s.mode_step FROM steps s WHERE s.trial = ?1 AND s.complete "
                   "AND NOT EXISTS (SELECT 1 FROM rule_evaluated e WHERE e.trial = ?1 AND e.rule = ?2 "
                   "                AND e.step = s.step) ORDER BY s.step") {}

std::map<std::string, std::vector<StepRow>> RuleLedger::owed_steps(const std::string& trial,
                                                                   const std::vector<std::string>& rules,
                                                                   std::optional<int64_t> last_step) {
  // A rule's evaluated steps are complete steps up to its last evaluated one: as many of them as
  // there are complete steps up to there means none of those is owed, and only the steps after
  // it need to be read (the common case, without a lookup per step). Rules evaluated as far
  // share that count (in the transaction) and those steps (in the call), read once.
  std::map<std::optional<int64_t>, std::vector<StepRow>> after;  // complete steps > through
  Statement& evaluated = *evaluated_;
  Statement& later = *later_;
  Statement& unevaluated = *unevaluated_;
  auto read = [&](Statement& q, std::vector<StepRow>* out) {
    while (q.step()) {
      if (last_step && q.int64(0) > *last_step) break;
      out->push_back({q.int64(0), q.int64(2), q.text(1)});
    }
    q.reset();
  };
  std::map<std::string, std::vector<StepRow>> owed;
  for (const std::string& rule : rules) {
    evaluated.bind(1, trial).bind(2, rule).step();
    const int64_t count = evaluated.is_null(0) ? 0 : evaluated.int64(0);
    const std::optional<int64_t> through =
        evaluated.is_null(1) ? std::nullopt : std::optional<int64_t>(evaluated.int64(1));
    evaluated.reset();
    if (through && complete_steps_through(trial, rule, *through) != count) {  // a step became complete late
      counted_.erase({trial, rule});                                          // counted again in full next time
      unevaluated.bind(1, trial).bind(2, rule);
      read(unevaluated, &owed[rule]);
      continue;
    }
    if (through) counted_[{trial, rule}] = {*through, count};
    if (!after.count(through)) {
      later.bind(1, trial).bind(2, through.value_or(INT64_MIN));
      read(later, &after[through]);
    }
    owed[rule] = after[through];
  }
  return owed;
}

int64_t RuleLedger::complete_steps_through(const std::string& trial, const std::string& rule, int64_t through) {
  // From the count this runner last found equal to the rule's evaluated steps, only the steps
  // since are counted. A step at or below that count's step that completes later is one whose
  // file landed after later steps completed: the ingest then has the rule evaluated again from
  // the first step (rule_rerun: its evaluated steps are forgotten), so it never hides here.
  int64_t from = INT64_MIN, counted = 0;
  if (const auto it = counted_.find({trial, rule}); it != counted_.end() && it->second.through <= through) {
    from = it->second.through;
    counted = it->second.complete;
  }
  const auto [range, added] = range_counts_.try_emplace({trial, from, through}, 0);
  if (added) {
    Statement& complete = *complete_between_;
    complete.bind(1, trial).bind(2, from).bind(3, through).step();
    range->second = complete.int64(0);
    complete.reset();
  }
  return counted + range->second;
}

void RuleLedger::begin_transaction() { range_counts_.clear(); }

std::optional<StepRow> RuleLedger::last_complete_step(const std::string& trial) {
  Statement q(db_.handle(),
              "SELECT step, mode, mode_step FROM steps WHERE trial = ?1 AND complete ORDER BY step DESC LIMIT 1");
  if (!q.bind(1, trial).step()) return std::nullopt;
  return StepRow{q.int64(0), q.int64(2), q.text(1)};
}

std::vector<Finding> RuleLedger::findings(const std::vector<int64_t>& ids) {
  std::vector<Finding> out;
  Statement q(db_.handle(), std::string(kFindingColumns) + "WHERE finding_id = ?1");
  for (int64_t id : std::set<int64_t>(ids.begin(), ids.end())) {
    if (q.bind(1, id).step()) out.push_back(read_finding(q));
    q.reset();
  }
  return out;
}

void RuleLedger::queue_delivery(int64_t finding_id) {
  Statement q(db_.handle(), "INSERT OR IGNORE INTO rule_delivery(finding_id) VALUES (?1)");
  q.bind(1, finding_id).run();
}

std::vector<Finding> RuleLedger::queued_deliveries(const std::vector<std::string>& trials) {
  // A finding a rule withdrew (a restart drops findings) is not delivered.
  db_.exec("DELETE FROM rule_delivery WHERE finding_id NOT IN (SELECT finding_id FROM rule_finding)");
  const std::set<std::string> wanted(trials.begin(), trials.end());
  std::vector<Finding> out;
  Statement q(db_.handle(), std::string(kFindingColumns) +
                                "WHERE finding_id IN (SELECT finding_id FROM rule_delivery) ORDER BY finding_id");
  while (q.step()) {
    Finding f = read_finding(q);
    if (wanted.empty() || wanted.count(f.trial)) out.push_back(std::move(f));
  }
  return out;
}

void RuleLedger::confirm_delivery(int64_t finding_id) {
  Statement q(db_.handle(), "DELETE FROM rule_delivery WHERE finding_id = ?1");
  q.bind(1, finding_id).run();
}

std::vector<std::string> RuleLedger::pending_reruns(const std::string& trial) {
  std::vector<std::string> rules;
  Statement q(db_.handle(), "SELECT rule FROM rule_rerun WHERE trial = ?1 ORDER BY rule");
  q.bind(1, trial);
  while (q.step()) rules.push_back(q.text(0));
  return rules;
}

std::set<std::tuple<int64_t, std::string, std::string>> RuleLedger::reset(const std::string& trial,
                                                                          const std::string& rule) {
  counted_.erase({trial, rule});
  std::set<std::tuple<int64_t, std::string, std::string>> old;
  {
    Statement q(db_.handle(), "SELECT step, tensor, worker FROM rule_finding WHERE trial = ?1 AND rule = ?2");
    q.bind(1, trial).bind(2, rule);
    while (q.step()) old.emplace(q.int64(0), q.text(1), q.text(2));
  }
  for (const char* sql : {"DELETE FROM rule_delivery WHERE finding_id IN "
                          "(SELECT finding_id FROM rule_finding WHERE trial = ?1 AND rule = ?2)",
                          "DELETE FROM rule_finding WHERE trial = ?1 AND rule = ?2",
                          "DELETE FROM rule_evaluated WHERE trial = ?1 AND rule = ?2",
                          "DELETE FROM rule_progress WHERE trial = ?1 AND rule = ?2",
                          "DELETE FROM rule_rerun WHERE trial = ?1 AND rule = ?2"}) {
    Statement q(db_.handle(), sql);
    q.bind(1, trial).bind(2, rule).run();
  }
  // The rule's state: its tables rule_<rule>_* that are keyed by trial.
  std::vector<std::string> tables;
  {
    Statement q(db_.handle(),
                "SELECT m.name FROM sqlite_schema m WHERE m.type = 'table' "
                "  AND substr(m.name, 1, length(?1) + 6) = 'rule_' || ?1 || '_' "
                "  AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = 'trial') "
                // not a table of another rule whose name extends this one's (rule_a_b_* of rule a_b)
                "  AND NOT EXISTS (SELECT 1 FROM rule_catalog o WHERE length(o.rule) > length(?1) "
                "                  AND substr(m.name, 1, length(o.rule) + 6) = 'rule_' || o.rule || '_')");
    q.bind(1, rule);
    while (q.step()) tables.push_back(q.text(0));
  }
  for (const std::string& t : tables) {
    std::string quoted = "\"";
    for (char c : t) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    Statement q(db_.handle(), "DELETE FROM " + quoted + "\" WHERE trial = ?1");
    q.bind(1, trial).run();
  }
  return old;
}

}  // namespace trialdb::rules
