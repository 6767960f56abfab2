// The public views `trialdb export` writes, one Parquet dataset each, with their columns' types:
// the one list the exporter, the engine DDL and the round-trip test all read. A view added to
// the export is one entry here.
//
// The trial is the Hive partition (`<table>/trial=<name>/`), so it is no column of the files. A
// table either grows by step (a re-export writes a file for the new steps only) or is replaced
// whole when it changed (the catalog, findings and errors: small, and changed anywhere).
#pragma once
#include <string>
#include <vector>

#include "parquet/column.h"

namespace trialdb::exporter {

// Which raw-value tables `--values` asks for.
enum class ValuesExport {
  kNone,      // neither value_locations nor tensor_values
  kPointers,  // value_locations: where each value's bytes are in the event files
  kInline,    // value_locations and tensor_values with the raw bytes
};

// Where a table's rows are read from.
enum class RowSource {
  kView,  // the view of the table's name, row for row
  // histogram_buckets: the histogram_blobs view, one row per value, each value's histogram blob
  // decoded here into the rows the view would give (table_file.h), its key columns read once per
  // value rather than once per bucket.
  kHistogramRuns,
  // reductions: the view with a row per value (schema/reduction_kinds.h), each value's kinds
  // written here as the view's rows. The view visits every value once per kind, each visit
  // looking up the value's row, step, tensor and worker: 18 times the lookups.
  kReductionKinds,
};

struct PublicTable {
  std::string name;                      // the view and the dataset's folder
  std::vector<parquet::Column> columns;  // in the view's order, without `trial`
  // SQL over the view's columns (alias v) giving a row's global step, for tables that grow by
  // step; "" for tables replaced whole.
  std::string global_step;
  ValuesExport needs = ValuesExport::kNone;  // the least --values that exports it
  RowSource source = RowSource::kView;
};

const std::vector<PublicTable>& public_tables();
// The table of that name, or nullptr.
const PublicTable* find_public_table(const std::string& name);

// Whether `--values` includes the table.
bool wanted(const PublicTable& table, ValuesExport values);

inline constexpr const char* kPartitionColumn = "trial";

}  // namespace trialdb::exporter
