// tensor_listing.h: the tensors' summary as a table.
#include "src/tensor_listing.h"

#include <utility>
#include <vector>

#include "schema/tensor_summary.h"

namespace trialdb::cli {

namespace {

enum Column { kTrial, kTensor, kDtype, kShape, kSteps, kWorkers, kColumns };

// group_concat's text of distinct names, NULL when there is none.
std::string concat(const std::vector<std::string>& names) { return names.empty() ? kNullCell : join(names, ","); }

}  // namespace

Table tensor_listing(sqlite3* db, const std::string& trial) {
  Table out;
  out.columns = {"trial", "tensor", "dtype", "shape", "steps", "workers"};
  for (TensorSummary& s : read_tensor_summaries(db, trial))
    out.rows.push_back({std::move(s.trial), std::move(s.tensor), concat(s.dtypes), concat(s.shapes),
                        std::to_string(s.steps), std::to_string(s.workers)});
  // As print_query sets them: a column is numeric until a cell of it is text.
  out.numeric.assign(kColumns, true);
  for (const auto& row : out.rows)
    for (int c : {kTrial, kTensor, kDtype, kShape})
      if (row[c] != kNullCell) out.numeric[c] = false;
  return out;
}

}  // namespace trialdb::cli
