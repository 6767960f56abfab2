// The ledger of a trial's index files: which were ingested (ingested_file, in the same
// transaction as their rows, so a re-run or a run after a crash reads only the others), which
// wait for a live job to finish writing them (waiting_file), and what was wrong with them
// (ingest_error), and which an ingest with a selection read in part or skipped (partial_file).
//
// Partial files: a run reads them again and stores only the values of tensors not stored yet
// for their (step, worker) (a tensor's raw value, saved reductions and shape are selected
// together, so a stored value row is all of it); once a run leaves nothing out, the file is
// ingested.
//
// What a failure costs on the next run: a path whose error is permanent (kInvalidInput: a bad
// index, a FIFO, a file outside the layout) is marked ingested with its error and never looked
// at again; a path that failed with kIo (no permission, an I/O error, a folder that could not be
// listed) is kept in waiting_file, so every later pass and run reads it again, and reports it
// again, until it succeeds.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

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
  bool partial(const std::string& path) const { return partial_.count(path) > 0; }
  // Whether `path` is partial and was read under the selection `key` (Selection::key): reading
  // it again under the same selection would store nothing.
  bool partial_under(const std::string& path, const std::string& key) const {
    auto it = partial_.find(path);
    return it != partial_.end() && it->second == key;
  }
  // The tensors of (step, worker) with a stored value.
  std::set<std::string> stored_tensors(int64_t step, const std::string& worker);

  // Inside the caller's transaction.
  void mark_ingested(const std::string& path);  // no longer partial either
  void mark_partial(const std::string& path, const std::string& key);
  void mark_waiting(const std::string& path);  // a file not yet waiting
  void record_error(const Status& error);      // once per (file, message)

  // Re-reads the waiting files: another process may have ingested some meanwhile.
  void reload_waiting();
  // The waiting paths after `start_after` that a listing from there did not return (`listed`):
  // gone, or a folder readable again and now listed file by file. forget_waiting drops one.
  std::vector<std::string> unlisted(const std::set<std::string>& listed, const std::string& start_after) const;
  void forget_waiting(const std::string& path);
  // Where a listing of index/ may start: index files of complete steps that every expected
  // worker wrote are final, so a repeated listing starts after the last of them, and before any
  // file left waiting or partial ("" for all).
  std::string list_start_after(int expected_workers);

 private:
  Database& db_;
  int64_t trial_id_;
  std::set<std::string> ingested_;
  std::set<std::string> waiting_;
  std::map<std::string, std::string> partial_;  // path -> the selection it was read under
  Statement is_ingested_, insert_ingested_, insert_error_, stored_tensors_;
};

}  // namespace trialdb
