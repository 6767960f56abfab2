// Reading reductions for charts: the rows of the reductions view for some of one trial's tensors
// and one reduction kind, with the view's meaning (only the steps the trial has complete; a
// one-element value's reductions made from its element) and the view's own value expression,
// but without its per-row lookups of the step, tensor and worker rows, which are most of the
// cost of reading a chart through the view (bench/README.md, "trialdb serve"). The private
// tables' shape stays here, beside the DDL.
#pragma once
#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace trialdb {

struct ReductionRow {
  size_t tensor;  // index into the tensor names asked for
  int64_t step;   // the views' step (smdebug's: the global step, except for GLOBAL-mode steps)
  size_t mode;    // index into the modes read_reduction_lines fills
  double value;   // NaN where the view has NULL (a NaN reduction)
};

// The SQL function read_reduction_lines hands the rows over with; registered once on a
// connection before it reads (it does nothing useful called from other SQL).
constexpr const char* kRowFunction = "trialdb_reduction_row";
void register_reduction_row_function(sqlite3* db);

// Calls on_row for the rows of `tensors` of `trial` in `schema` (the database holding the trial:
// "main", or an ATTACHed one's name) with the view's `reduction` and `abs` and a step from `from`
// to `to`: by tensor in the order given, then by step, a step's workers one after another. The
// rows are those of SELECT ... FROM reductions WHERE trial = ? AND tensor = ? AND reduction = ?
// AND abs = ? AND step BETWEEN ? AND ?, ordered by step. `modes` receives the mode names the
// rows' indexes refer to. Returns false, calling nothing, when the schema has no such trial.
bool read_reduction_lines(sqlite3* db, const std::string& schema, const std::string& trial,
                          const std::vector<std::string>& tensors, const std::string& reduction, bool abs, int64_t from,
                          int64_t to, std::vector<std::string>* modes,
                          const std::function<void(const ReductionRow&)>& on_row);

}  // namespace trialdb
