// Writes prepared files' values into the value, value_blob, value_distribution and
// value_histogram tables, through statements prepared once per ingest (a trial of many small
// files would otherwise pay a prepare per statement per file).
//
// Fast path (nothing of this step and worker is stored yet, so no row can collide): the value rows
// are copied into a buffer of the transaction and inserted later in their table's key order
// (tensor, step, worker). Files arrive step by step, but value is clustered by tensor: inserted as
// they arrive, each row would land on a different, nearly full page, and SQLite's B-tree
// balancing of those pages dominated the ingest of many small values; in key order the inserts of
// a fresh trial are appends. The buffer is flushed by flush(), which
// the ingester calls before the transaction commits, and by write() itself once it holds
// ValueBufferLimits' rows or bytes, or before anything of the file reads the tables (plain
// scalars are buffered in a form of their own, a third of the size, so that a transaction's
// scalars go in at once more often). Rows go in kValueBatch per INSERT OR IGNORE, plain scalars
// through a statement of their own; OR IGNORE because a statement that may abort half-way needs
// a statement journal, which costs more than the batching saves: the row count is checked
// instead. Blobs stored apart (value_blob), distributions (value_distribution) and histograms
// (value_histogram, under their distribution's id) are inserted with the file's others, kValueBatch
// per INSERT, not buffered: their ids are allocated in order, so they are appends already.
//
// Otherwise (the step and worker were written before: a file read again after a selection or a
// second index file for them) the buffer is flushed and the file's values go in row by row, so
// a value stored before is reported and skipped on its own.
//
// value_by_step, whose key orders the rows by step, is left out of a transaction that begins with
// no value row at all (a trial into a new database) and built at its end (schema/deferred_index.h):
// in the table's key order its entries would each land in another page.
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
#include "schema/deferred_index.h"
#include "schema/status.h"

namespace trialdb {

// When the buffer of rows waiting to be inserted in key order is flushed, at the latest. The
// larger it is, the more of a tensor's steps go in together (one page filled at once rather than
// a row added to each of many); the bytes bound its memory (bench/README.md, "Small tensors",
// "Plain scalars buffered in a row of their own": the rows' bound lets 64 MiB of plain scalars,
// ~670,000, go in at once).
inline constexpr size_t kValueBufferRows = size_t{1} << 20;
inline constexpr size_t kValueBufferBytes = size_t{64} << 20;
struct ValueBufferLimits {
  size_t rows = kValueBufferRows;
  size_t bytes = kValueBufferBytes;
};

class ValueWriter {
 public:
  // Values whose blob is at most this many bytes are stored in value.data, the rest in value_blob.
  static constexpr size_t kInlineBlobBytes = 128;
  static constexpr size_t kValueBatch = 32;  // rows per multi-row INSERT

  // Every value stored is reported to `summary` (the tensors' summary, kept in step). `limits`:
  // the production default but in tests.
  ValueWriter(Database& db, int64_t trial_id, bool compress, TensorSummaryWriter& summary,
              ValueBufferLimits limits = {});
  ValueWriter(const ValueWriter&) = delete;
  ValueWriter& operator=(const ValueWriter&) = delete;
  ~ValueWriter();

  // Writes f's values for (global step f.file.step, worker_id), numbered by `tensor_step`;
  // `tensor_id` gives (and creates) tensor ids. A blob is released once stored; values that
  // could not be stored go to `report`. Returns the number of values stored (or buffered: they
  // are stored by the transaction's flush). Runs inside the caller's transaction, which must
  // hold the write lock (value_blob ids are allocated here).
  size_t write(PreparedFile& f, int64_t worker_id, int64_t tensor_step,
               const std::function<int64_t(const std::string&)>& tensor_id,
               const std::function<void(const Status&)>& report);
  // Inserts the buffered rows, in key order, and builds value_by_step if the transaction left it
  // out. Before the transaction commits, and before anything other than write() reads value (or
  // what is derived from it) in it.
  void flush();
  // Drops the buffered rows: their transaction is being rolled back.
  void discard();
  // Whether the open transaction left value_by_step out (value had no row when it began): then
  // none of its inserts lands out of its table's key order (BulkLoad::size_cache).
  bool defers_step_index() const { return step_index_.deferred(); }

 private:
  struct BufferedValue;
  struct BufferedScalar;
  struct BufferedFile {  // what an error about a buffered row names
    std::string path, worker;
    int64_t step;
  };

  // f's value v as a row (its shape and inline blob copied into bytes_), of file files_[file].
  BufferedValue buffered(const PreparedValue& v, int64_t tensor_id, int64_t tensor_step, int64_t step,
                         int64_t worker_id, int64_t file_id, uint32_t file);
  // The file's index in files_, added on the first row buffered from it since the last flush.
  uint32_t current_file(const PreparedFile& f);
  bool buffer_full() const;
  // Throws the error of a (step, worker) whose values are in the database without its
  // step_worker row (which the fast path relies on).
  void check_nothing_stored(const PreparedFile& f, int64_t worker_id, int64_t tensor_step);
  // Row by row (INSERT, not OR IGNORE): false, reported, if the value was stored before.
  bool insert_one(const BufferedValue& r, const PreparedFile& f, const std::string& tensor,
                  const std::function<void(const Status&)>& report);
  // flush() but for value_by_step: what write() itself reads needs only the tables' keys.
  void insert_buffered();
  void flush_values();
  // The value's distribution row and histogram row (if it has finite elements), inserted with the
  // file's others under the id its value row names.
  void add_distribution(int64_t distribution_id, const Distribution& d);
  void insert_distributions();
  void insert_histograms();
  // The file's blobs stored apart, kValueBatch per INSERT (a statement a blob cost ~2,000
  // instructions a blob more: bench/README.md, "The writer thread's cost per value").
  void insert_blobs();
  // Throws Error unless SQLite gave the last row inserted into `table` the id `last_id`: the
  // value rows name the ids write() allocated as SQLite allocates them (the largest plus one, in
  // order), so a row inserted behind the writer's back would make them name other rows.
  void expect_last_id(const char* table, int64_t last_id) const;
  // The INSERT of n rows, built by `sql`, prepared on first use and kept in cache[n - 1].
  Statement& cached(std::vector<std::unique_ptr<Statement>>& cache, size_t n,
                    const std::function<std::string(size_t)>& sql);
  // The event_file row of `path` (relative to the trial root), created on first use.
  int64_t event_file_id(const std::string& path);

  Database& db_;
  int64_t trial_id_;
  bool compress_;
  TensorSummaryWriter& summary_;
  ValueBufferLimits limits_;
  Statement insert_value_, step_workers_, values_stored_, max_value_id_, max_distribution_id_;
  Statement insert_event_file_, find_event_file_;
  std::unordered_map<std::string, int64_t> event_files_;
  DeferredIndex step_index_;  // value_by_step

  // The transaction's rows not inserted yet, in the order they came; their shapes and inline
  // blobs in bytes_.
  std::vector<BufferedValue> values_;  // all but the plain scalars
  std::vector<BufferedScalar> scalars_;
  std::string bytes_;
  std::vector<BufferedFile> files_;
  bool file_listed_ = false;  // files_.back() is the file write() is adding rows of

  // The file's distributions and histograms not inserted yet (pointing into its values').
  struct PendingDistribution {
    int64_t distribution_id;
    const Distribution* distribution;
  };
  std::vector<PendingDistribution> distributions_;
  struct PendingHistogram {
    int64_t distribution_id;
    const std::string* buckets;
  };
  std::vector<PendingHistogram> histograms_;
  // The file's blobs stored apart not inserted yet (released once they are).
  struct PendingBlob {
    int64_t value_id;
    ValueBlob* blob;
  };
  std::vector<PendingBlob> blobs_;
  std::vector<std::unique_ptr<Statement>> insert_values_, insert_scalars_, insert_histograms_, insert_distributions_,
      insert_blobs_;
};

}  // namespace trialdb
