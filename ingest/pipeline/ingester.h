// The ingester: one incremental pass over a trial, from a TrialSource into the schema.
//
// Unit of work: one index file (= one step of one worker). Files are prepared (read via the
// index offsets, CRC-checked, decoded, reduced, blob-encoded) on worker threads, in order, with
// a bounded window so memory stays at a few steps; one thread writes them to SQLite in large
// transactions. A step's rows become visible atomically, when the step completes.
//
// Incremental: an index file is recorded in ingested_file in the same transaction as its rows,
// so a re-run (or a run after a crash) reads only files not ingested before. Files a live job
// has not finished writing (index before its event file, a record cut short, an index that is
// not yet valid JSON) are left for a later pass; once the trial has ended they are errors.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "ingest/pipeline/buffer_pool.h"
#include "ingest/source/source.h"
#include "schema/database.h"

namespace trialdb {

class PyRegex;
struct PreparedFile;
struct ValueRow;

struct IngestOptions {
  std::string name;            // trial name; empty = the location's base name
  bool strict = false;         // stop at the first error (Error of kind kInvalidInput) instead of skipping
  bool compress = false;       // zlib blobs that shrink
  int threads = 0;             // preparing threads; 0 = hardware concurrency
  // Write each pass through a rollback journal when no other connection has the database open
  // (ingest/store/bulk_load.h: every byte written once, not twice); readers that open it during the
  // pass then wait for its commits. Off: always WAL, readers never wait.
  bool bulk_load = false;
  std::function<void(size_t done, size_t total)> progress;
  // Called after each commit that completed steps (e.g. to evaluate rules on them).
  std::function<void(int64_t steps_completed)> on_steps_completed;
};

struct IngestIssue {
  std::string file;
  int64_t step = -1;           // -1: not tied to a step
  std::string message;
};

struct IngestStats {
  size_t files_ingested = 0;
  size_t files_waiting = 0;    // not yet complete on disk; retried on the next pass
  size_t values = 0;
  int64_t steps_completed = 0;
  uint64_t bytes_read = 0;
  bool ended = false;
  std::vector<IngestIssue> errors;
};

class Ingester {
 public:
  Ingester(Database& db, TrialSource& source, IngestOptions options);
  ~Ingester();

  IngestStats run_once();
  int64_t trial_id() const { return trial_id_; }
  const std::string& trial_name() const { return name_; }

 private:
  struct Collection {
    int64_t id = 0;
    std::string name;
    std::set<std::string> tensor_names;
    std::vector<std::unique_ptr<PyRegex>> regexes;
  };

  void open_trial();
  void load_collections(bool ended, IngestStats* stats);
  void write_file(PreparedFile& f, IngestStats* stats, std::map<int64_t, int>* touched_steps);
  void write_values(PreparedFile& f, int64_t worker_id, int64_t tensor_step, std::vector<ValueRow>& rows, bool fast,
                    bool scalars, IngestStats* stats);
  int64_t complete_steps(const std::map<int64_t, int>& touched, bool ended);
  int64_t worker_id(const std::string& name);
  int64_t tensor_id(const std::string& name);
  void add_memberships(int64_t tensor_id, const std::string& name);
  void record_error(const IngestIssue& e, IngestStats* stats);
  std::string list_start_after();

  Database& db_;
  TrialSource& source_;
  IngestOptions opt_;
  std::string name_;
  int64_t trial_id_ = 0;
  int expected_workers_ = 0;
  std::unordered_map<std::string, int64_t> tensors_, workers_;
  std::set<std::string> ingested_;
  std::set<std::string> waiting_;   // waiting_file's rows for this trial, as of this pass
  std::vector<Collection> collections_;
  struct FileStatements {
    Statement is_ingested, mark_ingested, step_mode, insert_step, insert_step_worker;
    Statement insert_value, insert_value_fast, insert_value_batch, insert_scalar_batch, has_step_worker, insert_blob,
        max_value_id;
  };
  FileStatements& file_statements();
  void mark_ingested(const std::string& path);
  void mark_waiting(const std::string& path);
  void check_step_mode(PreparedFile& f);
  std::unique_ptr<FileStatements> file_statements_;
  // Spans and blobs of a pass, reused within it (cleared at its end); at most half the read-ahead.
  BufferPool pool_;
};

// The trial name used when none is given: the last path component of the location.
std::string default_trial_name(const std::string& location);

}  // namespace trialdb
