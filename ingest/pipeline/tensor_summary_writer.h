// Keeps the tensors' summary (schema/tensor_summary.h) exact while the ingest writes, in the
// transaction that stores the values or makes their steps visible.
//
// A tensor's visible steps (tensor.visible_steps) grow in two ways:
// - a value stored at a step that is visible already (a worker's late file, values a wider
//   selection adds, a step landing after later steps completed) adds the step unless another
//   worker's value of the tensor is there: looked up before the value is stored, and only when
//   another worker wrote the step;
// - when complete_through rises, each tensor gains the distinct steps of the newly visible range
//   it has values at, a (step, tensor) once however many workers saved it. A step whose values
//   were all stored by the same transaction (no worker had written it before: the usual case,
//   a step read whole and completed at once) is counted from the tensors this object saw
//   stored; the others (written across transactions: a lagging worker, late files, --follow)
//   from the value_by_step index, whose entries hold (step, tensor) (no value row is read).
// A value is counted once: when it is stored if its step was visible then, else when its step
// becomes visible.
//
// A tensor's variants (tensor_variant) take the least global step of each (dtype, shape, worker)
// of the values stored; whether a variant is visible is decided when it is read, so steps
// completing change none. A variant this ingest knows to be stored at that step or an earlier one
// is not written again (the summary only ever lowers a first step).
//
// Memory: the variants of the tensors this ingest stored values of (not the values), a count
// per tensor whose visible steps the open transaction changed, and the tensor ids of the values
// the open transaction stored at steps not visible (8 bytes a value, within its commit size).
// What the open transaction added is written by finish_transaction; a transaction rolled back
// (an exception) ends the ingest, and with it what this object knew.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "schema/database.h"
#include "schema/multi_row.h"

namespace trialdb {

// Which workers had written a step (its step_worker rows) before a file of it is stored.
struct StepWorkers {
  bool this_worker;    // the file's own
  bool other_workers;  // any other
};

class TensorSummaryWriter {
 public:
  TensorSummaryWriter(Database& db, int64_t trial_id);

  // Before the values of one file: its global step, the step its values are numbered by
  // (value.tensor_step), its worker and who had written the step before it.
  void begin_file(int64_t step, int64_t tensor_step, int64_t worker_id, StepWorkers before);
  // Before a value of the file is stored: whether storing it adds a visible step to the tensor.
  bool adds_visible_step(int64_t tensor_id);
  // Whether adds_visible_step reads the value table for this file (the values stored before it
  // must be there).
  bool looks_up_values() const { return visible_ && other_workers_; }
  // Once a value of the file is stored: its dtype (kNoDtype without a raw value), its shape
  // (kNoShape without one) and what adds_visible_step said of it.
  void stored(int64_t tensor_id, int64_t dtype, std::string_view shape, bool adds_visible_step);
  // At the end of the transaction, once complete_through rose from `before` to `through` (equal:
  // no step became visible): counts the steps that became visible and writes what the
  // transaction changed.
  void finish_transaction(int64_t before, int64_t through);

 private:
  void count_steps_become_visible(int64_t before, int64_t through);
  void count_from_index(int64_t after, int64_t through);
  void write_added_steps();
  void write_variants();

  struct Variant {
    int64_t dtype;
    std::string shape;
    int64_t worker_id;
    int64_t first_step;  // this ingest's least; the stored one is at most this once written
    bool unwritten;      // first_step is lower than what this ingest wrote
  };

  Database& db_;
  int64_t trial_id_;
  // The file being written.
  int64_t step_ = 0, tensor_step_ = 0, worker_id_ = 0;
  bool visible_ = false;        // its step was visible before it
  bool other_workers_ = false;  // another worker wrote its step (visible_ only)

  // The steps not visible that the open transaction stored values at, by step: whether no
  // worker had written the step before the transaction, and then the tensor of every value.
  struct StepWritten {
    bool all_in_transaction;
    std::vector<int64_t> tensor_ids;
  };
  std::map<int64_t, StepWritten> steps_written_;
  std::vector<int64_t>* step_tensors_ = nullptr;  // the file's step's tensor_ids, if counted here

  std::unordered_map<int64_t, std::vector<Variant>> variants_;  // by tensor_id
  std::vector<std::pair<int64_t, size_t>> unwritten_;           // (tensor_id, index in variants_)
  std::unordered_map<int64_t, int64_t> added_steps_;            // tensor_id -> visible steps added
  Statement complete_through_, has_value_, count_step_;
  Statement add_steps_;
  BatchedRows write_variants_;
};

}  // namespace trialdb
