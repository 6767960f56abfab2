// reduction_lines.h
#include "schema/reduction_lines.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "schema/database.h"

namespace trialdb {

namespace {

// The reductions view's text in schema.sql: its value expression and its row filter, over a
// value row v and a reduction kind k, so that what a reduction means is declared once.
struct ViewText {
  std::string value, filter;
};

const ViewText& reductions_view_text() {
  static const ViewText text = [] {
    const std::string_view ddl = schema_sql();
    const size_t view = ddl.find("CREATE VIEW IF NOT EXISTS reductions AS");
    const size_t value = ddl.find("CASE", view), value_end = ddl.find("END AS value", value);
    const size_t filter = ddl.find("\nWHERE ", value_end), filter_end = ddl.find(';', filter);
    if (view == ddl.npos || value == ddl.npos || value_end == ddl.npos || filter == ddl.npos || filter_end == ddl.npos)
      throw Error(Status::database("schema.sql: the reductions view has no 'CASE ... END AS value' or no WHERE"));
    return ViewText{std::string(ddl.substr(value, value_end + 3 - value)),
                    std::string(ddl.substr(filter + 7, filter_end - filter - 7))};
  }();
  return text;
}

// `sql` with the reduction kind's columns k.idx and k.abs replaced by their values: SQLite then
// folds the kind's branches at prepare time instead of reading them on every row.
std::string for_kind(std::string sql, int64_t idx, bool abs) {
  for (const auto& [column, value] : {std::pair<std::string, std::string>{"k.idx", std::to_string(idx)},
                                      std::pair<std::string, std::string>{"k.abs", abs ? "1" : "0"}})
    for (size_t at = sql.find(column); at != std::string::npos; at = sql.find(column, at + value.size()))
      sql.replace(at, column.size(), value);
  return sql;
}

// One tensor's value rows of kind (idx, abs), in key order (step, then worker): the tensor is
// one lookup; whether the row's global step is a complete step of the trial, and its mode, are
// looked up in memory by the caller (the view joins the step row and compares with
// complete_through on every row). Without a step range, no bound is compared on every row.
std::string values_sql(const std::string& schema, int64_t idx, bool abs, bool ranged) {
  const ViewText& view = reductions_view_text();
  return "SELECT v.tensor_step, v.tensor_step + v.step_offset,\n"
         "       " +
         for_kind(view.value, idx, abs) +
         "\n"
         "FROM " +
         schema +
         ".tensor tn\n"
         "JOIN " +
         schema + ".value v ON v.tensor_id = tn.tensor_id" + (ranged ? " AND v.tensor_step BETWEEN ?3 AND ?4" : "") +
         "\n"
         "WHERE tn.trial_id = ?1 AND tn.name = ?2 AND (" +
         for_kind(view.filter, idx, abs) +
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
