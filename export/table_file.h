// One Parquet file of one public view for one trial: the view's rows read through SQLite (all of
// them, or those of a range of global steps) and written with parquet::FileWriter, in the column
// types public_tables.h gives. The only place the export converts SQLite values to Parquet.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "export/public_tables.h"
#include "export/target.h"
#include "parquet/file_writer.h"
#include "schema/database.h"
#include "schema/reduction_kinds.h"

namespace trialdb::exporter {

// Global steps after `after` up to and including `through`.
struct StepRange {
  int64_t after;
  int64_t through;
};

struct WrittenFile {
  int64_t rows = 0;
  uint64_t bytes = 0;
  uint32_t crc32 = 0;
  std::optional<int64_t> first_step, last_step;
};

// Told now and then how many rows of the view the file was written from have been read, and how
// many bytes of the file have been written.
using RowsRead = std::function<void(uint64_t rows, uint64_t bytes)>;

// Writes the file to `out` (not committed). A view the database lacks (rule_findings before
// `trialdb rules` ran) has no rows.
WrittenFile write_table_file(Database& db, const PublicTable& table, const std::string& trial,
                             std::optional<StepRange> steps, OutputFile& out, const parquet::WriterOptions& options,
                             const RowsRead& rows_read = {});

// The SELECT that reads the table's source (RowSource): its columns in order (then the global
// step when `by_steps`), ?1 the trial, ?2 and ?3 the step range. `kinds`: those of
// kReductionKinds, in order.
std::string select_sql(sqlite3* db, const PublicTable& table, const std::vector<ReductionKind>& kinds, bool by_steps);

}  // namespace trialdb::exporter
