// trialdb export: the trials of a database as Hive-partitioned Parquet datasets, one per public
// view (public_tables.h), at `<table>/trial=<name>/part-<n>.parquet` under a target folder or S3
// prefix, with a manifest per trial (manifest.h).
//
// Incremental: a table that grows by step gets a file of the steps completed since the last
// export (none when there are none); a table replaced whole gets a new file only when its
// content changed, and the file it replaces is removed after the manifest no longer lists it.
// Every row is read in one read transaction, so the files of one export agree with each other.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "export/public_tables.h"
#include "export/target.h"
#include "parquet/file_writer.h"
#include "schema/database.h"

namespace trialdb::exporter {

struct ExportOptions {
  std::vector<std::string> trials;   // those to export, all of them existing
  ValuesExport values = ValuesExport::kPointers;
  parquet::WriterOptions writer;
};

// What one export did for one table of one trial.
struct TableReport {
  std::string trial, table;
  int files_written = 0;
  int64_t rows = 0;      // rows in the files written
  uint64_t bytes = 0;    // their size
};

// Throws Error: kIo for the target, kInvalidInput for a manifest that is not one, kDatabase.
std::vector<TableReport> export_trials(Database& db, ExportTarget& target, const ExportOptions& options);

}  // namespace trialdb::exporter
