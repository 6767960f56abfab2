// info --tensors' rows: every tensor of the tensors view with what its rows in tensor_values say,
// read from the tensors' summary (schema/tensor_summary.h), not from the values.
#pragma once
#include <sqlite3.h>

#include <string>

#include "src/output.h"

namespace trialdb::cli {

// The trials' tensors (the trial named `trial`, or every trial when it is empty), by trial and
// tensor name, as the table print_query would collect from this query over the public views:
//   SELECT t.trial, t.tensor,
//     (SELECT group_concat(dtype) FROM (SELECT dtype FROM tensor_values v
//        WHERE v.trial = t.trial AND v.tensor = t.tensor AND dtype IS NOT NULL
//        GROUP BY dtype ORDER BY min(global_step), dtype)) AS dtype,
//     (the same of shape) AS shape,
//     (SELECT count(DISTINCT global_step) FROM tensor_values v WHERE ...) AS steps,
//     (SELECT count(DISTINCT worker) FROM tensor_values v WHERE ...) AS workers
//   FROM tensors t ORDER BY t.trial, t.tensor
// (tests/common/tensor_listing.sql: the distinct dtypes and shapes in the order of their first
// visible global step, ties by name).
Table tensor_listing(sqlite3* db, const std::string& trial);

}  // namespace trialdb::cli
