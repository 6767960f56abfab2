// RuleLedger: the rule runner's bookkeeping in the database, exact under concurrent runners and
// crashes because every call is made inside the runner's write transaction (BEGIN IMMEDIATE):
//
// - rule_evaluated (trial, rule, step): the complete steps each rule has evaluated. A step that
//   becomes complete late (its file arrived after later steps completed) is owed like any other;
//   a "last step evaluated" cursor would skip it for good. A runner checks a rule's count of
//   evaluated steps against the complete steps once, then counts only the steps completed since:
//   a step completing below them has the ingest ask for the rule's evaluation again
//   (rule_rerun), so a follower's call costs the same at step 10,000 as at step 100.
// - rule_delivery (finding_id): findings recorded for an --on-finding command and not yet
//   confirmed by its exit status 0; queued in the transaction that records them, so a crash
//   between the commit and the command leaves them queued (delivered at least once).
//
// The tables are created by rules_base.sql.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "rules_sql/lazy_statement.h"
#include "schema/database.h"

namespace trialdb::rules {

struct Finding {
  int64_t id = 0;  // rule_finding.finding_id
  std::string trial, rule;
  int64_t step = 0;
  std::string mode;
  int64_t mode_step = 0;
  std::string tensor, worker;
  std::optional<double> value;
  std::string message;
};

struct StepRow {
  int64_t step = 0, mode_step = 0;
  std::string mode;
};

class RuleLedger {
 public:
  explicit RuleLedger(Database& db);

  // Per rule, the complete steps of `trial` it has not evaluated, in step order, none after
  // last_step (when given).
  std::map<std::string, std::vector<StepRow>> owed_steps(const std::string& trial,
                                                         const std::vector<std::string>& rules,
                                                         std::optional<int64_t> last_step);
  // Called as the runner begins its write transaction: steps may have completed since the last.
  void begin_transaction();
  // The last complete step of `trial`, if any.
  std::optional<StepRow> last_complete_step(const std::string& trial);

  // The rules `trial` is to evaluate again from its first step (rule_rerun).
  std::vector<std::string> pending_reruns(const std::string& trial);
  // Forgets what `rule` evaluated on `trial`: its evaluated steps, progress, state (the rows of
  // the trial in the rule's tables rule_<rule>_*) and findings, whose (step, tensor, worker) it
  // returns; and its rule_rerun row. Inside the transaction that evaluates it again.
  std::set<std::tuple<int64_t, std::string, std::string>> reset(const std::string& trial, const std::string& rule);

  // The findings with these ids that still exist, in id order.
  std::vector<Finding> findings(const std::vector<int64_t>& ids);

  void queue_delivery(int64_t finding_id);
  // Queued findings of these trials (every trial when empty), in id order.
  std::vector<Finding> queued_deliveries(const std::vector<std::string>& trials);
  void confirm_delivery(int64_t finding_id);

 private:
  Database& db_;
  // The complete steps of `trial` up to `through`, counted from where this runner last counted
  // them for `rule` (a follower's call counts the new steps only, not the whole trial again).
  int64_t complete_steps_through(const std::string& trial, const std::string& rule, int64_t through);

  // owed_steps' queries, prepared once (it is called per trial and rule).
  LazyStatement evaluated_, complete_between_, later_, unevaluated_;
  // Per (trial, rule): the last evaluated step at which the complete steps up to it were found to
  // be exactly the rule's evaluated ones, and their number.
  struct Counted {
    int64_t through = 0, complete = 0;
  };
  std::map<std::pair<std::string, std::string>, Counted> counted_;
  // The complete steps of (trial, after, through], counted in this transaction: shared by the
  // rules evaluated as far.
  std::map<std::tuple<std::string, int64_t, int64_t>, int64_t> range_counts_;
};

}  // namespace trialdb::rules
