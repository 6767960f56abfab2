// reduction_lines.h
#include "schema/reduction_lines.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "schema/database.h"
#include "schema/reduction_kinds.h"

namespace trialdb {

namespace {

// One tensor's value rows of kind (idx, abs), in key order (step, then worker): the tensor is
// one lookup; whether the row's global step is a complete step of the trial, and its mode, are
// looked up in memory by the caller (the view joins the step row and compares with
// complete_through on every row). Without a step range, no bound is compared on every row.
std::string values_sql(const std::string& schema, int64_t idx, bool abs, bool ranged) {
  return "SELECT v.tensor_step, v.tensor_step + v.step_offset,\n"
         "       " +
         reduction_value_sql(idx, abs) +
         "\n"
         "FROM " +
         schema +
         ".tensor tn\n"
         "JOIN " +
         schema + ".value v ON v.tensor_id = tn.tensor_id" + (ranged ? " AND v.tensor_step BETWEEN ?3 AND ?4" : "") +
         "\n"
         "WHERE tn.trial_id = ?1 AND tn.name = ?2 AND (" +
         reduction_filter_sql(idx, abs) +
         ")\n"
         "ORDER BY v.tensor_step, v.step_offset, v.worker_id";
}

// Finds global steps in the trial's steps, sorted. A tensor's rows come in step order, so the
// next step is looked for from the last one found first.
class StepFinder {
 public:
  explicit StepFinder(const std::vector<int64_t>& steps) : steps_(steps) {}
  // The index of `step`, or steps.size() when it is not a (complete) step of the trial.
  size_t find(int64_t step) {
    const size_t n = steps_.size();
    if (at_ < n && steps_[at_] == step) return at_;            // another worker of the step
    if (at_ + 1 < n && steps_[at_ + 1] == step) return ++at_;  // the next step
    const auto it = std::lower_bound(steps_.begin(), steps_.end(), step);
    if (it == steps_.end() || *it != step) return n;
    return at_ = static_cast<size_t>(it - steps_.begin());
  }

 private:
  const std::vector<int64_t>& steps_;
  size_t at_ = 0;
};

}  // namespace

bool read_reduction_lines(sqlite3* db, const std::string& schema, const std::string& trial,
                          const std::vector<std::string>& tensors, const std::string& reduction, bool abs, int64_t from,
                          int64_t to, std::vector<std::string>* modes,
                          const std::function<void(const ReductionRow&)>& on_row) {
  Statement t(db, "SELECT trial_id, complete_through FROM " + schema + ".trial WHERE name = ?1");
  t.bind(1, trial);
  if (!t.step()) return false;
  const int64_t trial_id = t.int64(0), complete_through = t.int64(1);

  // The trial's visible steps (global step -> mode), once, instead of a lookup per row.
  std::vector<int64_t> steps;
  std::vector<size_t> step_modes;
  Statement s(db, "SELECT step, mode FROM " + schema + ".step WHERE trial_id = ?1 AND step <= ?2 ORDER BY step");
  s.bind(1, trial_id).bind(2, complete_through);
  modes->clear();
  while (s.step()) {
    const std::string mode = s.text(1);
    auto it = std::find(modes->begin(), modes->end(), mode);
    if (it == modes->end()) it = modes->insert(modes->end(), mode);
    steps.push_back(s.int64(0));
    step_modes.push_back(static_cast<size_t>(it - modes->begin()));
  }

  Statement kind(db, "SELECT idx FROM " + schema + ".reduction_kind WHERE reduction = ?1 AND abs = ?2");
  kind.bind(1, reduction).bind(2, abs ? 1 : 0);
  if (!kind.step()) return true;  // no such reduction: the view has no rows either
  const bool ranged = from != std::numeric_limits<int64_t>::min() || to != std::numeric_limits<int64_t>::max();
  Statement v(db, values_sql(schema, kind.int64(0), abs, ranged));
  StepFinder finder(steps);
  for (size_t i = 0; i < tensors.size(); ++i) {
    v.reset();
    v.bind(1, trial_id).bind(2, tensors[i]);
    if (ranged) v.bind(3, from).bind(4, to);
    while (v.step()) {
      const size_t at = finder.find(v.int64(1));
      if (at == steps.size()) continue;  // not a complete step: the view has no row either
      const double value = v.is_null(2) ? std::numeric_limits<double>::quiet_NaN() : v.real(2);
      on_row({i, v.int64(0), step_modes[at], value});
    }
  }
  return true;
}

}  // namespace trialdb
