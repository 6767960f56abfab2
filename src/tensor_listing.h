// info --tensors' rows: every tensor of the tensors view with what its rows in tensor_values say
// (the aggregate below), read from the tables under the views.
#pragma once
#include <sqlite3.h>

#include <string>

#include "src/output.h"

namespace trialdb::cli {

// The trials' tensors (the trial named `trial`, or every trial when it is empty), by trial and
// tensor name, as the table print_query would collect from this query over the public views:
//   WITH seen AS (
//     SELECT trial, tensor, group_concat(DISTINCT dtype) AS dtype, group_concat(DISTINCT shape) AS shape,
//            count(DISTINCT global_step) AS steps, count(DISTINCT worker) AS workers
//     FROM tensor_values GROUP BY trial, tensor)
//   SELECT t.trial, t.tensor, s.dtype, s.shape, ifnull(s.steps, 0) AS steps, ifnull(s.workers, 0) AS workers
//   FROM tensors t LEFT JOIN seen s ON s.trial = t.trial AND s.tensor = t.tensor ORDER BY t.trial, t.tensor
// with the distinct dtypes and shapes in the order tensor_values gives a tensor's rows (value's key:
// step, then worker).
Table tensor_listing(sqlite3* db, const std::string& trial);

}  // namespace trialdb::cli
