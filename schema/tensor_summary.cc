// tensor_summary.h.
#include "schema/tensor_summary.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "schema/database.h"
#include "schema/status.h"

namespace trialdb {

namespace {

// A tensor's distinct visible global steps, as the views count them: a value row is visible when
// its step has a step row and is at most the trial's complete_through.
constexpr const char* kVisibleStepsSql = R"sql(
  UPDATE tensor SET visible_steps = counted.steps
  FROM (SELECT v.tensor_id, count(DISTINCT s.step) AS steps
        FROM value v
        JOIN trial t ON t.trial_id = v.trial_id
        JOIN step s ON s.trial_id = v.trial_id AND s.step = v.tensor_step + v.step_offset
        WHERE s.step <= t.complete_through
        GROUP BY v.tensor_id) AS counted
  WHERE tensor.tensor_id = counted.tensor_id)sql";

// Every (dtype, shape, worker) of a tensor's value rows with a step row, at its least global step.
constexpr const char* kVariantsSql = R"sql(
  INSERT INTO tensor_variant(trial_id, tensor_id, dtype, shape, worker_id, first_step)
  SELECT v.trial_id, v.tensor_id, coalesce(v.dtype, ?1), coalesce(v.shape, ?2), v.worker_id, min(s.step)
  FROM value v
  JOIN step s ON s.trial_id = v.trial_id AND s.step = v.tensor_step + v.step_offset
  GROUP BY v.trial_id, v.tensor_id, coalesce(v.dtype, ?1), coalesce(v.shape, ?2), v.worker_id)sql";

// Distinct names, each at the least first step it came with, in the listing's order. Holds
// pointers to names that outlive it; cleared (its capacity kept) for the next tensor.
class FirstSeen {
 public:
  void add(const std::string& name, int64_t first_step) {
    for (auto& [step, n] : seen_)
      if (*n == name) {
        step = std::min(step, first_step);
        return;
      }
    seen_.emplace_back(first_step, &name);
  }
  std::vector<std::string> take_ordered() {
    std::sort(seen_.begin(), seen_.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : *a.second < *b.second;
    });
    std::vector<std::string> names;
    names.reserve(seen_.size());
    for (const auto& [step, n] : seen_) names.push_back(*n);
    seen_.clear();
    return names;
  }

 private:
  std::vector<std::pair<int64_t, const std::string*>> seen_;
};

// A variant visible in its trial.
struct Variant {
  int64_t tensor_id, dtype;
  std::string shape;
  int64_t worker_id, first_step;
};

void read_trial(sqlite3* db, int64_t trial_id, const std::string& trial, int64_t complete_through,
                const std::unordered_map<int64_t, std::string>& dtype_names,
                const std::unordered_set<int64_t>& named_workers, std::vector<TensorSummary>* out) {
  // The visible variants in tensor_variant's key order, so each tensor's are a run of them.
  std::vector<Variant> variants;
  std::unordered_map<int64_t, std::pair<size_t, size_t>> runs;  // tensor_id -> [first, last) in variants
  Statement v(db,
              "SELECT tensor_id, dtype, shape, worker_id, first_step FROM tensor_variant\n"
              "WHERE trial_id = ?1 AND first_step <= ?2 ORDER BY trial_id, tensor_id");
  v.bind(1, trial_id).bind(2, complete_through);
  while (v.step()) {
    variants.push_back({v.int64(0), v.int64(1), v.text(2), v.int64(3), v.int64(4)});
    auto [run, added] = runs.try_emplace(v.int64(0), variants.size() - 1, variants.size());
    if (!added) run->second.second = variants.size();
  }

  Statement t(db, "SELECT tensor_id, name, visible_steps FROM tensor WHERE trial_id = ?1 ORDER BY name");
  t.bind(1, trial_id);
  FirstSeen dtypes, shapes;
  std::vector<int64_t> workers;
  while (t.step()) {
    TensorSummary s{trial, t.text(1), {}, {}, t.int64(2), 0};
    workers.clear();
    if (auto run = runs.find(t.int64(0)); run != runs.end())
      for (size_t i = run->second.first; i < run->second.second; ++i) {
        const Variant& x = variants[i];
        if (auto name = dtype_names.find(x.dtype); name != dtype_names.end()) dtypes.add(name->second, x.first_step);
        if (x.shape != kNoShape) shapes.add(x.shape, x.first_step);
        if (named_workers.count(x.worker_id) && std::find(workers.begin(), workers.end(), x.worker_id) == workers.end())
          workers.push_back(x.worker_id);
      }
    s.dtypes = dtypes.take_ordered();
    s.shapes = shapes.take_ordered();
    s.workers = static_cast<int64_t>(workers.size());
    out->push_back(std::move(s));
  }
}

}  // namespace

void build_tensor_summaries(Database& db) {
  db.exec("UPDATE tensor SET visible_steps = 0");
  db.exec(kVisibleStepsSql);
  db.exec("DELETE FROM tensor_variant");
  Statement variants(db.handle(), kVariantsSql);
  variants.bind(1, kNoDtype).bind(2, kNoShape).run();
}

std::vector<TensorSummary> read_tensor_summaries(sqlite3* db, const std::string& trial) {
  {
    Statement has(db, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'tensor_variant'");
    if (!has.step()) {
      const char* file = sqlite3_db_filename(db, "main");
      const std::string path = file ? file : "";
      throw Error(Status::database("the database was written by an older trialdb and holds no summary of its "
                                   "tensors, which info --tensors reads; a command that writes adds it (e.g. "
                                   "trialdb compact --db " +
                                   path + ", or the next ingest)")
                      .at(path));
    }
  }
  // Names by code or id, as the views' LEFT JOINs give them (a code without a row names nothing).
  std::unordered_map<int64_t, std::string> dtype_names;
  {
    Statement q(db, "SELECT code, name FROM dtype_name");
    while (q.step()) dtype_names.emplace(q.int64(0), q.text(1));
  }
  std::unordered_set<int64_t> named_workers;
  {
    Statement q(db, "SELECT worker_id FROM worker");
    while (q.step()) named_workers.insert(q.int64(0));
  }
  std::vector<TensorSummary> out;
  Statement t(db, trial.empty() ? "SELECT trial_id, name, complete_through FROM trial ORDER BY name"
                                : "SELECT trial_id, name, complete_through FROM trial WHERE name = ?1");
  if (!trial.empty()) t.bind(1, trial);
  while (t.step()) read_trial(db, t.int64(0), t.text(1), t.int64(2), dtype_names, named_workers, &out);
  return out;
}

}  // namespace trialdb
