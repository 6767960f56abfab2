// The ingester: one incremental pass over a trial, from a TrialSource into the schema.
//
// Unit of work: one index file (= one step of one worker). Files are prepared (prepare_file.h:
// read via the index offsets, CRC-checked, decoded, reduced, blob-encoded) on a thread per core
// that lasts the pass (ordered_pool.h), in order, within a window of files and a read-ahead
// budget so memory stays bounded; one thread writes them to SQLite (value_writer.h) in large
// transactions. A step's rows become visible atomically, when the step completes
// (step_completion.h).
//
// Selective (IngestOptions::selection): files of unselected steps are not read, records of
// unselected tensors not read either; such files are recorded as partial (file_ledger.h) so a
// later, wider run reads exactly what is missing.
//
// Incremental: an index file is recorded as ingested in the same transaction as its rows
// (file_ledger.h), so a re-run (or a run after a crash) reads only files not ingested before.
// Files a live job has not finished writing (index before its event file, a record cut short,
// an index that is not yet valid JSON) are left for a later pass; once the trial has ended they
// are errors.
//
// One bad file costs only itself: whatever the listing or a read of one file fails with is that
// file's error (file, step, cause) and every other file is ingested. A permanent failure is
// reported once; one that may pass (kIo: a permission, an I/O error) is reported and read again
// on every later pass and run until it succeeds (file_ledger.h). A trial that has ended with no
// step at all is an error too.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ingest/pipeline/selection.h"
#include "ingest/pipeline/value_writer.h"
#include "ingest/source/source.h"
#include "schema/database.h"
#include "schema/status.h"

namespace trialdb {

class Catalog;
class FileLedger;
class StepCompletion;
class TensorSummaryWriter;
struct PendingFile;
struct PreparedFile;

// Event bytes that files being prepared may hold ahead of the writer: the file being written and
// the next, up to about half of it each.
inline constexpr uint64_t kReadAheadBytes = 640u << 20;

// Preparing threads: at most this many are asked for, and the default (all cores) is capped by it.
inline constexpr int kMaxThreads = 256;

struct IngestOptions {
  std::string name;         // trial name; empty = the location's base name
  bool strict = false;      // stop at the first error (Error of kind kInvalidInput) instead of skipping
  bool compress = false;    // zlib blobs that shrink
  SelectionSpec selection;  // only these steps and tensors (selection.h); whole by default
  // false (ingest --values none): raw values are decoded for their reductions and distributions
  // and located (value_locations), but only their header is stored (schema/value_blob.h).
  bool store_values = true;
  // ingest --values all: first read the bytes of the values stored without them
  // (value_backfill.h).
  bool add_missing_values = false;
  int threads = 0;  // preparing threads; 0 = hardware concurrency
  // Write each pass through a rollback journal when no other connection has the database open
  // (ingest/store/bulk_load.h: every byte written once, not twice); readers that open it during
  // the pass then wait for its commits. Off: always WAL, readers never wait.
  bool bulk_load = false;
  std::function<void(size_t done, size_t total)> progress;
  // Called after each commit that completed steps (e.g. to evaluate rules on them).
  std::function<void(int64_t steps_completed)> on_steps_completed;
};

struct IngestStats {
  size_t files_ingested = 0;
  size_t files_waiting = 0;  // not yet complete on disk; retried on the next pass
  size_t values = 0;
  size_t values_added = 0;  // bytes added to values stored without them (--values all)
  int64_t steps_completed = 0;
  uint64_t bytes_read = 0;
  bool ended = false;
  std::vector<Status> errors;  // each names the file and, where there is one, the step
};

class Ingester {
 public:
  // `value_buffer`: the production default but in tests (value_writer.h).
  Ingester(Database& db, TrialSource& source, IngestOptions options, ValueBufferLimits value_buffer = {});
  ~Ingester();

  IngestStats run_once();
  int64_t trial_id() const;
  const std::string& trial_name() const;

 private:
  std::vector<PendingFile> list_pending(IngestStats* stats, bool ended);
  void write_file(PreparedFile& f, IngestStats* stats);
  size_t add_missing_values(IngestStats* stats);
  void record_error(const Status& e, IngestStats* stats);
  // An error of a path read again later: in stats once per Ingester, not once per pass.
  void record_retry(const Status& e, IngestStats* stats);

  Database& db_;
  TrialSource& source_;
  IngestOptions opt_;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<FileLedger> ledger_;
  std::unique_ptr<StepCompletion> steps_;
  std::unique_ptr<TensorSummaryWriter> summary_;
  std::unique_ptr<ValueWriter> writer_;
  std::unique_ptr<Selection> selection_;  // of the pass: collections may have grown
  std::set<std::string> retries_reported_;
  bool listed_whole_ = false;  // a pass of this Ingester listed all of index/
};

// The trial name used when none is given: the last path component of the location.
std::string default_trial_name(const std::string& location);

}  // namespace trialdb
