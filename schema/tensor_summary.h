// What `trialdb info --tensors` shows of each tensor (its dtypes, shapes, visible steps and
// workers, as an aggregate over its tensor_values rows would), kept in the database so that the
// listing reads one row per tensor and variant instead of every value (schema.sql:
// tensor.visible_steps and tensor_variant).
//
// Exact in every state, because every writer keeps it in the transaction that changes what the
// views show:
// - the ingest (ingest/pipeline/tensor_summary_writer.h), as it stores values and as steps
//   become visible;
// - `trialdb rm` removes the trial's rows with every table that has a trial_id (trial_edit.h);
//   `rename` changes no id, so the summary stays as it is;
// - a database of an older schema version gets it from its values when upgraded
//   (build_tensor_summaries, migrations.h).
// `--values all` rewrites only a value's bytes (its dtype and shape are in the header stored
// before), so it changes nothing here. Rows written into the private tables by hand (`sql --write`)
// are not followed.
//
// The listing's order: trials by name, tensors by name; a tensor's dtypes and shapes each once, in
// the order of the first visible global step that has them, ties by name (by text for shapes).
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trialdb {

class Database;

// tensor_variant's stand-ins for a value row's NULL dtype (no raw value) and NULL shape (none
// saved): key columns cannot be NULL.
inline constexpr int64_t kNoDtype = -1;
inline constexpr std::string_view kNoShape = "";

// One tensor as `info --tensors` lists it.
struct TensorSummary {
  std::string trial, tensor;
  std::vector<std::string> dtypes, shapes;  // distinct, in the listing's order (above)
  int64_t steps = 0;                        // distinct visible global steps
  int64_t workers = 0;                      // distinct workers (named) of the visible values
};

// Builds every trial's summary again from its value rows, replacing what is stored: the upgrade
// of an older database (migrations.h). Reads every value row once.
void build_tensor_summaries(Database& db);

// The summary of every tensor of `trial` (of every trial when empty), trials and tensors by name.
// Reads the trial's tensor and tensor_variant rows, none of its values; memory: one trial's
// variants and the rows returned. Throws Error (kDatabase) naming the command that upgrades a
// database too old to hold the summary.
std::vector<TensorSummary> read_tensor_summaries(sqlite3* db, const std::string& trial);

}  // namespace trialdb
