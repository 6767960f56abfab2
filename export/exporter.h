// trialdb export: the trials of a database as Hive-partitioned Parquet datasets, one per public
// view (public_tables.h), at `<table>/trial=<name>/part-<n>.parquet` under a target folder or S3
// prefix, with a manifest per trial (manifest.h).
//
// An export makes the dataset equal, table by table and row by row, to a fresh export of the
// database, whatever happened since the last one: it compares each manifest with the database
// (the trial's identity, and the steps whose values changed since, from step.change_seq).
// Changed step ranges are rewritten in place, newly visible steps get a new file, tables
// replaced whole get a new file when their content changed, and the partitions of trials that
// are no longer in the database (removed, renamed) are removed. A trial exported by another
// database is refused unless `replace`.
//
// Every file appears whole and replaces the one of its name in one step, and step ranges never
// overlap, so a reader listing the dataset at any moment (an export running, or killed) sees
// every step of every table once, from the old export or from the new one (docs/SCALE.md).
// Every row is read in one state of the database (read_snapshot.h), so the files of one export
// agree with each other.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "export/public_tables.h"
#include "export/read_snapshot.h"
#include "export/target.h"
#include "parquet/file_writer.h"
#include "schema/database.h"

namespace trialdb::exporter {

// How far an export is, for a progress bar. The work is counted in values: each file of a table
// that grows by step counts the values of its step range (a table replaced whole is small and
// counts none), and a file's values count as done as its rows are read, all of them once it is
// written.
struct ExportProgress {
  uint64_t values_done = 0, values_total = 0;
  uint64_t bytes_written = 0;  // Parquet bytes written so far
};

struct ExportOptions {
  std::vector<std::string> trials;  // those to export, all of them existing
  ValuesExport values = ValuesExport::kPointers;
  bool replace = false;  // take over trials another database exported
  parquet::WriterOptions writer;
  // Files written at once, each on a thread of its own, where the target takes that
  // (ExportTarget::writes_in_parallel) and either open_reader gives each thread besides the
  // caller's a connection of its own (read_snapshot.h: all in the export's snapshot) or the
  // connection was opened OpenMode::kReadOnlyShared (the threads take turns on it); else one at
  // a time. The files are the same either way.
  unsigned threads = 1;
  OpenReader open_reader;
  // Called as the export goes, often (the callee decides when to draw).
  std::function<void(const ExportProgress&)> progress;
};

// What one export did for one table of one trial.
struct TableReport {
  std::string trial, table;
  int files_written = 0;
  int64_t rows = 0;    // rows in the files written
  uint64_t bytes = 0;  // their size
};

struct ExportReport {
  std::vector<TableReport> tables;
  std::vector<std::string> removed_trials;  // partitions of trials no longer in the database
};

// Throws Error: kIo for the target, kInvalidInput for a manifest that is not one (or lists a
// path outside its partition), kUsage for a trial another database exported, kDatabase.
ExportReport export_trials(Database& db, ExportTarget& target, const ExportOptions& options);

// For tests of interrupted exports: with TRIALDB_EXPORT_KILL_AFTER=N in the environment, the
// process kills itself (SIGKILL) right after its Nth change to the target (a file committed or
// removed, a manifest written).
inline constexpr const char* kKillAfterEnv = "TRIALDB_EXPORT_KILL_AFTER";

}  // namespace trialdb::exporter
