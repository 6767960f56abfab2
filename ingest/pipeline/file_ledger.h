// The ledger of a trial's index files: which were ingested (ingested_file, in the same
// transaction as their rows, so a re-run or a run after a crash reads only the others), which
// wait for a live job to finish writing them (waiting_file), and what was wrong with them
// (ingest_error).
#pragma once
#include <cstdint>
#include <set>
#include <string>

#include "schema/database.h"
#include "schema/status.h"

namespace trialdb {

class FileLedger {
 public:
  FileLedger(Database& db, int64_t trial_id);

  bool ingested(const std::string& path) const { return ingested_.count(path) > 0; }
  // Whether another process has ingested `path` since this ledger was read.
  bool ingested_by_another(const std::string& path);
  bool waiting(const std::string& path) const { return waiting_.count(path) > 0; }

  // Inside the caller's transaction.
  void mark_ingested(const std::string& path);
  void mark_waiting(const std::string& path);   // a file not yet waiting
  void record_error(const Status& error);       // once per (file, message)

  // Re-reads the waiting files: another process may have ingested some meanwhile.
  void reload_waiting();
  // Where a listing of index/ may start: index files of complete steps are final, so a repeated
  // listing starts after the last of them, and before any file left waiting ("" for all).
  std::string list_start_after();

 private:
  Database& db_;
  int64_t trial_id_;
  std::set<std::string> ingested_;
  std::set<std::string> waiting_;
  Statement is_ingested_, insert_ingested_, insert_error_;
};

}  // namespace trialdb
