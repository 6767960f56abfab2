// tensor_listing.h. The query over the views costs a temporary table per DISTINCT aggregate,
// cleared for every tensor, and joins every value's step, worker, dtype name and blob rows: most
// of a second on a trial of 10,000 tensors. Here a trial's value rows are read once, tensor by
// tensor in value's key order, dtype, shape, step and worker only (never a blob), and what the
// view would show is decided in memory: a row is visible when its global step is one of the
// trial's steps up to complete_through (the views' two visibility joins); dtype codes and worker
// ids are named from their tables, read once. Memory: one tensor's distinct values at a time,
// and the output rows.
#include "src/tensor_listing.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "schema/database.h"
#include "schema/step_finder.h"

namespace trialdb::cli {

namespace {

enum Column { kTrial, kTensor, kDtype, kShape, kSteps, kWorkers, kColumns };

// Names by code or id, for the LEFT JOINs of the views (a code without a row names nothing).
using Names = std::unordered_map<int64_t, std::string>;

Names read_names(sqlite3* db, const char* sql) {
  Names names;
  Statement q(db, sql);
  while (q.step())
    if (!q.is_null(1)) names.emplace(q.int64(0), q.text(1));
  return names;
}

template <typename T>
void add_distinct(std::vector<T>* seen, const T& v) {
  if (std::find(seen->begin(), seen->end(), v) == seen->end()) seen->push_back(v);
}

// group_concat(DISTINCT name) of the coded values: names in the order their codes came first,
// each once, none for a code without a name; NULL when there is none.
std::string concat_names(const std::vector<int64_t>& codes, const Names& names) {
  std::vector<std::string> distinct;
  for (int64_t code : codes)
    if (auto it = names.find(code); it != names.end()) add_distinct(&distinct, it->second);
  return distinct.empty() ? kNullCell : join(distinct, ",");
}

// One tensor's visible rows, as they come: the distinct dtype codes, shapes and workers in the
// order they came first, and the global steps.
struct TensorRows {
  std::vector<int64_t> dtypes, workers, global_steps;
  std::vector<std::string> shapes;

  void clear() { dtypes.clear(), workers.clear(), global_steps.clear(), shapes.clear(); }

  // A row of kTrialRowsSql with a value.
  void add(const Statement& q) {
    if (global_steps.empty() || global_steps.back() != q.int64(2)) global_steps.push_back(q.int64(2));
    add_distinct(&workers, q.int64(3));
    sqlite3_stmt* st = q.handle();
    if (sqlite3_column_type(st, 4) == SQLITE_INTEGER) add_distinct(&dtypes, q.int64(4));
    if (sqlite3_column_type(st, 5) != SQLITE_NULL) {
      const std::string_view shape(reinterpret_cast<const char*>(sqlite3_column_text(st, 5)),
                                   static_cast<size_t>(sqlite3_column_bytes(st, 5)));
      if (std::find(shapes.begin(), shapes.end(), shape) == shapes.end()) shapes.emplace_back(shape);
    }
  }

  // The output row: count(DISTINCT ...) of the global steps and of the workers' names.
  std::vector<std::string> row(const std::string& trial, const std::string& tensor, const Names& dtype_names,
                               const Names& worker_names) {
    std::sort(global_steps.begin(), global_steps.end());
    const auto steps = std::unique(global_steps.begin(), global_steps.end()) - global_steps.begin();
    std::vector<std::string> names;
    for (int64_t w : workers)
      if (auto it = worker_names.find(w); it != worker_names.end()) add_distinct(&names, it->second);
    return {trial,
            tensor,
            concat_names(dtypes, dtype_names),
            shapes.empty() ? kNullCell : join(shapes, ","),
            std::to_string(steps),
            std::to_string(names.size())};
  }
};

// Each tensor of the trial by name, LEFT JOINed to its value rows in key order (the index of
// tensor names and value's key give that order: no sort).
constexpr const char* kTrialRowsSql =
    "SELECT tn.tensor_id, tn.name, v.tensor_step + v.step_offset, v.worker_id, v.dtype, v.shape\n"
    "FROM tensor tn\n"
    "LEFT JOIN value v ON v.tensor_id = tn.tensor_id AND v.trial_id = tn.trial_id\n"
    "WHERE tn.trial_id = ?1\n"
    "ORDER BY tn.name, v.tensor_step, v.step_offset, v.worker_id";

void list_trial(sqlite3* db, int64_t trial_id, const std::string& trial, int64_t complete_through,
                const Names& dtype_names, const Names& worker_names, Table* out) {
  std::vector<int64_t> steps;  // the visible global steps, sorted
  Statement s(db, "SELECT step FROM step WHERE trial_id = ?1 AND step <= ?2 ORDER BY step");
  s.bind(1, trial_id).bind(2, complete_through);
  while (s.step()) steps.push_back(s.int64(0));
  StepFinder finder(steps);

  Statement q(db, kTrialRowsSql);
  q.bind(1, trial_id);
  TensorRows rows;
  int64_t tensor_id = 0;
  std::string tensor;
  bool any = false;
  auto flush = [&] {
    if (any) out->rows.push_back(rows.row(trial, tensor, dtype_names, worker_names));
    rows.clear();
  };
  while (q.step()) {
    if (!any || q.int64(0) != tensor_id) {
      flush();
      any = true, tensor_id = q.int64(0), tensor = q.text(1);
    }
    if (q.is_null(2) || finder.find(q.int64(2)) == steps.size()) continue;  // no value, or not visible
    rows.add(q);
  }
  flush();
}

}  // namespace

Table tensor_listing(sqlite3* db, const std::string& trial) {
  Table out;
  out.columns = {"trial", "tensor", "dtype", "shape", "steps", "workers"};
  const Names dtype_names = read_names(db, "SELECT code, name FROM dtype_name");
  const Names worker_names = read_names(db, "SELECT worker_id, name FROM worker");
  Statement t(db, trial.empty() ? "SELECT trial_id, name, complete_through FROM trial ORDER BY name"
                                : "SELECT trial_id, name, complete_through FROM trial WHERE name = ?1");
  if (!trial.empty()) t.bind(1, trial);
  while (t.step()) list_trial(db, t.int64(0), t.text(1), t.int64(2), dtype_names, worker_names, &out);
  // As print_query sets them: a column is numeric until a cell of it is text.
  out.numeric.assign(kColumns, true);
  for (const auto& row : out.rows)
    for (int c : {kTrial, kTensor, kDtype, kShape})
      if (row[c] != kNullCell) out.numeric[c] = false;
  return out;
}

}  // namespace trialdb::cli
