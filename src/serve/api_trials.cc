// /api/trials (each trial: workers, whether it ended, steps per mode, its newest findings) and
// /api/tensors (the tensor names of chosen trials, by regex and collection; the collections).
#include <map>
#include <memory>
#include <set>

#include "schema/database.h"
#include "schema/py_regex.h"
#include "src/serve/api.h"

namespace trialdb::serve {

namespace {
// How many of a trial's newest findings the trial list shows.
constexpr int kNewestFindings = 3;
}  // namespace

Json api_trials(ReadConnection& c, const Params&) {
  std::map<std::string, Json> by_name;
  Statement trials(c.handle(), "SELECT trial, path, workers, ended FROM trials ORDER BY trial");
  while (trials.step()) {
    Json t = {{"trial", trials.text(0)},         {"path", trials.text(1)},  {"workers", trials.int64(2)},
              {"ended", trials.int64(3) != 0},   {"modes", Json::object()}, {"findings", 0},
              {"newest_findings", Json::array()}};
    by_name.emplace(trials.text(0), std::move(t));
  }
  Statement modes(
      c.handle(),
      "SELECT trial, mode, count(*), max(step) FROM steps WHERE complete GROUP BY trial, mode ORDER BY trial, mode");
  while (modes.step())
    if (auto it = by_name.find(modes.text(0)); it != by_name.end())
      it->second["modes"][modes.text(1)] = {{"steps", modes.int64(2)}, {"last_step", modes.int64(3)}};
  if (c.has_view("rule_findings")) {
    Statement count(c.handle(), "SELECT trial, count(*) FROM rule_findings GROUP BY trial");
    while (count.step())
      if (auto it = by_name.find(count.text(0)); it != by_name.end()) it->second["findings"] = count.int64(1);
    Statement newest(c.handle(),
                     "SELECT trial, rule, step, tensor, message\n"
                     "FROM (SELECT trial, rule, step, tensor, message,\n"
                     "             row_number() OVER (PARTITION BY trial ORDER BY step DESC, rule, tensor) AS n\n"
                     "      FROM rule_findings)\n"
                     "WHERE n <= ?1 ORDER BY trial, n");
    newest.bind(1, kNewestFindings);
    while (newest.step())
      if (auto it = by_name.find(newest.text(0)); it != by_name.end())
        it->second["newest_findings"].push_back({{"rule", newest.text(1)},
                                                 {"step", newest.int64(2)},
                                                 {"tensor", newest.text(3)},
                                                 {"message", newest.text(4)}});
  }
  Json out = Json::array();
  for (auto& [name, t] : by_name) out.push_back(std::move(t));
  return out;
}

Json api_tensors(ReadConnection& c, const Params& p) {
  std::unique_ptr<PyRegex> re;
  const std::string pattern = param(p, "regex");
  if (!pattern.empty()) {
    const Status s = PyRegex::compile(pattern, &re);
    if (!s.is_ok()) throw Error(s);
  }
  const std::string collection = param(p, "collection");
  const std::vector<std::string> wanted = param_all(p, "trial");
  const std::set<std::string> trials(wanted.begin(), wanted.end());
  std::map<std::string, std::set<std::string>> tensors;  // tensor -> trials that have it
  Statement q(c.handle(), collection.empty()
                              ? "SELECT trial, tensor FROM tensors ORDER BY tensor"
                              : "SELECT trial, tensor FROM collections WHERE collection = ?1 ORDER BY tensor");
  if (!collection.empty()) q.bind(1, collection);
  while (q.step()) {
    if (!trials.empty() && !trials.count(q.text(0))) continue;
    const std::string tensor = q.text(1);
    if (re && !re->search(tensor)) continue;
    tensors[tensor].insert(q.text(0));
  }
  std::set<std::string> collections;
  Statement cq(c.handle(), "SELECT DISTINCT trial, collection FROM collections");
  while (cq.step())
    if (trials.empty() || trials.count(cq.text(0))) collections.insert(cq.text(1));
  Json list = Json::array();
  for (const auto& [tensor, in] : tensors) list.push_back({{"tensor", tensor}, {"trials", in}});
  return {{"tensors", list}, {"collections", collections}};
}

}  // namespace trialdb::serve
