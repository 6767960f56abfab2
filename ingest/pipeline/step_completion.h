// A trial's steps: the step row of each global step (mode, mode step, the step number smdebug
// files its values under), which workers wrote it, and when it becomes complete.
//
// A step is complete when every expected worker wrote it, when a later step is complete, or when
// training has ended (docs/FORMAT.md). Complete steps are therefore a prefix of the steps, kept as
// the trial's complete_through; the views show a value once its step is under that mark, so a
// reader never sees half a step.
//
// A step can change after it became complete: a worker's file that arrived late, or the values
// a wider selection adds. Rules fold steps in order into carried state, so every rule that
// evaluated that step or a later one is left to be evaluated again from the first step
// (rule_rerun, rules_sql/rules_base.sql), in the transaction that changes the step: its findings
// and state then equal those of one evaluation of the trial as it is.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "ingest/pipeline/prepared_file.h"
#include "ingest/pipeline/tensor_summary_writer.h"
#include "schema/database.h"

namespace trialdb {

class StepCompletion {
 public:
  StepCompletion(Database& db, int64_t trial_id);

  // A global step has one mode: a worker whose index disagrees with what another worker wrote
  // is reported in f.errors (its values are kept, filed under the step's first mode, as
  // smdebug's reader does).
  void check_mode(PreparedFile& f);
  // Records f's step (the first worker to write it sets its numbering) and returns the step its
  // values are numbered by (value.tensor_step).
  int64_t record_step(const PreparedFile& f);
  // Records that worker_id wrote the step, and that this transaction touched it.
  void record_step_worker(int64_t step, int64_t worker_id);
  // Records that the step's values changed (step.change_seq takes the trial's next change_seq),
  // so the next export rewrites it. Inside the transaction that writes them.
  void record_values_changed(int64_t step);

  // Raises complete_through as far as the steps touched in this transaction (or the end of
  // training) allow, marks the steps under it complete, has `summary` count the steps that became
  // visible and write the transaction's changes to the tensors' summary, leaves the rules that
  // evaluated a step changed after it was complete (or later ones) to be evaluated again, and
  // forgets the touched steps. Returns how many steps became complete. Inside the caller's
  // transaction, at its end.
  int64_t complete(int expected_workers, bool ended, TensorSummaryWriter& summary);
  bool touched_any() const { return !touched_.empty(); }

 private:
  Database& db_;
  int64_t trial_id_;
  // Rules that evaluated from_step or a later step are evaluated again from the first step.
  void revise_rules_from(int64_t from_step);

  std::map<int64_t, bool> touched_;  // steps written in the open transaction
  std::optional<int64_t> revised_;   // the first step written in it that was complete already
  Statement step_mode_, insert_step_, insert_step_worker_, next_change_, stamp_step_;
};

}  // namespace trialdb
