// Writes one prepared file's values into the value and value_blob tables, through statements
// prepared once per ingest (a trial of many small files would otherwise pay a prepare per
// statement per file).
//
// Fast path (nothing of this step and worker is stored yet, so no row can collide): INSERT OR
// IGNORE, kValueBatch rows per statement, plain scalars through a statement of their own with
// four parameters a row. OR IGNORE because a statement that may abort half-way needs a
// statement journal, which costs more than the batching saves; the row count is checked
// instead. Otherwise row by row, so a value stored before is reported and skipped on its own.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ingest/pipeline/prepared_file.h"
#include "ingest/pipeline/tensor_summary_writer.h"
#include "schema/database.h"
#include "schema/status.h"

namespace trialdb {

class ValueWriter {
 public:
  // Values whose blob is at most this many bytes are stored in value.data, the rest in value_blob.
  static constexpr size_t kInlineBlobBytes = 128;
  static constexpr size_t kValueBatch = 32;  // rows per multi-row INSERT

  // Every value stored is reported to `summary` (the tensors' summary, kept in step).
  ValueWriter(Database& db, int64_t trial_id, bool compress, TensorSummaryWriter& summary);
  ValueWriter(const ValueWriter&) = delete;
  ValueWriter& operator=(const ValueWriter&) = delete;

  // Writes f's values for (global step f.file.step, worker_id), numbered by `tensor_step`;
  // `tensor_id` gives (and creates) tensor ids. A blob is released once stored; values that
  // could not be stored go to `report`. Returns the number of values stored. Runs inside the
  // caller's transaction, which must hold the write lock (value_blob ids are allocated here).
  size_t write(PreparedFile& f, int64_t worker_id, int64_t tensor_step,
               const std::function<int64_t(const std::string&)>& tensor_id,
               const std::function<void(const Status&)>& report);

 private:
  struct Row;
  size_t flush(PreparedFile& f, int64_t worker_id, int64_t tensor_step, std::vector<Row>& rows, bool fast, bool scalars,
               const std::function<void(const Status&)>& report);
  // The value's distribution and histogram rows, once its value row is stored: kept until
  // kValueBatch of them are, then written by flush_distributions, one multi-row INSERT per table
  // (a statement per row cost more than the rows' B-tree inserts).
  void write_distribution(const Row& r, int64_t worker_id, int64_t tensor_step, int64_t step);
  void flush_distributions();
  // The INSERT of n rows into table, prepared on first use and kept in cache[n - 1].
  Statement& multi_row_insert(std::vector<std::unique_ptr<Statement>>& cache, const char* table, const char* columns,
                              int params, size_t n);
  // The event_file row of `path` (relative to the trial root), created on first use.
  int64_t event_file_id(const std::string& path);

  Database& db_;
  int64_t trial_id_;
  bool compress_;
  TensorSummaryWriter& summary_;
  Statement insert_value_, insert_value_fast_, insert_value_batch_, insert_scalar_batch_;
  Statement step_workers_, insert_blob_, max_value_id_, max_histogram_id_;
  Statement insert_event_file_, find_event_file_;
  std::unordered_map<std::string, int64_t> event_files_;
  // A distribution row waiting for flush_distributions; histogram_id 0: it has no histogram.
  struct PendingDistribution {
    const Distribution* distribution;
    int64_t tensor_id, tensor_step, step_offset, worker_id, histogram_id;
  };
  std::vector<PendingDistribution> distributions_;
  int64_t next_histogram_id_ = 1;
  std::vector<std::unique_ptr<Statement>> insert_histograms_, insert_distributions_;
};

}  // namespace trialdb
