// /api/findings: the rule findings of chosen trials (every trial by default), ordered by rule,
// tensor and step: the page's timeline per rule and tensor. Empty until `trialdb rules` ran.
#include "schema/database.h"
#include "src/serve/api.h"

namespace trialdb::serve {

namespace {
constexpr double kDefaultLimit = 5000;
constexpr double kMaxLimit = 100000;
}  // namespace

Json api_findings(ReadConnection& c, const Params& p) {
  const auto limit = static_cast<int64_t>(param_number(p, "limit", kDefaultLimit, 1, kMaxLimit));
  Json rows = Json::array();
  if (!c.has_view("rule_findings")) return {{"rules_run", false}, {"findings", rows}, {"cut", false}};
  const std::vector<std::string> trials = param_all(p, "trial");
  Statement q(c.handle(),
              "SELECT trial, rule, step, mode, mode_step, tensor, worker, value, message\n"
              "FROM rule_findings\n"
              "WHERE ?1 = '[]' OR trial IN (SELECT value FROM json_each(?1))\n"
              "ORDER BY rule, tensor, trial, step\n"
              "LIMIT ?2");
  q.bind(1, Json(trials).dump()).bind(2, limit + 1);
  constexpr const char* kKeys[] = {"trial",  "rule",   "step",  "mode",   "mode_step",
                                   "tensor", "worker", "value", "message"};
  bool cut = false;
  while (q.step()) {
    if (static_cast<int64_t>(rows.size()) == limit) {
      cut = true;
      break;
    }
    Json row = Json::object();
    for (int i = 0; i < static_cast<int>(std::size(kKeys)); ++i) row[kKeys[i]] = column_json(q.handle(), i);
    rows.push_back(std::move(row));
  }
  return {{"rules_run", true}, {"findings", rows}, {"cut", cut}};
}

}  // namespace trialdb::serve
