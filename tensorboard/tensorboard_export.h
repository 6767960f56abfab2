// trialdb export --tensorboard: the trials of a database as TensorBoard runs, read from the
// public views and the statistics computed at ingest (never from the blobs).
//
//   DIR/<trial>/<mode>/events.out.tfevents.*   one run per trial and mode (train, eval, predict,
//                                              global), x = the global step, so TensorBoard
//                                              overlays a trial's TRAIN and EVAL lines in time
//   DIR/<trial>/trialdb-tensorboard.json        which steps and findings were exported
//
// What a run holds, per step:
//   scalars      <tensor>                         losses and metrics (collections losses, metrics,
//                                                 scalars, sm_metrics): their mean, averaged over
//                                                 workers
//                <collection>/<tensor>/<red>      the chosen reductions of every selected tensor
//                                                 (mean, l2, ..., `_abs` for those of |x|),
//                                                 averaged over workers
//   histograms   <collection>/<tensor>            every numeric value's histogram: the buckets of
//                                                 histogram_buckets, workers merged; min, max and
//                                                 num from distributions, sum and sum_squares from
//                                                 the reductions (sum, l2^2)
//   text         findings/<rule>                  the rule findings recorded at the step
//
// Incremental: an export writes a new event file per run with the steps (and findings) not
// exported before; a step that completes late is written by the next export (TensorBoard orders
// a run's points by step whatever the file order).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "schema/database.h"

namespace trialdb::tensorboard {

struct ReductionChoice {
  std::string name;  // min, max, mean, prod, std, variance, sum, l1, l2
  bool abs = false;
};

struct TensorBoardOptions {
  std::vector<std::string> trials;  // those to export, all of them existing
  std::string tensor_regex;         // empty: every tensor
  std::vector<ReductionChoice> reductions;
};

// "mean,l2,mean_abs" as reductions; throws Error (kUsage) naming a name that is not one.
std::vector<ReductionChoice> parse_reductions(const std::string& list);

// A trial name as a folder name: bytes outside [A-Za-z0-9_-] (and a leading '.') as %XX, so no
// name can leave DIR or collide with another.
std::string escape_run_name(const std::string& trial);

struct RunReport {
  std::string trial, run, file;
  int64_t steps = 0, events = 0;
};

// Throws Error (kIo for the folder, kDatabase, kInvalidInput for a state file that is not one).
std::vector<RunReport> export_tensorboard(Database& db, const std::string& folder, const TensorBoardOptions& options);

}  // namespace trialdb::tensorboard
