// tensor_summary_writer.h.
#include "ingest/pipeline/tensor_summary_writer.h"

#include <algorithm>
#include <string>

#include "schema/multi_row.h"

namespace trialdb {

namespace {

// The values of the steps in (?2, ?3], by step and tensor, as value_by_step's key gives them (after
// the step: tensor, offset, worker; no sort): a (step, tensor) comes in consecutive rows.
constexpr const char* kNewlyVisibleSql = R"sql(
  SELECT s.step, v.tensor_id
  FROM step s
  JOIN value v INDEXED BY value_by_step
    ON v.trial_id = s.trial_id AND v.tensor_step = s.tensor_step AND v.step_offset = s.step - s.tensor_step
  WHERE s.trial_id = ?1 AND s.step > ?2 AND s.step <= ?3
  ORDER BY s.step, v.tensor_id)sql";

// The variants finish_transaction writes go kSummaryBatch rows a statement (schema/multi_row.h),
// in tensor order; the rest one a statement.
constexpr size_t kSummaryBatch = 64;

constexpr int kVariantParams = 6;  // trial_id, tensor_id, dtype, shape, worker_id, first_step
std::string write_variants_sql(size_t rows) {
  return "INSERT INTO tensor_variant(trial_id, tensor_id, dtype, shape, worker_id, first_step) VALUES " +
         values_rows_sql(rows, kVariantParams) +
         " ON CONFLICT DO UPDATE SET first_step = excluded.first_step "
         "WHERE excluded.first_step < tensor_variant.first_step";
}

}  // namespace

TensorSummaryWriter::TensorSummaryWriter(Database& db, int64_t trial_id)
    : db_(db),
      trial_id_(trial_id),
      complete_through_(db.handle(), "SELECT complete_through FROM trial WHERE trial_id = ?1"),
      has_value_(db.handle(),
                 "SELECT 1 FROM value WHERE tensor_id = ?1 AND tensor_step = ?2 AND step_offset = ?3 LIMIT 1"),
      count_step_(db.handle(), kNewlyVisibleSql),
      add_steps_(db.handle(), "UPDATE tensor SET visible_steps = visible_steps + ?2 WHERE tensor_id = ?1"),
      write_variants_(db.handle(), kSummaryBatch, write_variants_sql) {}

void TensorSummaryWriter::begin_file(int64_t step, int64_t tensor_step, int64_t worker_id, StepWorkers before) {
  step_ = step, tensor_step_ = tensor_step, worker_id_ = worker_id;
  complete_through_.bind(1, trial_id_);
  visible_ = complete_through_.step() && step <= complete_through_.int64(0);
  complete_through_.reset();
  other_workers_ = false;
  step_tensors_ = nullptr;
  if (!visible_) {
    // A value exists at a step only with its worker's step_worker row, which the ingest writes
    // after the file's values: none yet, and every value of the step is stored in this transaction.
    auto [it, first_file] = steps_written_.try_emplace(step);
    if (first_file) it->second.all_in_transaction = !before.this_worker && !before.other_workers;
    if (it->second.all_in_transaction) step_tensors_ = &it->second.tensor_ids;
    return;
  }
  other_workers_ = before.other_workers;
}

bool TensorSummaryWriter::adds_visible_step(int64_t tensor_id) {
  if (!visible_) return false;
  // Only other workers' values can be there: this worker's value of the tensor is the one stored.
  if (!other_workers_) return true;
  has_value_.bind(1, tensor_id).bind(2, tensor_step_).bind(3, step_ - tensor_step_);
  const bool there = has_value_.step();
  has_value_.reset();
  return !there;
}

void TensorSummaryWriter::stored(int64_t tensor_id, int64_t dtype, std::string_view shape, bool adds_visible_step) {
  if (adds_visible_step) ++added_steps_[tensor_id];
  if (step_tensors_) step_tensors_->push_back(tensor_id);
  std::vector<Variant>& variants = variants_[tensor_id];
  for (size_t i = 0; i < variants.size(); ++i) {
    Variant& v = variants[i];
    if (v.dtype != dtype || v.worker_id != worker_id_ || v.shape != shape) continue;
    if (step_ < v.first_step) {
      v.first_step = step_;
      if (!v.unwritten) unwritten_.emplace_back(tensor_id, i);
      v.unwritten = true;
    }
    return;
  }
  variants.push_back({dtype, std::string(shape), worker_id_, step_, true});
  unwritten_.emplace_back(tensor_id, variants.size() - 1);
}

void TensorSummaryWriter::count_steps_become_visible(int64_t before, int64_t through) {
  int64_t counted_through = before;
  for (auto& [step, written] : steps_written_) {
    if (step <= before || step > through || !written.all_in_transaction) continue;
    if (step - 1 > counted_through) count_from_index(counted_through, step - 1);
    counted_through = step;
    std::vector<int64_t>& tensors = written.tensor_ids;  // one per worker that saved the tensor
    std::sort(tensors.begin(), tensors.end());
    for (auto it = tensors.begin(); it != tensors.end(); it = std::upper_bound(it, tensors.end(), *it))
      ++added_steps_[*it];
  }
  if (through > counted_through) count_from_index(counted_through, through);
}

void TensorSummaryWriter::count_from_index(int64_t after, int64_t through) {
  count_step_.bind(1, trial_id_).bind(2, after).bind(3, through);
  int64_t last_step = 0, last_tensor = 0;
  bool any = false;
  while (count_step_.step()) {
    const int64_t step = count_step_.int64(0), tensor = count_step_.int64(1);
    if (any && step == last_step && tensor == last_tensor) continue;  // another worker's value
    any = true, last_step = step, last_tensor = tensor;
    ++added_steps_[tensor];
  }
  count_step_.reset();
}

void TensorSummaryWriter::finish_transaction(int64_t before, int64_t through) {
  if (through > before) count_steps_become_visible(before, through);
  steps_written_.clear();
  step_tensors_ = nullptr;
  write_added_steps();
  write_variants();
}

void TensorSummaryWriter::write_added_steps() {
  std::vector<std::pair<int64_t, int64_t>> added(added_steps_.begin(), added_steps_.end());
  added_steps_.clear();
  std::sort(added.begin(), added.end());
  for (const auto& [tensor_id, steps] : added) add_steps_.bind(1, tensor_id).bind(2, steps).run();
}

void TensorSummaryWriter::write_variants() {
  std::sort(unwritten_.begin(), unwritten_.end());
  write_variants_.write(unwritten_.size(), [this](Statement& st, size_t row, size_t i) {
    const auto& [tensor_id, index] = unwritten_[i];
    Variant& v = variants_[tensor_id][index];
    const int first = static_cast<int>(row) * kVariantParams + 1;
    st.bind(first, trial_id_)
        .bind(first + 1, tensor_id)
        .bind(first + 2, v.dtype)
        .bind_text_static(first + 3, v.shape)
        .bind(first + 4, v.worker_id)
        .bind(first + 5, v.first_step);
    v.unwritten = false;
  });
  unwritten_.clear();
}

}  // namespace trialdb
